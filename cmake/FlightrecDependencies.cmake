# All dependencies come from Debian packages (scripts/install-deps.sh).
find_package(Threads REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(ZSTD REQUIRED IMPORTED_TARGET libzstd)

# The CLI and tests need these; the plugin needs none of them.
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
# `flightrec exporter`'s HTTP server (Debian libcpp-httplib-dev).
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
if(FLIGHTREC_BUILD_TESTS)
  find_package(GTest REQUIRED)
  find_package(benchmark REQUIRED)
endif()

# CUDA headers are optional: the plugin loads the driver at run time through
# dlopen and needs no header, so the build works the same without a toolkit.

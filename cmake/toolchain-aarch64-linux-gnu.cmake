# Cross build for aarch64 (Grace) with Debian's cross toolchain and arm64
# multiarch -dev packages (scripts/install-deps.sh --aarch64 installs them):
#   cmake -S . -B build-aarch64 -G Ninja \
#     -DCMAKE_TOOLCHAIN_FILE=cmake/toolchain-aarch64-linux-gnu.cmake
# ctest (and gtest_discover_tests) run the test binaries through
# qemu-user. A test that starts another aarch64 program (the emulator's rank
# processes, the CLI) needs the kernel to hand aarch64 executables to qemu
# (binfmt_misc, scripts/aarch64-binfmt.sh): docs/packaging.md "aarch64".
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)

# Libraries and CMake packages from /usr/lib/aarch64-linux-gnu (multiarch),
# header-only packages (nlohmann-json, CLI11) from /usr/share and
# /usr/include; programs (ninja, curl, readelf) from the build machine.
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)

# pkg-config reads the arm64 .pc files only (libzstd, cpp-httplib).
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")

# The programs find their loader and libraries where an arm64 Debian has
# them: libc6:arm64 and the other multiarch runtime packages (pulled in by
# the -dev packages above) install /lib/ld-linux-aarch64.so.1 and
# /usr/lib/aarch64-linux-gnu. No -L /usr/aarch64-linux-gnu (the cross
# toolchain's sysroot): qemu-user 7.2 with a -L prefix (or QEMU_LD_PREFIX)
# hangs in a forked child's execve, and the test main forks `rm -rf` at exit.
find_program(FLIGHTREC_QEMU_AARCH64 NAMES qemu-aarch64-static qemu-aarch64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${FLIGHTREC_QEMU_AARCH64})

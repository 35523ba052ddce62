// Compiles against the installed format header and checks the installed
// plugin is where the package config says, and that no NCCL ABI header is
// installed.
#include <sys/stat.h>

#include <cstdio>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
#include "flightrec/version.h"

// NCCL's profiler ABI is the plugin's private business: never installed.
#if __has_include("flightrec/nccl_profiler_abi.h") || __has_include("plugin/nccl/profiler_abi.h")
#error "the NCCL profiler ABI headers are installed"
#endif

int main() {
  namespace fmt = flightrec::format;
  static_assert(sizeof(fmt::Record) == fmt::kRecordSize, "record size");
  struct stat st {};
  if (stat(FLIGHTREC_PLUGIN_PATH, &st) != 0) {
    std::fprintf(stderr, "plugin not installed at %s\n", FLIGHTREC_PLUGIN_PATH);
    return 1;
  }
  std::printf("flightrec %s, format %u.%u, %s ok\n", flightrec::kVersion, fmt::kFormatMajor,
              fmt::kFormatMinor, fmt::FuncName(fmt::kFuncAllReduce));
  return 0;
}

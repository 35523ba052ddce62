// Compiles against the installed format header and checks the installed
// plugin is where the package config says.
#include <sys/stat.h>

#include <cstdio>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
#include "flightrec/version.h"

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

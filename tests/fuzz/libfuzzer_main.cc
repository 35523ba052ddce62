// libFuzzer entry of every harness: FLIGHTREC_FUZZ_ENTRY names it (CMake
// sets it).
#include <cstdio>
#include <string>

#include "tests/fuzz/harnesses.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string violation = flightrec::fuzz::FLIGHTREC_FUZZ_ENTRY(data, size);
  if (!violation.empty()) {
    std::fprintf(stderr, "flightrec fuzz: invariant violated: %s\n", violation.c_str());
    __builtin_trap();
  }
  return 0;
}

// libFuzzer entry of fuzz_analyzer_inputs (built with -DFLIGHTREC_FUZZ=ON).
#include <stdio.h>

#include <string>

#include "reliability/analyzer_inputs_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string violation = flightrec::fuzz::FuzzAnalyzerInputs(data, size);
  if (!violation.empty()) {
    fprintf(stderr, "flightrec fuzz_analyzer_inputs: invariant violated: %s\n", violation.c_str());
    __builtin_trap();
  }
  return 0;
}

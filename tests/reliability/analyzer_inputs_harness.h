// The fuzz harness of `flightrec analyze`'s whole input stage (issue item 3):
// fuzzer bytes -> 1..4 files in a scratch directory -> LoadInputs (the
// directory walk, parallel reads, newest-dump selection, job filtering) ->
// JobIndex -> Analyze -> every report format and the timeline trace.
#ifndef FLIGHTREC_TESTS_RELIABILITY_ANALYZER_INPUTS_HARNESS_H_
#define FLIGHTREC_TESTS_RELIABILITY_ANALYZER_INPUTS_HARNESS_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace flightrec {
namespace fuzz {

// Separates the files inside one fuzzer input; text after the 3rd separator
// stays in the 4th file.
constexpr char kFileSeparator[] = "FRSPLIT\n";
constexpr size_t kFileSeparatorLen = sizeof(kFileSeparator) - 1;
constexpr size_t kMaxFiles = 4;

// Splits an input the way the harness does (exposed for the seed tool).
std::vector<std::string> SplitFiles(const uint8_t* data, size_t size);

// Runs the input stage on `data`; returns "" or the violated invariant.
std::string FuzzAnalyzerInputs(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_RELIABILITY_ANALYZER_INPUTS_HARNESS_H_

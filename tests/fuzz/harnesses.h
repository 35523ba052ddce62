// Fuzz harness entry points. Each takes arbitrary bytes, runs the reader (or
// the analyzer's whole input stage) on them and returns "" or the first
// violated invariant. libfuzzer_main.cc turns a violation into a crash;
// fuzz_replay_test.cc runs the same entry points over the committed corpus
// (corpus/<harness>/) in every (gcc) CI build.
#ifndef FLIGHTREC_TESTS_FUZZ_HARNESSES_H_
#define FLIGHTREC_TESTS_FUZZ_HARNESSES_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

namespace flightrec {
namespace fuzz {

// Input = a whole file (ring or zstd dump) -> ReadSnapshotBytes.
std::string FuzzSnapshotReader(const uint8_t* data, size_t size);

// Input = instructions that build a plausible image (valid header, region
// table, records committed or torn, optional corruption, optional zstd),
// like Perfetto's shared_ring_buffer_fuzzer; the oracle knows what a
// correct reader must return for the parts it built cleanly.
std::string FuzzRingLayout(const uint8_t* data, size_t size);

// Input = a whole PyTorch Flight Recorder dump (pickle or JSON) ->
// fr::DecodePickle and fr::ReadFrBytes (fuzz_fr_pickle.cc).
std::string FuzzFrPickle(const uint8_t* data, size_t size);

// `flightrec analyze`'s whole input stage (fuzz_analyzer_inputs.cc): fuzzer
// bytes -> 1..4 files in a scratch directory -> LoadInputs (the directory
// walk, parallel reads, newest-dump selection, job filtering) -> JobIndex ->
// Analyze -> every report format and the timeline trace.
std::string FuzzAnalyzerInputs(const uint8_t* data, size_t size);

// Separates the files inside one FuzzAnalyzerInputs input; text after the
// 3rd separator stays in the 4th file.
constexpr char kFileSeparator[] = "FRSPLIT\n";
constexpr size_t kFileSeparatorLen = sizeof(kFileSeparator) - 1;
constexpr size_t kMaxFiles = 4;

// Splits an input the way FuzzAnalyzerInputs does (exposed for the seed
// tool and the analyzer robustness test).
std::vector<std::string> SplitFiles(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_FUZZ_HARNESSES_H_

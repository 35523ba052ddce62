// Fuzz harness entry points. Each takes arbitrary bytes, runs the reader on
// them and returns "" or the first violated invariant. libfuzzer_main.cc
// turns a violation into a crash; fuzz_replay_test.cc runs the same entry
// points over the committed corpus in every (gcc) CI build.
#ifndef FLIGHTREC_TESTS_FUZZ_HARNESSES_H_
#define FLIGHTREC_TESTS_FUZZ_HARNESSES_H_

#include <stddef.h>
#include <stdint.h>

#include <string>

namespace flightrec {
namespace fuzz {

// Input = a whole file (ring or zstd dump) -> ReadSnapshotBytes.
std::string FuzzSnapshotReader(const uint8_t* data, size_t size);

// Input = instructions that build a plausible image (valid header, region
// table, records committed or torn, optional corruption, optional zstd),
// like Perfetto's shared_ring_buffer_fuzzer; the oracle knows what a
// correct reader must return for the parts it built cleanly.
std::string FuzzRingLayout(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_FUZZ_HARNESSES_H_

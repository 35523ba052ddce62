#include "analyzer/reader/snapshot_reader.h"
#include "tests/fuzz/harnesses.h"
#include "tests/unit/reader/snapshot_invariants.h"

namespace flightrec {
namespace fuzz {

// Small enough that a zstd bomb costs milliseconds, large enough for any
// seed or input libFuzzer makes.
constexpr uint64_t kFuzzMaxImage = 64ULL << 20;

std::string FuzzSnapshotReader(const uint8_t* data, size_t size) {
  ReadLimits limits;
  limits.max_image_size = kFuzzMaxImage;
  ReadResult r = ReadSnapshotBytes(data, size, "fuzz", limits);
  if (!r.ok) return r.error.rfind("fuzz: ", 0) == 0 ? "" : "error does not name the input";
  return test_support::CheckSnapshotInvariants(r.snapshot);
}

}  // namespace fuzz
}  // namespace flightrec

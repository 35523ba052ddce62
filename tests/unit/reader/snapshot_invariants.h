// Properties every snapshot the reader returns must have, whatever the input
// bytes were. Used by the corruption tests and as the fuzzers' oracle.
#ifndef FLIGHTREC_TESTS_UNIT_READER_SNAPSHOT_INVARIANTS_H_
#define FLIGHTREC_TESTS_UNIT_READER_SNAPSHOT_INVARIANTS_H_

#include <string>

#include "analyzer/reader/snapshot.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace test_support {

// "" when the snapshot is self-consistent, else the first violation.
inline std::string CheckSnapshotInvariants(const ProcessSnapshot& s) {
  if (s.comms.size() > s.max_regions) return "more comms than regions";
  for (const CommSnapshot& c : s.comms) {
    std::string where = "region " + std::to_string(c.region_index) + ": ";
    if (c.capacity != s.region_capacity) return where + "capacity mismatch";
    if (c.state != format::kRegionActive && c.state != format::kRegionFinalized) {
      return where + "free or unknown state returned";
    }
    uint64_t first = c.head > c.capacity ? c.head - c.capacity : 0;
    if (c.overwritten != first) return where + "overwritten != head - capacity";
    if (c.records.size() + c.torn != c.head - first) return where + "records + torn != window";
    uint64_t prev = 0;
    bool have_prev = false;
    for (const OpRecord& r : c.records) {
      if (r.slot_seq < first || r.slot_seq >= c.head) return where + "slot_seq outside window";
      if (have_prev && r.slot_seq <= prev) return where + "slot_seq not ascending";
      if (r.func >= format::kNumFuncs || r.datatype >= format::kNumDataTypes ||
          r.algo >= format::kNumAlgos || r.proto >= format::kNumProtos ||
          r.state >= format::kNumOpStates) {
        return where + "enum out of range";
      }
      prev = r.slot_seq;
      have_prev = true;
    }
  }
  return "";
}

}  // namespace test_support
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_READER_SNAPSHOT_INVARIANTS_H_

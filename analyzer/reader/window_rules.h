// The rules of a windowed load (analyzer/model/record_window.h), shared by
// TrimToWindow, which trims a snapshot read whole, and the windowed read of
// a dump (snapshot_reader.h, ReadWindow), which applies them while parsing:
// both keep exactly the same records.
#ifndef FLIGHTREC_ANALYZER_READER_WINDOW_RULES_H_
#define FLIGHTREC_ANALYZER_READER_WINDOW_RULES_H_

#include <stdint.h>

#include "flightrec/record_format.h"

namespace flightrec {
namespace window_rules {

// A damaged file could claim op indices far apart; a history longer than
// this is not kept (its ops are then simply not compared).
constexpr uint64_t kMaxHistorySpan = uint64_t{1} << 22;

// What survives the cut: records enqueued at `time` or later, and, when the
// file is within its memory share (`p2p`), every p2p record (a p2p record
// has no signature).
struct Cut {
  uint64_t time = 0;
  bool p2p = false;
};

// Kept whatever its age: an op that is not done is where a hang is. In a
// region that does not track completion no op is ever done, so there age
// decides alone (else nothing would ever be trimmed).
inline bool Pinned(uint32_t region_flags, uint8_t state) {
  return (region_flags & format::kRegionCompletionTracked) != 0 && state < format::kOpDone;
}

inline bool Kept(const Cut& cut, uint32_t region_flags, uint64_t t_enqueue_ns, uint8_t state,
                 bool p2p) {
  return t_enqueue_ns >= cut.time || Pinned(region_flags, state) || (cut.p2p && p2p);
}

}  // namespace window_rules
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_WINDOW_RULES_H_

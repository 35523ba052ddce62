// Recency order of snapshots (declared in snapshot_reader.h): which of a
// process's ring and dumps holds the newest data.
#include <algorithm>
#include <tuple>

#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {
namespace {

// Rings sort after dumps: a dump is a copy taken from the ring, so the ring
// (read now) is at least as new as any dump of the same process.
auto RecencyKey(const ProcessSnapshot& s) {
  uint64_t when = s.is_dump ? s.dump_wall_ns : s.heartbeat_wall_ns;
  uint32_t sequence = s.is_dump ? s.dump_sequence : 0;
  return std::make_tuple(!s.is_dump, sequence, when, std::cref(s.path));
}

}  // namespace

bool SameProcess(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  return a.pid == b.pid && a.host == b.host && a.created_wall_ns == b.created_wall_ns;
}

bool OlderThan(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  return RecencyKey(a) < RecencyKey(b);
}

void SortByRecency(std::vector<ProcessSnapshot>* snapshots) {
  std::stable_sort(snapshots->begin(), snapshots->end(), OlderThan);
}

}  // namespace flightrec

#include <numeric>

#include "analyzer/model/detectors.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {

uint64_t LostEvents(const ProcessSnapshot& process) {
  uint64_t lost = 0;
  for (size_t i = 0; i < process.drops.size(); ++i) {
    if (i != format::kDropPxnForeign) lost += process.drops[i];
  }
  return lost;
}

double DataQuality(const JobIndex& index, int32_t group, bool history_matters) {
  const CommGroup& g = index.groups()[group];
  bool torn = false, dropped = false, untracked = false, overwritten = false;
  for (const MemberRef& m : g.members) {
    if (!m.present()) continue;
    const CommSnapshot& c = index.Comm(m);
    const ProcessSnapshot& p = index.processes()[m.process];
    torn = torn || c.torn > 0;
    dropped = dropped || std::accumulate(c.drops.begin(), c.drops.end(), uint64_t{0}) > 0 ||
              LostEvents(p) > 0;
    untracked = untracked || (c.flags & format::kRegionCompletionTracked) == 0;
    overwritten = overwritten || c.overwritten > 0;
  }
  double q = 1.0;
  if (torn) q *= 0.9;
  if (dropped) q *= 0.9;
  if (g.present < g.nranks) q *= 0.8;
  if (untracked) q *= 0.7;
  if (history_matters && overwritten) q *= 0.95;
  return q;
}

}  // namespace analysis
}  // namespace flightrec

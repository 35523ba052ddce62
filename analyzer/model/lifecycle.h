// Communicators NCCL ended with work in flight (docs/analyzer.md
// "comm_aborted"): ncclCommAbort, or destroy after ncclCommRevoke, leave
// ops that will never finish, and the recorder marks such a region at
// finalize (format::kRegionEndedInFlight, RegionDesc::open_at_finalize).
// Their ops are not where the process is blocked (progress.cc skips them);
// this detector reports the communicator as ended, names the members that
// never arrived at the op the others were in when they ended it (the hang
// that made the framework abort), and finds its successor (ncclCommShrink)
// by members and times: a heuristic, and the reports say so.
#ifndef FLIGHTREC_ANALYZER_MODEL_LIFECYCLE_H_
#define FLIGHTREC_ANALYZER_MODEL_LIFECYCLE_H_

#include <vector>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"

namespace flightrec {
namespace analysis {

// A region whose finalize found ops not done.
bool EndedInFlight(const CommSnapshot& comm);

// One comm_aborted finding per communicator some member ended in flight.
void DetectEndedComms(const JobIndex& index, const JobProgress& progress,
                      std::vector<Finding>* out);

// Drops the dead_rank findings of processes a recovered comm_aborted names
// as its culprits: the job shrank them out and went on (the comm_aborted
// finding says they are gone).
void SettleDroppedRanks(std::vector<Finding>* findings);

// A comm_aborted finding counts towards the verdict `hang` when it names
// members that never arrived and no successor went on.
bool EndedCommIsHang(const Finding& f);
// The members such findings name as never arrived, appended to `culprits`.
void AddEndedCommCulprits(const std::vector<Finding>& findings, std::vector<Culprit>* culprits);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_LIFECYCLE_H_

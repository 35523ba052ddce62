// The individual detectors. Each appends findings for one family of
// problems; analyzer.cc runs them and decides the verdict.
#ifndef FLIGHTREC_ANALYZER_MODEL_DETECTORS_H_
#define FLIGHTREC_ANALYZER_MODEL_DETECTORS_H_

#include <stdint.h>

#include <vector>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"
#include "analyzer/model/wait_graph.h"

namespace flightrec {
namespace analysis {

// A member whose collectives on a comm are the others' shifted: from op
// `index` on, its op #t is what the others ran as #t+shift (same func,
// count, datatype and root). It left `shift` collectives out and went on, so
// every later one pairs with the wrong op: a skip, not a field mismatch.
// Found where the member first disagrees with the others.
struct ShiftedMember {
  int32_t group = -1;
  int32_t rank = -1;       // comm rank
  int32_t process = -1;    // index into the snapshots
  uint64_t index = 0;      // the first op it left out (the others' numbering)
  int64_t shift = 0;       // collectives left out
  uint64_t matched = 0;    // its ops from `index` on that match once shifted
  int32_t reference = -1;  // comm rank compared with
  bool majority = false;   // the other members agree at `index` (2 or more)
};
std::vector<ShiftedMember> FindShiftedMembers(const JobIndex& index);

// lagging_rank, all_stuck, deadlock, dead_rank, missing_rank; and the
// lagging_rank of every shifted member (it skipped ops).
void DetectHang(const JobIndex& index, const JobProgress& progress, const WaitGraph& graph,
                const std::vector<ShiftedMember>& shifts, std::vector<Finding>* out);

// mismatch: collectives with a different func/count/datatype/root/seq at
// the same op index, p2p pairs whose counts differ. Shifted members are
// left out of their comm's comparison (the shift explains their ops).
void DetectMismatch(const JobIndex& index, const std::vector<ShiftedMember>& shifts,
                    std::vector<Finding>* out);

struct StragglerOptions {
  uint64_t min_late_ns = 1000000;  // typical lateness that counts (1 ms)
  double min_late_fraction = 0.5;  // of the compared ops
  uint64_t window = 512;           // newest ops compared per comm
  uint64_t min_ops = 0;            // fewer compared ops than this: no judgement
};
void DetectStragglers(const JobIndex& index, const StragglerOptions& options,
                      std::vector<Finding>* out);

// One straggler of one comm, as MeasureStragglers found it (straggler.cc):
// a member late by at least min_late_ns in at least min_late_fraction of
// the compared ops, counting only lateness of its own making.
struct StragglerMeasure {
  int32_t group = -1;
  int32_t rank = -1;      // comm rank
  int32_t process = -1;   // index into the snapshots
  uint64_t ops = 0;       // ops compared (every member's record done)
  uint64_t late_ops = 0;  // ops it was late in by min_late_ns or more
  uint64_t last_ops = 0;  // ops where its kernel started last on the comm (enqueued last, untimed)
  double mean_late_ns = 0;
  double median_late_ns = 0;  // over the compared ops
  double sum_late_ns = 0;
  // GPU time the other members spent waiting for it (their GPU time minus
  // its own, per op, summed) and the wall time the compared ops span.
  double caused_wait_ns = 0;
  uint64_t span_ns = 0;
  // Enqueued on time, its stream started the collectives late (slow GPU,
  // busy stream); else its host enqueued them late (data loader, GC).
  bool gpu_side = false;
};
// Every straggler of every comm, the most costly first within a comm.
std::vector<StragglerMeasure> MeasureStragglers(const JobIndex& index,
                                                const StragglerOptions& options);

// Confidence multiplier for conclusions drawn from one comm: lower when
// records were torn or dropped, members lack files or completion tracking,
// or (history_matters) old records were overwritten.
double DataQuality(const JobIndex& index, int32_t group, bool history_matters);

// Events a process's recorder dropped that were its own to record: every
// drop cause but kDropPxnForeign (another process's ProxyOp, declined by
// design, normal on every multi-node job with PXN).
uint64_t LostEvents(const ProcessSnapshot& process);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_DETECTORS_H_

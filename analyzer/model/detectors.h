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

// lagging_rank, all_stuck, deadlock, dead_rank, missing_rank.
void DetectHang(const JobIndex& index, const JobProgress& progress, const WaitGraph& graph,
                std::vector<Finding>* out);

// mismatch: collectives with a different func/count/datatype/root/seq at
// the same op index, p2p pairs whose counts differ.
void DetectMismatch(const JobIndex& index, std::vector<Finding>* out);

struct StragglerOptions {
  uint64_t min_late_ns = 1000000;  // typical lateness that counts (1 ms)
  double min_late_fraction = 0.5;  // of the compared ops
  uint64_t window = 512;           // newest ops compared per comm
};
void DetectStragglers(const JobIndex& index, const StragglerOptions& options,
                      std::vector<Finding>* out);

// Confidence multiplier for conclusions drawn from one comm: lower when
// records were torn or dropped, members lack files or completion tracking,
// or (history_matters) old records were overwritten.
double DataQuality(const JobIndex& index, int32_t group, bool history_matters);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_DETECTORS_H_

// Where each process is: alive or dead, and the op it is blocked at.
//
// A process is "blocked at" its oldest op that is not done, by enqueue time,
// across all its communicators: the GPU runs a process's ops in order, so
// nothing enqueued after that op can finish before it does.
#ifndef FLIGHTREC_ANALYZER_MODEL_PROGRESS_H_
#define FLIGHTREC_ANALYZER_MODEL_PROGRESS_H_

#include <stdint.h>

#include <vector>

#include "analyzer/model/job_index.h"

namespace flightrec {
namespace analysis {

struct ProgressOptions {
  // An op counts as stuck once it has been pending this long at the time of
  // the snapshot. 0 = automatic: no minimum age in a dump sealed on timeout,
  // trigger or exit (nothing in it can move any more); otherwise half the
  // file's watchdog timeout, at most 1 s (1 s when the timeout is unknown).
  uint64_t stuck_after_ns = 0;
};

struct ProcessProgress {
  bool dead = false;              // ring, still "running", heartbeat stale
  uint64_t heartbeat_gap_ns = 0;  // newest heartbeat seen minus its own
  uint64_t snapshot_wall_ns = 0;  // dump time, else heartbeat, else newest op
  int32_t blocked_comm = -1;      // region (index into comms) of the op
  int32_t blocked_record = -1;    // index into that region's records
  bool stuck = false;             // the blocked op is older than the limit
  bool untracked = false;         // some region does not track completion
  bool blocked() const { return blocked_comm >= 0; }
};

struct JobProgress {
  std::vector<ProcessProgress> processes;
  uint64_t newest_heartbeat_wall_ns = 0;  // on the first host's time line (host_clocks.h)
};

JobProgress ComputeProgress(const JobIndex& index, const ProgressOptions& options);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_PROGRESS_H_

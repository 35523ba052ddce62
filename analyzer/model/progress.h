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
#include "analyzer/model/liveness.h"

namespace flightrec {
namespace analysis {

struct ProgressOptions {
  // An op counts as stuck once it has been pending this long at the time of
  // the snapshot. 0 = automatic: no minimum age in a dump sealed on timeout,
  // trigger or exit (nothing in it can move any more); otherwise half the
  // file's watchdog timeout, at most 1 s (1 s when the timeout is unknown).
  uint64_t stuck_after_ns = 0;
  // Whether a process still runs (liveness.h); default CheckLiveness.
  LivenessCheck liveness;
};

struct ProcessProgress {
  bool dead = false;              // ring, still "running", silent well past the job's jitter
  uint64_t heartbeat_gap_ns = 0;  // newest heartbeat seen minus its own (common time line)
  uint64_t dead_after_ns = 0;     // the silence that makes this process dead
  Liveness liveness = Liveness::kUnknown;
  uint64_t snapshot_wall_ns = 0;  // dump time, else heartbeat, else newest op
  int32_t blocked_comm = -1;      // region (index into comms) of the op
  int32_t blocked_record = -1;    // index into that region's records
  bool stuck = false;             // the blocked op is older than the limit
  bool untracked = false;         // some region does not track completion
  bool blocked() const { return blocked_comm >= 0; }
};

struct JobProgress {
  std::vector<ProcessProgress> processes;
  uint64_t newest_heartbeat_wall_ns = 0;  // on the common time line (host_clocks.h)
  // Per process: ns its host's wall clock is ahead of the common time line
  // (HostClockOffsets). Every comparison of times of different processes
  // subtracts it first (Common()).
  std::vector<int64_t> clock_offset_ns;
  // The job's heartbeat jitter: the median heartbeat gap of its processes.
  uint64_t heartbeat_jitter_ns = 0;
  // Process p's wall time t on the common time line (0 stays 0).
  uint64_t Common(size_t p, uint64_t wall_ns) const {
    if (wall_ns == 0 || p >= clock_offset_ns.size()) return wall_ns;
    return wall_ns - static_cast<uint64_t>(clock_offset_ns[p]);  // mod 2^64
  }
};

JobProgress ComputeProgress(const JobIndex& index, const ProgressOptions& options);
// When a process's state was captured: its dump time, else its heartbeat,
// else its newest op (on its own clock).
uint64_t SnapshotTime(const ProcessSnapshot& p);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_PROGRESS_H_

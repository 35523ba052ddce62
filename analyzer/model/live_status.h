// The live state of running jobs, from their rings (`flightrec status`,
// docs/status.md): per process whether it is alive (heartbeat age), whether
// it is progressing, stalled (which op on which comm, for how long, enqueued
// or on the GPU), idle or dead, the last op it completed per comm, its ops/s
// and bytes/s over a recent window, and the events it dropped.
//
// Read-only: rings are read with LiveRing (pread of the header, the region
// table and each region's newest slots, with the seqlock re-checks; a file
// that is not a readable ring is read by ReadSnapshotFile, which says why);
// nothing is created, written or signalled. Dead is the
// analyzer's rule (progress.h, docs/analyzer.md "Dead processes") with the
// reading instant standing for the newest heartbeat, so a job that went
// silent as a whole is seen too; times of different hosts are compared on
// the analyzer's common time line (host_clocks.h).
#ifndef FLIGHTREC_ANALYZER_MODEL_LIVE_STATUS_H_
#define FLIGHTREC_ANALYZER_MODEL_LIVE_STATUS_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/model/inputs.h"
#include "analyzer/model/liveness.h"
#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace analysis {

enum class LiveState {
  kProgressing,  // completed an op in the window, or its oldest pending op is younger than the
                 // limit
  kStalled,      // its oldest pending op is older than the limit
  kIdle,         // nothing pending, nothing completed in the window
  kDead,         // the analyzer's dead rule, "now" counting as a heartbeat
  kExited,       // the ring says the process finished (last finalize / exit handler)
  kStarting,     // only a `.ring.init`: init not finished (or the process died in it)
  kDisabled,     // recording turned itself off (disable_reason)
};
const char* LiveStateName(LiveState state);  // "progressing", "stalled", ...

struct StatusOptions {
  uint64_t stalled_after_ns = 10000000000ULL;  // oldest pending op older than this: stalled
  uint64_t window_ns = 10000000000ULL;         // rates and "idle" look this far back
  std::string job;                             // only this job id ("": every job)
  LivenessCheck liveness;                      // default CheckLiveness
  uint64_t now_wall_ns = 0;                    // the reading instant; 0: the clock now
  unsigned threads = 0;                        // reader threads; 0: one per core
  // Slots read per region: its newest this many, further back (doubling, up
  // to its last lap) while the oldest read op of a completion-tracked
  // region is still pending, so that its oldest pending op is among them,
  // and until each region whose lap was cut reaches back as far in time as
  // the one reaching furthest (the straggler measure compares each op with
  // the process's previous op on any comm). 0: the whole last lap.
  uint64_t newest_slots = 128;
};

// One communicator region of a process.
struct CommStatus {
  bool tracked = true;        // completions are recorded (KernelCh/ProxyOp events)
  int32_t last_done = -1;     // index into the region's records: its newest completed op
  uint64_t last_done_ns = 0;  // when it completed (its own clock)
  uint64_t pending = 0;       // ops held that are not done (tracked regions only)
  uint64_t ops = 0;           // ops completed in the window (enqueued, when untracked)
  uint64_t bytes = 0;         // their bytes
  uint64_t span_ns = 0;       // how much of the window the ring still covers
};

struct ProcessStatus {
  LiveState state = LiveState::kIdle;
  bool alive = false;  // heartbeat no older than dead_after_ns
  bool has_heartbeat = false;
  uint64_t heartbeat_age_ns = 0;           // reading instant minus heartbeat, its host's clock
  uint64_t silent_ns = 0;                  // since its last sign of life, on the common time line
  uint64_t dead_after_ns = 0;              // the silence that makes it dead (progress.h)
  Liveness liveness = Liveness::kUnknown;  // asked only when silent that long
  int32_t pending_comm = -1;               // oldest pending op: region index into comms
  int32_t pending_record = -1;             // and record index in that region
  uint64_t pending_age_ns = 0;             // since it was enqueued, its host's clock
  uint64_t pending_ops = 0;                // not-done ops held, all tracked regions
  std::vector<CommStatus> comms;           // same order as the snapshot's comms
  double ops_per_s = 0;
  double bytes_per_s = 0;
  uint64_t dropped = 0;  // events lost (drop causes except pxn_foreign)
  uint64_t torn = 0;     // claimed slots that failed commit or checksum
  bool has_pending() const { return pending_comm >= 0; }
};

// A rank the others wait for (straggler.cc's measure on the newest ops of
// each comm), on the comm where the most members wait for it.
struct StragglerStatus {
  int32_t process = -1;       // index into JobStatus::processes
  int32_t comm = -1;          // region index into that process's comms
  int32_t rank = -1;          // its rank there
  int32_t members = 0;        // the comm's size: members - 1 wait for it
  double last_fraction = 0;   // of the compared ops, where it started last
  double median_late_ns = 0;  // after the comm's median member
  double wait_gpu_per_s = 0;  // the others' GPU time waiting for it, per second
  bool gpu_side = false;      // enqueued on time, its GPU starts them late
};

struct JobStatus {
  std::string job_id;
  std::vector<ProcessSnapshot> processes;  // ordered by (host, pid, created)
  std::vector<ProcessStatus> status;       // same order
  // Stragglers, the costliest first; judged only while no process is
  // stalled or dead (a hang is not a straggler).
  std::vector<StragglerStatus> stragglers;
};

struct LiveStatus {
  uint64_t now_wall_ns = 0;
  std::vector<JobStatus> jobs;              // by job id
  std::vector<RejectedInput> problems;      // ring files not read, with the reason
  std::vector<SupersededInput> superseded;  // e.g. a `.ring.init` beside its `.ring`
  std::vector<std::string> other_jobs;      // jobs left out by StatusOptions::job
  uint64_t ignored_files = 0;               // files in the directories that are not rings
};

// Reads the rings under `paths`: directories are walked for `*.ring` and
// `*.ring.init` (dumps and other files are counted in ignored_files, never
// opened); a file named on the command line is read whatever its name.
LiveStatus ReadLiveStatus(const std::vector<std::string>& paths, const StatusOptions& options);

// "62 progressing, 2 stalled at AllReduce #1877 on comm `dp3` for 41 s".
std::string JobSummary(const JobStatus& job);

// "world rank 3 (pid 4242 on host-a) arrives last at 97 % of ops on `world`,
// +5.1 ms median (CPU-side); 7 ranks wait for it: 35 ms of GPU time per
// second".
std::string StragglerLine(const JobStatus& job, const StragglerStatus& s);

// "AllReduce #1877 on comm `dp3`" for region `comm`, record `record`.
std::string OpOnComm(const ProcessSnapshot& p, int32_t comm, int32_t record);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_LIVE_STATUS_H_

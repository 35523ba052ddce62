#include "analyzer/model/progress.h"

#include <algorithm>

#include "analyzer/model/host_clocks.h"
#include "analyzer/model/parallel.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

constexpr uint64_t kSecondNs = 1000000000ULL;
// Silence that makes a ring's process dead, all of (docs/analyzer.md "Dead
// processes"): this many poll intervals; this many times the job's own
// heartbeat jitter (a loaded machine starves watchdogs of all processes,
// some more than others); and this fraction of the watchdog timeout (the
// time scale on which an op is called stuck: a process silent for less
// than that is no more dead than an op pending that long is stuck).
constexpr uint64_t kDeadPolls = 3;
constexpr uint64_t kDeadJitters = 4;
constexpr uint64_t kDeadTimeoutDivisor = 2;

}  // namespace

uint64_t SnapshotTime(const ProcessSnapshot& p) {
  if (p.is_dump && p.dump_wall_ns != 0) return p.dump_wall_ns;
  if (p.heartbeat_wall_ns != 0) return p.heartbeat_wall_ns;
  uint64_t newest = 0;
  for (const CommSnapshot& c : p.comms) {
    for (const OpRecord& r : c.records) {
      newest = std::max({newest, r.t_enqueue_ns, r.t_enqueued_ns, r.last_progress_ns()});
    }
  }
  return newest;
}

namespace {

// A dump sealed because an op was stuck (timeout), because another rank
// asked (trigger), or at exit is itself the evidence: nothing recorded in it
// moves any more, so an op still pending when it was sealed is stuck however
// young it is. Ages only matter for live rings and on-request dumps.
bool SealedOnHang(const ProcessSnapshot& p) {
  return p.is_dump && (p.dump_reason == format::kDumpTimeout ||
                       p.dump_reason == format::kDumpTrigger || p.dump_reason == format::kDumpExit);
}

uint64_t StuckLimit(const ProcessSnapshot& p, const ProgressOptions& options) {
  if (options.stuck_after_ns != 0) return options.stuck_after_ns;
  if (SealedOnHang(p)) return 0;
  if (p.watchdog_timeout_ns == 0) return kSecondNs;
  return std::min(p.watchdog_timeout_ns / 2, kSecondNs);
}

void FindBlockedOp(const ProcessSnapshot& p, const ProgressOptions& options, ProcessProgress* out) {
  uint64_t oldest = UINT64_MAX;
  for (size_t c = 0; c < p.comms.size(); ++c) {
    const CommSnapshot& comm = p.comms[c];
    if ((comm.flags & format::kRegionCompletionTracked) == 0) {
      // Without KernelCh/ProxyOp events no op ever reaches "done"; treating
      // them all as pending would invent a hang.
      out->untracked = out->untracked || !comm.records.empty();
      continue;
    }
    // Ended with ops in flight (ncclCommAbort, ncclCommRevoke): they never
    // finish, and the process is no longer in them (lifecycle.h).
    if ((comm.flags & format::kRegionEndedInFlight) != 0) continue;
    for (size_t i = 0; i < comm.records.size(); ++i) {
      const OpRecord& r = comm.records[i];
      if (r.state >= format::kOpDone) continue;
      if (r.t_enqueue_ns < oldest) {
        oldest = r.t_enqueue_ns;
        out->blocked_comm = static_cast<int32_t>(c);
        out->blocked_record = static_cast<int32_t>(i);
      }
    }
  }
  if (out->blocked()) {
    const uint64_t limit = StuckLimit(p, options);
    out->stuck = out->snapshot_wall_ns >= oldest && out->snapshot_wall_ns - oldest >= limit;
  }
}

// The newest moment the process itself is known to have been alive: its
// heartbeat, else (a process killed before its watchdog's first beat) the
// newest host-clock time it wrote: file creation, op enqueues, comm inits.
uint64_t LastSignOfLife(const ProcessSnapshot& p) {
  if (p.heartbeat_wall_ns != 0) return p.heartbeat_wall_ns;
  uint64_t t = p.created_wall_ns;
  for (const CommSnapshot& c : p.comms) {
    t = std::max({t, c.init_wall_ns, c.last_enqueue_wall_ns});
    for (const OpRecord& r : c.records)
      t = std::max({t, r.t_api_ns, r.t_enqueue_ns, r.t_enqueued_ns});
  }
  return t;
}

// The first dump the job sealed because something hung (timeout or
// trigger): every live process is told through the trigger file and seals
// its own dump within a poll interval, its heartbeat still beating.
// `common(p, t)`: process p's wall time t on the job's common time line.
template <typename Common>
uint64_t FirstHangDump(const std::vector<ProcessSnapshot>& procs, Common&& common) {
  uint64_t first = 0;
  for (size_t i = 0; i < procs.size(); ++i) {
    const ProcessSnapshot& p = procs[i];
    if (!p.is_dump || p.dump_wall_ns == 0) continue;
    if (p.dump_reason != format::kDumpTimeout && p.dump_reason != format::kDumpTrigger) continue;
    const uint64_t t = common(i, p.dump_wall_ns);
    if (first == 0 || t < first) first = t;
  }
  return first;
}

}  // namespace

JobProgress ComputeProgress(const JobIndex& index, const ProgressOptions& options) {
  const std::vector<ProcessSnapshot>& procs = index.processes();
  JobProgress job;
  job.processes.resize(procs.size());
  // Heartbeats and dump times of different hosts are compared, so they are
  // first put on one time line (a skewed host's live ranks would otherwise
  // look dead, or a dead one alive).
  job.clock_offset_ns = HostClockOffsets(index);
  auto common = [&job](size_t p, uint64_t wall_ns) { return job.Common(p, wall_ns); };
  for (size_t p = 0; p < procs.size(); ++p) {
    job.newest_heartbeat_wall_ns =
        std::max(job.newest_heartbeat_wall_ns, common(p, procs[p].heartbeat_wall_ns));
  }
  const uint64_t hang_dump = FirstHangDump(procs, common);
  std::vector<uint64_t> alive(procs.size(), 0);
  std::vector<uint64_t> gaps;
  for (size_t i = 0; i < procs.size(); ++i) {
    alive[i] = common(i, LastSignOfLife(procs[i]));
    ProcessProgress& out = job.processes[i];
    if (alive[i] != 0 && job.newest_heartbeat_wall_ns > alive[i]) {
      out.heartbeat_gap_ns = job.newest_heartbeat_wall_ns - alive[i];
    }
    if (procs[i].heartbeat_wall_ns != 0) gaps.push_back(out.heartbeat_gap_ns);
  }
  // The lower median: robust to the few silent ones it is to judge, also
  // in a job of two processes (the upper one would be the silent one's own
  // gap, and a dead process would excuse itself).
  if (!gaps.empty()) {
    auto mid = gaps.begin() + static_cast<std::ptrdiff_t>((gaps.size() - 1) / 2);
    std::nth_element(gaps.begin(), mid, gaps.end());
    job.heartbeat_jitter_ns = *mid;
  }
  const LivenessCheck liveness = options.liveness ? options.liveness : CheckLiveness;
  // Per process: each writes only its own job.processes[i].
  ParallelFor(procs.size(), [&](size_t i) {
    const ProcessSnapshot& p = procs[i];
    ProcessProgress& out = job.processes[i];
    out.snapshot_wall_ns = SnapshotTime(p);
    const uint64_t poll = p.watchdog_poll_ns != 0 ? p.watchdog_poll_ns : kSecondNs;
    out.dead_after_ns = std::max({kDeadPolls * poll, kDeadJitters * job.heartbeat_jitter_ns,
                                  p.watchdog_timeout_ns / kDeadTimeoutDivisor});
    // Only a ring still marked running can be dead (a dump was sealed by a
    // live process; an exited one said so). It is dead when it went quiet
    // for longer than dead_after_ns while others beat on, or when it was
    // already that quiet when the job dumped on a hang: it never saw the
    // trigger every live process acts on within a poll. A process seen
    // still running on this machine is not dead, however quiet.
    const bool silent_ring =
        !p.is_dump && p.process_state == format::kProcessRunning && alive[i] != 0;
    const bool quiet = out.heartbeat_gap_ns > out.dead_after_ns;
    const bool missed_dump =
        hang_dump != 0 && hang_dump > alive[i] && hang_dump - alive[i] > out.dead_after_ns;
    if (silent_ring && (quiet || missed_dump)) {
      out.liveness = liveness(p);
      out.dead = out.liveness != Liveness::kRunning;
    }
    if (out.dead && hang_dump > alive[i]) {
      out.heartbeat_gap_ns = std::max(out.heartbeat_gap_ns, hang_dump - alive[i]);
    }
    FindBlockedOp(p, options, &out);
  });
  return job;
}

}  // namespace analysis
}  // namespace flightrec

#include "analyzer/model/live_status.h"

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <tuple>
#include <utility>

#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/parallel.h"
#include "analyzer/model/progress.h"
#include "analyzer/reader/init_file.h"
#include "analyzer/reader/live_ring.h"
#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace analysis {
namespace {

namespace fs = std::filesystem;

uint64_t WallNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

bool RingName(const std::string& path) {
  return HasSuffix(path, kRingSuffix) || HasSuffix(path, kInitSuffix);
}

// One file to read, and what reading it gave.
struct FileRead {
  std::string path;
  ReadResult ring;  // ReadNewest, else ReadSnapshotFile (not for `.ring.init`)
  InitFile init;    // ReadInitFile: `.ring.init`, or a `.ring` the reader refused
  bool init_read = false;
};

// When op `r` happened on its host, for lining up the regions of one
// process: NCCL took it, else its last progress.
uint64_t OpTimeNs(const OpRecord& r) {
  return r.t_enqueue_ns != 0 ? r.t_enqueue_ns : r.last_progress_ns();
}

// Where the reading of one region stands: its records [begin, head) read
// (valid ones in `held`), `want` slots the next step back reads.
struct RegionRead {
  uint64_t begin = 0;
  uint64_t want = 0;
  uint64_t bad_enums = 0;
  std::vector<OpRecord> held;
  bool truncated(const CommSnapshot& c) const { return begin > c.overwritten; }
  uint64_t oldest_ns() const { return held.empty() ? 0 : OpTimeNs(held.front()); }
};

// Reads `want` more slots of region `c` before r->begin (not before the
// start of its last lap, c.overwritten), and doubles `want`.
void StepBack(LiveRing* ring, CommSnapshot* c, RegionRead* r) {
  const uint64_t end = r->begin;
  r->begin = end - c->overwritten > r->want ? end - r->want : c->overwritten;
  std::vector<OpRecord> older;
  older.reserve(static_cast<size_t>(end - r->begin) + r->held.size());
  c->torn += ring->ReadRecords(c->region_index, r->begin, end, &older, &r->bad_enums);
  older.insert(older.end(), r->held.begin(), r->held.end());
  r->held = std::move(older);
  r->want *= 2;
}

// A ring read as status needs it: header, region table and, of each
// region, its newest `slots` slots, then further back (twice as many each
// step, down to the start of its last lap):
//  * while the oldest op read of a completion-tracked region is pending,
//    so that its oldest pending op is among them;
//  * until every cut region reaches back as far in time as the one that
//    reaches back furthest, so that each op read has the ops the process
//    ran before it on its other comms (the straggler measure's gaps
//    between a process's consecutive ops; a comm cut later than another
//    would make its first ops look late).
// ReadRegion's warnings for what was read. False when the file is not a
// ring LiveRing reads (a dump, garbage, truncated, vanished, ...): the
// caller reads it whole, which says why.
bool ReadNewest(const std::string& path, uint64_t slots, ReadResult* out) {
  LiveRing ring;
  RingProblem problem = RingProblem::kNone;
  std::string error;
  ProcessSnapshot s;
  if (!ring.Open(path, &problem, &error) || !ring.ReadHead(&s, &problem, &error)) return false;
  std::vector<RegionRead> reads(s.comms.size());
  uint64_t cut_ns = UINT64_MAX;  // the earliest time a cut region reaches back to
  for (size_t i = 0; i < s.comms.size(); ++i) {
    CommSnapshot& c = s.comms[i];
    RegionRead& r = reads[i];
    r.begin = c.head;
    r.want = slots == 0 ? c.capacity : slots;
    const bool tracked = (c.flags & format::kRegionCompletionTracked) != 0;
    if (c.head > c.overwritten) {
      do {
        StepBack(&ring, &c, &r);
      } while (tracked && r.truncated(c) &&
               (r.held.empty() || r.held.front().state < format::kOpDone));
    }
    if (r.truncated(c) && r.oldest_ns() != 0) cut_ns = std::min(cut_ns, r.oldest_ns());
  }
  for (size_t i = 0; i < s.comms.size(); ++i) {
    CommSnapshot& c = s.comms[i];
    RegionRead& r = reads[i];
    while (cut_ns != UINT64_MAX && r.truncated(c) && r.oldest_ns() > cut_ns) {
      // As many slots as the region's pace over what it holds says reach
      // back to cut_ns, and a few more (doubling only when that fell short).
      const uint64_t newest_ns = r.held.empty() ? 0 : OpTimeNs(r.held.back());
      if (r.held.size() >= 2 && newest_ns > r.oldest_ns()) {
        const double per_ns =
            static_cast<double>(r.held.size() - 1) / static_cast<double>(newest_ns - r.oldest_ns());
        const double need = static_cast<double>(r.oldest_ns() - cut_ns) * per_ns * 1.1 + 16;
        if (need < static_cast<double>(r.want)) r.want = static_cast<uint64_t>(need);
      }
      StepBack(&ring, &c, &r);
    }
    c.records = std::move(r.held);
    const std::string region = "region " + std::to_string(c.region_index) + ": ";
    if (r.bad_enums > 0) {
      s.warnings.push_back(region + std::to_string(r.bad_enums) +
                           " out-of-range enum values in valid records, shown as Unknown");
    }
    if (c.torn > 0) {
      s.warnings.push_back(region + std::to_string(c.torn) + " torn or in-flight records skipped");
    }
  }
  out->ok = true;
  out->snapshot = std::move(s);
  return true;
}

void ReadOne(FileRead* f, uint64_t slots) {
  if (!HasSuffix(f->path, kInitSuffix)) {
    if (ReadNewest(f->path, slots, &f->ring)) return;
    f->ring = ReadSnapshotFile(f->path);
    if (f->ring.ok || !HasSuffix(f->path, kRingSuffix)) return;
  }
  // A ring being created: the header only (an all-zero `.ring` is how
  // older plugins created theirs).
  f->init = ReadInitFile(f->path);
  f->init_read = true;
}

// The snapshot of a ring not made yet: its header's identity, else the
// name's (host and pid, once the job id is known), no regions.
ProcessSnapshot StartingSnapshot(const std::string& path, const InitFile& f) {
  ProcessSnapshot s;
  s.path = path;
  s.file_size = f.size;
  s.process_state = format::kProcessStarting;
  s.created_wall_ns = f.header ? f.created_wall_ns : f.mtime_ns;
  if (f.header) {
    s.version_major = format::kFormatMajor;
    s.pid = f.pid;
    s.host = f.host;
    s.job_id = f.job_id;
  }
  return s;
}

// The oldest time a region still holds, for a region whose ring wrapped:
// what happened before it is gone, so the rate covers only what is held.
uint64_t OldestHeldNs(const CommSnapshot& c) {
  uint64_t t = UINT64_MAX;
  for (const OpRecord& r : c.records) {
    const uint64_t e = r.t_enqueue_ns != 0 ? r.t_enqueue_ns : r.last_progress_ns();
    if (e != 0) t = std::min(t, e);
  }
  return t == UINT64_MAX ? 0 : t;
}

// When a completed op ended on its host's clock: the GPU end, else its
// last progress (proxy-only completion), else when NCCL took it.
uint64_t DoneNs(const OpRecord& r) {
  const uint64_t t = r.last_progress_ns();
  if (t != 0) return t;
  return r.t_enqueued_ns != 0 ? r.t_enqueued_ns : r.t_enqueue_ns;
}

CommStatus CommOf(const ProcessSnapshot& p, const CommSnapshot& c, uint64_t now,
                  uint64_t window_ns) {
  CommStatus s;
  s.tracked = (c.flags & format::kRegionCompletionTracked) != 0;
  const uint64_t window_start = now > window_ns ? now - window_ns : 0;
  for (size_t i = 0; i < c.records.size(); ++i) {
    const OpRecord& r = c.records[i];
    if (!s.tracked) {
      // No op ever reaches "done": count what NCCL was given.
      if (r.t_enqueue_ns >= window_start && r.t_enqueue_ns <= now) {
        ++s.ops;
        s.bytes += r.bytes;
      }
      continue;
    }
    if (r.state < format::kOpDone) {
      ++s.pending;
      continue;
    }
    const uint64_t end = DoneNs(r);
    if (s.last_done < 0 || end >= s.last_done_ns) {
      s.last_done = static_cast<int32_t>(i);
      s.last_done_ns = end;
    }
    if (end >= window_start && end <= now) {
      ++s.ops;
      s.bytes += r.bytes;
    }
  }
  uint64_t start = std::max(window_start, p.created_wall_ns);
  // Wrapped, or only its newest slots read (ReadNewestRecords): the rate
  // covers the span of what was read.
  const bool partial = !c.records.empty() && c.records.front().slot_seq > c.overwritten;
  if (c.overwritten > 0 || partial) start = std::max(start, OldestHeldNs(c));
  s.span_ns = now > start ? now - start : 0;
  return s;
}

// Host offset of the reading machine against the job's common time line:
// that of a process on this host, else 0 (its clock taken as synchronized).
int64_t ReaderOffset(const std::vector<ProcessSnapshot>& procs, const JobProgress& progress) {
  for (size_t p = 0; p < procs.size(); ++p) {
    if (procs[p].host == ThisHost() && p < progress.clock_offset_ns.size()) {
      return progress.clock_offset_ns[p];
    }
  }
  return 0;
}

// Collectives a comm must have completed on every member before status
// judges its stragglers: the first ops of a job (members still starting,
// connections being set up) are not a rank's pace.
constexpr uint64_t kStragglerMinOps = 64;

// The job's stragglers (straggler.cc), one per process: on the comm where
// the most members wait for it, the costliest first. None while a process
// is starting, stalled or dead.
std::vector<StragglerStatus> FindStragglers(const JobIndex& index, const JobStatus& job) {
  for (const ProcessStatus& s : job.status) {
    if (s.state == LiveState::kStalled || s.state == LiveState::kDead ||
        s.state == LiveState::kStarting) {
      return {};
    }
  }
  StragglerOptions options;
  options.min_ops = kStragglerMinOps;
  std::map<int32_t, std::pair<StragglerStatus, double>> best;  // process -> line, its wait
  for (const StragglerMeasure& m : MeasureStragglers(index, options)) {
    if (m.process < 0 || m.ops == 0) continue;
    const CommGroup& g = index.groups()[m.group];
    StragglerStatus s;
    s.process = m.process;
    s.comm = g.members[m.rank].comm;
    s.rank = m.rank;
    s.members = static_cast<int32_t>(g.members.size());
    s.last_fraction = static_cast<double>(m.last_ops) / static_cast<double>(m.ops);
    s.median_late_ns = m.median_late_ns;
    s.wait_gpu_per_s = m.span_ns > 0 ? m.caused_wait_ns / static_cast<double>(m.span_ns) : 0.0;
    s.gpu_side = m.gpu_side;
    auto it = best.find(m.process);
    if (it == best.end() || s.members > it->second.first.members ||
        (s.members == it->second.first.members && m.caused_wait_ns > it->second.second)) {
      best[m.process] = {s, m.caused_wait_ns};
    }
  }
  std::vector<StragglerStatus> out;
  for (const auto& kv : best) out.push_back(kv.second.first);
  std::stable_sort(out.begin(), out.end(), [](const StragglerStatus& a, const StragglerStatus& b) {
    return a.wait_gpu_per_s > b.wait_gpu_per_s;
  });
  return out;
}

void ComputeJob(const StatusOptions& options, uint64_t now, JobStatus* job) {
  const std::vector<ProcessSnapshot>& procs = job->processes;
  const JobIndex index(procs);
  ProgressOptions po;
  po.stuck_after_ns = options.stalled_after_ns;
  po.liveness = options.liveness;
  const JobProgress progress = ComputeProgress(index, po);
  const LivenessCheck liveness = options.liveness ? options.liveness : CheckLiveness;
  const uint64_t now_common = now - static_cast<uint64_t>(ReaderOffset(procs, progress));
  job->status.assign(procs.size(), ProcessStatus());
  for (size_t i = 0; i < procs.size(); ++i) {
    const ProcessSnapshot& p = procs[i];
    const ProcessProgress& pr = progress.processes[i];
    ProcessStatus& s = job->status[i];
    // This process's host clock at the reading instant.
    const uint64_t now_p = progress.clock_offset_ns.size() > i
                               ? now_common + static_cast<uint64_t>(progress.clock_offset_ns[i])
                               : now;
    s.dead_after_ns = pr.dead_after_ns;
    s.liveness = pr.liveness;
    s.has_heartbeat = p.heartbeat_wall_ns != 0;
    if (s.has_heartbeat && now_p > p.heartbeat_wall_ns)
      s.heartbeat_age_ns = now_p - p.heartbeat_wall_ns;
    // Its last sign of life on the common time line (progress.cc): the
    // newest heartbeat of the job minus its gap behind it.
    const uint64_t newest = progress.newest_heartbeat_wall_ns;
    const uint64_t last_sign = newest > pr.heartbeat_gap_ns ? newest - pr.heartbeat_gap_ns : 0;
    if (last_sign != 0 && now_common > last_sign) s.silent_ns = now_common - last_sign;
    s.silent_ns = std::max(s.silent_ns, pr.heartbeat_gap_ns);
    const bool running = !p.is_dump && p.process_state == format::kProcessRunning;
    bool dead = pr.dead;
    // The analyzer's rule with the reading instant as the newest heartbeat:
    // silent past dead_after_ns, and not seen running on this machine.
    if (!dead && running && last_sign != 0 && s.silent_ns > pr.dead_after_ns) {
      s.liveness = liveness(p);
      dead = s.liveness != Liveness::kRunning;
    }
    s.alive = running && !dead && s.silent_ns <= pr.dead_after_ns;
    s.dropped = LostEvents(p);
    uint64_t ops = 0;
    s.comms.reserve(p.comms.size());
    for (const CommSnapshot& c : p.comms) {
      s.comms.push_back(CommOf(p, c, now_p, options.window_ns));
      const CommStatus& cs = s.comms.back();
      s.torn += c.torn;
      s.pending_ops += cs.pending;
      ops += cs.ops;
      if (cs.span_ns > 0) {
        s.ops_per_s += static_cast<double>(cs.ops) * 1e9 / static_cast<double>(cs.span_ns);
        s.bytes_per_s += static_cast<double>(cs.bytes) * 1e9 / static_cast<double>(cs.span_ns);
      }
    }
    if (pr.blocked()) {
      s.pending_comm = pr.blocked_comm;
      s.pending_record = pr.blocked_record;
      const uint64_t enq = p.comms[pr.blocked_comm].records[pr.blocked_record].t_enqueue_ns;
      if (now_p > enq) s.pending_age_ns = now_p - enq;
    }
    if (DiedDuringInit(p)) {
      // Starting now, or gone without finishing init (this machine only).
      s.state = liveness(p) == Liveness::kGone ? LiveState::kDead : LiveState::kStarting;
    } else if (p.process_state == format::kProcessExited) {
      s.state = LiveState::kExited;
    } else if (p.process_state == format::kProcessDisabled) {
      s.state = LiveState::kDisabled;
    } else if (dead) {
      s.state = LiveState::kDead;
    } else if (s.has_pending() && s.pending_age_ns >= options.stalled_after_ns) {
      s.state = LiveState::kStalled;
    } else if (ops > 0 || s.has_pending()) {
      s.state = LiveState::kProgressing;
    } else {
      s.state = LiveState::kIdle;
    }
  }
  job->stragglers = FindStragglers(index, *job);
}

std::string AgeText(uint64_t ns) {
  char buf[32];
  const double s = static_cast<double>(ns) / 1e9;
  std::snprintf(buf, sizeof(buf), s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

}  // namespace

const char* LiveStateName(LiveState state) {
  switch (state) {
    case LiveState::kProgressing:
      return "progressing";
    case LiveState::kStalled:
      return "stalled";
    case LiveState::kIdle:
      return "idle";
    case LiveState::kDead:
      return "dead";
    case LiveState::kExited:
      return "exited";
    case LiveState::kStarting:
      return "starting";
    case LiveState::kDisabled:
      return "disabled";
  }
  return "unknown";
}

std::string StragglerLine(const JobStatus& job, const StragglerStatus& s) {
  const ProcessSnapshot& p = job.processes[s.process];
  const CommSnapshot& c = p.comms[s.comm];
  const std::string comm = c.name.empty() ? HexId(c.comm_id) : c.name;
  const std::string global = GlobalRank(p);
  char buf[160];
  std::snprintf(buf, sizeof(buf), " arrives last at %.0f %% of ops on `%s`, +%s median",
                100.0 * s.last_fraction, comm.c_str(), Seconds(s.median_late_ns).c_str());
  std::string out = (global.empty() ? comm + " rank " + std::to_string(s.rank) : global) +
                    " (pid " + std::to_string(p.pid) + " on " + (p.host.empty() ? "?" : p.host) +
                    ")" + buf + (s.gpu_side ? " (GPU-side)" : " (CPU-side)") + "; " +
                    std::to_string(s.members - 1) +
                    (s.members == 2 ? " rank waits" : " ranks wait") +
                    " for it: " + Seconds(s.wait_gpu_per_s * 1e9) + " of GPU time per second";
  return out;
}

std::string OpOnComm(const ProcessSnapshot& p, int32_t comm, int32_t record) {
  if (comm < 0 || static_cast<size_t>(comm) >= p.comms.size()) return "(no op)";
  const CommSnapshot& c = p.comms[comm];
  if (record < 0 || static_cast<size_t>(record) >= c.records.size()) return "(no op)";
  const std::string name = c.name.empty() ? HexId(c.comm_id) : c.name;
  return OpLabel(OpOf(c.records[record])) + " on " + name;
}

std::string JobSummary(const JobStatus& job) {
  std::map<LiveState, size_t> counts;
  // Stalled processes by the op they wait at: (comm id, collective or p2p,
  // op index) -> label, how many, longest.
  struct Group {
    std::string label;
    size_t count = 0;
    uint64_t longest_ns = 0;
  };
  std::map<std::tuple<uint64_t, bool, uint64_t, uint8_t>, Group> stalled;
  for (size_t i = 0; i < job.status.size(); ++i) {
    const ProcessStatus& s = job.status[i];
    ++counts[s.state];
    if (s.state != LiveState::kStalled) continue;
    const ProcessSnapshot& p = job.processes[i];
    const CommSnapshot& c = p.comms[s.pending_comm];
    const OpRecord& r = c.records[s.pending_record];
    Group& g = stalled[std::make_tuple(c.comm_id, r.is_p2p(), r.op_index, r.func)];
    if (g.count == 0) {
      // A p2p op names its peer, which differs per member: the group says
      // the function and index only.
      g.label = r.is_p2p()
                    ? std::string(format::FuncName(r.func)) + " #" + std::to_string(r.op_index) +
                          " on " + (c.name.empty() ? HexId(c.comm_id) : c.name)
                    : OpOnComm(p, s.pending_comm, s.pending_record);
    }
    ++g.count;
    g.longest_ns = std::max(g.longest_ns, s.pending_age_ns);
  }
  std::vector<Group> groups;
  for (auto& [key, g] : stalled) groups.push_back(g);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const Group& a, const Group& b) { return a.count > b.count; });
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  for (LiveState st :
       {LiveState::kProgressing, LiveState::kStalled, LiveState::kIdle, LiveState::kDead,
        LiveState::kStarting, LiveState::kExited, LiveState::kDisabled}) {
    const auto it = counts.find(st);
    if (it == counts.end()) continue;
    std::string part = std::to_string(it->second) + " " + LiveStateName(st);
    if (st == LiveState::kStalled) {
      // "2 stalled at X for 41 s"; "5 stalled: 3 at X for 41 s; 2 at Y for 40 s".
      for (size_t k = 0; k < groups.size() && k < 3; ++k) {
        part += groups.size() == 1 ? " at "
                : k == 0           ? ": " + std::to_string(groups[k].count) + " at "
                                   : "; " + std::to_string(groups[k].count) + " at ";
        part += groups[k].label + " for " + AgeText(groups[k].longest_ns);
      }
      if (groups.size() > 3) part += "; " + std::to_string(groups.size() - 3) + " more ops";
    }
    add(part);
  }
  return out.empty() ? "no processes" : out;
}

LiveStatus ReadLiveStatus(const std::vector<std::string>& paths, const StatusOptions& options) {
  LiveStatus out;
  std::vector<FileRead> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const bool dir = fs::is_directory(path, ec);
    for (const std::string& f : CollectFiles({path}, &out.problems)) {
      if (dir && !RingName(f)) {
        ++out.ignored_files;  // dumps, logs, checkpoints: never opened
        continue;
      }
      files.push_back(FileRead{f, {}, {}, false});
    }
  }
  const uint64_t slots = options.newest_slots;
  ParallelFor(files.size(), [&files, slots](size_t i) { ReadOne(&files[i], slots); });
  out.now_wall_ns = options.now_wall_ns != 0 ? options.now_wall_ns : WallNowNs();

  std::vector<ProcessSnapshot> snapshots;
  std::vector<size_t> nameless;  // being created, no header yet
  for (size_t i = 0; i < files.size(); ++i) {
    FileRead& f = files[i];
    if (f.ring.ok) {
      if (f.ring.snapshot.is_dump) {
        out.problems.push_back(
            {f.path, f.path + ": a dump, not a live ring (flightrec analyze reads dumps)"});
        continue;
      }
      if (f.ring.snapshot.path.empty()) f.ring.snapshot.path = f.path;
      snapshots.push_back(std::move(f.ring.snapshot));
      continue;
    }
    if (f.init_read && f.init.readable && (HasSuffix(f.path, kInitSuffix) || f.init.all_zero)) {
      if (f.init.header) {
        snapshots.push_back(StartingSnapshot(f.path, f.init));
      } else {
        nameless.push_back(i);
      }
      continue;
    }
    std::string reason = !f.ring.error.empty()   ? f.ring.error
                         : !f.init.error.empty() ? f.path + ": " + f.init.error
                                                 : f.path + ": unreadable";
    // Listed, then gone: a `.ring.init` renamed to its `.ring`, or a ring
    // removed by a job's cleanup.
    if (reason.find("No such file") != std::string::npos)
      reason += " (it vanished while being read)";
    out.problems.push_back({f.path, reason});
  }
  // A header-less ring being created: host and pid from its name, under
  // the job id of a readable ring whose name fits.
  std::vector<std::string> known_jobs;
  for (const ProcessSnapshot& s : snapshots) known_jobs.push_back(s.job_id);
  std::sort(known_jobs.begin(), known_jobs.end());
  known_jobs.erase(std::unique(known_jobs.begin(), known_jobs.end()), known_jobs.end());
  for (size_t i : nameless) {
    ProcessSnapshot s = StartingSnapshot(files[i].path, files[i].init);
    bool named = false;
    for (const std::string& job : known_jobs) {
      if (ParseRingName(files[i].path, job, &s.host, &s.pid)) {
        s.job_id = job;
        named = true;
        break;
      }
    }
    if (!named) {
      out.problems.push_back(
          {files[i].path, files[i].path + ": a ring being created (" +
                              (files[i].init.size == 0 ? "empty" : "no header yet") +
                              "), of no job whose rings are here"});
      continue;
    }
    snapshots.push_back(std::move(s));
  }

  std::map<std::string, std::vector<ProcessSnapshot>> by_job;
  for (ProcessSnapshot& s : snapshots) {
    if (!options.job.empty() && s.job_id != options.job) {
      out.other_jobs.push_back(s.job_id);
      continue;
    }
    by_job[s.job_id].push_back(std::move(s));
  }
  std::sort(out.other_jobs.begin(), out.other_jobs.end());
  out.other_jobs.erase(std::unique(out.other_jobs.begin(), out.other_jobs.end()),
                       out.other_jobs.end());
  for (auto& [job_id, snaps] : by_job) {
    // One snapshot per process (a `.ring.init` beside the ring it became
    // is superseded); one job only, so nothing is rejected as foreign.
    Inputs in = SelectSnapshots(std::move(snaps), {});
    JobStatus job;
    job.job_id = job_id;
    job.processes = std::move(in.processes);
    for (SupersededInput& s : in.superseded) out.superseded.push_back(std::move(s));
    ComputeJob(options, out.now_wall_ns, &job);
    out.jobs.push_back(std::move(job));
  }
  std::sort(out.problems.begin(), out.problems.end(),
            [](const RejectedInput& a, const RejectedInput& b) { return a.path < b.path; });
  return out;
}

}  // namespace analysis
}  // namespace flightrec

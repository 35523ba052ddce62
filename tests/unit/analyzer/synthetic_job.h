// A small generator of synthetic jobs for the analyzer tests: N ranks in a
// world comm plus TP and DP comms, K steps of (TP AllReduce, DP AllGather,
// world Broadcast), played out by a tiny synchronous simulation (each
// process enqueues its next op when its previous one is done; a collective
// completes once every member has enqueued it), then one fault applied.
// The result is the ProcessSnapshot set the reader would have produced.
#ifndef FLIGHTREC_TESTS_UNIT_ANALYZER_SYNTHETIC_JOB_H_
#define FLIGHTREC_TESTS_UNIT_ANALYZER_SYNTHETIC_JOB_H_

#include <stdint.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/reader/snapshot.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace testing {

enum class Fault {
  kNone,
  kStuckBeforeOp,  // `rank` never enqueues op `op` (program position)
  kSkipOp,         // `rank` leaves op `op` out and goes on
  kMismatch,       // `rank` enqueues op `op` with a different `field`
  kKilled,         // `rank` dies before op `op`: ring, stale heartbeat
  kMissingFile,    // `rank` is stuck before op `op` and has no file
  kGpuHang,        // the world op of step `step` starts everywhere, never ends
  kSlowRank,       // `rank` enqueues every op `slow_ns` late
  kDeadlock,       // `rank` swaps its TP and world ops at step `step`
};

struct JobSpec {
  int nranks = 8;
  int tp = 4;  // TP group size; 0: only the world comm
  int steps = 6;
  Fault fault = Fault::kNone;
  int rank = 5;
  int op = 7;  // position in the rank's program (3 ops per step)
  int step = 2;
  // kMismatch: count|datatype|root|func, or datatype-same-bytes (float16
  // with twice the count: the same bytes).
  std::string field = "count";
  // Records as NCCL and a v5+ plugin give them: AllGather and Broadcast in
  // bytes as int8 (the Coll event), the call's datatype in api_datatype
  // (the CollApi event); every op has api_datatype. `no_api_rank` (>= 0):
  // that rank's records carry none (an older plugin).
  bool api_level = false;
  int no_api_rank = -1;
  uint64_t slow_ns = 5000000;
  std::map<int, uint64_t> capacity;  // rank -> ring capacity (wrap)
  // > 0: every op's count varies with its step (1024 + 64 * (step %
  // count_period)), so a rank that skipped an op is visible in its records.
  int count_period = 0;
  // A second fault at once: `rank2` (>= 0) stops before its op `op2`,
  // outside NCCL, as kStuckBeforeOp.
  int rank2 = -1;
  int op2 = -1;
};

constexpr uint64_t kBaseWallNs = 1700000000000000000ULL;
constexpr uint64_t kUs = 1000;

struct CommDef {
  uint64_t id;
  std::string name;
  std::vector<int> ranks;  // global rank by comm rank
  uint8_t func;
};

struct PlannedOp {
  int comm;
  uint8_t func;
  uint64_t count;
  uint8_t datatype;
  int32_t root;
};

class SyntheticJob {
 public:
  explicit SyntheticJob(const JobSpec& spec) : spec_(spec) {
    DefineComms();
    DefinePrograms();
    Simulate();
  }

  std::vector<ProcessSnapshot> Snapshots() const {
    std::vector<ProcessSnapshot> out;
    for (int r = 0; r < spec_.nranks; ++r) {
      if (spec_.fault == Fault::kMissingFile && r == spec_.rank) continue;
      out.push_back(Snapshot(r));
    }
    return out;
  }

  const std::vector<CommDef>& comms() const { return comms_; }
  // Index of comm `name` in comms().
  int CommIndex(const std::string& name) const {
    for (size_t i = 0; i < comms_.size(); ++i) {
      if (comms_[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
  int CommOf(int rank, const std::string& prefix) const {
    for (int c : member_of_[rank]) {
      if (comms_[c].name.rfind(prefix, 0) == 0) return c;
    }
    return -1;
  }

 private:
  void DefineComms() {
    member_of_.resize(spec_.nranks);
    auto add = [this](const std::string& name, std::vector<int> ranks, uint8_t func) {
      const int idx = static_cast<int>(comms_.size());
      comms_.push_back(
          {0xC0FFEE00ULL + static_cast<uint64_t>(idx) * 0x10001ULL, name, ranks, func});
      for (int r : ranks) member_of_[r].push_back(idx);
    };
    std::vector<int> all;
    for (int r = 0; r < spec_.nranks; ++r) all.push_back(r);
    add("world", all, format::kFuncBroadcast);
    if (spec_.tp <= 0) return;
    for (int g = 0; g < spec_.nranks / spec_.tp; ++g) {
      std::vector<int> ranks;
      for (int i = 0; i < spec_.tp; ++i) ranks.push_back(g * spec_.tp + i);
      add("tp" + std::to_string(g), ranks, format::kFuncAllReduce);
    }
    for (int i = 0; i < spec_.tp; ++i) {
      std::vector<int> ranks;
      for (int g = 0; g < spec_.nranks / spec_.tp; ++g) ranks.push_back(g * spec_.tp + i);
      add("dp" + std::to_string(i), ranks, format::kFuncAllGather);
    }
  }

  void DefinePrograms() {
    programs_.resize(spec_.nranks);
    stop_.assign(spec_.nranks, SIZE_MAX);
    for (int r = 0; r < spec_.nranks; ++r) {
      std::vector<PlannedOp>& prog = programs_[r];
      for (int s = 0; s < spec_.steps; ++s) {
        std::vector<int> order = {CommOf(r, "tp"), CommOf(r, "dp"), 0};
        if (spec_.tp <= 0) order = {0};
        if (spec_.fault == Fault::kDeadlock && r == spec_.rank && s == spec_.step) {
          std::swap(order.front(), order.back());
        }
        const uint64_t count =
            1024 +
            (spec_.count_period > 0 ? 64 * static_cast<uint64_t>(s % spec_.count_period) : 0);
        for (int c : order) prog.push_back({c, comms_[c].func, count, format::kTypeFloat32, 0});
      }
      if (r == spec_.rank2) stop_[r] = static_cast<size_t>(spec_.op2);
      if (r != spec_.rank) continue;
      const size_t op = static_cast<size_t>(spec_.op);
      switch (spec_.fault) {
        case Fault::kStuckBeforeOp:
        case Fault::kKilled:
        case Fault::kMissingFile:
          stop_[r] = std::min(stop_[r], op);
          break;
        case Fault::kSkipOp:
          prog.erase(prog.begin() + static_cast<std::ptrdiff_t>(op));
          break;
        case Fault::kMismatch:
          Mutate(&prog[op]);
          break;
        default:
          break;
      }
    }
  }

  void Mutate(PlannedOp* op) const {
    if (spec_.field == "count") op->count *= 2;
    if (spec_.field == "datatype") op->datatype = format::kTypeFloat16;
    if (spec_.field == "datatype-same-bytes") {
      op->datatype = format::kTypeFloat16;
      op->count *= 2;
    }
    if (spec_.field == "root") op->root = 1;
    if (spec_.field == "func") op->func = format::kFuncReduce;
  }

  struct ProcState {
    size_t next = 0;
    bool waiting = false;
    uint64_t ready_ns = kBaseWallNs + 1000 * kUs;
    uint64_t last_event_ns = kBaseWallNs;
  };

  uint64_t Jitter(int rank, size_t op) const {
    return ((static_cast<uint64_t>(rank) * 2654435761ULL + op * 40503ULL) % 20) * kUs;
  }

  bool EnqueueReady(int r) {
    ProcState& ps = state_[r];
    if (ps.waiting || ps.next >= programs_[r].size() || ps.next >= stop_[r]) return false;
    const PlannedOp& op = programs_[r][ps.next];
    OpRecord rec;
    const int crank = CommRank(op.comm, r);
    std::vector<OpRecord>& recs = records_[op.comm][crank];
    rec.slot_seq = recs.size();
    rec.op_index = recs.size();
    rec.nccl_seq = seq_[{op.comm, crank, op.func}]++;
    rec.count = op.count;
    rec.datatype = op.datatype;
    rec.bytes = op.count * format::DataTypeSize(op.datatype);
    if (spec_.api_level) {
      if (r != spec_.no_api_rank) rec.api_datatype = op.datatype;
      if (op.func == format::kFuncAllGather || op.func == format::kFuncBroadcast) {
        rec.count = rec.bytes;
        rec.datatype = format::kTypeInt8;
      }
    }
    rec.func = op.func;
    rec.root_or_peer = op.root;
    rec.algo = format::kAlgoRing;
    rec.proto = format::kProtoSimple;
    rec.n_channels = 2;
    rec.flags = format::kFlagGpuTimed;
    rec.state = format::kOpEnqueued;
    const uint64_t slow = spec_.fault == Fault::kSlowRank && r == spec_.rank ? spec_.slow_ns : 0;
    rec.t_enqueue_ns = ps.ready_ns + Jitter(r, ps.next) + slow;
    rec.t_enqueued_ns = rec.t_enqueue_ns + 2 * kUs;
    recs.push_back(rec);
    ps.last_event_ns = rec.t_enqueued_ns;
    ps.waiting = true;
    ++ps.next;
    return true;
  }

  bool Hangs(int comm, uint64_t index) const {
    return spec_.fault == Fault::kGpuHang && comm == 0 &&
           index == static_cast<uint64_t>(spec_.step);
  }

  // Completes comm c's pending op when every member has enqueued it.
  bool TryComplete(int c) {
    const size_t n = comms_[c].ranks.size();
    uint64_t index = UINT64_MAX, start = 0;
    for (size_t m = 0; m < n; ++m) {
      const std::vector<OpRecord>& recs = records_[c][m];
      if (recs.empty() || recs.back().state == format::kOpDone) return false;
      if (index != UINT64_MAX && recs.back().op_index != index) return false;
      index = recs.back().op_index;
      start = std::max(start, recs.back().t_enqueued_ns + 3 * kUs);
    }
    if (Hangs(c, index)) return false;
    const uint64_t end = start + 200 * kUs;
    for (size_t m = 0; m < n; ++m) {
      OpRecord& rec = records_[c][m].back();
      rec.state = format::kOpDone;
      rec.gpu_start_ns = rec.t_enqueued_ns + 3 * kUs;
      rec.gpu_end_ns = end;
      rec.gpu_start_raw = rec.gpu_start_ns;
      rec.gpu_end_raw = end;
      rec.t_last_progress_ns = end;
      rec.channels_started = rec.channels_stopped = 2;
      ProcState& ps = state_[comms_[c].ranks[m]];
      ps.waiting = false;
      ps.ready_ns = end + 1000 * kUs;
      ps.last_event_ns = end;
    }
    return true;
  }

  void Simulate() {
    records_.assign(comms_.size(), {});
    for (size_t c = 0; c < comms_.size(); ++c) records_[c].resize(comms_[c].ranks.size());
    state_.assign(spec_.nranks, ProcState{});
    for (bool changed = true; changed;) {
      changed = false;
      for (int r = 0; r < spec_.nranks; ++r) changed = EnqueueReady(r) || changed;
      for (size_t c = 0; c < comms_.size(); ++c)
        changed = TryComplete(static_cast<int>(c)) || changed;
    }
    // Ops still pending have their kernel launched and spinning.
    end_ns_ = kBaseWallNs;
    for (auto& comm : records_) {
      for (auto& recs : comm) {
        for (OpRecord& rec : recs) {
          if (rec.state != format::kOpDone) {
            rec.state = format::kOpRunning;
            rec.gpu_start_ns = rec.t_enqueued_ns + 3 * kUs;
            rec.gpu_start_raw = rec.gpu_start_ns;
            rec.channels_started = 2;
            hung_ = true;
          }
          end_ns_ = std::max({end_ns_, rec.t_enqueued_ns, rec.gpu_end_ns});
        }
      }
    }
    for (int r = 0; r < spec_.nranks; ++r) hung_ = hung_ || state_[r].next < programs_[r].size();
  }

  int CommRank(int c, int rank) const {
    const std::vector<int>& rs = comms_[c].ranks;
    return static_cast<int>(std::find(rs.begin(), rs.end(), rank) - rs.begin());
  }

  ProcessSnapshot Snapshot(int r) const {
    const bool killed = spec_.fault == Fault::kKilled && r == spec_.rank;
    const uint64_t now = end_ns_ + (hung_ ? 30000 : 100) * 1000 * kUs;
    ProcessSnapshot p;
    p.is_dump = !killed;
    p.path = "/synthetic/rank" + std::to_string(r) + (killed ? ".ring" : ".dump");
    p.version_major = format::kFormatMajor;
    p.pid = 4000 + r;
    p.host = "host-" + std::to_string(r / 8);
    p.job_id = "job-1";
    p.api_version = 7;
    p.process_state = hung_ || killed ? format::kProcessRunning : format::kProcessExited;
    p.created_wall_ns = kBaseWallNs;
    // Killed before its first op: before its watchdog's first beat too.
    p.heartbeat_wall_ns = !killed ? now : spec_.op == 0 ? 0 : state_[r].last_event_ns;
    p.watchdog_poll_ns = 1000 * 1000 * kUs;
    p.watchdog_timeout_ns = 10 * p.watchdog_poll_ns;
    p.dump_reason = killed ? format::kDumpNone : hung_ ? format::kDumpTimeout : format::kDumpExit;
    p.dump_sequence = 1;
    p.dump_wall_ns = killed ? 0 : now;
    const auto cap = spec_.capacity.find(r);
    p.region_capacity = cap == spec_.capacity.end() ? 4096 : cap->second;
    for (int c : member_of_[r]) p.comms.push_back(Comm(c, r, p.region_capacity));
    return p;
  }

  CommSnapshot Comm(int c, int r, uint64_t capacity) const {
    CommSnapshot cs;
    cs.region_index = 0;
    cs.state = format::kRegionActive;
    cs.flags = format::kRegionIdentityFromInit | format::kRegionCompletionTracked;
    cs.comm_id = comms_[c].id;
    cs.name = comms_[c].name;
    cs.rank = CommRank(c, r);
    cs.nranks = static_cast<int32_t>(comms_[c].ranks.size());
    cs.nnodes = (cs.nranks + 7) / 8;
    cs.generation = 1;
    cs.capacity = capacity;
    // NCCL gives no event for a collective of a one-rank comm: its region
    // stays empty (docs/design/nccl.md, "Call sequences v5").
    if (cs.nranks > 1) cs.records = records_[c][cs.rank];
    cs.head = cs.records.size();
    cs.coll_count = cs.records.size();
    if (cs.head > capacity) {
      cs.overwritten = cs.head - capacity;
      cs.records.erase(cs.records.begin(),
                       cs.records.end() - static_cast<std::ptrdiff_t>(capacity));
    }
    cs.init_wall_ns = kBaseWallNs;
    if (!cs.records.empty()) cs.last_enqueue_wall_ns = cs.records.back().t_enqueue_ns;
    return cs;
  }

  JobSpec spec_;
  std::vector<CommDef> comms_;
  std::vector<std::vector<int>> member_of_;
  std::vector<std::vector<PlannedOp>> programs_;
  std::vector<size_t> stop_;
  std::vector<ProcState> state_;
  std::vector<std::vector<std::vector<OpRecord>>> records_;  // comm, comm rank
  std::map<std::tuple<int, int, uint8_t>, uint64_t> seq_;
  uint64_t end_ns_ = 0;
  bool hung_ = false;
};

inline std::vector<ProcessSnapshot> MakeJob(const JobSpec& spec) {
  return SyntheticJob(spec).Snapshots();
}

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_ANALYZER_SYNTHETIC_JOB_H_

// Chrome trace-event JSON (loads in Perfetto and chrome://tracing):
//   a process per rank (pid = global rank when one communicator spans every
//   process, else a stable index), a thread per communicator, collectives as
//   complete ("X") slices from enqueue to GPU end (or to the snapshot time,
//   marked, when unfinished), flows ("s"/"f") joining the same op across
//   ranks, and an instant ("i") where each rank is stuck.
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/report/report.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {
namespace {

using analysis::JobIndex;
using nlohmann::json;

constexpr uint64_t kFlowOpsPerComm = 64;  // newest ops joined by flows

// Global rank: the rank in a communicator every process belongs to.
std::vector<int64_t> TracePids(const JobIndex& index) {
  const size_t n = index.processes().size();
  std::vector<int64_t> pids(n);
  for (size_t p = 0; p < n; ++p) pids[p] = static_cast<int64_t>(p);
  for (size_t g = 0; g < index.groups().size(); ++g) {
    const analysis::CommGroup& group = index.groups()[g];
    if (static_cast<size_t>(group.present) != n) continue;
    for (size_t r = 0; r < group.members.size(); ++r) {
      if (group.members[r].present()) pids[group.members[r].process] = static_cast<int64_t>(r);
    }
    break;
  }
  return pids;
}

class TraceWriter {
 public:
  TraceWriter(const JobIndex& index, const analysis::JobProgress& progress)
      : index_(index), progress_(progress), pids_(TracePids(index)) {
    base_ = UINT64_MAX;
    for (const ProcessSnapshot& p : index.processes()) {
      for (const CommSnapshot& c : p.comms) {
        for (const OpRecord& r : c.records) {
          if (r.t_enqueue_ns != 0) base_ = std::min(base_, r.t_enqueue_ns);
        }
      }
    }
    if (base_ == UINT64_MAX) base_ = 0;
  }

  std::string Write() {
    for (size_t p = 0; p < index_.processes().size(); ++p) Process(static_cast<int32_t>(p));
    for (size_t g = 0; g < index_.groups().size(); ++g) Flows(static_cast<int32_t>(g));
    json out = {{"traceEvents", std::move(events_)},
                {"displayTimeUnit", "ms"},
                {"otherData",
                 {{"generator", "flightrec timeline"},
                  {"base_wall_ns", base_},
                  {"base_wall", analysis::IsoTime(base_)}}}};
    return out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  }

 private:
  double Us(uint64_t wall_ns) const {
    return wall_ns >= base_ ? static_cast<double>(wall_ns - base_) / 1000.0 : 0.0;
  }
  int64_t Tid(int32_t process, int32_t comm) const {
    return index_.GroupOf(process, comm) + 1;  // 0 is reserved for markers
  }

  void Process(int32_t p) {
    const ProcessSnapshot& snap = index_.processes()[p];
    const int64_t pid = pids_[p];
    events_.push_back(
        {{"ph", "M"},
         {"name", "process_name"},
         {"pid", pid},
         {"args",
          {{"name", "rank " + std::to_string(pid) + " (" + analysis::ProcessLabel(snap) + ")"}}}});
    events_.push_back({{"ph", "M"},
                       {"name", "process_sort_index"},
                       {"pid", pid},
                       {"args", {{"sort_index", pid}}}});
    const uint64_t now = progress_.processes[p].snapshot_wall_ns;
    for (size_t c = 0; c < snap.comms.size(); ++c) {
      const CommSnapshot& comm = snap.comms[c];
      const int64_t tid = Tid(p, static_cast<int32_t>(c));
      events_.push_back(
          {{"ph", "M"},
           {"name", "thread_name"},
           {"pid", pid},
           {"tid", tid},
           {"args",
            {{"name", (comm.name.empty() ? analysis::HexId(comm.comm_id) : comm.name) + " rank " +
                          std::to_string(comm.rank)}}}});
      for (const OpRecord& r : comm.records) Slice(pid, tid, comm, r, now);
    }
    Stuck(p, pid);
  }

  void Slice(int64_t pid, int64_t tid, const CommSnapshot& comm, const OpRecord& r, uint64_t now) {
    if (r.t_enqueue_ns == 0) return;
    const bool done = r.state >= format::kOpDone;
    uint64_t end = done ? std::max(r.gpu_end_ns, r.t_enqueued_ns) : now;
    end = std::max(end, r.t_enqueue_ns);
    json args = {{"comm", analysis::HexId(comm.comm_id)},
                 {"op_index", r.op_index},
                 {"count", r.count},
                 {"datatype", format::DataTypeName(r.datatype)},
                 {"state", format::OpStateName(r.state)},
                 {"slot_seq", r.slot_seq}};
    if (r.nccl_seq != UINT64_MAX) args["seq"] = r.nccl_seq;
    if (r.is_p2p()) args["peer"] = r.root_or_peer;
    if (r.user_tag != 0) args["user_tag"] = r.user_tag;
    if (!done) args["unfinished"] = true;
    events_.push_back({{"ph", "X"},
                       {"name", analysis::OpLabel(analysis::OpOf(r))},
                       {"cat", r.is_p2p() ? "p2p" : "coll"},
                       {"pid", pid},
                       {"tid", tid},
                       {"ts", Us(r.t_enqueue_ns)},
                       {"dur", Us(end) - Us(r.t_enqueue_ns)},
                       {"args", std::move(args)}});
    if (!done) {
      events_.push_back({{"ph", "i"},
                         {"s", "t"},
                         {"name", "unfinished at snapshot"},
                         {"cat", "marker"},
                         {"pid", pid},
                         {"tid", tid},
                         {"ts", Us(end)}});
    }
  }

  // Where the rank is stuck: its oldest unfinished op, or "outside NCCL".
  void Stuck(int32_t p, int64_t pid) {
    const analysis::ProcessProgress& pp = progress_.processes[p];
    if (!pp.stuck && !pp.dead) return;
    const ProcessSnapshot& snap = index_.processes()[p];
    if (pp.blocked()) {
      const OpRecord& r = snap.comms[pp.blocked_comm].records[pp.blocked_record];
      events_.push_back({{"ph", "i"},
                         {"s", "p"},
                         {"name", std::string(pp.dead ? "died in " : "stuck in ") +
                                      analysis::OpLabel(analysis::OpOf(r))},
                         {"cat", "stuck"},
                         {"pid", pid},
                         {"tid", Tid(p, pp.blocked_comm)},
                         {"ts", Us(r.t_enqueue_ns)}});
    } else {
      events_.push_back({{"ph", "i"},
                         {"s", "p"},
                         {"name", "stopped (heartbeat quiet)"},
                         {"cat", "stuck"},
                         {"pid", pid},
                         {"tid", 0},
                         {"ts", Us(snap.heartbeat_wall_ns)}});
    }
  }

  // Flow arrows from the lowest present rank's slice to every other rank's
  // slice of the same collective (newest ops only: flows are for reading).
  void Flows(int32_t g) {
    const analysis::CommGroup& group = index_.groups()[g];
    uint64_t hi = 0;
    int32_t first = -1;
    for (size_t r = 0; r < group.members.size(); ++r) {
      if (!group.members[r].present()) continue;
      if (first < 0) first = static_cast<int32_t>(r);
      hi = std::max(hi, index_.Comm(group.members[r]).coll_count);
    }
    if (first < 0 || group.present < 2) return;
    const uint64_t lo = hi > kFlowOpsPerComm ? hi - kFlowOpsPerComm : 0;
    for (uint64_t i = lo; i < hi; ++i) {
      const OpRecord* src = index_.FindColl(g, first, i);
      if (src == nullptr || src->t_enqueue_ns == 0) continue;
      const int32_t src_proc = group.members[first].process;
      for (size_t r = static_cast<size_t>(first) + 1; r < group.members.size(); ++r) {
        const analysis::MemberRef& m = group.members[r];
        const OpRecord* dst =
            m.present() ? index_.FindColl(g, static_cast<int32_t>(r), i) : nullptr;
        if (dst == nullptr || dst->t_enqueue_ns == 0) continue;
        const uint64_t id = ++flow_id_;
        const std::string name = analysis::OpLabel(analysis::OpOf(*src));
        events_.push_back({{"ph", "s"},
                           {"id", id},
                           {"name", name},
                           {"cat", "op"},
                           {"pid", pids_[src_proc]},
                           {"tid", g + 1},
                           {"ts", Us(src->t_enqueue_ns)}});
        events_.push_back({{"ph", "f"},
                           {"bp", "e"},
                           {"id", id},
                           {"name", name},
                           {"cat", "op"},
                           {"pid", pids_[m.process]},
                           {"tid", g + 1},
                           {"ts", Us(dst->t_enqueue_ns)}});
      }
    }
  }

  const JobIndex& index_;
  const analysis::JobProgress& progress_;
  const std::vector<int64_t> pids_;
  uint64_t base_ = 0;
  uint64_t flow_id_ = 0;
  json events_ = json::array();
};

}  // namespace

std::string TimelineTrace(const JobIndex& index, const analysis::JobProgress& progress) {
  return TraceWriter(index, progress).Write();
}

}  // namespace report
}  // namespace flightrec

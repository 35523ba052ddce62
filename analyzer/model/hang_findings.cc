// lagging_rank, all_stuck, deadlock, dead_rank and missing_rank findings,
// read off the wait-for graph.
#include <algorithm>
#include <set>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace analysis {
namespace {

constexpr size_t kNamedInSummary = 4;  // ranks listed by number in a summary

struct Context {
  const JobIndex& index;
  const JobProgress& progress;
  const WaitGraph& graph;
  std::set<int32_t> culprit_procs;
  std::set<std::pair<int32_t, int32_t>> culprit_missing;
};

std::string RankList(const std::vector<RankNote>& notes, size_t from) {
  std::string s;
  for (size_t i = from; i < notes.size() && i < from + kNamedInSummary; ++i) {
    s += (i == from ? "" : ", ") + std::to_string(notes[i].rank);
  }
  if (notes.size() > from + kNamedInSummary) s += ", ...";
  return s;
}

std::string WhereText(const Context& ctx, const RankNote& n) {
  if (n.where == Whereabouts::kOutsideNccl) {
    return "it is outside NCCL (its last op is done, nothing in flight)";
  }
  if (n.where == Whereabouts::kInsideNccl && n.blocked_group >= 0) {
    return "it is inside NCCL at " + OpLabel(n.blocked_op) + " on " +
           CommLabel(ctx.index.groups()[n.blocked_group]);
  }
  return "it is " + std::string(WhereaboutsName(n.where));
}

std::string LaggingSummary(const Context& ctx, const BlockedOp& op,
                           const std::vector<RankNote>& lag) {
  const CommGroup& g = ctx.index.groups()[op.group];
  const RankNote& first = lag.front();
  std::string s = RankLabel(ctx.index, first.rank, first.process);
  if (first.behind > 0) {
    s += " is " + std::to_string(first.behind) + (op.op.p2p ? " p2p op" : " collective") +
         (first.behind == 1 ? "" : "s") + " behind on " + CommLabel(g) + ": it never enqueued " +
         OpLabel(op.op) + "; " + WhereText(ctx, first);
  } else {
    s += " holds up " + OpLabel(op.op) + " on " + CommLabel(g) +
         ": it enqueued it but its GPU has not reached it; " + WhereText(ctx, first);
  }
  const size_t members = op.op.p2p ? 2 : g.members.size();
  s += "; " + std::to_string(op.waiting.size()) + " of " + std::to_string(members) +
       " ranks waiting since " + ClockTime(op.since_wall_ns);
  if (lag.size() > 1) {
    s += "; " + std::to_string(lag.size() - 1) + " more lagging (rank" +
         (lag.size() > 2 ? "s " : " ") + RankList(lag, 1) + ")";
  }
  return s;
}

void AddLagging(const Context& ctx, const BlockedOp& op, std::vector<Finding>* out) {
  std::vector<RankNote> lag;
  for (const RankNote& n : op.laggards) {
    if (n.where == Whereabouts::kOutsideNccl || n.where == Whereabouts::kInsideNccl) {
      lag.push_back(n);
    }
  }
  if (lag.empty()) return;
  auto is_culprit = [&ctx](const RankNote& n) { return ctx.culprit_procs.count(n.process) > 0; };
  std::stable_sort(lag.begin(), lag.end(), [&](const RankNote& a, const RankNote& b) {
    if (is_culprit(a) != is_culprit(b)) return is_culprit(a);
    if (a.behind != b.behind) return a.behind > b.behind;
    return a.rank < b.rank;
  });
  Finding f;
  f.kind = FindingKind::kLaggingRank;
  f.group = op.group;
  f.op = op.op;
  f.waiting = static_cast<int32_t>(op.waiting.size());
  f.waiting_since_wall_ns = op.since_wall_ns;
  f.root_cause = is_culprit(lag.front());
  f.summary = LaggingSummary(ctx, op, lag);
  // Not-yet-reached (behind 0) is an inference from enqueue order.
  f.confidence = (lag.front().behind > 0 ? 0.95 : 0.8) * DataQuality(ctx.index, op.group, false);
  f.ranks = std::move(lag);
  out->push_back(std::move(f));
}

void AddAllStuck(const Context& ctx, const BlockedOp& op, std::vector<Finding>* out) {
  const CommGroup& g = ctx.index.groups()[op.group];
  Finding f;
  f.kind = FindingKind::kAllStuck;
  f.group = op.group;
  f.op = op.op;
  f.waiting = static_cast<int32_t>(op.waiting.size());
  f.waiting_since_wall_ns = op.since_wall_ns;
  // Order: the rank whose GPU start came last (or never came) first.
  uint64_t net_bytes = 0, last_progress = 0;
  int32_t never_started = 0;
  for (int32_t rank : op.waiting) {
    const MemberRef& m = g.members[rank];
    const ProcessProgress& pp = ctx.progress.processes[m.process];
    const OpRecord& r =
        ctx.index.processes()[m.process].comms[pp.blocked_comm].records[pp.blocked_record];
    RankNote n;
    n.rank = rank;
    n.process = m.process;
    n.where = Whereabouts::kInsideNccl;
    n.blocked_group = op.group;
    n.blocked_op = op.op;
    n.late_ns = r.gpu_start_ns == 0 ? -1.0 : static_cast<double>(r.gpu_start_ns);
    never_started += r.gpu_start_ns == 0 ? 1 : 0;
    net_bytes += r.net_bytes;
    last_progress = std::max(last_progress, r.last_progress_ns());
    f.ranks.push_back(n);
  }
  std::stable_sort(f.ranks.begin(), f.ranks.end(), [](const RankNote& a, const RankNote& b) {
    const bool a_never = a.late_ns < 0, b_never = b.late_ns < 0;
    if (a_never != b_never) return a_never;
    if (a.late_ns != b.late_ns) return a.late_ns > b.late_ns;
    return a.rank < b.rank;
  });
  const RankNote& last = f.ranks.front();
  f.summary = "all " + std::to_string(f.ranks.size()) + " ranks of " + CommLabel(g) +
              " are inside " + OpLabel(op.op) + " and none finished (not a laggard problem); ";
  if (last.late_ns < 0) {
    f.summary += std::to_string(never_started) + " never started it on the GPU, first " +
                 RankLabel(ctx.index, last.rank, last.process);
  } else {
    f.summary += "the last GPU start was " + RankLabel(ctx.index, last.rank, last.process) +
                 " at " + ClockTime(static_cast<uint64_t>(last.late_ns));
  }
  f.summary += net_bytes > 0 || last_progress > 0
                   ? "; network moved " + std::to_string(net_bytes) + " bytes, last progress at " +
                         ClockTime(last_progress)
                   : "; no network progress recorded";
  for (RankNote& n : f.ranks) n.late_ns = 0;
  f.confidence = (never_started == 0 ? 0.9 : 0.7) * DataQuality(ctx.index, op.group, false);
  out->push_back(std::move(f));
}

void AddDeadlock(const Context& ctx, const std::vector<int32_t>& cycle, std::vector<Finding>* out) {
  Finding f;
  f.kind = FindingKind::kDeadlock;
  std::string chain;
  for (int32_t p : cycle) {
    const int32_t op_id = ctx.graph.op_of_process[p];
    if (op_id < 0) continue;
    const BlockedOp& op = ctx.graph.ops[op_id];
    if (f.group < 0) {
      f.group = op.group;
      f.op = op.op;
    }
    const CommGroup& g = ctx.index.groups()[op.group];
    const int32_t rank = ctx.index.RankOf(p, op.group);
    chain += (chain.empty() ? "" : ", ") + ProcessLabel(ctx.index.processes()[p]) + " in " +
             OpLabel(op.op) + " on " + CommLabel(g) + " (rank " + std::to_string(rank) + ")";
  }
  for (int32_t p : cycle) {
    const int32_t rank = ctx.index.RankOf(p, f.group);
    if (rank < 0) {
      f.extra_processes.push_back(p);
      continue;
    }
    RankNote n;
    n.rank = rank;
    n.process = p;
    n.where = Whereabouts::kInsideNccl;
    const int32_t op_id = ctx.graph.op_of_process[p];
    n.blocked_group = ctx.graph.ops[op_id].group;
    n.blocked_op = ctx.graph.ops[op_id].op;
    f.ranks.push_back(n);
  }
  f.summary = std::to_string(cycle.size()) +
              " processes wait on each other across communicators (each one's GPU is inside an "
              "op the next has not reached): " +
              chain;
  f.confidence = 0.9 * DataQuality(ctx.index, f.group, false);
  out->push_back(std::move(f));
}

// The comm in which others wait for process p, else its largest comm.
int32_t DeadRankGroup(const Context& ctx, int32_t p) {
  for (const BlockedOp& op : ctx.graph.ops) {
    for (const RankNote& n : op.laggards) {
      if (n.process == p) return op.group;
    }
  }
  int32_t best = -1;
  const ProcessSnapshot& snap = ctx.index.processes()[p];
  for (size_t c = 0; c < snap.comms.size(); ++c) {
    const int32_t g = ctx.index.GroupOf(p, static_cast<int32_t>(c));
    if (g >= 0 && (best < 0 || ctx.index.groups()[g].nranks > ctx.index.groups()[best].nranks)) {
      best = g;
    }
  }
  return best;
}

void AddDead(const Context& ctx, int32_t p, std::vector<Finding>* out) {
  const ProcessSnapshot& snap = ctx.index.processes()[p];
  const ProcessProgress& pp = ctx.progress.processes[p];
  Finding f;
  f.kind = FindingKind::kDeadRank;
  f.group = DeadRankGroup(ctx, p);
  if (f.group < 0) return;  // a process with no communicator names no rank
  RankNote n;
  n.rank = ctx.index.RankOf(p, f.group);
  n.process = p;
  n.where = Whereabouts::kDead;
  f.ranks.push_back(n);
  f.root_cause = ctx.culprit_procs.count(p) > 0;
  const uint64_t poll = snap.watchdog_poll_ns != 0 ? snap.watchdog_poll_ns : 1000000000ULL;
  f.summary = RankLabel(ctx.index, n.rank, p) + " on " + CommLabel(ctx.index.groups()[f.group]) +
              " stopped: its heartbeat is " + Seconds(static_cast<double>(pp.heartbeat_gap_ns)) +
              " older than the newest seen (poll " + Seconds(static_cast<double>(poll)) +
              ") and it never exited";
  if (pp.blocked()) {
    const OpRecord& r = snap.comms[pp.blocked_comm].records[pp.blocked_record];
    f.op = OpOf(r);
    f.summary += "; it died inside " + OpLabel(f.op);
  } else {
    f.summary += "; nothing was in flight";
  }
  // The heartbeat is an inference: a frozen (not dead) process looks alike.
  f.confidence = 0.9 * DataQuality(ctx.index, f.group, false);
  out->push_back(std::move(f));
}

void AddMissing(const Context& ctx, int32_t group, std::vector<Finding>* out) {
  const CommGroup& g = ctx.index.groups()[group];
  Finding f;
  f.kind = FindingKind::kMissingRank;
  f.group = group;
  for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
    if (g.members[r].present()) continue;
    RankNote n;
    n.rank = r;
    n.where = Whereabouts::kMissing;
    f.ranks.push_back(n);
    f.root_cause = f.root_cause || ctx.culprit_missing.count({group, r}) > 0;
  }
  f.summary = std::string(f.ranks.size() == 1 ? "rank " : "ranks ") + RankList(f.ranks, 0) +
              " of " + CommLabel(g) + " (" + std::to_string(g.nranks) + " ranks) " +
              (f.ranks.size() == 1 ? "has" : "have") + " no file: " + std::to_string(g.present) +
              " of " + std::to_string(g.nranks) + " members were read";
  if (f.root_cause) f.summary += "; other ranks are blocked waiting for it";
  // Only the missing penalty is known not to apply: the absence is a fact.
  f.confidence = DataQuality(ctx.index, group, false) / 0.8;
  out->push_back(std::move(f));
}

}  // namespace

void DetectHang(const JobIndex& index, const JobProgress& progress, const WaitGraph& graph,
                std::vector<Finding>* out) {
  Context ctx{index, progress, graph, {}, {}};
  for (const Culprit& c : graph.culprits) {
    if (c.process >= 0) {
      ctx.culprit_procs.insert(c.process);
    } else {
      ctx.culprit_missing.emplace(c.group, c.rank);
    }
  }
  for (const BlockedOp& op : graph.ops) {
    if (!op.stuck || op.in_cycle) continue;
    const size_t members = op.op.p2p ? 2 : index.groups()[op.group].members.size();
    if (op.laggards.empty() && op.waiting.size() == members) {
      AddAllStuck(ctx, op, out);
    } else {
      AddLagging(ctx, op, out);
    }
  }
  for (const std::vector<int32_t>& cycle : graph.cycles) {
    const bool stuck = std::any_of(cycle.begin(), cycle.end(),
                                   [&progress](int32_t p) { return progress.processes[p].stuck; });
    if (stuck) AddDeadlock(ctx, cycle, out);
  }
  for (size_t p = 0; p < progress.processes.size(); ++p) {
    if (progress.processes[p].dead) AddDead(ctx, static_cast<int32_t>(p), out);
  }
  for (size_t g = 0; g < index.groups().size(); ++g) {
    if (index.groups()[g].present < index.groups()[g].nranks) {
      AddMissing(ctx, static_cast<int32_t>(g), out);
    }
  }
}

}  // namespace analysis
}  // namespace flightrec

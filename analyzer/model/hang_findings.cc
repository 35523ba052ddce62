// lagging_rank, all_stuck, deadlock, dead_rank and missing_rank findings,
// read off the wait-for graph.
#include <algorithm>
#include <set>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "analyzer/model/inputs.h"
#include "analyzer/reader/fr_reader.h"
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

std::string LaggingSummary(const Context& ctx, const BlockedOp& op, const OpRef& what,
                           const std::vector<RankNote>& lag) {
  const CommGroup& g = ctx.index.groups()[op.group];
  const RankNote& first = lag.front();
  std::string s = RankLabel(ctx.index, first.rank, first.process);
  if (first.skipped) {
    s += " is " + std::to_string(first.behind) + (op.op.p2p ? " p2p op" : " collective") +
         (first.behind == 1 ? "" : "s") + " behind on " + CommLabel(g) + ": it skipped " +
         OpLabel(what) + " (it never enqueued it but went on to " + OpLabel(first.blocked_op) +
         " on " + CommLabel(ctx.index.groups()[first.blocked_group]) +
         ", which the others enqueued only after it); its GPU is inside that op";
  } else if (first.behind > 0) {
    s += " is " + std::to_string(first.behind) + (op.op.p2p ? " p2p op" : " collective") +
         (first.behind == 1 ? "" : "s") + " behind on " + CommLabel(g) + ": it never enqueued " +
         OpLabel(what) + "; " + WhereText(ctx, first);
  } else {
    s += " holds up " + OpLabel(what) + " on " + CommLabel(g) +
         ": it enqueued it but its GPU has not reached it; " + WhereText(ctx, first);
  }
  s += "; " + std::to_string(op.waiting.size()) + " of " + std::to_string(op.members) +
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
    if (a.skipped != b.skipped) return a.skipped;
    if (a.behind != b.behind) return a.behind > b.behind;
    return a.rank < b.rank;
  });
  Finding f;
  f.kind = FindingKind::kLaggingRank;
  f.group = op.group;
  // In an exchange, the op is the Send/Recv the first laggard has not posted.
  f.op = op.exchange && lag.front().owed.valid ? lag.front().owed : op.op;
  f.waiting = static_cast<int32_t>(op.waiting.size());
  f.waiting_since_wall_ns = op.since_wall_ns;
  f.root_cause = is_culprit(lag.front());
  f.summary = LaggingSummary(ctx, op, f.op, lag);
  // Not-yet-reached (behind 0) is an inference from enqueue order, and so is
  // a skip (from the others' order of the two ops).
  const double base = lag.front().skipped ? 0.85 : lag.front().behind > 0 ? 0.95 : 0.8;
  f.confidence = base * DataQuality(ctx.index, op.group, false);
  f.ranks = std::move(lag);
  out->push_back(std::move(f));
}

void AddAllStuck(const Context& ctx, const BlockedOp& op, int32_t behind_it,
                 std::vector<Finding>* out) {
  const CommGroup& g = ctx.index.groups()[op.group];
  Finding f;
  f.kind = FindingKind::kAllStuck;
  f.group = op.group;
  f.op = op.op;
  f.waiting = static_cast<int32_t>(op.waiting.size());
  f.waiting_since_wall_ns = op.since_wall_ns;
  // A rank is named only when the records single it out: it never started
  // the op on the GPU while the others did. Which GPU start came last says
  // nothing (a kernel hung on one GPU starts with the others and spins like
  // them), so otherwise no rank is named and the ranks stay in rank order.
  uint64_t net_bytes = 0, last_progress = 0, first_start = UINT64_MAX, last_start = 0;
  int32_t never_started = 0, no_gpu_times = 0;
  // A symmetric kernel's phase counters (NCCL 2.31+, KernelPhase): members
  // with every started channel in the final sync, computing, or still in the
  // initial sync. `phased`: members whose record has phase events at all.
  int32_t phased = 0, in_final = 0, computing = 0;
  for (int32_t rank : op.waiting) {
    const MemberRef& m = g.members[rank];
    const ProcessProgress& pp = ctx.progress.processes[m.process];
    // The member's record of this op: its blocked record, or, when it is
    // blocked at another comm's op, its record here (BuildWaitGraph counts
    // it waiting when that record runs on the GPU).
    const OpRecord* own = op.exchange ? nullptr : ctx.index.FindColl(op.group, rank, op.op.index);
    const OpRecord& r =
        own != nullptr
            ? *own
            : ctx.index.processes()[m.process].comms[pp.blocked_comm].records[pp.blocked_record];
    RankNote n;
    n.rank = rank;
    n.process = m.process;
    n.where = Whereabouts::kInsideNccl;
    n.blocked_group = op.group;
    n.blocked_op = op.op;
    // GPU starts of different hosts compare on the common time line.
    // A copy-engine collective has no GPU timer: its CUDA start event, seen
    // by the plugin's watchdog, moved it to running (t_last_progress_ns).
    const bool ce_started =
        r.is_copy_engine() && r.gpu_start_ns == 0 && r.state >= format::kOpRunning;
    const uint64_t start = ctx.progress.Common(static_cast<size_t>(m.process),
                                               ce_started ? r.t_last_progress_ns : r.gpu_start_ns);
    const ProcessSnapshot& ps = ctx.index.processes()[m.process];
    if (ps.pytorch_fr && ps.pytorch_fr->path == ps.path) {
      ++no_gpu_times;  // a PyTorch FR dump: its states are CPU-side, it has no GPU times
    } else if (r.gpu_start_ns == 0 && !ce_started) {
      ++never_started;
      n.late_ns = -1.0;
    } else {
      first_start = std::min(first_start, start);
      last_start = std::max(last_start, start);
    }
    if (r.is_symmetric() && r.channels_started > 0 &&
        (r.phase_compute_channels > 0 || r.phase_final_channels > 0 ||
         r.state >= format::kOpRunning)) {
      ++phased;
      if (r.phase_final_channels >= r.channels_started) {
        ++in_final;
        n.late_ns = 1.0;  // sorts after the members that never arrived
      } else if (r.phase_compute_channels > 0) {
        ++computing;
      }
    }
    // A CE op's net_bytes are the bytes its batches gave the copy engines.
    if (!r.is_copy_engine()) net_bytes += r.net_bytes;
    last_progress = std::max(
        last_progress, ctx.progress.Common(static_cast<size_t>(m.process), r.last_progress_ns()));
    f.ranks.push_back(n);
  }
  const int32_t members = static_cast<int32_t>(f.ranks.size());
  const int32_t timed = members - no_gpu_times;
  // Symmetric kernel, every member's phases known: the members not in the
  // final sync are the ones the others wait for there.
  const bool sym =
      phased == members && members > 0 && never_started == 0 && (in_final > 0 || computing > 0);
  const bool sym_singled_out = sym && in_final > 0 && in_final < members;
  if (sym_singled_out) never_started = members - in_final;
  const bool singled_out = !sym && never_started > 0 && never_started < timed;
  std::stable_sort(f.ranks.begin(), f.ranks.end(), [](const RankNote& a, const RankNote& b) {
    const bool a_never = a.late_ns < 0, b_never = b.late_ns < 0;
    if (a_never != b_never) return a_never;
    return a.rank < b.rank;
  });
  if (sym_singled_out) {  // the members that never reached the final sync lead
    std::stable_sort(f.ranks.begin(), f.ranks.end(), [](const RankNote& a, const RankNote& b) {
      const bool a_final = a.late_ns > 0, b_final = b.late_ns > 0;
      if (a_final != b_final) return b_final;
      return a.rank < b.rank;
    });
  }
  f.summary = op.exchange ? "all " + std::to_string(members) + " ranks of " + CommLabel(g) +
                                " in the Send/Recv exchange of " + OpLabel(op.op) +
                                " are inside it and none finished"
                          : "all " + std::to_string(members) + " ranks of " + CommLabel(g) +
                                " are inside " + OpLabel(op.op) + " and none finished";
  f.summary += " (not a laggard problem); ";
  if (sym_singled_out) {
    f.never_started = never_started;
    f.sym_phase = Finding::kSymPeersInFinalSync;
    const RankNote& first = f.ranks.front();
    f.summary += "in the symmetric kernel, every channel of " + std::to_string(in_final) +
                 " of them is in the final sync, waiting for " + std::to_string(never_started) +
                 " that never arrived there (still computing), first " +
                 RankLabel(ctx.index, first.rank, first.process) +
                 ": a peer never arrived; its GPU is the one to look at";
  } else if (sym && in_final == members) {
    f.sym_phase = Finding::kSymAllInFinalSync;
    f.summary +=
        "in the symmetric kernel every member has every channel in the final sync, "
        "so the records single out no rank";
  } else if (sym && in_final == 0 && computing > 0) {
    f.sym_phase = Finding::kSymAllComputing;
    f.summary +=
        "in the symmetric kernel no member's channel reached the final sync: stuck "
        "computing on every rank (" +
        std::to_string(computing) + " of them computing" +
        (computing < members ? ", the others still in the initial sync" : "") +
        "), so the records single out no rank";
  } else if (singled_out) {
    f.never_started = never_started;
    const RankNote& first = f.ranks.front();
    f.summary += std::to_string(never_started) + " of them never started it on the GPU while " +
                 "the others did, first " + RankLabel(ctx.index, first.rank, first.process) +
                 ": its GPU is the one to look at";
  } else if (timed == 0) {
    f.summary +=
        "PyTorch FR dumps hold no GPU times (their states are CPU-side), so the records "
        "single out no rank: the GPU or the network of any of them may be the one that "
        "hangs";
  } else if (never_started == timed) {
    f.summary += "none started it on the GPU, so the records single out no rank";
  } else {
    f.summary += "every one started it on the GPU (between " + ClockTime(first_start) + " and " +
                 ClockTime(last_start) +
                 "), so the records single out no rank: the GPU or the network of any of them "
                 "may be the one that hangs";
  }
  // On one host, NCCL moves data through shared memory and NVLink: a network
  // total of 0 bytes there says nothing.
  const bool intra_node = std::all_of(f.ranks.begin(), f.ranks.end(), [&](const RankNote& n) {
    return ctx.index.processes()[n.process].host ==
           ctx.index.processes()[f.ranks.front().process].host;
  });
  const std::string moved = net_bytes > 0 || (!intra_node && no_gpu_times == 0)
                                ? "network moved " + std::to_string(net_bytes) + " bytes, "
                                : std::string();
  f.summary += net_bytes > 0 || last_progress > 0
                   ? "; " + moved + "last progress at " + ClockTime(last_progress)
                   : "; no network progress recorded";
  if (behind_it > 0) {
    f.summary += "; " + std::to_string(behind_it) + " more rank" +
                 (behind_it == 1 ? " is" : "s are") + " blocked in later ops behind it";
  }
  for (RankNote& n : f.ranks) n.late_ns = 0;
  // The end of the wait chain: what to look at, though no process is to blame.
  f.root_cause = true;
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
  const std::string last = snap.heartbeat_wall_ns != 0
                               ? "its heartbeat is "
                               : "it never wrote a heartbeat and its last activity is ";
  f.summary = RankLabel(ctx.index, n.rank, p) + " on " + CommLabel(ctx.index.groups()[f.group]) +
              " stopped: " + last + Seconds(static_cast<double>(pp.heartbeat_gap_ns)) +
              " older than the newest heartbeat or hang dump of the job (poll " +
              Seconds(static_cast<double>(poll)) + ", dead after " +
              Seconds(static_cast<double>(pp.dead_after_ns)) + " of silence, the job's heartbeat " +
              "jitter " + Seconds(static_cast<double>(ctx.progress.heartbeat_jitter_ns)) +
              "), it sealed no dump and it never exited";
  if (pp.blocked()) {
    const OpRecord& r = snap.comms[pp.blocked_comm].records[pp.blocked_record];
    f.op = OpOf(r);
    f.summary += "; it died inside " + OpLabel(f.op);
  } else {
    f.summary += "; nothing was in flight";
  }
  // Silence is an inference (a frozen or starved process looks alike) unless
  // the process was seen gone on this machine.
  f.inferred = pp.liveness != Liveness::kGone;
  if (!f.inferred) f.summary += "; the process is gone (checked on this machine)";
  f.confidence = (f.inferred ? 0.8 : 0.9) * DataQuality(ctx.index, f.group, false);
  out->push_back(std::move(f));
}

// Processes that died during init (inputs.h DiedDuringInit), "host:pid"
// each, the first few named.
std::vector<int32_t> InitDeaths(const JobIndex& index) {
  std::vector<int32_t> out;
  for (size_t p = 0; p < index.processes().size(); ++p) {
    if (DiedDuringInit(index.processes()[p])) out.push_back(static_cast<int32_t>(p));
  }
  return out;
}

std::string InitDeathText(const JobIndex& index, const std::vector<int32_t>& deaths) {
  std::string s = std::to_string(deaths.size()) +
                  (deaths.size() == 1 ? " process died" : " processes died") +
                  " during init (a ring left half-made): ";
  for (size_t i = 0; i < deaths.size() && i < kNamedInSummary; ++i) {
    const ProcessSnapshot& p = index.processes()[deaths[i]];
    s += (i ? ", " : "") + p.host + ":" + std::to_string(p.pid);
  }
  if (deaths.size() > kNamedInSummary) s += ", ...";
  return s;
}

// Processes that died during init, when no comm has a hole to explain (the
// others never formed the comm it would have joined): one dead_rank
// finding naming them, a root cause.
void AddInitDeaths(const Context& ctx, const std::vector<int32_t>& deaths,
                   std::vector<Finding>* out) {
  Finding f;
  f.kind = FindingKind::kDeadRank;
  f.extra_processes = deaths;
  f.summary = InitDeathText(ctx.index, deaths) +
              "; they never joined a communicator, so the others cannot have formed theirs";
  f.root_cause = true;
  f.confidence = 0.9;
  out->push_back(std::move(f));
}

// Missing ranks a finding names one by one; beyond, the summary counts them.
constexpr int64_t kMaxListedMissing = 4096;

// One finding per comm that owns holes (JobIndex::MissingOwner): the holes
// of the narrower comms it covers are the same processes, named once.
void AddMissing(const Context& ctx, int32_t group, std::vector<Finding>* out) {
  const CommGroup& g = ctx.index.groups()[group];
  Finding f;
  f.kind = FindingKind::kMissingRank;
  f.group = group;
  std::vector<std::string> covered;
  for (size_t h = 0; h < ctx.index.groups().size(); ++h) {
    if (static_cast<int32_t>(h) != group &&
        ctx.index.MissingOwner(static_cast<int32_t>(h)) == group) {
      covered.push_back(CommLabel(ctx.index.groups()[h]));
    }
  }
  int64_t missing = 0;
  for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
    if (g.members[r].present()) continue;
    // A corrupt nranks (up to JobIndex's plausibility limit of 2^20) would
    // otherwise list a million ranks, each a Process in the JSON report.
    if (++missing > kMaxListedMissing) continue;
    RankNote n;
    n.rank = r;
    n.where = Whereabouts::kMissing;
    f.ranks.push_back(n);
  }
  for (const auto& [cg, cr] : ctx.culprit_missing) {
    f.root_cause = f.root_cause || ctx.index.MissingOwner(cg) == group;
  }
  f.summary = std::string(f.ranks.size() == 1 ? "rank " : "ranks ") + RankList(f.ranks, 0) +
              " of " + CommLabel(g) + " (" + std::to_string(g.nranks) + " ranks) " +
              (f.ranks.size() == 1 ? "has" : "have") + " no file: " + std::to_string(g.present) +
              " of " + std::to_string(g.nranks) + " members were read";
  if (!covered.empty()) {
    f.summary += "; the same process" + std::string(f.ranks.size() == 1 ? " is" : "es are") +
                 " missing from " + std::to_string(covered.size()) + " narrower comm" +
                 (covered.size() == 1 ? "" : "s") + " (" + covered.front() +
                 (covered.size() > 1 ? ", ..." : "") + ")";
  }
  if (missing > kMaxListedMissing) {
    f.summary += "; " + std::to_string(missing) + " missing in all, the first " +
                 std::to_string(kMaxListedMissing) + " listed";
  }
  if (f.root_cause) f.summary += "; other ranks are blocked waiting for it";
  // Their ranks are unknown (init died before any comm), but they are the
  // job's processes with no comm: the likeliest owners of the holes.
  const std::vector<int32_t> deaths = InitDeaths(ctx.index);
  if (!deaths.empty()) f.summary += "; rank(s) missing: " + InitDeathText(ctx.index, deaths);
  // Only the missing penalty is known not to apply: the absence is a fact.
  f.confidence = DataQuality(ctx.index, group, false) / 0.8;
  out->push_back(std::move(f));
}

// Per op node: the all-in op it is a consequence of, or -1. An all-in
// stuck op is its own; another op is a consequence when following its
// laggards (through the ops they are blocked in) reaches an all-in stuck op
// and nothing else: no culprit, skipper, missing or dead member, no cycle.
// Memoized over the graph (acyclic once cycle members are excluded).
std::vector<int32_t> AllStuckBehind(const Context& ctx) {
  constexpr int32_t kUnknown = -3, kVisiting = -2, kOther = -1;
  const WaitGraph& graph = ctx.graph;
  const size_t n = graph.ops.size();
  std::vector<int32_t> result(n, kUnknown);
  auto leaf = [&](size_t i) {
    const BlockedOp& op = graph.ops[i];
    if (op.in_cycle) return kOther;
    if (op.all_in()) return op.stuck ? static_cast<int32_t>(i) : kOther;
    return kUnknown;
  };
  // The op a laggard leads to, or kOther when it ends the chain itself.
  auto next_of = [&](const RankNote& l) {
    if (l.where != Whereabouts::kInsideNccl || l.skipped || l.process < 0 ||
        graph.skipper[l.process] || ctx.culprit_procs.count(l.process) > 0) {
      return kOther;
    }
    return graph.op_of_process[l.process] < 0 ? kOther : graph.op_of_process[l.process];
  };
  for (size_t start = 0; start < n; ++start) {
    if (result[start] != kUnknown) continue;
    std::vector<std::pair<size_t, size_t>> stack{{start, 0}};  // (op, next laggard)
    result[start] = kVisiting;
    while (!stack.empty()) {
      auto& [i, k] = stack.back();
      const BlockedOp& op = graph.ops[i];
      int32_t verdict = leaf(i);
      if (verdict == kUnknown && op.laggards.empty()) verdict = kOther;
      while (verdict == kUnknown && k < op.laggards.size()) {
        const int32_t next = next_of(op.laggards[k]);
        if (next == kOther) {
          verdict = kOther;
          break;
        }
        if (result[next] == kUnknown) break;  // descend first
        if (result[next] == kVisiting || result[next] == kOther) {
          verdict = kOther;  // a cycle the SCC pass cut, or a dead end
          break;
        }
        ++k;  // leads to an all-in op: keep checking the others
      }
      if (verdict == kUnknown && k < op.laggards.size()) {
        const int32_t next = next_of(op.laggards[k]);
        result[next] = kVisiting;
        stack.emplace_back(static_cast<size_t>(next), 0);
        continue;
      }
      if (verdict == kUnknown) {
        // Every laggard leads to an all-in stuck op: the first one's.
        verdict = result[next_of(op.laggards.front())];
      }
      result[i] = verdict;
      stack.pop_back();
    }
  }
  for (size_t i = 0; i < n; ++i) {
    if (result[i] < 0) result[i] = -1;
  }
  return result;
}

// The lagging_rank of a member whose ops are the others' shifted: it left
// ops out and went on, whatever it is doing now.
void AddShifted(const Context& ctx, const ShiftedMember& m, std::vector<Finding>* out) {
  const CommGroup& g = ctx.index.groups()[m.group];
  OpRecord skipped;  // may be older than a windowed load's full records
  if (!ctx.index.FetchColl(m.group, m.reference, m.index, &skipped)) return;
  Finding f;
  f.kind = FindingKind::kLaggingRank;
  f.group = m.group;
  f.op = OpOf(skipped);
  RankNote n;
  n.rank = m.rank;
  n.process = m.process;
  n.behind = m.shift;
  n.skipped = true;
  const ProcessProgress& pp = ctx.progress.processes[m.process];
  if (pp.dead) {
    n.where = Whereabouts::kDead;
  } else if (pp.blocked()) {
    n.where = Whereabouts::kInsideNccl;
    n.blocked_group = ctx.index.GroupOf(m.process, pp.blocked_comm);
    const ProcessSnapshot& snap = ctx.index.processes()[m.process];
    n.blocked_op = OpOf(snap.comms[pp.blocked_comm].records[pp.blocked_record]);
  }
  const std::string others =
      m.majority ? "the other members'" : "rank " + std::to_string(m.reference) + "'s";
  f.summary = RankLabel(ctx.index, n.rank, n.process) + " is " + std::to_string(m.shift) +
              " collective" + (m.shift == 1 ? "" : "s") + " behind on " + CommLabel(g) +
              ": it skipped " + OpLabel(f.op) +
              (m.shift > 1 ? " and the " + std::to_string(m.shift - 1) + " after it" : "") +
              " (its ops there from #" + std::to_string(m.index) + " on are " + others + " from #" +
              std::to_string(m.index + static_cast<uint64_t>(m.shift)) + " on, " +
              std::to_string(m.matched) + " compared), so each later one pairs with the wrong op";
  if (!m.majority) {
    f.summary += " (with two members it may instead be rank " + std::to_string(m.reference) +
                 " that ran extra ops)";
  }
  f.summary += "; " + WhereText(ctx, n);
  f.root_cause = true;
  f.from_records = true;
  // Fewer ops compared, or no majority to compare with: weaker evidence.
  const double base = !m.majority ? 0.6 : m.matched < 2 ? 0.75 : 0.9;
  f.confidence = base * DataQuality(ctx.index, m.group, true);
  f.ranks.push_back(n);
  out->push_back(std::move(f));
}

}  // namespace

void DetectHang(const JobIndex& index, const JobProgress& progress, const WaitGraph& graph,
                const std::vector<ShiftedMember>& shifts, std::vector<Finding>* out) {
  Context ctx{index, progress, graph, {}, {}};
  for (const Culprit& c : graph.culprits) {
    if (c.process >= 0) {
      ctx.culprit_procs.insert(c.process);
    } else {
      ctx.culprit_missing.emplace(c.group, c.rank);
    }
  }
  // An op whose laggards are all inside ops that every member is stuck in
  // (and lead to no culprit) is a consequence of that GPU/network hang, not
  // a laggard problem: it is counted in the all_stuck finding instead.
  const std::vector<int32_t> sink_of = AllStuckBehind(ctx);
  std::vector<int32_t> behind(graph.ops.size(), 0);
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    if (sink_of[i] >= 0 && sink_of[i] != static_cast<int32_t>(i)) {
      behind[sink_of[i]] += static_cast<int32_t>(graph.ops[i].waiting.size());
    }
  }
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const BlockedOp& op = graph.ops[i];
    if (!op.stuck || op.in_cycle) continue;
    if (op.all_in()) {
      AddAllStuck(ctx, op, behind[i], out);
    } else if (sink_of[i] < 0) {
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
  for (const ShiftedMember& m : shifts) AddShifted(ctx, m, out);
  bool holes = false;
  for (size_t g = 0; g < index.groups().size(); ++g) {
    if (index.groups()[g].present < index.groups()[g].nranks &&
        index.MissingOwner(static_cast<int32_t>(g)) == static_cast<int32_t>(g)) {
      AddMissing(ctx, static_cast<int32_t>(g), out);
      holes = true;
    }
  }
  const std::vector<int32_t> deaths = InitDeaths(index);
  if (!deaths.empty() && !holes) AddInitDeaths(ctx, deaths, out);
}

}  // namespace analysis
}  // namespace flightrec

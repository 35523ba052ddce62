#include "analyzer/model/lifecycle.h"

#include <algorithm>
#include <set>
#include <string>

#include "analyzer/model/describe.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {

bool EndedInFlight(const CommSnapshot& comm) {
  return (comm.flags & format::kRegionEndedInFlight) != 0;
}

namespace {

// The oldest collective a region holds not done; nullptr when none (only
// p2p ops open, or they were overwritten).
const OpRecord* OldestOpenColl(const CommSnapshot& c) {
  const OpRecord* best = nullptr;
  for (const OpRecord& r : c.records) {
    if (r.state >= format::kOpDone || r.is_p2p()) continue;
    if (best == nullptr || r.op_index < best->op_index) best = &r;
  }
  return best;
}

// Collectives the member enqueued on the comm (one past the newest index).
uint64_t CollsEnqueued(const CommSnapshot& c) {
  uint64_t n = c.coll_count;
  for (const OpRecord& r : c.records) {
    if (!r.is_p2p()) n = std::max(n, r.op_index + 1);
  }
  return n;
}

uint64_t DoneColls(const CommSnapshot& c) {
  uint64_t n = 0;
  for (const OpRecord& r : c.records) {
    if (!r.is_p2p() && r.state >= format::kOpDone) ++n;
  }
  return n;
}

// The culprits lead a comm_aborted finding's ranks; the members that ended
// it follow.
size_t Culprits(const Finding& f) {
  return f.ranks.size() - std::min(f.ranks.size(), static_cast<size_t>(f.ended_by));
}

bool EndedAny(const ProcessSnapshot& p) {
  return std::any_of(p.comms.begin(), p.comms.end(),
                     [](const CommSnapshot& c) { return EndedInFlight(c); });
}

struct EndedGroup {
  int32_t group = -1;
  std::vector<int32_t> ended;     // comm ranks that finalized it in flight
  std::vector<int32_t> culprits;  // comm ranks that never enqueued `waited`
  bool has_waited = false;
  OpRecord waited;                   // the op the ended members were inside
  uint64_t waited_since = 0;         // its earliest enqueue (common time line)
  uint64_t ended_wall = 0;           // the last finalize (common time line)
  uint64_t open = 0;                 // ops not done at finalize, all members
  std::set<int32_t> survivors;       // processes of present non-culprit members
  std::vector<uint64_t> hang_start;  // per process: when it entered `waited` (0: n/a)
};

EndedGroup Collect(const JobIndex& index, const JobProgress& progress, int32_t g) {
  EndedGroup e;
  e.group = g;
  const CommGroup& group = index.groups()[g];
  e.hang_start.assign(index.processes().size(), 0);
  uint64_t waited_index = UINT64_MAX;
  for (size_t r = 0; r < group.members.size(); ++r) {
    const MemberRef& m = group.members[r];
    if (!m.present()) continue;
    const CommSnapshot& c = index.Comm(m);
    if (!EndedInFlight(c)) continue;
    e.ended.push_back(static_cast<int32_t>(r));
    e.open += c.open_at_finalize;
    e.ended_wall = std::max(e.ended_wall, progress.Common(m.process, c.finalize_wall_ns));
    const OpRecord* open = OldestOpenColl(c);
    if (open == nullptr) continue;
    e.hang_start[m.process] = progress.Common(m.process, open->t_enqueue_ns);
    if (open->op_index < waited_index) {
      waited_index = open->op_index;
      e.waited = *open;
      e.has_waited = true;
    }
  }
  if (e.has_waited) {
    for (size_t r = 0; r < group.members.size(); ++r) {
      const MemberRef& m = group.members[r];
      if (!m.present()) continue;
      const CommSnapshot& c = index.Comm(m);
      const OpRecord* w = index.FindColl(g, static_cast<int32_t>(r), waited_index);
      // Culprits: members that never enqueued the op, or that hold it not
      // done without having ended the comm with the others (their process
      // stopped or hung in it). A process that ended another comm in flight
      // was itself waiting inside NCCL when the framework gave up: a
      // consequence, named where it waited.
      const bool waited_elsewhere = !EndedInFlight(c) && EndedAny(index.processes()[m.process]);
      if (!waited_elsewhere &&
          (CollsEnqueued(c) <= waited_index ||
           (!EndedInFlight(c) && w != nullptr && w->state < format::kOpDone))) {
        e.culprits.push_back(static_cast<int32_t>(r));
        continue;
      }
      if (w != nullptr && EndedInFlight(c)) {
        const uint64_t t = progress.Common(m.process, w->t_enqueue_ns);
        if (e.waited_since == 0 || t < e.waited_since) e.waited_since = t;
      }
    }
  }
  const std::set<int32_t> culprit_set(e.culprits.begin(), e.culprits.end());
  for (size_t r = 0; r < group.members.size(); ++r) {
    const MemberRef& m = group.members[r];
    if (m.present() && culprit_set.count(static_cast<int32_t>(r)) == 0) {
      e.survivors.insert(m.process);
    }
  }
  return e;
}

// The communicator that took over from `e` (ncclCommShrink): at least two
// ranks, as many as the old one's members minus the culprits, every one of
// them a surviving member, each initialized no earlier than that process
// entered the op it ended in flight (NCCL_SHRINK_ABORT creates the child
// before the parent is destroyed, so init may precede the old finalize).
int32_t FindSuccessor(const JobIndex& index, const JobProgress& progress, const EndedGroup& e) {
  const CommGroup& old = index.groups()[e.group];
  const int32_t want = old.nranks - static_cast<int32_t>(e.culprits.size());
  if (e.culprits.empty() || want < 2) return -1;
  int32_t best = -1;
  uint64_t best_init = UINT64_MAX;
  for (size_t h = 0; h < index.groups().size(); ++h) {
    if (static_cast<int32_t>(h) == e.group) continue;
    const CommGroup& cand = index.groups()[h];
    if (cand.nranks != want || cand.present == 0) continue;
    bool fits = true;
    uint64_t init = 0;
    for (const MemberRef& m : cand.members) {
      if (!m.present()) continue;
      const uint64_t t = progress.Common(m.process, index.Comm(m).init_wall_ns);
      if (e.survivors.count(m.process) == 0 || t < e.hang_start[m.process]) {
        fits = false;
        break;
      }
      init = std::max(init, t);
    }
    if (fits && init < best_init) {
      best = static_cast<int32_t>(h);
      best_init = init;
    }
  }
  return best;
}

RankNote CulpritNote(const JobIndex& index, const JobProgress& progress, const EndedGroup& e,
                     int32_t rank) {
  RankNote n;
  n.rank = rank;
  const MemberRef& m = index.groups()[e.group].members[rank];
  n.process = m.process;
  const CommSnapshot& c = index.Comm(m);
  n.behind = std::max<int64_t>(
      0, static_cast<int64_t>(e.waited.op_index + 1) - static_cast<int64_t>(CollsEnqueued(c)));
  const ProcessProgress& pp = progress.processes[m.process];
  if (pp.dead) {
    n.where = Whereabouts::kDead;
  } else if (pp.blocked()) {
    n.where = Whereabouts::kInsideNccl;
    n.blocked_group = index.GroupOf(m.process, pp.blocked_comm);
    n.blocked_op =
        OpOf(index.processes()[m.process].comms[pp.blocked_comm].records[pp.blocked_record]);
  } else {
    n.where = Whereabouts::kOutsideNccl;
  }
  return n;
}

std::string WhereText(const RankNote& n) {
  switch (n.where) {
    case Whereabouts::kDead:
      return "its process is gone";
    case Whereabouts::kInsideNccl:
      return "it is blocked in " + OpLabel(n.blocked_op) + " of another communicator";
    case Whereabouts::kOutsideNccl:
      return "its ops are all done: it is outside NCCL";
    case Whereabouts::kMissing:
      return "it has no file";
  }
  return "";
}

Finding MakeFinding(const JobIndex& index, const JobProgress& progress, const EndedGroup& e) {
  const CommGroup& group = index.groups()[e.group];
  Finding f;
  f.kind = FindingKind::kCommAborted;
  f.group = e.group;
  f.open_at_end = e.open;
  f.ended_wall_ns = e.ended_wall;
  if (e.has_waited) f.op = OpOf(e.waited);
  for (int32_t r : e.culprits) f.ranks.push_back(CulpritNote(index, progress, e, r));
  f.ended_by = static_cast<int32_t>(e.ended.size());
  for (int32_t r : e.ended) {
    RankNote n;
    n.rank = r;
    n.process = group.members[r].process;
    n.where = Whereabouts::kInsideNccl;
    n.blocked_group = e.group;
    if (const OpRecord* o = OldestOpenColl(index.Comm(group.members[r]))) n.blocked_op = OpOf(*o);
    f.ranks.push_back(n);
  }
  f.root_cause = !e.culprits.empty();
  f.confidence = f.root_cause ? 0.8 : 0.6;
  f.successor = FindSuccessor(index, progress, e);
  uint64_t done_after = 0;
  if (f.successor >= 0) {
    for (const MemberRef& m : index.groups()[f.successor].members) {
      if (m.present()) done_after = std::max(done_after, DoneColls(index.Comm(m)));
    }
    f.recovered = done_after > 0;
  }

  std::string s = CommLabel(group) + " (" + HexId(group.comm_id) + ") was ended with " +
                  std::to_string(e.open) + (e.open == 1 ? " op" : " ops") + " in flight at " +
                  IsoTime(e.ended_wall) + " by " + std::to_string(e.ended.size()) + " of " +
                  std::to_string(group.nranks) +
                  " ranks (ncclCommAbort, or ncclCommRevoke then destroy: NCCL tells the "
                  "profiler neither), not a hang of its own";
  if (e.has_waited) {
    s += ": they were inside " + OpLabel(f.op);
    if (e.waited_since != 0 && e.ended_wall > e.waited_since) {
      s += " for " + Seconds(static_cast<double>(e.ended_wall - e.waited_since)) +
           " before they ended it";
    }
    if (!e.culprits.empty()) {
      const RankNote& first = f.ranks.front();
      s += ", which " + RankLabel(index, first.rank, first.process);
      if (e.culprits.size() > 1) s += " and " + std::to_string(e.culprits.size() - 1) + " more";
      s += first.behind > 0 ? " never enqueued (" + WhereText(first) + ")"
                            : " enqueued but never finished, and never ended the communicator "
                              "with the others (its process stopped or hung in it)";
      s += ": the hang that made the framework end it";
    } else {
      s += "; every member had enqueued it, so the records name no rank that kept them waiting "
           "(it may have queued behind a hang on another communicator)";
    }
  }
  if (f.successor >= 0) {
    const CommGroup& succ = index.groups()[f.successor];
    s += "; its successor is " + CommLabel(succ) + " (" + HexId(succ.comm_id) + ", " +
         std::to_string(succ.nranks) +
         " ranks: the old members without the ones that never arrived, initialized after the "
         "hang; lineage inferred from members and times, as by ncclCommShrink)";
    s += f.recovered ? ", which went on (" + std::to_string(done_after) + " collectives done)"
                     : ", which has done no collective yet";
  }
  f.summary = s;
  return f;
}

}  // namespace

void DetectEndedComms(const JobIndex& index, const JobProgress& progress,
                      std::vector<Finding>* out) {
  const size_t first = out->size();
  for (size_t g = 0; g < index.groups().size(); ++g) {
    const CommGroup& group = index.groups()[g];
    bool ended = false;
    for (const MemberRef& m : group.members) {
      ended = ended || (m.present() && EndedInFlight(index.Comm(m)));
    }
    if (!ended) continue;
    const EndedGroup e = Collect(index, progress, static_cast<int32_t>(g));
    out->push_back(MakeFinding(index, progress, e));
  }
  // A comm that lost the same ranks as one whose successor went on (tp/dp
  // groups of a rank world was shrunk without) is not where the job hangs.
  for (size_t i = first; i < out->size(); ++i) {
    Finding& f = (*out)[i];
    if (f.kind != FindingKind::kCommAborted || !f.root_cause || f.recovered) continue;
    for (size_t j = first; j < out->size(); ++j) {
      const Finding& o = (*out)[j];
      if (j == i || o.kind != FindingKind::kCommAborted || !o.recovered || o.successor < 0)
        continue;
      const auto f_culprits = f.ranks.begin() + static_cast<std::ptrdiff_t>(Culprits(f));
      const auto o_culprits = o.ranks.begin() + static_cast<std::ptrdiff_t>(Culprits(o));
      const bool covered = std::all_of(f.ranks.begin(), f_culprits, [&](const RankNote& n) {
        return n.process >= 0 && std::any_of(o.ranks.begin(), o_culprits, [&](const RankNote& m) {
                 return m.process == n.process;
               });
      });
      if (!covered) continue;
      f.recovered = true;
      f.summary += "; the job went on without " + std::string(Culprits(f) > 1 ? "them" : "it") +
                   " on " + CommLabel(index.groups()[o.successor]);
      break;
    }
  }
}

void SettleDroppedRanks(std::vector<Finding>* findings) {
  std::vector<int32_t> dropped;
  for (const Finding& f : *findings) {
    if (f.kind != FindingKind::kCommAborted || !f.recovered) continue;
    for (size_t i = 0; i < Culprits(f); ++i) {
      if (f.ranks[i].process >= 0) dropped.push_back(f.ranks[i].process);
    }
  }
  auto gone = [&](const Finding& f) {
    if (f.kind != FindingKind::kDeadRank || f.ranks.empty()) return false;
    return std::all_of(f.ranks.begin(), f.ranks.end(), [&](const RankNote& n) {
      return std::find(dropped.begin(), dropped.end(), n.process) != dropped.end();
    });
  };
  findings->erase(std::remove_if(findings->begin(), findings->end(), gone), findings->end());
}

bool EndedCommIsHang(const Finding& f) {
  return f.kind == FindingKind::kCommAborted && f.root_cause && !f.recovered;
}

void AddEndedCommCulprits(const std::vector<Finding>& findings, std::vector<Culprit>* culprits) {
  for (const Finding& f : findings) {
    if (!EndedCommIsHang(f)) continue;
    for (size_t i = 0; i < Culprits(f); ++i) {
      const RankNote& n = f.ranks[i];
      const bool named = std::any_of(culprits->begin(), culprits->end(), [&](const Culprit& c) {
        return n.process >= 0 ? c.process == n.process : c.group == f.group && c.rank == n.rank;
      });
      if (!named) culprits->push_back({n.process, f.group, n.rank});
    }
  }
}

}  // namespace analysis
}  // namespace flightrec

#include "analyzer/model/describe.h"

#include <time.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <vector>

#include "analyzer/model/progress.h"
#include "analyzer/reader/fr_reader.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace analysis {

std::string HexId(uint64_t id) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, id);
  return buf;
}

std::string ProcessLabel(const ProcessSnapshot& p) {
  // PyTorch FR dumps name no host or pid: the global rank is their identity.
  if (p.pytorch_fr && p.pytorch_fr->path == p.path)
    return "PyTorch FR global rank " + std::to_string(p.pytorch_fr->global_rank);
  return (p.host.empty() ? std::string("?") : p.host) + " pid " + std::to_string(p.pid);
}

const CommSnapshot* WidestComm(const ProcessSnapshot& p) {
  const CommSnapshot* widest = nullptr;
  for (const CommSnapshot& c : p.comms) {
    if (widest == nullptr || c.nranks > widest->nranks) widest = &c;
  }
  return widest != nullptr && widest->nranks > 0 ? widest : nullptr;
}

std::string GlobalRank(const ProcessSnapshot& p) {
  const CommSnapshot* widest = WidestComm(p);
  if (widest == nullptr) return "";
  std::string name = widest->name.empty() ? HexId(widest->comm_id) : widest->name;
  return name + " rank " + std::to_string(widest->rank);
}

std::string RankLabel(const JobIndex& index, int32_t rank, int32_t process) {
  std::string s = "rank " + std::to_string(rank);
  if (process < 0) return s + " (no file)";
  const ProcessSnapshot& p = index.processes()[process];
  const std::string widest = GlobalRank(p);
  s += " (" + ProcessLabel(p);
  if (!widest.empty()) s += ", " + widest;
  return s + ")";
}

std::string CommLabel(const CommGroup& group) {
  if (!group.name.empty()) return "comm `" + group.name + "`";
  return "comm " + HexId(group.comm_id);
}

std::string OpLabel(const OpRef& op) {
  if (!op.valid) return "(no op)";
  std::string s = format::FuncName(op.func);
  if (op.copy_engine) {  // docs/design/nccl.md §Copy-engine collectives
    s += op.algo == format::kAlgoCeMulticast ? " (CE, MC)"
         : op.algo == format::kAlgoCeUnicast ? " (CE, UC)"
                                             : " (CE)";
  }
  if (op.symmetric) {  // NCCL 2.31+: the symmetric kernel NCCL ran
    s += std::string(" (symmetric") +
         (op.kernel_variant > format::kVariantOther
              ? std::string(" ") + format::kKernelVariantNames[op.kernel_variant]
              : std::string()) +
         ")";
  }
  s += " #" + std::to_string(op.index);
  if (op.p2p) s += (op.func == format::kFuncRecv ? " from " : " to ") + std::to_string(op.peer);
  // The tag is the caller's name for the op (a training step): the first
  // thing an on-call engineer can match against the framework's own logs.
  if (op.user_tag != 0) s += " (user tag " + std::to_string(op.user_tag) + ")";
  return s;
}

namespace {

// The UTC calendar fields of a CLOCK_REALTIME instant: the one place a wall
// time is broken down for display.
struct tm UtcFields(uint64_t wall_ns) {
  time_t secs = static_cast<time_t>(wall_ns / 1000000000ULL);
  struct tm tm_utc = {};
  gmtime_r(&secs, &tm_utc);
  return tm_utc;
}

}  // namespace

std::string ClockTime(uint64_t wall_ns) {
  if (wall_ns == 0) return "?";
  const struct tm tm_utc = UtcFields(wall_ns);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02dZ", tm_utc.tm_year + 1900,
                tm_utc.tm_mon + 1, tm_utc.tm_mday, tm_utc.tm_hour, tm_utc.tm_min, tm_utc.tm_sec);
  return buf;
}

std::string IsoTime(uint64_t wall_ns, IsoPrecision precision) {
  if (wall_ns == 0) return "";
  const struct tm tm_utc = UtcFields(wall_ns);
  char buf[96];
  const int n = std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d",
                              tm_utc.tm_year + 1900, tm_utc.tm_mon + 1, tm_utc.tm_mday,
                              tm_utc.tm_hour, tm_utc.tm_min, tm_utc.tm_sec);
  const size_t at = n > 0 ? static_cast<size_t>(n) : 0;
  if (precision == IsoPrecision::kNanoseconds) {
    std::snprintf(buf + at, sizeof(buf) - at, ".%09" PRIu64 "Z",
                  static_cast<uint64_t>(wall_ns % 1000000000ULL));
  } else {
    std::snprintf(buf + at, sizeof(buf) - at, ".%03uZ",
                  static_cast<unsigned>((wall_ns / 1000000ULL) % 1000));
  }
  return buf;
}

std::string Seconds(double ns) {
  char buf[32];
  if (ns >= 1e9) {
    std::snprintf(buf, sizeof(buf), "%.2f s", ns / 1e9);
  } else if (ns >= 1e6) {
    std::snprintf(buf, sizeof(buf), "%.1f ms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof(buf), "%.0f us", ns / 1e3);
  }
  return buf;
}

OpRef OpOf(const OpRecord& r) {
  OpRef op;
  op.valid = true;
  op.func = r.func;
  op.seq = r.nccl_seq;
  op.index = r.op_index;
  op.p2p = r.is_p2p();
  op.peer = op.p2p ? r.root_or_peer : -1;
  op.user_tag = r.user_tag;
  op.copy_engine = r.is_copy_engine();
  op.symmetric = r.is_symmetric();
  op.kernel_variant = r.kernel_variant;
  op.algo = r.algo;
  return op;
}

std::string WhoLabel(const ProcessSnapshot& p) {
  const std::string global = GlobalRank(p);
  return ProcessLabel(p) + (global.empty() ? "" : " (" + global + ")");
}

namespace {

// " and 3 more" when a finding names more than one rank.
std::string More(size_t named) {
  return named > 1 ? " and " + std::to_string(named - 1) + " more" : std::string();
}

// Who a finding is about, host first (all_stuck leads with it only when the
// records single it out); "" when it names nobody.
std::string Who(const JobIndex& index, const Finding& f) {
  if (!f.ranks.empty()) {
    const RankNote& n = f.ranks.front();
    if (n.process >= 0) return WhoLabel(index.processes()[n.process]);
    if (f.group < 0) return "rank " + std::to_string(n.rank) + " (no file)";
    // A hole is named by the widest comm that reports it (its global rank).
    const auto [g, r] = index.MissingIdentity(f.group, n.rank);
    const CommGroup& owner = index.groups()[g];
    return (owner.name.empty() ? "rank " + std::to_string(r) + " of " + CommLabel(owner)
                               : owner.name + " rank " + std::to_string(r)) +
           " (no file)";
  }
  if (!f.extra_processes.empty()) return WhoLabel(index.processes()[f.extra_processes.front()]);
  return "";
}

size_t Named(const Finding& f) {
  return f.ranks.empty() ? f.extra_processes.size() : f.ranks.size();
}

}  // namespace

std::string FindingLead(const JobIndex& index, const Finding& f) {
  const std::string who = Who(index, f);
  const std::string op = OpLabel(f.op);
  const std::string comm = f.group >= 0 ? CommLabel(index.groups()[f.group]) : "its communicator";
  switch (f.kind) {
    case FindingKind::kLaggingRank: {
      const RankNote& n = f.ranks.front();
      if (n.skipped) return who + " skipped " + op;
      if (n.behind > 0) return who + " never enqueued " + op;
      return who + " has not reached " + op + " on its GPU";
    }
    case FindingKind::kMismatch:
      return who + More(f.ranks.size()) + " called " + op + " with other arguments than " +
             (f.contested ? "the other side (no majority)" : "the others");
    case FindingKind::kDeadRank:
      if (f.group < 0) return who + More(Named(f)) + " died during init";
      return who + " stopped" + (f.op.valid ? " inside " + op : std::string());
    case FindingKind::kMissingRank:
      return who + More(f.ranks.size()) + (f.ranks.size() > 1 ? " have" : " has") + " no file";
    case FindingKind::kAllStuck: {
      std::vector<std::string> hosts;
      for (const RankNote& n : f.ranks) {
        if (n.process < 0) continue;
        const std::string& h = index.processes()[n.process].host;
        if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.push_back(h);
      }
      std::string on = hosts.size() == 1 ? " (all on " + hosts.front() + ")"
                                         : " (on " + std::to_string(hosts.size()) + " hosts)";
      // A symmetric kernel's phases (NCCL 2.31+): where inside it they are.
      if (f.sym_phase == Finding::kSymPeersInFinalSync && f.never_started > 0) {
        const size_t others = f.ranks.size() - static_cast<size_t>(f.never_started);
        return who + More(static_cast<size_t>(f.never_started)) +
               " never arrived at the final sync of " + op + " (still computing): the other " +
               std::to_string(others) + (others == 1 ? " rank of " : " ranks of ") + comm +
               " wait there with every channel in the final sync";
      }
      if (f.sym_phase == Finding::kSymAllComputing) {
        return "all " + std::to_string(f.ranks.size()) + " ranks of " + comm + on +
               " are stuck computing in " + op + " (no channel reached the final sync)";
      }
      if (f.sym_phase == Finding::kSymAllInFinalSync) {
        return "all " + std::to_string(f.ranks.size()) + " ranks of " + comm + on +
               " wait in the final sync of " + op + " and none finished";
      }
      // The records single out the members that never started it on their
      // GPU: they lead, host first, and the others are counted.
      if (f.never_started > 0) {
        const size_t others = f.ranks.size() - static_cast<size_t>(f.never_started);
        return who + More(static_cast<size_t>(f.never_started)) + " never started " + op +
               (f.never_started == 1 ? " on its GPU" : " on their GPUs") + " while the other " +
               std::to_string(others) +
               (others == 1 ? " rank of " + comm + " is inside it"
                            : " ranks of " + comm + " are inside it");
      }
      return "all " + std::to_string(f.ranks.size()) + " ranks of " + comm + on + " are inside " +
             op + " and none finished";
    }
    case FindingKind::kDeadlock:
      return who + More(Named(f)) + " wait on each other at " + op;
    case FindingKind::kStraggler:
      return who + " arrives late at collectives on " + comm;
    case FindingKind::kCommAborted: {
      const std::string ended = comm + " was ended with " + std::to_string(f.open_at_end) +
                                " ops in flight" +
                                (f.recovered ? " and the job went on without it" : "");
      if (!f.root_cause) return ended;
      return who + (f.ranks.front().behind > 0 ? " never enqueued " : " never finished ") + op +
             "; " + ended;
    }
  }
  return who;
}

std::string WaitedText(const JobIndex& index, const Finding& f) {
  if (f.waiting_since_wall_ns == 0) return "";
  uint64_t captured = 0;
  for (const ProcessSnapshot& p : index.processes()) captured = std::max(captured, SnapshotTime(p));
  std::string s = std::to_string(f.waiting) + (f.waiting == 1 ? " rank" : " ranks") + " waiting";
  if (captured > f.waiting_since_wall_ns) {
    s += " " + Seconds(static_cast<double>(captured - f.waiting_since_wall_ns));
  }
  return s + " (since " + ClockTime(f.waiting_since_wall_ns) + ")";
}

const char* FindingKindName(FindingKind kind) {
  switch (kind) {
    case FindingKind::kMismatch:
      return "mismatch";
    case FindingKind::kDeadlock:
      return "deadlock";
    case FindingKind::kDeadRank:
      return "dead_rank";
    case FindingKind::kMissingRank:
      return "missing_rank";
    case FindingKind::kLaggingRank:
      return "lagging_rank";
    case FindingKind::kAllStuck:
      return "all_stuck";
    case FindingKind::kStraggler:
      return "straggler";
    case FindingKind::kCommAborted:
      return "comm_aborted";
  }
  return "unknown";
}

const char* VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kHealthy:
      return "healthy";
    case Verdict::kSlow:
      return "slow";
    case Verdict::kHang:
      return "hang";
    case Verdict::kDesync:
      return "desync";
    case Verdict::kIncomplete:
      return "incomplete";
  }
  return "unknown";
}

const char* WhereaboutsName(Whereabouts where) {
  switch (where) {
    case Whereabouts::kOutsideNccl:
      return "outside_nccl";
    case Whereabouts::kInsideNccl:
      return "inside_nccl";
    case Whereabouts::kDead:
      return "dead";
    case Whereabouts::kMissing:
      return "missing";
  }
  return "unknown";
}

}  // namespace analysis
}  // namespace flightrec

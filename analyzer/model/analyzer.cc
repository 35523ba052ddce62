#include "analyzer/model/analyzer.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/model/lifecycle.h"
#include "analyzer/model/wait_graph.h"

namespace flightrec {
namespace analysis {
namespace {

bool IsHangKind(FindingKind k) {
  return k == FindingKind::kLaggingRank || k == FindingKind::kDeadRank ||
         k == FindingKind::kMissingRank || k == FindingKind::kAllStuck ||
         k == FindingKind::kDeadlock;
}

Verdict DecideVerdict(const JobIndex& index, const std::vector<Finding>& findings) {
  if (index.processes().empty()) return Verdict::kIncomplete;
  bool hang = false, slow = false;
  for (const Finding& f : findings) {
    if (f.kind == FindingKind::kMismatch) return Verdict::kDesync;
    hang = hang || IsHangKind(f.kind) || EndedCommIsHang(f);
    slow = slow || f.kind == FindingKind::kStraggler;
  }
  if (hang) return Verdict::kHang;
  return slow ? Verdict::kSlow : Verdict::kHealthy;
}

// How direct a root cause's evidence is, lower first: seen in its own
// records (shifted ops); named by what it did (skipped an op, stopped
// outside NCCL, died); inferred from where it is blocked.
int Directness(const Finding& f) {
  if (f.from_records) return 0;
  if (f.ranks.empty() || f.inferred) return 2;
  const RankNote& n = f.ranks.front();
  return n.skipped || n.where != Whereabouts::kInsideNccl ? 1 : 2;
}

void SortFindings(std::vector<Finding>* findings) {
  std::stable_sort(findings->begin(), findings->end(), [](const Finding& a, const Finding& b) {
    if (a.root_cause != b.root_cause) return a.root_cause;
    // A death inferred from silence never outranks a rank seen (in its own
    // records) outside NCCL, skipping, or shifted: a starved process's
    // heartbeat lags too.
    const bool dead = a.kind == FindingKind::kDeadRank || b.kind == FindingKind::kDeadRank;
    if (a.root_cause && dead && Directness(a) != Directness(b)) {
      return Directness(a) < Directness(b);
    }
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.root_cause && Directness(a) != Directness(b)) return Directness(a) < Directness(b);
    // Of two stragglers, the one the others waited for longest: a rank held
    // up by the slow one arrives late on its other comms too, but by less.
    if (a.kind == FindingKind::kStraggler && !a.ranks.empty() && !b.ranks.empty() &&
        a.ranks.front().caused_wait_ns != b.ranks.front().caused_wait_ns) {
      return a.ranks.front().caused_wait_ns > b.ranks.front().caused_wait_ns;
    }
    // The most direct evidence first: the comm where fewest ranks lag.
    if (a.root_cause && a.ranks.size() != b.ranks.size()) return a.ranks.size() < b.ranks.size();
    if (a.group != b.group) return a.group < b.group;
    const int32_t ra = a.ranks.empty() ? -1 : a.ranks.front().rank;
    const int32_t rb = b.ranks.empty() ? -1 : b.ranks.front().rank;
    return ra < rb;
  });
}

// Mismatch minorities, members that skipped ops, the top straggler and the
// members an all_stuck op never started on (their GPU) are culprits too (the
// wait graph only knows whom hung processes wait for).
void AddOtherCulprits(const std::vector<Finding>& findings, std::vector<Culprit>* culprits) {
  std::set<int32_t> named;
  for (const Culprit& c : *culprits) named.insert(c.process);
  for (const Finding& f : findings) {
    if (f.kind == FindingKind::kAllStuck) {
      for (int32_t i = 0; i < f.never_started && i < static_cast<int32_t>(f.ranks.size()); ++i) {
        const int32_t p = f.ranks[i].process;
        if (p >= 0 && named.insert(p).second) culprits->push_back({p, -1, -1});
      }
    } else if (f.kind == FindingKind::kLaggingRank && f.root_cause && !f.ranks.empty() &&
               f.ranks.front().skipped) {
      const int32_t p = f.ranks.front().process;
      if (p >= 0 && named.insert(p).second) culprits->push_back({p, -1, -1});
    } else if (f.kind == FindingKind::kMismatch && !f.contested) {
      for (const RankNote& n : f.ranks) {
        if (n.process >= 0 && named.insert(n.process).second)
          culprits->push_back({n.process, -1, -1});
      }
    } else if (f.kind == FindingKind::kStraggler) {
      const int32_t p = f.ranks.front().process;
      if (p >= 0 && named.insert(p).second) culprits->push_back({p, -1, -1});
    }
  }
}

// Culprits in the order of the first root-cause finding naming each, so the
// first culprit is the headline's.
void OrderCulprits(const JobIndex& index, const std::vector<Finding>& findings,
                   std::vector<Culprit>* culprits) {
  auto first = [&](const Culprit& c) {
    for (size_t i = 0; i < findings.size(); ++i) {
      const Finding& f = findings[i];
      if (!f.root_cause) continue;
      if (c.process < 0) {
        if (f.kind == FindingKind::kMissingRank && f.group == index.MissingOwner(c.group)) return i;
        continue;
      }
      for (const RankNote& n : f.ranks) {
        if (n.process == c.process) return i;
      }
      for (int32_t p : f.extra_processes) {
        if (p == c.process) return i;
      }
    }
    return findings.size();
  };
  std::vector<std::pair<size_t, Culprit>> keyed;
  for (const Culprit& c : *culprits) keyed.emplace_back(first(c), c);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  for (size_t i = 0; i < keyed.size(); ++i) (*culprits)[i] = keyed[i].second;
}

// Files a windowed load trimmed (record_window.h), said once for the job.
void AddWindowNote(const JobIndex& index, Analysis* a) {
  uint64_t files = 0, trimmed = 0, kept = 0;
  for (const ProcessSnapshot& snap : index.processes()) {
    uint64_t t = 0;
    for (const CommSnapshot& c : snap.comms) {
      t += c.trimmed;
      kept += c.records.size();
    }
    files += t > 0 ? 1 : 0;
    trimmed += t;
  }
  if (files == 0) return;
  a->notes.push_back(
      std::to_string(files) + " of " + std::to_string(index.processes().size()) +
      " files held more records than the analysis keeps in full (--window, --record-memory): " +
      std::to_string(kept) + " newest records were kept in full and " + std::to_string(trimmed) +
      " older ones as signatures (collectives, still compared for mismatches and skips) or not "
      "at all (p2p beyond the record memory); stragglers are judged on the newest records only");
}

// A warning with its numbers blanked: the kind it is, whatever the file.
std::string WarningKind(const std::string& w) {
  std::string kind;
  for (char ch : w) {
    const bool digit = ch >= '0' && ch <= '9';
    if (!digit) kind += ch;
    if (digit && (kind.empty() || kind.back() != '#')) kind += '#';
  }
  return kind;
}

// What the reader noticed in the files (a stepped wall clock, unknown enum
// values, bytes after a zstd frame, ...): one note per kind, naming the
// first file and how many others, so 16,000 files saying the same do not
// bury the findings. Torn-record warnings are left out: the per-file note
// below counts them.
void AddReaderWarnings(const JobIndex& index, Analysis* a) {
  struct Kind {
    std::string first;  // "path: warning" of the first file
    size_t files = 0;
  };
  std::map<std::string, Kind> kinds;
  std::vector<const Kind*> order;  // first seen first
  for (const ProcessSnapshot& snap : index.processes()) {
    std::set<std::string> seen;  // a file counts once per kind
    for (const std::string& w : snap.warnings) {
      if (w.find("torn or in-flight records") != std::string::npos) continue;
      const std::string k = WarningKind(w);
      if (!seen.insert(k).second) continue;
      auto [it, added] = kinds.try_emplace(k);
      if (added) {
        it->second.first = snap.path + ": " + w;
        order.push_back(&it->second);
      }
      ++it->second.files;
    }
  }
  for (const Kind* k : order) {
    a->notes.push_back(k->files == 1
                           ? k->first
                           : k->first + " (and " + std::to_string(k->files - 1) + " more file" +
                                 (k->files > 2 ? "s" : "") + " with the same warning)");
  }
}

// Hosts whose wall clocks differ from the reference host's (host_clocks.h):
// one note per host, so that times in the findings are read right.
void AddClockNotes(const JobIndex& index, const JobProgress& progress, Analysis* a) {
  std::string reference;
  std::map<std::string, int64_t> skewed;
  for (size_t p = 0; p < index.processes().size() && p < progress.clock_offset_ns.size(); ++p) {
    const std::string& host = index.processes()[p].host;
    if (progress.clock_offset_ns[p] == 0) {
      if (reference.empty() && !index.processes()[p].comms.empty()) reference = host;
    } else {
      skewed.emplace(host, progress.clock_offset_ns[p]);
    }
  }
  for (const auto& [host, offset] : skewed) {
    const double s = static_cast<double>(offset < 0 ? -offset : offset);
    a->notes.push_back("host " + host + "'s wall clock is " + Seconds(s) +
                       (offset > 0 ? " ahead of " : " behind ") + "host " + reference +
                       "'s (measured from the GPU end times of collectives both finished); times "
                       "of different hosts are compared after removing it, and times in the "
                       "findings are on host " +
                       reference + "'s clock");
  }
}

void AddNotes(const JobIndex& index, const JobProgress& progress, Analysis* a) {
  a->notes = index.warnings();
  AddClockNotes(index, progress, a);
  AddReaderWarnings(index, a);
  AddWindowNote(index, a);
  for (size_t p = 0; p < index.processes().size(); ++p) {
    const ProcessSnapshot& snap = index.processes()[p];
    const uint64_t drops = LostEvents(snap);
    uint64_t torn = 0;
    for (const CommSnapshot& c : snap.comms) torn += c.torn;
    std::string what;
    if (drops > 0) what += std::to_string(drops) + " dropped events";
    if (torn > 0) what += (what.empty() ? "" : ", ") + std::to_string(torn) + " torn records";
    if (progress.processes[p].untracked) {
      what += std::string(what.empty() ? "" : ", ") +
              "completion not tracked (no KernelCh/ProxyOp events): its hangs are invisible";
    }
    if (!what.empty()) a->notes.push_back(snap.path + ": " + what);
  }
}

}  // namespace

// NCCL 2.27-2.30 run symmetric-kernel collectives without any profiler event
// and without advancing seqNumber (docs/design/nccl.md §Symmetric kernels):
// a job that stopped inside one leaves every recorded op done. When the
// records show no hang although someone asked for a dump (a trigger or a
// request: the job was thought hung) and a process ran such a release, say
// so: the gap fits an invisible symmetric collective.
void AddInvisibleSymmetricNote(const JobIndex& index, Analysis* a) {
  if (a->verdict != Verdict::kHealthy) return;
  const bool suspected =
      std::any_of(index.processes().begin(), index.processes().end(), [](const ProcessSnapshot& p) {
        return p.is_dump &&
               (p.dump_reason == format::kDumpTrigger || p.dump_reason == format::kDumpRequest ||
                p.dump_reason == format::kDumpTimeout);
      });
  if (!suspected) return;
  std::string release;
  for (const ProcessSnapshot& p : index.processes()) {
    int major = 0, minor = 0;
    if (std::sscanf(p.nccl_version.c_str(), "%d.%d", &major, &minor) == 2 && major == 2 &&
        minor >= 27 && minor <= 30) {
      release = p.nccl_version;
      break;
    }
  }
  if (release.empty()) return;
  a->notes.push_back(
      "NCCL " + release +
      " reports no symmetric-kernel collectives (buffers in symmetric windows; NCCL 2.27-2.30): "
      "they leave no record and do not advance seqNumber, so a job stopped inside one shows "
      "every recorded op done; NCCL 2.31 and newer record them");
}

Analysis Analyze(const JobIndex& index, const AnalyzeOptions& options) {
  Analysis a;
  const JobProgress progress = ComputeProgress(index, options.progress);
  // Members whose ops are the others' shifted skipped ops: they are root
  // causes in the wait graph, and their ops are not field mismatches.
  const std::vector<ShiftedMember> shifts = FindShiftedMembers(index);
  std::vector<char> skippers(index.processes().size(), 0);
  for (const ShiftedMember& m : shifts) skippers[m.process] = 1;
  const WaitGraph graph = BuildWaitGraph(index, progress, skippers);
  DetectHang(index, progress, graph, shifts, &a.findings);
  DetectMismatch(index, shifts, &a.findings);
  DetectEndedComms(index, progress, &a.findings);
  SettleDroppedRanks(&a.findings);
  const bool hung = std::any_of(a.findings.begin(), a.findings.end(), [](const Finding& f) {
    return IsHangKind(f.kind) || EndedCommIsHang(f);
  });
  // Straggling is only meaningful for a run that kept going.
  if (!hung) DetectStragglers(index, options.straggler, &a.findings);
  SortFindings(&a.findings);
  a.culprits = graph.culprits;
  AddOtherCulprits(a.findings, &a.culprits);
  AddEndedCommCulprits(a.findings, &a.culprits);
  OrderCulprits(index, a.findings, &a.culprits);
  a.verdict = DecideVerdict(index, a.findings);
  AddNotes(index, progress, &a);
  AddInvisibleSymmetricNote(index, &a);
  return a;
}

int ExitCodeFor(const Analysis& analysis) {
  if (analysis.verdict == Verdict::kIncomplete) return 2;
  return analysis.verdict == Verdict::kHealthy ? 0 : 1;
}

}  // namespace analysis
}  // namespace flightrec

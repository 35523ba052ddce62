#include <algorithm>
#include <cctype>
#include <cstdio>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/report/next_step.h"
#include "analyzer/report/report.h"
#include "flightrec/version.h"

namespace flightrec {
namespace report {
namespace {

using analysis::Finding;

constexpr size_t kMaxConsequences = 10;    // the rest is in --format json
constexpr size_t kMaxRejectedListed = 20;  // likewise

std::string Upper(const char* s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string Confidence(double c) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.2f", c);
  return buf;
}

std::string FindingLine(const ReportInput& in, const Finding& f) {
  std::string s = std::string("  ") + analysis::FindingKindName(f.kind);
  if (f.group >= 0) s += " on " + analysis::CommLabel(in.index.groups()[f.group]);
  if (f.op.valid) s += " at " + analysis::OpLabel(f.op);
  s += " (confidence " + Confidence(f.confidence) + ")\n    " + f.summary + "\n";
  const NextStep next = NextStepFor(in.index, f);
  s += "    next: " + next.action + " (" + next.anchor + ")\n";
  return s;
}

}  // namespace

std::string CulpritText(const ReportInput& in, const analysis::Culprit& c) {
  const analysis::JobIndex& index = in.index;
  if (c.process < 0) {
    return "rank " + std::to_string(c.rank) + " of " +
           analysis::CommLabel(index.groups()[c.group]) + " (no file)";
  }
  const ProcessSnapshot& p = index.processes()[c.process];
  std::string s = analysis::ProcessLabel(p) + " (";
  for (size_t i = 0; i < p.comms.size(); ++i) {
    const CommSnapshot& comm = p.comms[i];
    s += (i ? ", " : "") + (comm.name.empty() ? analysis::HexId(comm.comm_id) : comm.name) +
         " rank " + std::to_string(comm.rank);
  }
  return s + ")";
}

std::string TicketFacts(const ReportInput& in) {
  std::string s;
  auto add = [&s](const std::string& part) { s += (s.empty() ? "" : "; ") + part; };
  if (!in.inputs.job_id.empty()) add("job " + in.inputs.job_id);
  std::string when = "analyzed";
  if (in.inputs.analyzed_wall_ns != 0) when += " " + analysis::IsoTime(in.inputs.analyzed_wall_ns);
  add(when + " by flightrec " + kVersion);
  if (!in.inputs.paths.empty()) {
    std::string paths;
    for (const std::string& p : in.inputs.paths) paths += (paths.empty() ? "" : ", ") + p;
    add("paths: " + paths);
  }
  return s;
}

std::string SourceText(const ReportInput& in, int32_t process) {
  if (process < 0 || in.inputs.sources.size() != in.index.processes().size()) return "";
  const analysis::EvidenceSource& src = in.inputs.sources[static_cast<size_t>(process)];
  return std::string(src.kind) + " " + src.path + ": " + src.reason;
}

std::string SourcesSummary(const ReportInput& in) {
  size_t dumps = 0, rings = 0, newer = 0, init = 0;
  for (const analysis::EvidenceSource& src : in.inputs.sources) {
    const std::string kind = src.kind;
    dumps += kind == "dump" ? 1 : 0;
    rings += kind == "ring" ? 1 : 0;
    init += kind == "init" ? 1 : 0;
    newer += src.over_dump ? 1 : 0;
  }
  std::string s = "state from " + std::to_string(dumps) + " dump" + (dumps == 1 ? "" : "s") +
                  " and " + std::to_string(rings) + " ring" + (rings == 1 ? "" : "s");
  if (newer > 0) s += " (" + std::to_string(newer) + " newer than their dumps)";
  if (init > 0) {
    s += "; " + std::to_string(init) + " process" + (init == 1 ? "" : "es") +
         " died during init (half-made ring)";
  }
  return s;
}

std::string Headline(const ReportInput& in) {
  const analysis::Analysis& a = in.analysis;
  std::string verdict = Upper(analysis::VerdictName(a.verdict));
  if (a.verdict == analysis::Verdict::kIncomplete) {
    return verdict + ": no readable flight-recorder file among the inputs";
  }
  if (a.findings.empty()) {
    return verdict + ": no findings in " + std::to_string(in.index.processes().size()) +
           " processes, " + std::to_string(in.index.groups().size()) + " communicators";
  }
  const Finding& f = a.findings.front();
  std::string s = verdict + ": " + analysis::FindingLead(in.index, f);
  const std::string waited = analysis::WaitedText(in.index, f);
  if (!waited.empty()) s += "; " + waited;
  // The sub-communicator detail; the evidence is the finding's summary (the
  // reports' findings, the JSON summary): a log line stays short.
  s += std::string("; ") + analysis::FindingKindName(f.kind);
  if (f.group >= 0) {
    const analysis::CommGroup& g = in.index.groups()[f.group];
    s += " on " + analysis::CommLabel(g);
    if ((f.kind != analysis::FindingKind::kAllStuck || f.never_started > 0) && !f.ranks.empty()) {
      s += " (rank " + std::to_string(f.ranks.front().rank) + " of " + std::to_string(g.nranks) +
           ")";
    }
  }
  return s;
}

std::string Title(const ReportInput& in) {
  const analysis::Analysis& a = in.analysis;
  std::string s = Upper(analysis::VerdictName(a.verdict));
  if (!in.inputs.job_id.empty()) s += " in job " + in.inputs.job_id;
  if (a.verdict == analysis::Verdict::kIncomplete) return s + ": no readable input";
  if (a.findings.empty()) {
    return s + ": no findings in " + std::to_string(in.index.processes().size()) + " processes";
  }
  return s + ": " + analysis::FindingLead(in.index, a.findings.front());
}

std::string Summary(const ReportInput& in) {
  const analysis::Analysis& a = in.analysis;
  std::string s = Headline(in) + ".";
  if (!a.findings.empty()) s += " Evidence: " + a.findings.front().summary + ".";
  if (!a.culprits.empty()) {
    s += std::string(a.culprits.size() > 1 ? " Root causes: " : " Root cause: ");
    for (size_t i = 0; i < a.culprits.size(); ++i) {
      s += (i ? ", " : "") + CulpritText(in, a.culprits[i]);
    }
    s += ".";
  }
  if (!a.findings.empty()) {
    const NextStep next = NextStepFor(in.index, a.findings.front());
    s += " Next step: " + next.action + " (" + next.anchor + ").";
    if (a.findings.size() > 1) {
      s += " " + std::to_string(a.findings.size() - 1) + " more finding" +
           (a.findings.size() > 2 ? "s" : "") + " in the report.";
    }
  }
  return s + " " + std::to_string(in.inputs.read.size()) + " files read; " + TicketFacts(in) + ".";
}

std::string TextReport(const ReportInput& in) {
  const analysis::Analysis& a = in.analysis;
  std::string s = Headline(in) + "\n" + TicketFacts(in) + "\n";
  if (!a.culprits.empty()) {
    s += "\nRoot cause" + std::string(a.culprits.size() > 1 ? "s" : "") + ":\n";
    for (const analysis::Culprit& c : a.culprits) {
      s += "  " + CulpritText(in, c) + "\n";
      const std::string src = SourceText(in, c.process);
      if (!src.empty()) s += "    state from " + src + "\n";
      // A PyTorch FR dump: the Python frames of the call it waits in, or of
      // its last call (it is stuck in its own code after it).
      std::string what;
      const std::vector<std::string> frames =
          c.process >= 0 ? FrCurrentFrames(in.index.processes()[c.process], 8, &what)
                         : std::vector<std::string>();
      if (!frames.empty()) {
        s += "    Python stack of " + what + " (PyTorch FR dump " +
             in.index.processes()[c.process].pytorch_fr->path + "):\n";
        for (const std::string& f : frames) s += "      " + f + "\n";
      }
    }
  } else if (!a.findings.empty()) {
    s += "\nNo single process is to blame.\n";
  }
  size_t roots = 0;
  for (const Finding& f : a.findings) roots += f.root_cause ? 1 : 0;
  if (roots > 0) {
    s += "\nFindings:\n";
    for (const Finding& f : a.findings) {
      if (f.root_cause) s += FindingLine(in, f);
    }
  }
  const size_t rest = a.findings.size() - roots;
  if (rest > 0) {
    s += roots > 0 ? "\nConsequences (" + std::to_string(rest) + "):\n" : "\nFindings:\n";
    size_t shown = 0;
    for (const Finding& f : a.findings) {
      if (f.root_cause) continue;
      if (shown++ == kMaxConsequences) {
        s += "  ... " + std::to_string(rest - kMaxConsequences) + " more (see --format json)\n";
        break;
      }
      s += FindingLine(in, f);
    }
  }
  s += "\nInputs: " + std::to_string(in.inputs.read.size()) + " read";
  if (!in.inputs.superseded.empty()) {
    s += ", " + std::to_string(in.inputs.superseded.size()) + " older files of the same processes";
  }
  s += ", " + std::to_string(in.inputs.rejected.size()) + " rejected";
  if (!in.inputs.sources.empty()) s += "; " + SourcesSummary(in);
  s += "\n";
  size_t listed = 0;
  for (const analysis::RejectedInput& r : in.inputs.rejected) {
    if (listed++ == kMaxRejectedListed) {
      s += "  ... " + std::to_string(in.inputs.rejected.size() - kMaxRejectedListed) +
           " more rejected (see --format json)\n";
      break;
    }
    s += "  rejected " + r.path + ": " + r.reason + "\n";
  }
  for (const std::string& n : a.notes) s += "  note: " + n + "\n";
  return s;
}

}  // namespace report
}  // namespace flightrec

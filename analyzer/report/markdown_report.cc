#include <cstdio>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/report/next_step.h"
#include "analyzer/report/report.h"

namespace flightrec {
namespace report {
namespace {

// Table cells must not break the table.
std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string RanksText(const analysis::Finding& f) {
  std::string s;
  for (size_t i = 0; i < f.ranks.size() && i < 8; ++i) {
    s += (i ? ", " : "") + std::to_string(f.ranks[i].rank);
  }
  if (f.ranks.size() > 8) s += ", ...";
  return s;
}

}  // namespace

std::string MarkdownReport(const ReportInput& in) {
  const analysis::Analysis& a = in.analysis;
  std::string s = "# flightrec report: " + std::string(analysis::VerdictName(a.verdict)) + "\n\n";
  s += "**" + Cell(Headline(in)) + "**\n\n" + Cell(TicketFacts(in)) + "\n\n";
  if (!a.culprits.empty()) {
    s += "## Root causes\n\n";
    for (const analysis::Culprit& c : a.culprits) {
      s += "- " + Cell(CulpritText(in, c)) + "\n";
      const std::string src = SourceText(in, c.process);
      if (!src.empty()) s += "  - state from " + Cell(src) + "\n";
      std::string what;  // a PyTorch FR dump's frames (docs/design/pytorch-fr.md)
      const std::vector<std::string> frames =
          c.process >= 0 ? FrCurrentFrames(in.index.processes()[c.process], 8, &what)
                         : std::vector<std::string>();
      if (!frames.empty()) {
        s += "  - Python stack of " + Cell(what) + " (PyTorch FR):\n";
        for (const std::string& f : frames) s += "    - `" + Cell(f) + "`\n";
      }
    }
    s += "\n";
  }
  if (!a.findings.empty()) {
    s += "## Findings\n\n| | kind | comm | ranks | op | confidence | evidence | next step |\n"
         "|---|---|---|---|---|---|---|---|\n";
    for (const analysis::Finding& f : a.findings) {
      char conf[16];
      std::snprintf(conf, sizeof(conf), "%.2f", f.confidence);
      const NextStep next = NextStepFor(in.index, f);
      s += std::string("| ") + (f.root_cause ? "root cause" : "consequence") + " | " +
           analysis::FindingKindName(f.kind) + " | " +
           Cell(f.group >= 0 ? analysis::CommLabel(in.index.groups()[f.group]) : "") + " | " +
           RanksText(f) + " | " + Cell(analysis::OpLabel(f.op)) + " | " + conf + " | " +
           Cell(f.summary) + " | " + Cell(next.action) + " (`" + next.anchor + "`) |\n";
    }
    s += "\n";
  }
  s += "## Inputs\n\n- read: " + std::to_string(in.inputs.read.size()) + " files\n";
  if (!in.inputs.sources.empty()) s += "- " + Cell(SourcesSummary(in)) + "\n";
  for (const analysis::SupersededInput& o : in.inputs.superseded) {
    s += "- superseded `" + o.path + "`: " + Cell(o.why) + "\n";
  }
  for (const analysis::RejectedInput& r : in.inputs.rejected) {
    s += "- rejected `" + r.path + "`: " + Cell(r.reason) + "\n";
  }
  for (const std::string& n : a.notes) s += "- note: " + Cell(n) + "\n";
  return s;
}

}  // namespace report
}  // namespace flightrec

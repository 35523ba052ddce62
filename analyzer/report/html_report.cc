// A single self-contained HTML file: the verdict, the findings, where every
// rank of the root cause's communicators stands around the stuck op
// (html_position_grid.h) and an inline SVG with a per-process timeline of
// the last ops around the hang. Nothing is loaded from anywhere (no
// scripts, fonts, images or stylesheets); everything read from files is
// escaped (html_text.h).
#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "analyzer/model/describe.h"
#include "analyzer/model/position_grid.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/report/html_position_grid.h"
#include "analyzer/report/html_text.h"
#include "analyzer/report/next_step.h"
#include "analyzer/report/report.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {
namespace {

constexpr size_t kMaxRows = 48;      // processes drawn
constexpr size_t kOpsPerRow = 12;    // newest ops per process
constexpr double kLabelWidth = 260;  // px
constexpr double kPlotWidth = 900;   // px
constexpr double kRowHeight = 18;    // px

struct Bar {
  size_t row;
  uint64_t start, end;
  uint8_t state;
  std::string label;
};

// Culprits first, then processes named by findings, then the rest.
std::vector<int32_t> PickRows(const ReportInput& in) {
  std::vector<int32_t> rows;
  std::set<int32_t> seen;
  auto add = [&](int32_t p) {
    if (p >= 0 && rows.size() < kMaxRows && seen.insert(p).second) rows.push_back(p);
  };
  for (const analysis::Culprit& c : in.analysis.culprits) add(c.process);
  for (const analysis::Finding& f : in.analysis.findings) {
    for (const analysis::RankNote& n : f.ranks) add(n.process);
  }
  for (size_t p = 0; p < in.index.processes().size(); ++p) add(static_cast<int32_t>(p));
  return rows;
}

std::vector<Bar> CollectBars(const ReportInput& in, const analysis::JobProgress& progress,
                             const std::vector<int32_t>& rows) {
  std::vector<Bar> bars;
  for (size_t row = 0; row < rows.size(); ++row) {
    const ProcessSnapshot& p = in.index.processes()[rows[row]];
    const uint64_t now = progress.processes[rows[row]].snapshot_wall_ns;
    std::vector<Bar> mine;
    for (const CommSnapshot& c : p.comms) {
      const size_t from = c.records.size() > kOpsPerRow ? c.records.size() - kOpsPerRow : 0;
      for (size_t i = from; i < c.records.size(); ++i) {
        const OpRecord& r = c.records[i];
        if (r.t_enqueue_ns == 0) continue;
        const uint64_t end = r.state >= format::kOpDone && r.gpu_end_ns != 0 ? r.gpu_end_ns
                             : r.state >= format::kOpDone
                                 ? std::max(r.t_enqueued_ns, r.t_enqueue_ns)
                                 : std::max(now, r.t_enqueue_ns);
        mine.push_back({row, r.t_enqueue_ns, end, r.state,
                        (c.name.empty() ? analysis::HexId(c.comm_id) : c.name) + " " +
                            analysis::OpLabel(analysis::OpOf(r)) + " (" +
                            format::OpStateName(r.state) + ")"});
      }
    }
    std::sort(mine.begin(), mine.end(),
              [](const Bar& a, const Bar& b) { return a.start < b.start; });
    if (mine.size() > kOpsPerRow) mine.erase(mine.begin(), mine.end() - kOpsPerRow);
    bars.insert(bars.end(), mine.begin(), mine.end());
  }
  return bars;
}

std::string Timeline(const ReportInput& in, const analysis::JobProgress& progress) {
  const std::vector<int32_t> rows = PickRows(in);
  const std::vector<Bar> bars = CollectBars(in, progress, rows);
  if (bars.empty()) return "<p>No ops recorded.</p>\n";
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const Bar& b : bars) {
    lo = std::min(lo, b.start);
    hi = std::max(hi, b.end);
  }
  const double span = hi > lo ? static_cast<double>(hi - lo) : 1.0;
  char buf[512];
  std::string s;
  std::snprintf(buf, sizeof(buf),
                "<svg width=\"%.0f\" height=\"%.0f\" "
                "role=\"img\">\n",
                kLabelWidth + kPlotWidth + 10, kRowHeight * static_cast<double>(rows.size() + 1));
  s += buf;
  std::set<int32_t> culprits;
  for (const analysis::Culprit& c : in.analysis.culprits) culprits.insert(c.process);
  for (size_t row = 0; row < rows.size(); ++row) {
    const ProcessSnapshot& p = in.index.processes()[rows[row]];
    const int32_t rank = p.comms.empty() ? -1 : p.comms.front().rank;
    std::snprintf(buf, sizeof(buf), "<text x=\"4\" y=\"%.0f\" class=\"%s\">",
                  kRowHeight * static_cast<double>(row + 1) - 5,
                  culprits.count(rows[row]) ? "culprit" : "lbl");
    s += buf +
         HtmlEscape(analysis::ProcessLabel(p) + (rank >= 0 ? " r" + std::to_string(rank) : "")) +
         "</text>\n";
  }
  for (const Bar& b : bars) {
    const double x = kLabelWidth + kPlotWidth * static_cast<double>(b.start - lo) / span;
    const double w = std::max(1.0, kPlotWidth * static_cast<double>(b.end - b.start) / span);
    const char* cls = b.state >= format::kOpDone      ? "done"
                      : b.state == format::kOpRunning ? "run"
                                                      : "enq";
    std::snprintf(buf, sizeof(buf),
                  "<rect x=\"%.1f\" y=\"%.0f\" width=\"%.1f\" height=\"%.0f\" class=\"%s\">", x,
                  kRowHeight * static_cast<double>(b.row) + 3, w, kRowHeight - 6, cls);
    s += buf;
    s += "<title>" + HtmlEscape(b.label) + "</title></rect>\n";
  }
  s += "</svg>\n<p class=\"legend\">Window " + HtmlEscape(analysis::IsoTime(lo)) + " to " +
       HtmlEscape(analysis::IsoTime(hi)) + " (" + HtmlEscape(analysis::Seconds(span)) +
       "). Green: done; orange: running on the GPU; red: enqueued, never started. Unfinished "
       "ops extend to the snapshot time.</p>\n";
  return s;
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;margin:2em;color:#222}"
    "h1{font-size:1.4em}.verdict{font-size:1.1em;padding:.6em;background:#fff3cd;"
    "border-left:4px solid #e0a800}table{border-collapse:collapse;margin:1em 0}"
    "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}"
    ".root{background:#fde2e2}rect.done{fill:#5cb85c}rect.run{fill:#f0ad4e}"
    "rect.enq{fill:#d9534f}text{font-size:11px;font-family:monospace}"
    "text.culprit{fill:#c00;font-weight:bold}.legend{font-size:.85em;color:#555}";

}  // namespace

std::string HtmlReport(const ReportInput& in, const analysis::JobProgress& progress) {
  const analysis::Analysis& a = in.analysis;
  std::string s = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>flightrec: " +
                  std::string(analysis::VerdictName(a.verdict)) + "</title><style>" + kStyle +
                  kPositionGridStyle +
                  "</style></head><body>\n<h1>flightrec report</h1>\n<p class=\"verdict\">" +
                  HtmlText(Headline(in)) + "</p>\n<p>" + HtmlText(TicketFacts(in)) + "</p>\n";
  const std::vector<analysis::PositionGrid> grids =
      analysis::RootCauseGrids(in.index, in.analysis, progress);
  if (!grids.empty()) {
    s += "<h2>Where every rank is</h2>\n";
    for (const analysis::PositionGrid& g : grids) s += PositionGridHtml(in.index, g);
    s += PositionGridLegend();
  }
  if (!a.findings.empty()) {
    s += "<h2>Findings</h2>\n<table><tr><th>kind</th><th>comm</th><th>op</th><th>confidence</th>"
         "<th>evidence</th><th>next step</th></tr>\n";
    for (const analysis::Finding& f : a.findings) {
      char conf[16];
      std::snprintf(conf, sizeof(conf), "%.2f", f.confidence);
      const NextStep next = NextStepFor(in.index, f);
      s += std::string("<tr") + (f.root_cause ? " class=\"root\"" : "") + "><td>" +
           analysis::FindingKindName(f.kind) + "</td><td>" +
           HtmlText(f.group >= 0 ? analysis::CommLabel(in.index.groups()[f.group]) : "") +
           "</td><td>" + HtmlEscape(analysis::OpLabel(f.op)) + "</td><td>" + conf + "</td><td>" +
           HtmlText(f.summary) + "</td><td>" + HtmlText(next.action) + " (<code>" +
           HtmlEscape(next.anchor) + "</code>)</td></tr>\n";
    }
    s += "</table>\n";
  }
  s += "<h2>Timeline (newest ops per process)</h2>\n" + Timeline(in, progress);
  s += "<h2>Inputs</h2>\n<p>" + std::to_string(in.inputs.read.size()) + " files read, " +
       std::to_string(in.inputs.rejected.size()) + " rejected";
  if (!in.inputs.sources.empty()) s += "; " + HtmlText(SourcesSummary(in));
  s += ".</p>\n<ul>\n";
  for (const analysis::Culprit& c : in.analysis.culprits) {
    const std::string src = SourceText(in, c.process);
    if (!src.empty()) {
      s += "<li>" + HtmlEscape(analysis::ProcessLabel(in.index.processes()[c.process])) +
           ": state from " + HtmlText(src) + "</li>\n";
      std::string what;  // a PyTorch FR dump's frames (docs/design/pytorch-fr.md)
      const std::vector<std::string> frames =
          FrCurrentFrames(in.index.processes()[c.process], 8, &what);
      if (!frames.empty()) {
        s += "<li>Python stack of " + HtmlEscape(what) + " (PyTorch FR):<pre>";
        for (const std::string& f : frames) s += HtmlEscape(f) + "\n";
        s += "</pre></li>\n";
      }
    }
  }
  for (const analysis::SupersededInput& o : in.inputs.superseded) {
    s += "<li>superseded <code>" + HtmlEscape(o.path) + "</code>: " + HtmlText(o.why) + "</li>\n";
  }
  for (const analysis::RejectedInput& r : in.inputs.rejected) {
    s += "<li>rejected <code>" + HtmlEscape(r.path) + "</code>: " + HtmlText(r.reason) + "</li>\n";
  }
  for (const std::string& n : a.notes) s += "<li>note: " + HtmlText(n) + "</li>\n";
  s += "</ul>\n</body></html>\n";
  return s;
}

}  // namespace report
}  // namespace flightrec

// Renders an analysis for people (text, markdown, html) and programs (json,
// docs/report-schema.md), and the job as a Chrome/Perfetto trace.
#ifndef FLIGHTREC_ANALYZER_REPORT_REPORT_H_
#define FLIGHTREC_ANALYZER_REPORT_REPORT_H_

#include <string>

#include "analyzer/model/finding.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"
#include "analyzer/report/timeline.h"

namespace flightrec {
namespace report {

constexpr const char* kSchema = "flightrec.report/1";

struct ReportInput {
  const analysis::Inputs& inputs;
  const analysis::JobIndex& index;
  const analysis::Analysis& analysis;
};

// One short line, verdict first, then who (host, pid, global rank), the op
// with its step (user tag), how long ranks waited, then the first finding's
// kind and sub-communicator: "HANG: host-a pid 4242 (world rank 133) never
// enqueued AllReduce #812 (user tag 1234); 7 ranks waiting 42.0 s (since
// 2025-08-25T12:03:41Z); lagging_rank on comm `tp1` (rank 5 of 8)". The
// evidence is the finding's summary.
std::string Headline(const ReportInput& in);
// A ticket's title: "HANG in job 123: host-a pid 4242 (world rank 133)
// never enqueued AllReduce #812 (user tag 1234)".
std::string Title(const ReportInput& in);
// A ticket's description in one paragraph: the headline, the first
// finding's evidence, the root causes with their ranks, the next step, and
// what was analyzed when.
std::string Summary(const ReportInput& in);
// "job 123; analyzed 2025-08-25T12:05:00Z by flightrec 0.1.0; paths: /a, /b"
// (parts not known are left out).
std::string TicketFacts(const ReportInput& in);
// A root cause with its rank in every communicator: "host-a pid 4242
// (world rank 133, tp1 rank 1)", or "rank 5 of comm `world` (no file)".
std::string CulpritText(const ReportInput& in, const analysis::Culprit& c);

// Where a process's state came from: "ring <path>: <reason>"; "" when the
// inputs do not describe the index's processes.
std::string SourceText(const ReportInput& in, int32_t process);
// How many processes' states came from dumps, rings, half-made rings:
// "state from 6 dumps and 2 rings (2 newer than their dumps)".
std::string SourcesSummary(const ReportInput& in);

std::string TextReport(const ReportInput& in);
std::string MarkdownReport(const ReportInput& in);
std::string JsonReport(const ReportInput& in);
// One self-contained file: inline CSS and SVG, no external assets.
std::string HtmlReport(const ReportInput& in, const analysis::JobProgress& progress);
// The Chrome/Perfetto trace: timeline.h.

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_REPORT_H_

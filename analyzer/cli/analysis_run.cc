#include "analyzer/cli/analysis_run.h"

#include <time.h>

#include <cerrno>
#include <cstdlib>

#include "analyzer/model/progress.h"

namespace flightrec {
namespace cli {
namespace {

// The analysis time the reports state: now, or SOURCE_DATE_EPOCH (seconds,
// the reproducible-builds convention) so that a report can be regenerated
// byte for byte (tests/golden).
uint64_t AnalysisTime() {
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long secs = std::strtoull(epoch, &end, 10);
    if (errno == 0 && end != epoch && *end == '\0') return secs * 1000000000ULL;
  }
  struct timespec ts = {};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

AnalysisRun::AnalysisRun(const std::vector<std::string>& paths, const AnalysisSettings& settings,
                         const std::function<void(const char*)>& lap) {
  auto done = [&lap](const char* phase) {
    if (lap) lap(phase);
  };
  analysis::LoadOptions load;
  load.threads = settings.jobs;
  load.record_budget_bytes = settings.record_memory_mib << 20;
  load.window_records = settings.window;
  inputs_ = analysis::LoadInputs(paths, load);
  inputs_.paths = paths;
  inputs_.analyzed_wall_ns = AnalysisTime();
  done("load");
  index_ = std::make_unique<analysis::JobIndex>(inputs_.processes);
  index_->set_record_source(analysis::FileRecordSource(load));
  done("index");
  options_.progress.stuck_after_ns = static_cast<uint64_t>(settings.stuck_after_s * 1e9);
  result_ = analysis::Analyze(*index_, options_);
  done("analyze");
}

std::string AnalysisRun::Render(ReportFormat format) const {
  const report::ReportInput in = report_input();
  switch (format) {
    case ReportFormat::kJson:
      return report::JsonReport(in);
    case ReportFormat::kMarkdown:
      return report::MarkdownReport(in);
    case ReportFormat::kHtml:
      return report::HtmlReport(in, analysis::ComputeProgress(*index_, options_.progress));
    case ReportFormat::kText:
      break;
  }
  return report::TextReport(in);
}

}  // namespace cli
}  // namespace flightrec

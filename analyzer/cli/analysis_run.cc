#include "analyzer/cli/analysis_run.h"

#include "analyzer/model/progress.h"

namespace flightrec {
namespace cli {

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

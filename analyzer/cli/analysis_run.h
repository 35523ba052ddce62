// One analysis of PATH... as `flightrec analyze` runs it: load, index,
// analyze, then render any report format from the same result. Shared by
// `flightrec analyze` and `flightrec watch`, so a verdict written by the
// watcher is the report a later `flightrec analyze` of the same files gives.
#ifndef FLIGHTREC_ANALYZER_CLI_ANALYSIS_RUN_H_
#define FLIGHTREC_ANALYZER_CLI_ANALYSIS_RUN_H_

#include <stdint.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/report/report.h"

namespace flightrec {
namespace cli {

// The knobs of `flightrec analyze` (defaults are its defaults).
struct AnalysisSettings {
  double stuck_after_s = 0;
  unsigned jobs = 0;
  uint64_t record_memory_mib = 128;
  uint64_t window = 1024;
};

enum class ReportFormat { kText, kJson, kMarkdown, kHtml };

class AnalysisRun {
 public:
  // `lap` is called after each phase with its name ("load", "index",
  // "analyze"); may be empty.
  AnalysisRun(const std::vector<std::string>& paths, const AnalysisSettings& settings,
              const std::function<void(const char*)>& lap = {});
  AnalysisRun(const AnalysisRun&) = delete;
  AnalysisRun& operator=(const AnalysisRun&) = delete;

  const analysis::Inputs& inputs() const { return inputs_; }
  const analysis::JobIndex& index() const { return *index_; }
  const analysis::Analysis& result() const { return result_; }
  report::ReportInput report_input() const { return {inputs_, *index_, result_}; }

  std::string Render(ReportFormat format) const;
  std::string Headline() const { return report::Headline(report_input()); }
  int ExitCode() const { return analysis::ExitCodeFor(result_); }

 private:
  analysis::AnalyzeOptions options_;
  analysis::Inputs inputs_;
  std::unique_ptr<analysis::JobIndex> index_;  // refers to inputs_.processes
  analysis::Analysis result_;
};

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_ANALYSIS_RUN_H_

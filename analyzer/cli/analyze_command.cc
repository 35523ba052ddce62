// `flightrec analyze PATH...`: read every rank's dump or ring and name the
// rank the job waits on. Exit code: 0 healthy, 1 findings, 2 usage error or
// no readable input.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/model/analyzer.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/report/output.h"
#include "analyzer/report/report.h"

namespace flightrec {
namespace cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  double stuck_after_s = 0;
  unsigned jobs = 0;
  uint64_t record_memory_mib = 128;
  uint64_t window = 1024;
  bool timings = false;
};

// `--timings`: how long each phase took, on stderr, for a user asking where
// the seconds of a big job go (docs/performance.md uses it).
class PhaseTimer {
 public:
  explicit PhaseTimer(bool on) : on_(on), last_(Clock::now()) {}
  void Lap(const char* phase) {
    if (!on_) return;
    const Clock::time_point now = Clock::now();
    std::fprintf(stderr, "flightrec analyze: %-8s %8.1f ms\n", phase,
                 std::chrono::duration<double, std::milli>(now - last_).count());
    last_ = now;
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool on_;
  Clock::time_point last_;
};

int RunAnalyze(const AnalyzeArgs& args) {
  PhaseTimer timer(args.timings);
  analysis::LoadOptions load;
  load.threads = args.jobs;
  load.record_budget_bytes = args.record_memory_mib << 20;
  load.window_records = args.window;
  const analysis::Inputs inputs = analysis::LoadInputs(args.paths, load);
  timer.Lap("load");
  analysis::JobIndex index(inputs.processes);
  index.set_record_source(analysis::FileRecordSource(load));
  timer.Lap("index");
  analysis::AnalyzeOptions options;
  options.progress.stuck_after_ns = static_cast<uint64_t>(args.stuck_after_s * 1e9);
  const analysis::Analysis result = analysis::Analyze(index, options);
  timer.Lap("analyze");
  const report::ReportInput in{inputs, index, result};
  std::string text;
  if (args.format == "json") {
    text = report::JsonReport(in);
  } else if (args.format == "markdown") {
    text = report::MarkdownReport(in);
  } else if (args.format == "html") {
    text = report::HtmlReport(in, analysis::ComputeProgress(index, options.progress));
  } else {
    text = report::TextReport(in);
  }
  timer.Lap("report");
  std::string error;
  if (!report::WriteOutput(args.output, text, &error)) {
    std::fprintf(stderr, "flightrec analyze: %s\n", error.c_str());
    return 2;
  }
  timer.Lap("write");
  if (inputs.processes.empty()) {
    std::fprintf(stderr,
                 "flightrec analyze: no readable flight-recorder file in the %zu path(s) given\n",
                 args.paths.size());
  }
  return analysis::ExitCodeFor(result);
}

}  // namespace

void AddAnalyzeCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<AnalyzeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "analyze", "Name the rank a hung or slow job waits on, from every rank's dump or ring");
  cmd->add_option("paths", args->paths, "Files or directories (searched recursively)")->required();
  cmd->add_option("--format", args->format, "Report format")
      ->check(CLI::IsMember({"text", "json", "markdown", "html"}));
  cmd->add_option("-o,--output", args->output, "Write the report to FILE instead of stdout");
  cmd->add_option("--stuck-after", args->stuck_after_s,
                  "Seconds an op must be pending to count as stuck (default: half the "
                  "watchdog timeout, at most 1 s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-j,--jobs", args->jobs, "Reader threads (default: one per core)");
  cmd->add_option("--record-memory", args->record_memory_mib,
                  "MiB for full records across all files; beyond it each file keeps its newest "
                  "records and older collectives as signatures (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--window", args->window,
                  "Full records kept per file: its newest N by enqueue time and every op not "
                  "done; older collectives are compared through signatures (0: no limit)")
      ->capture_default_str();
  cmd->add_flag("--timings", args->timings, "Print how long each phase took to stderr");
  cmd->callback([args, exit_code]() { *exit_code = RunAnalyze(*args); });
}

}  // namespace cli
}  // namespace flightrec

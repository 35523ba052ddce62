// `flightrec analyze PATH...`: read every rank's dump or ring and name the
// rank the job waits on. Exit code: 0 healthy, 1 findings, 2 usage error or
// no readable input.
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/cli/analysis_run.h"
#include "analyzer/cli/commands.h"
#include "analyzer/report/output.h"

namespace flightrec {
namespace cli {
namespace {

struct AnalyzeArgs {
  std::vector<std::string> paths;
  std::string format = "text";
  std::string output;
  AnalysisSettings settings;
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
  const AnalysisRun run(args.paths, args.settings,
                        [&timer](const char* phase) { timer.Lap(phase); });
  ReportFormat format = ReportFormat::kText;
  if (args.format == "json") {
    format = ReportFormat::kJson;
  } else if (args.format == "markdown") {
    format = ReportFormat::kMarkdown;
  } else if (args.format == "html") {
    format = ReportFormat::kHtml;
  }
  const std::string text = run.Render(format);
  timer.Lap("report");
  std::string error;
  if (!report::WriteOutput(args.output, text, &error)) {
    std::fprintf(stderr, "flightrec analyze: %s\n", error.c_str());
    return 2;
  }
  timer.Lap("write");
  if (run.inputs().processes.empty()) {
    std::fprintf(stderr,
                 "flightrec analyze: no readable flight-recorder file in the %zu path(s) given\n",
                 args.paths.size());
  }
  return run.ExitCode();
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
  cmd->add_option("--stuck-after", args->settings.stuck_after_s,
                  "Seconds an op must be pending to count as stuck (default: half the "
                  "watchdog timeout, at most 1 s)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-j,--jobs", args->settings.jobs, "Reader threads (default: one per core)");
  cmd->add_option("--record-memory", args->settings.record_memory_mib,
                  "MiB for full records across all files; beyond it each file keeps its newest "
                  "records and older collectives as signatures (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--window", args->settings.window,
                  "Full records kept per file: its newest N by enqueue time and every op not "
                  "done; older collectives are compared through signatures (0: no limit)")
      ->capture_default_str();
  cmd->add_flag("--timings", args->timings, "Print how long each phase took to stderr");
  cmd->callback([args, exit_code]() { *exit_code = RunAnalyze(*args); });
}

}  // namespace cli
}  // namespace flightrec

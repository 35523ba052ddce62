// `flightrec timeline PATH... -o trace.json`: every rank's ops as a
// Chrome/Perfetto trace. Exit code: 0 written, 2 usage error or no readable
// input.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"
#include "analyzer/report/output.h"
#include "analyzer/report/report.h"

namespace flightrec {
namespace cli {
namespace {

struct TimelineArgs {
  std::vector<std::string> paths;
  std::string output;
  unsigned jobs = 0;
};

int RunTimeline(const TimelineArgs& args) {
  analysis::LoadOptions load;
  load.threads = args.jobs;
  const analysis::Inputs inputs = analysis::LoadInputs(args.paths, load);
  for (const analysis::RejectedInput& r : inputs.rejected) {
    std::fprintf(stderr, "flightrec timeline: skipped %s: %s\n", r.path.c_str(), r.reason.c_str());
  }
  if (inputs.processes.empty()) {
    std::fprintf(stderr, "flightrec timeline: no readable flight-recorder file\n");
    return 2;
  }
  const analysis::JobIndex index(inputs.processes);
  const analysis::JobProgress progress = analysis::ComputeProgress(index, {});
  std::string error;
  if (!report::WriteOutput(args.output, report::TimelineTrace(index, progress), &error)) {
    std::fprintf(stderr, "flightrec timeline: %s\n", error.c_str());
    return 2;
  }
  return 0;
}

}  // namespace

void AddTimelineCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TimelineArgs>();
  CLI::App* cmd =
      app.add_subcommand("timeline", "Write every rank's ops as a Chrome/Perfetto trace (JSON)");
  cmd->add_option("paths", args->paths, "Files or directories (searched recursively)")->required();
  cmd->add_option("-o,--output", args->output, "Trace file to write (default: stdout)");
  cmd->add_option("-j,--jobs", args->jobs, "Reader threads (default: one per core)");
  cmd->callback([args, exit_code]() { *exit_code = RunTimeline(*args); });
}

}  // namespace cli
}  // namespace flightrec

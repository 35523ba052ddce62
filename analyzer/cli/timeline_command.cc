// `flightrec timeline PATH... -o trace.json`: every rank's ops as a
// Chrome/Perfetto trace, streamed to the output. Memory is bounded like
// analyze's (--record-memory keeps each file's newest records); --ranks
// draws a subset. Exit code: 0 written, 2 usage error or no readable input.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"
#include "analyzer/report/output.h"
#include "analyzer/report/timeline.h"

namespace flightrec {
namespace cli {
namespace {

struct TimelineArgs {
  std::vector<std::string> paths;
  std::string output;
  unsigned jobs = 0;
  uint64_t record_memory_mib = 128;
  std::string ranks;
};

uint64_t LeftOut(const analysis::Inputs& inputs, const std::vector<size_t>& drawn) {
  uint64_t n = 0;
  for (size_t p : drawn) {
    for (const CommSnapshot& c : inputs.processes[p].comms) n += c.trimmed;
  }
  return n;
}

// With --ranks, the drawn processes are read again with the whole record
// budget to themselves: more of their history than a share of 16k files.
bool FocusOnDrawn(const report::TimelineOptions& options, const analysis::LoadOptions& load,
                  const std::string& ranks, analysis::Inputs* inputs, std::vector<size_t>* drawn) {
  if (options.ranks.empty()) {  // every process: no index needed to say which
    drawn->resize(inputs->processes.size());
    for (size_t p = 0; p < drawn->size(); ++p) (*drawn)[p] = p;
    return true;
  }
  {
    const analysis::JobIndex whole(inputs->processes);  // rank numbers need the comms
    *drawn = report::DrawnProcesses(whole, options);
  }
  if (drawn->empty()) {
    std::fprintf(stderr, "flightrec timeline: --ranks %s matches none of the %zu ranks read\n",
                 ranks.c_str(), inputs->processes.size());
    return false;
  }
  analysis::ReloadProcesses(*drawn, load, inputs);
  return true;
}

int RunTimeline(const TimelineArgs& args) {
  report::TimelineOptions options;
  std::string error;
  if (!args.ranks.empty() && !report::ParseRankRanges(args.ranks, &options.ranks, &error)) {
    std::fprintf(stderr, "flightrec timeline: --ranks: %s\n", error.c_str());
    return 2;
  }
  analysis::LoadOptions load;
  load.threads = args.jobs;
  load.record_budget_bytes = args.record_memory_mib << 20;
  analysis::Inputs inputs = analysis::LoadInputs(args.paths, load);
  for (const analysis::RejectedInput& r : inputs.rejected) {
    std::fprintf(stderr, "flightrec timeline: skipped %s: %s\n", r.path.c_str(), r.reason.c_str());
  }
  if (inputs.processes.empty()) {
    std::fprintf(stderr, "flightrec timeline: no readable flight-recorder file\n");
    return 2;
  }
  std::vector<size_t> drawn;
  if (!FocusOnDrawn(options, load, args.ranks, &inputs, &drawn)) return 2;
  const analysis::JobIndex index(inputs.processes);
  const analysis::JobProgress progress = analysis::ComputeProgress(index, {});
  if (const uint64_t left_out = LeftOut(inputs, drawn); left_out > 0) {
    std::fprintf(stderr,
                 "flightrec timeline: %llu older records left out to stay within "
                 "--record-memory %llu MiB; each rank's newest are drawn\n",
                 static_cast<unsigned long long>(left_out),
                 static_cast<unsigned long long>(args.record_memory_mib));
  }
  report::OutputStream out;
  const bool ok = out.Open(args.output, &error) &&
                  report::WriteTimeline(
                      index, progress, options,
                      [&out, &error](std::string_view text) { return out.Write(text, &error); }) &&
                  out.Commit(&error);
  if (!ok) {
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
  cmd->add_option("--ranks", args->ranks,
                  "Draw only these global ranks, e.g. 0-7,12 (default: every rank)");
  cmd->add_option("--record-memory", args->record_memory_mib,
                  "MiB for records across all files; beyond it each file's older records are "
                  "left out (0: no limit)")
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = RunTimeline(*args); });
}

}  // namespace cli
}  // namespace flightrec

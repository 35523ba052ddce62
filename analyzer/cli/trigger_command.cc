// `flightrec trigger DIR [--job ID] [--reason TEXT]`: leaves the trigger file
// `DIR/flightrec-<job>.trigger` that every rank's watchdog watches (DIR is
// their NCCL_FLIGHTREC_DUMP_DIR); each one then seals a kDumpTrigger dump.
// Prints the path it wrote. Exit code: 0 written, 2 usage error or the file
// could not be written.
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "analyzer/cli/commands.h"
#include "recorder/config.h"
#include "recorder/host_info.h"
#include "recorder/trigger.h"

namespace flightrec {
namespace cli {
namespace {

struct TriggerArgs {
  std::string dir;
  std::string job;
  std::string reason = "user";
};

int RunTrigger(const TriggerArgs& args) {
  struct stat st;
  if (stat(args.dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "flightrec trigger: %s: not a directory\n", args.dir.c_str());
    return 2;
  }
  char job[rec::kNameMax];
  if (args.job.empty()) {
    rec::ResolveJobId(job, sizeof(job));  // the same rule the ranks used
  } else {
    rec::SanitizeName(args.job.c_str(), "nojob", job, sizeof(job));
  }
  char path[rec::kPathMax + 128];
  if (!rec::TriggerPath(args.dir.c_str(), job, path, sizeof(path))) {
    std::fprintf(stderr, "flightrec trigger: %s: path too long\n", args.dir.c_str());
    return 2;
  }
  std::string reason = args.reason;
  for (char& c : reason) {
    if (c == '\n' || c == '\r') c = ' ';  // the file is one line
  }
  char host[64];
  rec::HostName(host, sizeof(host));
  char err[rec::kPathMax + 256];
  if (!rec::WriteTrigger(path, host, getpid(), reason.c_str(), err, sizeof(err))) {
    std::fprintf(stderr, "flightrec trigger: %s\n", err);
    return 2;
  }
  std::printf("%s\n", path);
  return 0;
}

}  // namespace

void AddTriggerCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TriggerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trigger", "Ask every watching rank of a job to seal a dump (writes the trigger file)");
  cmd->add_option("DIR", args->dir, "The ranks' dump directory (NCCL_FLIGHTREC_DUMP_DIR)")
      ->required();
  cmd->add_option("--job", args->job,
                  "Job id (default: NCCL_FLIGHTREC_JOB_ID, SLURM_JOB_ID, "
                  "TORCHELASTIC_RUN_ID, else nojob)");
  cmd->add_option("--reason", args->reason, "Text recorded in the trigger file (default: user)");
  cmd->callback([args, exit_code]() { *exit_code = RunTrigger(*args); });
}

}  // namespace cli
}  // namespace flightrec

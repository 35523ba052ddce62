// Runs the user's verdict hook (`flightrec watch --on-verdict CMD`):
// `/bin/sh -c CMD` in a process group of its own, with extra environment
// variables, stdin from /dev/null, stdout and stderr into a log file capped
// in size (the rest is read and discarded, so a flooding hook neither fills
// the disk nor blocks on a full pipe), and the whole group killed (SIGTERM,
// then SIGKILL two seconds later) once the timeout has passed or the caller
// is asked to stop. Nothing the hook does is fatal to the caller.
#ifndef FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_
#define FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

namespace flightrec {
namespace cli {

struct HookSpec {
  std::string command;
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
  std::string log_path;
  double timeout_s = 60;
  uint64_t log_cap_bytes = 1 << 20;
  // When readable (StopSignal::fd()), the hook is ended as at its timeout.
  int stop_fd = -1;
};

struct HookResult {
  bool started = false;
  bool exited = false;     // exited by itself (status valid)
  int status = -1;         // exit status, or 128 + signal
  bool timed_out = false;  // killed after the timeout
  bool stopped = false;    // killed because stop_fd became readable
  bool truncated = false;  // output beyond the cap was discarded
  uint64_t output_bytes = 0;
  std::string error;             // why it could not run, or the log could not be written
  std::string Describe() const;  // one line for stderr and the log
};

HookResult RunHook(const HookSpec& spec);

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_

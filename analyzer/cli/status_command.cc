// `flightrec status DIR... [--json] [--watch [--interval S]] [--job ID]
// [--stalled-after S] [--window S]`: a live view of running jobs from their
// rings (docs/status.md). Read-only: no file is created or written and no
// process is signalled.
//
// Exit code: 0 nothing stalled or dead; 1 some process stalled or dead;
// 2 usage error or no ring found. --watch ends with 0 on SIGINT, SIGTERM,
// SIGHUP (stop_signal.h) or `q` on a terminal.
#include <termios.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/cli/stop_signal.h"
#include "analyzer/model/live_status.h"
#include "analyzer/report/status_report.h"

namespace flightrec {
namespace cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitTrouble = 1;
constexpr int kExitNoInput = 2;

struct StatusArgs {
  std::vector<std::string> paths;
  bool json = false;
  bool watch = false;
  double interval_s = 2;
  double stalled_after_s = 10;
  double window_s = 10;
  std::string job;
};

uint64_t ToNs(double s) { return static_cast<uint64_t>(s * 1e9); }

// A terminal on stdin in non-canonical mode, so that `q` arrives without
// Enter; restored when destroyed.
class RawInput {
 public:
  RawInput() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    raw.c_cc[VMIN] = 0;
    raw.c_cc[VTIME] = 0;
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~RawInput() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  RawInput(const RawInput&) = delete;
  RawInput& operator=(const RawInput&) = delete;
  bool active() const { return active_; }

 private:
  termios saved_{};
  bool active_ = false;
};

// Waits for the interval to pass; false when asked to stop (a stop
// signal, or `q` when `keys`).
bool WaitInterval(StopSignal* stop, std::chrono::milliseconds interval, bool keys) {
  const StopSignal::Wake wake = stop->Wait(interval, keys ? STDIN_FILENO : -1);
  if (wake == StopSignal::Wake::kStop) return false;
  if (wake == StopSignal::Wake::kReadable) {
    char c = 0;
    if (read(STDIN_FILENO, &c, 1) == 1 && (c == 'q' || c == 'Q')) return false;
  }
  return true;
}

std::string Frame(const StatusArgs& args, const analysis::StatusOptions& options, int* code) {
  const analysis::LiveStatus status = analysis::ReadLiveStatus(args.paths, options);
  *code = status.jobs.empty()                ? kExitNoInput
          : report::StatusHasTrouble(status) ? kExitTrouble
                                             : kExitOk;
  return args.json ? report::StatusJson(status, options) : report::StatusText(status, options);
}

int RunStatus(const StatusArgs& args) {
  analysis::StatusOptions options;
  options.stalled_after_ns = ToNs(args.stalled_after_s);
  options.window_ns = ToNs(args.window_s);
  options.job = args.job;
  int code = kExitOk;
  if (!args.watch) {
    std::fputs(Frame(args, options, &code).c_str(), stdout);
    return code;
  }
  StopSignal stop;
  const bool tty = isatty(STDOUT_FILENO) != 0;
  RawInput keys;
  const std::chrono::milliseconds interval(static_cast<int64_t>(args.interval_s * 1000));
  do {
    const std::string frame = Frame(args, options, &code);
    // On a terminal: cursor home and clear, like top; elsewhere successive
    // frames, each ending with a blank line.
    if (tty) std::fputs("\x1b[H\x1b[2J", stdout);
    std::fputs(frame.c_str(), stdout);
    if (!tty) std::fputs("\n", stdout);
    std::fflush(stdout);
  } while (WaitInterval(&stop, interval, keys.active()));
  return kExitOk;
}

}  // namespace

void AddStatusCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<StatusArgs>();
  CLI::App* cmd = app.add_subcommand(
      "status",
      "Live view of running jobs from their rings: per process alive, progressing, "
      "stalled, idle or dead, rates, last ops (read-only; docs/status.md)");
  cmd->add_option("paths", args->paths, "Directories with ring files (or ring files)")->required();
  cmd->add_flag("--json", args->json, "Print the flightrec.status/1 JSON (docs/status.md)");
  cmd->add_flag(
      "--watch", args->watch,
      "Refresh in place until SIGINT, SIGTERM or 'q' (successive frames when not a terminal)");
  cmd->add_option("--interval", args->interval_s, "Seconds between --watch frames [2]")
      ->check(CLI::Range(0.1, 3600.0));
  cmd->add_option("--job", args->job, "Only this job id (a directory may hold several)");
  cmd->add_option("--stalled-after", args->stalled_after_s,
                  "Seconds an op may stay pending before its process is called stalled [10]")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--window", args->window_s, "Seconds over which rates are measured [10]")
      ->check(CLI::Range(0.1, 1e6));
  cmd->callback([args, exit_code]() { *exit_code = RunStatus(*args); });
}

}  // namespace cli
}  // namespace flightrec

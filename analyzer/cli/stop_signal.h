// The stop request and the refresh tick of the CLI's long-running commands
// (`status --watch`, `exporter`, `watch`), one way for all three
// (docs/monitoring.md "Signals", docs/design/verdict.md):
//
// SIGINT, SIGTERM and SIGHUP (unless SIGHUP was ignored at start, as under
// nohup) are blocked and read from a signalfd, never handled
// asynchronously: the command notices a stop only where it waits or asks,
// so it is never interrupted halfway through writing a file or holding a
// lock. Construct it first thing in the command, before any thread starts,
// so that every thread inherits the blocked mask (a thread without it
// would take the signal's default action and kill the process). Child
// processes reset their mask themselves (hook_runner.cc).
//
// Not thread-safe: one thread waits on it (the others are stopped by that
// thread).
#ifndef FLIGHTREC_ANALYZER_CLI_STOP_SIGNAL_H_
#define FLIGHTREC_ANALYZER_CLI_STOP_SIGNAL_H_

#include <signal.h>

#include <chrono>
#include <string>

namespace flightrec {
namespace cli {

class StopSignal {
 public:
  enum class Wake { kTick, kStop, kReadable };

  StopSignal();
  // Takes the stop signals still pending (they were seen through fd(), or
  // came too late to matter), closes the signalfd, restores the mask.
  ~StopSignal();
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // Waits until `timeout` has passed (kTick), a stop signal arrived
  // (kStop), or `extra_fd` (when >= 0) is readable (kReadable), whichever
  // comes first. Once stopped, returns kStop at once.
  Wake Wait(std::chrono::milliseconds timeout, int extra_fd = -1);
  // Waits up to `timeout`; true once a stop was requested.
  bool WaitFor(std::chrono::milliseconds timeout) { return Wait(timeout) == Wake::kStop; }
  // Whether a stop was requested, without waiting.
  bool Requested() { return WaitFor(std::chrono::milliseconds(0)); }

  // Readable while a stop signal is pending, for a caller's own poll();
  // -1 when no signalfd could be made (signals then keep their default
  // action: the process dies by them, as without this class).
  int fd() const { return fd_; }
  // The signal that asked to stop (0: none yet).
  int signal() const { return signal_; }
  // "SIGTERM", ...; the exit status 128 + signal() is the caller's to use.
  std::string SignalName() const;

 private:
  sigset_t set_{};
  sigset_t saved_{};
  int fd_ = -1;
  int signal_ = 0;
};

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_STOP_SIGNAL_H_

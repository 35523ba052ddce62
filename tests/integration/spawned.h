// A background process for the tests that drive long-running commands
// (`flightrec watch`, `exporter`, `status --watch`, an emulated job,
// Prometheus): started through /bin/sh -c "exec CMD", so that its pid is
// CMD's and a signal sent to it reaches CMD itself; with the default
// dispositions of SIGINT, SIGTERM, SIGHUP and SIGPIPE and no signal
// blocked, whatever the test runner had. Every wait is bounded:
// a process still running at the bound is SIGKILLed. The destructor
// SIGKILLs and reaps one still running.
#ifndef FLIGHTREC_TESTS_INTEGRATION_SPAWNED_H_
#define FLIGHTREC_TESTS_INTEGRATION_SPAWNED_H_

#include <sys/types.h>

#include <string>

namespace flightrec {
namespace itest {

class Spawned {
 public:
  explicit Spawned(const std::string& cmd);
  ~Spawned();
  Spawned(const Spawned&) = delete;
  Spawned& operator=(const Spawned&) = delete;

  pid_t pid() const { return pid_; }
  // Not reaped yet and not a zombie.
  bool running();
  // Exit status, or 128 + signal when a signal ended it (see signaled());
  // -1 when it had to be SIGKILLed after `bound_s`.
  int Wait(int bound_s);
  // Sends `sig`, then Wait(bound_s).
  int Stop(int sig, int bound_s);
  // The process ended by a signal rather than by exiting (after Wait).
  bool signaled() const { return signaled_; }
  // Waits (at most `bound_s`) until the process holds a signalfd whose mask
  // has `sig` (/proc/<pid>/fdinfo "sigmask:") and its main thread blocks
  // `sig` (/proc/<pid>/status SigBlk): the command is then ready for it. A
  // blocked mask alone is not enough: a runtime may block every signal for
  // a moment during its start (TSan does, around its own thread), and a
  // signal sent then arrives once the start unblocks it again.
  bool WaitBlocks(int sig, int bound_s);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  bool signaled_ = false;
  int result_ = -1;
};

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_SPAWNED_H_

#include "analyzer/cli/stop_signal.h"

#include <poll.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace flightrec {
namespace cli {

StopSignal::StopSignal() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  struct sigaction hup {};
  if (sigaction(SIGHUP, nullptr, &hup) == 0 && hup.sa_handler != SIG_IGN) sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, &saved_);
  fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
  // Without a signalfd nothing would ever read the blocked signals: let
  // them act as before.
  if (fd_ < 0) pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

StopSignal::~StopSignal() {
  if (fd_ < 0) return;
  // A stop already acted on through fd() (a hook ended) must not fire
  // again when unblocked: take every pending one first.
  signalfd_siginfo info{};
  while (read(fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
  }
  close(fd_);
  pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

StopSignal::Wake StopSignal::Wait(std::chrono::milliseconds timeout, int extra_fd) {
  if (signal_ != 0) return Wake::kStop;
  const auto end = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    pollfd fds[2] = {{fd_, POLLIN, 0}, {extra_fd, POLLIN, 0}};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    const int ms = static_cast<int>(std::max<int64_t>(0, left.count()));
    const int n = poll(fds, extra_fd >= 0 ? 2 : 1, ms);
    if (n < 0 && errno == EINTR) continue;  // another signal (SIGCHLD...)
    if (n <= 0) return Wake::kTick;
    if ((fds[0].revents & POLLIN) != 0) {
      signalfd_siginfo info{};
      if (read(fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
        signal_ = static_cast<int>(info.ssi_signo);
        return Wake::kStop;
      }
    }
    if (extra_fd >= 0 && fds[1].revents != 0) return Wake::kReadable;
    if (ms == 0) return Wake::kTick;
  }
}

std::string StopSignal::SignalName() const {
  switch (signal_) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "signal " + std::to_string(signal_);
  }
}

}  // namespace cli
}  // namespace flightrec

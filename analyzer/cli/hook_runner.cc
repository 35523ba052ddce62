#include "analyzer/cli/hook_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <set>

extern char** environ;

namespace flightrec {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

// Writes all of `data`, retrying short writes; false on error.
bool WriteAll(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The environment of the hook: ours, with spec.env replacing same names.
std::vector<std::string> HookEnvironment(const HookSpec& spec) {
  std::set<std::string> replaced;
  for (const auto& [k, v] : spec.env) replaced.insert(k);
  std::vector<std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string entry = *e;
    if (replaced.count(entry.substr(0, entry.find('='))) == 0) env.push_back(entry);
  }
  for (const auto& [k, v] : spec.env) env.push_back(k + "=" + v);
  return env;
}

}  // namespace

std::string HookResult::Describe() const {
  if (!started) return "hook did not run: " + error;
  std::string s;
  if (stopped) {
    s = "hook killed: flightrec watch was asked to stop";
  } else if (timed_out) {
    s = "hook killed after its timeout";
  } else if (status >= 128) {
    s = "hook killed by signal " + std::to_string(status - 128);
  } else {
    s = "hook exited with status " + std::to_string(status);
  }
  s += ", " + std::to_string(output_bytes) + " bytes of output";
  if (truncated) s += " (log capped, the rest discarded)";
  if (!error.empty()) s += "; " + error;
  return s;
}

HookResult RunHook(const HookSpec& spec) {
  HookResult r;
  const int log = open(spec.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) {
    // The hook still runs; its output is discarded.
    r.error = spec.log_path + ": cannot create the hook log: " + std::strerror(errno);
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    if (log >= 0) close(log);
    return r;
  }
  // Everything the child needs is built before fork: after it, only
  // async-signal-safe calls.
  const std::vector<std::string> env = HookEnvironment(spec);
  std::vector<char*> envp;
  for (const std::string& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const char* argv[] = {"sh", "-c", spec.command.c_str(), nullptr};
  const pid_t pid = fork();
  if (pid < 0) {
    r.error = std::string("cannot fork: ") + std::strerror(errno);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    if (log >= 0) close(log);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    // A parent that ignored or blocked signals must not pass that on.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);  // also here: no window where a kill would miss the group
  close(pipe_fds[1]);
  r.started = true;
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
      start + std::chrono::milliseconds(static_cast<int64_t>(spec.timeout_s * 1000));
  Clock::time_point kill_at = deadline;
  bool pipe_open = true, reaped = false, termed = false;
  int wstatus = 0;
  char buf[65536];
  uint64_t logged = 0;
  while (pipe_open || !reaped) {
    const Clock::time_point now = Clock::now();
    if (!termed && spec.stop_fd >= 0) {
      pollfd stop{spec.stop_fd, POLLIN, 0};
      if (poll(&stop, 1, 0) == 1) {
        r.stopped = true;
        kill_at = now;
      }
    }
    if (now >= kill_at) {
      // The group: the shell and whatever it started.
      kill(-pid, termed ? SIGKILL : SIGTERM);
      if (!termed) {
        r.timed_out = !r.stopped;
        termed = true;
        kill_at = now + std::chrono::seconds(2);
      } else {
        kill_at = now + std::chrono::seconds(3600);
        if (pipe_open) close(pipe_fds[0]), pipe_open = false;  // a survivor keeps it open
      }
    }
    if (!reaped) {
      const pid_t w = waitpid(pid, &wstatus, WNOHANG);
      if (w == pid || (w < 0 && errno == ECHILD)) reaped = true;
    }
    if (!pipe_open) {
      if (!reaped) usleep(20000);
      continue;
    }
    const int wait_ms = static_cast<int>(std::max<int64_t>(
        1, std::min<int64_t>(
               100, std::chrono::duration_cast<std::chrono::milliseconds>(kill_at - Clock::now())
                        .count())));
    pollfd p{pipe_fds[0], POLLIN, 0};
    const int ready = poll(&p, 1, wait_ms);
    if (ready <= 0) continue;
    const ssize_t n = read(pipe_fds[0], buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(pipe_fds[0]);
      pipe_open = false;
      continue;
    }
    r.output_bytes += static_cast<uint64_t>(n);
    const uint64_t room = logged < spec.log_cap_bytes ? spec.log_cap_bytes - logged : 0;
    const size_t keep = static_cast<size_t>(std::min<uint64_t>(room, static_cast<uint64_t>(n)));
    if (keep < static_cast<size_t>(n)) r.truncated = true;
    if (log >= 0 && keep > 0) {
      if (!WriteAll(log, buf, keep) && r.error.empty()) {
        r.error = spec.log_path + ": cannot write the hook log: " + std::strerror(errno);
      }
      logged += keep;
    }
  }
  if (WIFEXITED(wstatus)) {
    r.exited = !r.timed_out && !r.stopped;
    r.status = WEXITSTATUS(wstatus);
  } else if (WIFSIGNALED(wstatus)) {
    r.status = 128 + WTERMSIG(wstatus);
  }
  if (log >= 0) {
    const std::string footer = "\n[flightrec watch: " + r.Describe() + "]\n";
    WriteAll(log, footer.data(), footer.size());
    close(log);
  }
  return r;
}

}  // namespace cli
}  // namespace flightrec

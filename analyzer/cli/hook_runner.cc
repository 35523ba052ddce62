#include "analyzer/cli/hook_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "flightrec/job_dir.h"

extern char** environ;

namespace flightrec {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kHeadlineMax = 1024;

// Bytes worth showing as they are in a message; the rest as \xNN.
std::string Printable(const std::string& s) {
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\\') {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\x%02x", u);
      out += hex;
    }
  }
  return out;
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
  // The log is a temporary of ours until the hook has ended, then takes its
  // name (Publish: whatever entry had it is replaced, never followed).
  fileio::TempFile log_tmp;
  char why[fileio::kWhyMax] = {};
  if (spec.log_dir_fd < 0) {
    r.error = spec.log_path + ": no hook log (its directory could not be opened)";
  } else if (!fileio::CreateTemp(spec.log_dir_fd, spec.log_name.c_str(), spec.trust, &log_tmp, why,
                                 sizeof(why))) {
    // The hook still runs; its output is discarded.
    r.error = spec.log_path + ": cannot create the hook log: " + why;
  }
  const int log = log_tmp.fd;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.error = std::string("cannot create a pipe: ") + std::strerror(errno);
    if (log >= 0) fileio::Discard(spec.log_dir_fd, &log_tmp);
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
    if (log >= 0) fileio::Discard(spec.log_dir_fd, &log_tmp);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    // A parent that ignored or blocked signals must not pass that on.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGPIPE, SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT}) signal(sig, SIG_DFL);
    const int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);  // dup2 clears it on fd 0
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
      if (!fileio::WriteAll(log, buf, keep) && r.error.empty()) {
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
    fileio::WriteAll(log, footer.data(), footer.size());
    if (!fileio::Publish(spec.log_dir_fd, &log_tmp, spec.log_name.c_str(), false, why,
                         sizeof(why)) &&
        r.error.empty()) {
      r.error = spec.log_path + ": cannot put the hook log in place: " + why;
    }
  }
  return r;
}

HookLogDir::HookLogDir(const std::string& dir, const std::string& job, const fileio::Trust& trust,
                       HookSpec* hook) {
  char name[format::kFileNameMax];
  hook->trust = trust;
  hook->log_dir_fd = -1;
  hook->log_path = dir + "/flightrec-" + job + ".hook.log";
  if (!format::HookLogName(job.c_str(), name, sizeof(name))) {
    error_ = hook->log_path + ": the name is too long; the hook's output is discarded";
    return;
  }
  hook->log_name = name;
  hook->log_path = dir + "/" + name;
  char why[fileio::kWhyMax] = {};
  fd_ = fileio::OpenDir(dir.c_str(), fileio::DirRole::kShared, trust, false, why, sizeof(why),
                        nullptr, 0);
  if (fd_ < 0) {
    error_ =
        dir + ": cannot open it for the hook log (" + why + "); the hook's output is discarded";
    return;
  }
  hook->log_dir_fd = fd_;
}

HookLogDir::~HookLogDir() {
  if (fd_ >= 0) close(fd_);
}

std::string CulpritsVariable(const std::vector<CulpritId>& culprits,
                             std::vector<std::string>* dropped) {
  std::string out;
  for (const CulpritId& c : culprits) {
    if (!format::IsSanitizedName(c.host.c_str(), c.host.size() + 1) ||
        c.host.find('\0') != std::string::npos || c.pid <= 0) {
      if (dropped != nullptr) {
        dropped->push_back("culprit host \"" + Printable(c.host) + "\" pid " +
                           std::to_string(c.pid) +
                           " left out of FLIGHTREC_CULPRITS: not a host name flightrec writes "
                           "([A-Za-z0-9._-]) or not a pid");
      }
      continue;
    }
    if (!out.empty()) out += ' ';
    out += c.host + ":" + std::to_string(c.pid);
  }
  return out;
}

std::string HeadlineVariable(const std::string& headline) {
  static const char kKept[] = " .,:;()#_+=/@%-";
  std::string out;
  for (const char c : headline) {
    if (out.size() >= kHeadlineMax) break;
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else if (c == '`' || c == '\'' || c == '"') {
      continue;
    } else if ((std::isalnum(u) != 0 && u < 0x80) || std::strchr(kKept, c) != nullptr) {
      out += c;
    } else {
      out += '_';
    }
  }
  return out;
}

std::string JobIdVariable(const std::string& job) {
  char out[format::kNameMax];
  format::SanitizeName(job.c_str(), "nojob", out, sizeof(out));
  return out;
}

bool ReadHookCommandFile(const std::string& path, std::string* command, std::string* error) {
  const fileio::Trust self = fileio::TrustSelf();
  struct stat st = {};
  fileio::OpenStatus status = fileio::OpenStatus::kOk;
  char why[fileio::kWhyMax] = {};
  const int fd = fileio::OpenForRead(AT_FDCWD, path.c_str(), self, &st, &status, why, sizeof(why));
  if (fd < 0) {
    *error = path + ": cannot use it as the hook command file: " +
             (status == fileio::OpenStatus::kMissing ? std::string("no such file") : why);
    return false;
  }
  std::string problem;
  if (st.st_uid != self.uid) {
    problem = "not owned by you: uid " + std::to_string(st.st_uid);
  } else if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = std::string("mode ") + mode +
              ": group or others can read or write it (chmod 600 it; the hook command may "
              "hold what others should not see)";
  } else if (static_cast<uint64_t>(st.st_size) > kHookCommandFileMax) {
    problem = "larger than " + std::to_string(kHookCommandFileMax) + " bytes";
  }
  std::string text;
  if (problem.empty()) {
    std::vector<char> buf(kHookCommandFileMax + 2);
    const ssize_t n = fileio::ReadSmall(fd, buf.data(), buf.size());
    if (n < 0) {
      problem = std::string("cannot read it: ") + std::strerror(errno);
    } else if (static_cast<size_t>(n) > kHookCommandFileMax) {
      problem = "larger than " + std::to_string(kHookCommandFileMax) + " bytes";
    } else {
      text.assign(buf.data(), static_cast<size_t>(n));
      if (text.find('\0') != std::string::npos) problem = "it holds a NUL byte";
    }
  }
  close(fd);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  if (problem.empty() && text.find_first_not_of(" \t\r\n") == std::string::npos) {
    problem = "it holds no command";
  }
  if (!problem.empty()) {
    *error = path + ": cannot use it as the hook command file: " + problem;
    return false;
  }
  *command = text;
  return true;
}

}  // namespace cli
}  // namespace flightrec

#include "recorder/verdict.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "flightrec/job_dir.h"
#include "recorder/clock.h"
#include "recorder/fileio/safe_file.h"
#include "recorder/log.h"

extern char** environ;

namespace flightrec {
namespace rec {
namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;
constexpr uint64_t kNsPerMs = 1000000ULL;
// Stagger: ranks that saw the op stuck start within kSlots * kSlotMs of
// their dump, ranks that only answered the trigger kTriggerDelayMs later.
constexpr uint64_t kSlots = 16;
constexpr uint64_t kSlotMs = 200;
constexpr uint64_t kTriggerDelayMs = 2000;
// A `watch` needs a moment (exec, reading the directory) before its lock
// exists: the spawner leaves flightrec-<job>.verdict-spawned, and a candidate
// that finds it younger than this (by its wall clock; skewed clocks only
// cost an extra spawn that `watch` turns away) waits. `watch` ignores the
// file (every flightrec-*.verdict* name is its own).
constexpr uint64_t kSpawnHintS = 3;
// After `watch` exited 3 (another holds the verdict): look again this late.
constexpr uint64_t kRecheckMs = 1000;
// Reads per poll from the child's pipe (a flooding child cannot hold the
// watchdog; what it cannot write waits in the pipe until the next poll).
constexpr int kReadsPerPoll = 16;
constexpr char kHeadlinePrefix[] = "flightrec verdict: ";
// How the hook ended, printed by `watch` (on stderr) once it has.
constexpr char kHookPrefix[] = "flightrec watch: verdict hook: ";
// ioprio_set(2): who = a process group, class idle.
constexpr int kIoprioWhoPgrp = 2;
constexpr int kIoprioClassIdle = 3;
constexpr int kIoprioClassShift = 13;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kLimitAddressSpace = false;  // the sanitizers reserve terabytes
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kLimitAddressSpace = false;
#else
constexpr bool kLimitAddressSpace = true;
#endif
#else
constexpr bool kLimitAddressSpace = true;
#endif

// Whether `path` may be run as the analyzer: an absolute path to a regular
// executable file that, like its directory, only its owner can write, and
// whose owner is root or the running user. Anything else could have been
// put there by someone the job should not run code for. `why` says what.
bool SafeExecutable(const char* path, char* why, size_t why_len) {
  if (path[0] != '/') {
    snprintf(why, why_len, "%s is not an absolute path (PATH is never searched)", path);
    return false;
  }
  const uid_t me = geteuid();
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || access(path, X_OK) != 0) {
    snprintf(why, why_len, "%s is not an executable file", path);
    return false;
  }
  if ((st.st_uid != 0 && st.st_uid != me) || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    snprintf(why, why_len, "%s can be written by others (uid %u, mode %04o)", path,
             static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_mode & 07777));
    return false;
  }
  char dir[kPathMax];
  snprintf(dir, sizeof(dir), "%s", path);
  char* slash = strrchr(dir, '/');
  if (slash == dir)
    slash[1] = '\0';
  else if (slash != nullptr)
    *slash = '\0';
  if (stat(dir, &st) != 0 || (st.st_uid != 0 && st.st_uid != me) ||
      ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0)) {
    snprintf(why, why_len, "its directory %s can be written by others", dir);
    return false;
  }
  return true;
}

// `<dir of the object holding this code>/../bin/flightrec`, then
// `<that dir>/flightrec`; false when neither is a safe executable.
bool FindBesidePlugin(char* out, size_t out_len, char* why, size_t why_len) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&FindBesidePlugin), &info) == 0 || info.dli_fname == nullptr) {
    snprintf(why, why_len, "cannot tell where the plugin was loaded from");
    return false;
  }
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == nullptr) {
    snprintf(why, why_len, "the plugin was loaded without a path");
    return false;
  }
  const int dir_len = static_cast<int>(slash - info.dli_fname);
  const char* rel[] = {"/../bin/flightrec", "/flightrec"};
  for (const char* r : rel) {
    int n = snprintf(out, out_len, "%.*s%s", dir_len, info.dli_fname, r);
    if (n > 0 && static_cast<size_t>(n) < out_len && SafeExecutable(out, why, why_len)) return true;
  }
  return false;
}

uint64_t MtimeNs(const struct stat& st) {
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * kNsPerSec +
         static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

const char* Basename(const char* path) {
  const char* slash = strrchr(path, '/');
  return slash != nullptr ? slash + 1 : path;
}

}  // namespace

void VerdictSpawner::Init(const Config* cfg, int64_t pid, LogFn log) {
  cfg_ = cfg;
  pid_ = pid;
  log_ = log;
  // Found by absolute path only: NCCL_FLIGHTREC_ANALYZER, else beside the
  // plugin; never through PATH (an empty entry is the working directory,
  // often a shared one). Judged again right before each spawn.
  analyzer_[0] = '\0';
  char why[kPathMax + 96] = {};
  if (cfg->analyzer[0] != '\0') {
    snprintf(analyzer_, sizeof(analyzer_), "%s", cfg->analyzer);
  } else if (!FindBesidePlugin(analyzer_, sizeof(analyzer_), why, sizeof(why))) {
    analyzer_[0] = '\0';
    if (cfg->verdict) {
      Logf(log, kLogInfo,
           "no in-job verdict: no flightrec binary beside the plugin (%s); set "
           "NCCL_FLIGHTREC_ANALYZER to its absolute path",
           why[0] != '\0' ? why : "none found");
    }
  }
}

void VerdictSpawner::OnIncidentDump(bool saw_stuck) {
  if (cfg_ == nullptr || !cfg_->verdict) return;
  const uint64_t now = ClockNowNs();
  if (candidate_) {
    // Another dump of the same incident: only an earlier turn matters.
    if (saw_stuck && !saw_stuck_) {
      saw_stuck_ = true;
      const uint64_t turn = now + (static_cast<uint64_t>(pid_) % kSlots) * kSlotMs * kNsPerMs;
      if (turn < next_try_mono_ns_) next_try_mono_ns_ = turn;
    }
    return;
  }
  candidate_ = true;
  saw_stuck_ = saw_stuck;
  spawns_ = 0;
  incident_mono_ns_ = now;
  incident_wall_ns_ = RealtimeNs();
  uint64_t delay_ms = (static_cast<uint64_t>(pid_) % kSlots) * kSlotMs;
  if (!saw_stuck) delay_ms += kTriggerDelayMs;
  next_try_mono_ns_ = now + delay_ms * kNsPerMs;
}

bool VerdictSpawner::VerdictExists() const {
  // `watch` writes the done marker after the reports (format::ParseDone).
  // Hang dumps sealed up to covered_until plus their timeout belong to the
  // incident it judged. Only a marker owned by us (or the trusted group) is
  // believed: another user's cannot silence a verdict.
  char name[format::kFileNameMax];
  char path[kPathMax + format::kFileNameMax];
  if (!format::DoneName(cfg_->job_id, name, sizeof(name))) return false;
  snprintf(path, sizeof(path), "%s/%s", cfg_->dump_dir, name);
  struct stat st;
  fileio::OpenStatus status;
  const int fd = fileio::OpenForRead(AT_FDCWD, path, cfg_->trust, &st, &status, nullptr, 0);
  if (fd < 0) return false;
  char text[256];
  const ssize_t got = fileio::ReadSmall(fd, text, sizeof(text));
  close(fd);
  format::DoneText done;
  if (got <= 0 || !format::ParseDone(text, &done)) {
    return false;  // `watch` decides; a candidate just spawns it
  }
  return incident_wall_ns_ <= done.covered_until_ns + cfg_->timeout_ns;
}

bool VerdictSpawner::FreshLockExists() {
  DIR* d = opendir(cfg_->dump_dir);
  if (d == nullptr) return false;  // `watch` will say why
  uint64_t highest = 0;
  struct stat st = {};
  while (struct dirent* e = readdir(d)) {
    const uint64_t g = format::LockGeneration(e->d_name, cfg_->job_id);
    if (g <= highest) continue;
    // Only a regular file owned by us (or the trusted group) is a lock:
    // another user's, kept fresh, cannot hold the verdict back.
    struct stat est;
    if (fstatat(dirfd(d), e->d_name, &est, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(est.st_mode) ||
        !fileio::Believed(est, cfg_->trust, nullptr, 0)) {
      continue;
    }
    highest = g;
    st = est;
  }
  closedir(d);
  if (highest == 0) return false;
  // Alive while its holder refreshes the mtime: judged by this process's
  // clock (no clock is compared across hosts), and at once when the mtime
  // is already older than the limit by this host's wall clock.
  const uint64_t now = ClockNowNs();
  if (highest != lock_generation_ || MtimeNs(st) != lock_mtime_ns_) {
    lock_generation_ = highest;
    lock_mtime_ns_ = MtimeNs(st);
    lock_seen_mono_ns_ = now;
  }
  const uint64_t wall = RealtimeNs();
  const uint64_t limit = kVerdictLockStaleS * kNsPerSec;
  if (lock_mtime_ns_ < wall && wall - lock_mtime_ns_ > limit) return false;
  return now - lock_seen_mono_ns_ < limit;
}

void VerdictSpawner::Poll() {
  if (child_ > 0) {
    Drain();
    int status = 0;
    const pid_t r = waitpid(child_, &status, WNOHANG);
    if (r == child_) {
      Drain();
      Finish(true, status);
    } else if (r < 0 && errno == ECHILD) {
      // The host took the status (SIGCHLD ignored, or it reaps every
      // child): the child is gone, and the pipe says how it went.
      Drain();
      Finish(false, 0);
    } else if (!killed_ && ClockNowNs() - spawn_mono_ns_ > kVerdictTimeLimitS * kNsPerSec) {
      Logf(log_, kLogWarn, "verdict analysis (pid %d) still running after %llu s: killed",
           static_cast<int>(child_), static_cast<unsigned long long>(kVerdictTimeLimitS));
      kill(-child_, SIGKILL);
      killed_ = true;
    }
    return;
  }
  if (!candidate_) return;
  const uint64_t now = ClockNowNs();
  if (now < next_try_mono_ns_) return;
  if (now - incident_mono_ns_ > kVerdictGiveUpS * kNsPerSec || spawns_ >= kVerdictMaxSpawns) {
    Logf(log_, kLogWarn, "no verdict of this hang after %u analyses; giving up", spawns_);
    candidate_ = false;
    return;
  }
  if (VerdictExists()) {
    candidate_ = false;  // another process gave it
    return;
  }
  if (FreshLockExists() || FreshSpawnHint()) return;  // another process is at it
  Spawn();
}

void VerdictSpawner::SpawnHintPath(char* out, size_t out_len) const {
  snprintf(out, out_len, "%s/flightrec-%s.verdict-spawned", cfg_->dump_dir, cfg_->job_id);
}

bool VerdictSpawner::FreshSpawnHint() const {
  char path[kPathMax + 96];
  SpawnHintPath(path, sizeof(path));
  struct stat st;
  if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) ||
      !fileio::Believed(st, cfg_->trust, nullptr, 0)) {
    return false;
  }
  const uint64_t m = MtimeNs(st);
  const uint64_t now = RealtimeNs();
  const uint64_t age = now > m ? now - m : m - now;
  return age < kSpawnHintS * kNsPerSec;
}

void VerdictSpawner::LeaveSpawnHint() const {
  char path[kPathMax + 96];
  SpawnHintPath(path, sizeof(path));
  (void)path;
  char name[format::kFileNameMax];
  if (!format::SpawnHintName(cfg_->job_id, name, sizeof(name))) return;
  char why[fileio::kWhyMax];
  const int dirfd = fileio::OpenDir(cfg_->dump_dir, fileio::DirRole::kShared, cfg_->trust, false,
                                    why, sizeof(why), nullptr, 0);
  if (dirfd < 0) return;  // `watch` says what is wrong with the directory
  char line[32];
  const int n = snprintf(line, sizeof(line), "%lld\n", static_cast<long long>(pid_));
  // A hint: its mtime is what counts; not synced.
  fileio::WriteFileAt(dirfd, name, line, static_cast<size_t>(n), cfg_->trust, false, why,
                      sizeof(why));
  close(dirfd);
}

void VerdictSpawner::Spawn() {
  ++spawns_;
  char why[kPathMax + 96] = {};
  if (analyzer_[0] == '\0' || !SafeExecutable(analyzer_, why, sizeof(why))) {
    Logf(log_, kLogWarn,
         "no verdict: the analyzer is not safe to run: %s (set NCCL_FLIGHTREC_ANALYZER to the "
         "absolute path of the flightrec binary, or NCCL_FLIGHTREC_VERDICT=0)",
         analyzer_[0] != '\0' ? why : "none found beside the plugin");
    candidate_ = false;
    return;
  }
  LeaveSpawnHint();
  char pid_text[24];
  snprintf(pid_text, sizeof(pid_text), "%lld", static_cast<long long>(pid_));
  const char* argv[16];
  int n = 0;
  argv[n++] = analyzer_;
  argv[n++] = "watch";
  argv[n++] = cfg_->dump_dir;
  if (strcmp(cfg_->dir, cfg_->dump_dir) != 0) argv[n++] = cfg_->dir;  // this node's rings
  argv[n++] = "--job";
  argv[n++] = cfg_->job_id;
  argv[n++] = "--once";
  argv[n++] = "--parent-pid";
  argv[n++] = pid_text;
  // The hook command (NCCL_FLIGHTREC_ON_VERDICT) reaches `watch` through
  // the inherited environment, never on its command line, which every
  // user of the node can read.
  argv[n] = nullptr;

  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    Logf(log_, kLogWarn, "no verdict: cannot create a pipe: %s", strerror(errno));
    candidate_ = false;
    return;
  }
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&fa);
  posix_spawnattr_init(&attr);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDERR_FILENO);
  // The watchdog thread blocks every signal and the host may ignore some:
  // the child starts with an empty mask and default dispositions, in its
  // own process group (so the time limit kills its hook too).
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  char* const* args = const_cast<char* const*>(argv);
  const int rc = posix_spawn(&pid, analyzer_, &fa, &attr, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    Logf(log_, kLogWarn,
         "no verdict: cannot run the analyzer %s: %s (set NCCL_FLIGHTREC_ANALYZER to the "
         "flightrec binary, or NCCL_FLIGHTREC_VERDICT=0)",
         analyzer_, strerror(rc));
    candidate_ = false;
    return;
  }
  // Lowered right away, before the analysis reads anything; the whole
  // group, so threads and the hook inherit it.
  setpriority(PRIO_PGRP, static_cast<id_t>(pid), 19);
  syscall(SYS_ioprio_set, kIoprioWhoPgrp, static_cast<int>(pid),
          kIoprioClassIdle << kIoprioClassShift);
  if (kLimitAddressSpace) {
    struct rlimit lim = {kVerdictMemoryLimitBytes, kVerdictMemoryLimitBytes};
    prlimit(pid, RLIMIT_AS, &lim, nullptr);
  }
  child_ = pid;
  pipe_fd_ = fds[0];
  spawn_mono_ns_ = ClockNowNs();
  killed_ = false;
  eof_ = false;
  partial_len_ = 0;
  headline_ = false;
  last_line_[0] = '\0';
  Logf(log_, kLogInfo, "hang dump sealed: %s watch %s --job %s (pid %d) gives the verdict",
       analyzer_, cfg_->dump_dir, cfg_->job_id, static_cast<int>(pid));
}

void VerdictSpawner::Drain() {
  if (pipe_fd_ < 0 || eof_) return;
  char buf[4096];
  for (int i = 0; i < kReadsPerPoll; ++i) {
    const ssize_t got = read(pipe_fd_, buf, sizeof(buf));
    if (got == 0) {
      eof_ = true;
      break;
    }
    if (got < 0) break;  // EAGAIN: nothing more now (EINTR: next poll)
    for (ssize_t k = 0; k < got; ++k) {
      if (buf[k] == '\n') {
        TakeLine();
      } else if (partial_len_ + 1 < sizeof(partial_)) {
        partial_[partial_len_++] = buf[k];
      }
    }
  }
}

void VerdictSpawner::TakeLine() {
  partial_[partial_len_] = '\0';
  partial_len_ = 0;
  if (partial_[0] == '\0') return;
  if (strncmp(partial_, kHeadlinePrefix, sizeof(kHeadlinePrefix) - 1) == 0 && !headline_) {
    // Printed once the reports are written, before the hook runs: logged now.
    headline_ = true;
    Logf(log_, kLogWarn, "verdict: %s", partial_ + sizeof(kHeadlinePrefix) - 1);
  } else if (headline_ && strncmp(partial_, kHookPrefix, sizeof(kHookPrefix) - 1) == 0) {
    // Whether the hook that acts on the verdict (drains, pages) ran, and
    // how it ended: the job's log says so beside the headline.
    Logf(log_, kLogWarn, "verdict hook: %s", partial_ + sizeof(kHookPrefix) - 1);
  }
  snprintf(last_line_, sizeof(last_line_), "%s", partial_);
}

void VerdictSpawner::Finish(bool status_known, int status) {
  if (partial_len_ > 0) TakeLine();  // output without a final newline
  close(pipe_fd_);
  pipe_fd_ = -1;
  const pid_t pid = child_;
  child_ = -1;
  const uint64_t now = ClockNowNs();
  const bool exited = status_known && WIFEXITED(status);
  const int code = exited ? WEXITSTATUS(status) : -1;
  if (headline_) {
    candidate_ = false;  // logged when it was read
    return;
  }
  if (code == 3 || (!status_known && !VerdictExists())) {
    // Another process holds (or gave) the verdict, or the host took the
    // status: keep watching in case its holder dies (its lock goes stale).
    Logf(log_, kLogInfo, "verdict analysis (pid %d) left the verdict to another process: %s",
         static_cast<int>(pid), last_line_[0] != '\0' ? last_line_ : "(no output)");
    next_try_mono_ns_ = now + kRecheckMs * kNsPerMs;
    return;
  }
  candidate_ = false;
  if (!status_known) return;  // the verdict exists: another process logged it
  char how[64];
  if (killed_) {
    snprintf(how, sizeof(how), "killed after %llu s",
             static_cast<unsigned long long>(kVerdictTimeLimitS));
  } else if (WIFSIGNALED(status)) {
    snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
  } else {
    snprintf(how, sizeof(how), "exit status %d", code);
  }
  Logf(log_, kLogWarn, "no verdict: the analysis %s %s (%s): %s", Basename(analyzer_),
       code == 0 ? "printed no verdict line" : "failed", how,
       last_line_[0] != '\0' ? last_line_ : "(no output)");
}

void VerdictSpawner::Stop() {
  if (child_ > 0) {
    kill(-child_, SIGKILL);
    // Reap it (bounded: a host reaper or SIGCHLD=SIG_IGN may take it).
    for (int i = 0; i < 200; ++i) {
      const pid_t r = waitpid(child_, nullptr, WNOHANG);
      if (r == child_ || (r < 0 && errno == ECHILD)) break;
      struct timespec ms = {0, static_cast<long>(kNsPerMs)};
      nanosleep(&ms, nullptr);
    }
    Logf(log_, kLogInfo, "verdict analysis (pid %d) stopped with the recorder",
         static_cast<int>(child_));
    child_ = -1;
  }
  if (pipe_fd_ >= 0) close(pipe_fd_);
  pipe_fd_ = -1;
  candidate_ = false;
}

void VerdictSpawner::ForgetAfterFork() {
  if (pipe_fd_ >= 0) close(pipe_fd_);
  pipe_fd_ = -1;
  child_ = -1;
  candidate_ = false;
}

}  // namespace rec
}  // namespace flightrec

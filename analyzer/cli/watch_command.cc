// `flightrec watch DIR... [--job ID] [--once] [--on-verdict-file FILE] ...`: waits
// for a job's hang dumps, decides when the set is complete, writes the
// verdict (`flightrec-<job>.verdict.{json,md,html,txt}`, the reports of
// `flightrec analyze`) into the first DIR, runs the hook, and prints
// `flightrec verdict: <headline> (report: <.txt path>)` as its last stdout
// line. The plugin spawns it inside a job; a Slurm epilog or a sidecar runs
// it from outside. One verdict per incident across all watchers
// (verdict_lock.h, docs/design/verdict.md).
//
// Exit code: 0 a verdict was written; 3 another watcher holds or wrote the
// verdict of this incident (nothing done); 2 errors (a directory that cannot
// be read or written, the parent given by --parent-pid died); 128 + signal
// stopped by SIGINT, SIGTERM or SIGHUP (stop_signal.h) before its verdict,
// its verdict lock released for the next watcher.
#include <fcntl.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/cli/analysis_run.h"
#include "analyzer/cli/commands.h"
#include "analyzer/cli/dump_scan.h"
#include "analyzer/cli/hook_runner.h"
#include "analyzer/cli/stop_signal.h"
#include "analyzer/cli/verdict_lock.h"
#include "analyzer/model/describe.h"
#include "flightrec/job_dir.h"
#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExitVerdict = 0;
constexpr int kExitError = 2;
constexpr int kExitNotOurs = 3;
// Judge's "a stop signal came; the lock is still held" (not an exit code).
constexpr int kStopRequested = -1;
// A verdict lock not refreshed for this long is taken over; the holder
// refreshes it every second (docs/design/verdict.md).
constexpr std::chrono::seconds kStaleAfter{format::kVerdictLockStaleS};
constexpr std::chrono::seconds kRefreshEvery{1};

struct WatchArgs {
  std::vector<std::string> dirs;
  std::string job;
  bool once = false;
  std::string on_verdict;         // the hook command, once resolved
  std::string on_verdict_file;    // --on-verdict-file
  bool on_verdict_given = false;  // --on-verdict, even empty (no hook)
  double grace_s = 10;
  double hook_timeout_s = 60;
  int64_t parent_pid = 0;
  int poll_ms = 500;
};

uint64_t WallNowNs() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void Complain(const std::string& what) {
  std::fprintf(stderr, "flightrec watch: %s\n", what.c_str());
}

// --parent-pid: the in-job spawn's process. While it is our parent, a
// change of getppid() says it died; otherwise (a double fork) kill(pid, 0).
class ParentWatch {
 public:
  explicit ParentWatch(int64_t pid) : pid_(static_cast<pid_t>(pid)) {
    direct_ = pid_ > 0 && getppid() == pid_;
  }
  bool Alive() const {
    if (pid_ <= 0) return true;
    if (direct_) return getppid() == pid_;
    return kill(pid_, 0) == 0 || errno == EPERM;
  }
  int64_t pid() const { return pid_; }

 private:
  pid_t pid_;
  bool direct_ = false;
};

// Keeps a held verdict lock fresh every second from a thread of its own,
// so a long analysis never looks stale; stops refreshing (and records it)
// as soon as the parent is gone, so that another watcher takes over.
class LockKeeper {
 public:
  LockKeeper(const VerdictLock& lock, const ParentWatch& parent)
      : lock_(lock), parent_(parent), thread_([this] { Loop(); }) {}
  ~LockKeeper() {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  bool parent_gone() const { return parent_gone_.load(std::memory_order_relaxed); }

 private:
  void Loop() {
    std::unique_lock<std::mutex> g(mu_);
    while (!stop_) {
      if (!parent_.Alive()) {
        parent_gone_.store(true, std::memory_order_relaxed);
        return;
      }
      lock_.Refresh();
      cv_.wait_for(g, kRefreshEvery, [this] { return stop_; });
    }
  }

  const VerdictLock& lock_;
  const ParentWatch& parent_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::atomic<bool> parent_gone_{false};
  std::thread thread_;
};

// A writable first directory, checked by creating a file there (access()
// says yes to root on a read-only mount): a unique temporary
// (`.flightrec-watch-probe.<random>.tmp`, a companion every reader skips),
// removed at once.
bool ProbeWritable(int dirfd, const std::string& dir, const fileio::Trust& trust,
                   std::string* error) {
  fileio::TempFile probe;
  char why[fileio::kWhyMax] = {};
  if (!fileio::CreateTemp(dirfd, "flightrec-watch-probe", trust, &probe, why, sizeof(why))) {
    *error = dir + ": cannot write verdicts there: " + why;
    return false;
  }
  fileio::Discard(dirfd, &probe);
  return true;
}

// The files `watch` writes into the first DIR: names (relative to its
// descriptor) and paths (for messages and the hook).
struct VerdictPaths {
  std::string json, md, html, txt, hook_log;
  VerdictPaths(const std::string& dir, const std::string& job) {
    const std::string stem = dir + "/flightrec-" + job;
    json = stem + ".verdict.json";
    md = stem + ".verdict.md";
    html = stem + ".verdict.html";
    txt = stem + ".verdict.txt";
    hook_log = stem + ".hook.log";
  }
  static std::string Name(const std::string& path) { return path.substr(path.rfind('/') + 1); }
};

// The dump directory's descriptor, held while watching.
struct DirFd {
  int fd = -1;
  DirFd() = default;
  DirFd(const DirFd&) = delete;
  DirFd& operator=(const DirFd&) = delete;
  ~DirFd() {
    if (fd >= 0) close(fd);
  }
};

// Every root-cause process that has a file.
std::vector<CulpritId> Culprits(const AnalysisRun& run) {
  std::vector<CulpritId> out;
  for (const analysis::Culprit& c : run.result().culprits) {
    if (c.process < 0) continue;
    const ProcessSnapshot& p = run.index().processes()[c.process];
    out.push_back({p.host, p.pid});
  }
  return out;
}

class Watcher {
 public:
  Watcher(const WatchArgs& args, StopSignal* stop)
      : args_(args),
        stop_(stop),
        dir_(std::filesystem::absolute(args.dirs[0]).lexically_normal().string()),
        parent_(args.parent_pid),
        scanner_(args.dirs) {
    if (!args.job.empty()) {
      char job[format::kNameMax];
      format::SanitizeName(args.job.c_str(), "nojob", job, sizeof(job));
      job_ = job;
    }
  }

  int Run();

 private:
  // False (after one line saying so) once the parent is gone, seen here or
  // by the thread of `keeper` that keeps a held lock fresh.
  bool ParentAlive(const LockKeeper* keeper = nullptr) {
    if (parent_.Alive() && (keeper == nullptr || !keeper->parent_gone())) return true;
    Complain("parent process " + std::to_string(parent_.pid()) +
             " is gone; exiting without a verdict");
    return false;
  }
  static int LostLock() {
    Complain("another watcher took the verdict lock over; leaving the verdict to it");
    return kExitNotOurs;
  }
  // Waits one poll period; true when a stop signal came instead.
  bool Sleep() { return stop_->WaitFor(std::chrono::milliseconds(args_.poll_ms)); }
  // The stop signal's end: one line on stderr, exit 128 + signal. A lock
  // still held is released for the next watcher (the refreshing thread has
  // stopped by now).
  int Stopped(VerdictLock* held) {
    std::string what = "no verdict lock held";
    if (held != nullptr && held->held()) {
      what = "no verdict written; released the verdict lock " + held->Release() +
             " for the next watcher";
    }
    Complain("stopped by " + stop_->SignalName() + ": " + what);
    return 128 + stop_->signal();
  }
  Incident Assess(const std::string& job, const Coverage& coverage);
  // The incident is open and the lock is ours: wait for the set, analyze,
  // write, hook. Returns the exit code (kExitVerdict to go on watching).
  int Judge(const std::string& job, VerdictLock* lock, Incident incident);

  const WatchArgs& args_;
  StopSignal* stop_;
  std::string dir_;
  DirFd dirfd_;  // dir_, opened by Run (fileio::OpenDir, kShared)
  std::string job_;
  ParentWatch parent_;
  DumpScanner scanner_;
  Clock::time_point first_seen_{};
  bool incident_seen_ = false;
  bool busy_reported_ = false;
};

Incident Watcher::Assess(const std::string& job, const Coverage& coverage) {
  Incident in = AssessIncident(scanner_.files(), job, coverage, Clock::now());
  if (in.quiet_rings.empty()) return in;
  for (const std::string& ring : in.quiet_rings)
    scanner_.RefreshRing(ring, Clock::duration::zero());
  return AssessIncident(scanner_.files(), job, coverage, Clock::now());
}

int Watcher::Run() {
  std::string error;
  char why[fileio::kWhyMax] = {}, note[fileio::kWhyMax * 2] = {};
  dirfd_.fd = fileio::OpenDir(dir_.c_str(), fileio::DirRole::kShared, CommandTrust(), false, why,
                              sizeof(why), note, sizeof(note));
  if (dirfd_.fd < 0) {
    Complain(dir_ + ": cannot write verdicts there: " + why);
    return kExitError;
  }
  if (note[0] != '\0') Complain(note);
  if (!ProbeWritable(dirfd_.fd, dir_, CommandTrust(), &error)) {
    Complain(error);
    return kExitError;
  }
  std::unique_ptr<VerdictLock> lock;
  std::string lock_job;
  for (bool first = true;; first = false) {
    if ((!first && Sleep()) || stop_->Requested()) return Stopped(lock.get());
    if (!ParentAlive()) return kExitError;
    if (!scanner_.Scan(&error)) {
      Complain(error);
      return kExitError;
    }
    const std::string job = job_.empty() ? MajorityJob(scanner_.files()) : job_;
    if (job.empty()) continue;
    if (lock == nullptr || lock_job != job) {
      lock = std::make_unique<VerdictLock>(dirfd_.fd, dir_, job, CommandTrust(), kStaleAfter);
      lock_job = job;
    }
    const DoneMark done = lock->ReadDone();
    Incident incident = Assess(job, done.coverage());
    if (!incident.open) {
      incident_seen_ = false;
      if (args_.once && incident.any_hang && done.valid) {
        Complain("the latest hang of job " + job + " already has its verdict (" +
                 VerdictPaths(dir_, job).txt + ")");
        return kExitNotOurs;
      }
      continue;
    }
    if (!incident_seen_) {
      incident_seen_ = true;
      busy_reported_ = false;
      first_seen_ = Clock::now();
      Complain("hang dumps of job " + job + " found; " + std::to_string(incident.dumped) + " of " +
               std::to_string(incident.expected) + " processes have dumped");
    }
    const VerdictLock::Attempt attempt = lock->TryAcquire(&error);
    if (attempt == VerdictLock::Attempt::kError) {
      Complain(error);
      return kExitError;
    }
    if (attempt == VerdictLock::Attempt::kBusy) {
      if (!busy_reported_) {
        busy_reported_ = true;
        Complain("another watcher (" + lock->holder() +
                 ") is writing the verdict; standing by to take over if it dies");
      }
      continue;
    }
    // Acquired: the incident may have been judged between our look at the
    // done marker and our create (by the holder of the generation before).
    incident = Assess(job, lock->ReadDone().coverage());
    if (!incident.open) {
      lock->Abandon();
      if (args_.once) {
        Complain("the verdict of this hang of job " + job + " was written by another watcher");
        return kExitNotOurs;
      }
      continue;
    }
    const int rc = Judge(job, lock.get(), incident);
    if (rc == kStopRequested) return Stopped(lock.get());
    lock.reset();
    incident_seen_ = false;
    // Without --once a lost lock is not the end: the taker writes this
    // verdict, we wait for the next incident.
    if (args_.once || rc == kExitError) return rc;
  }
}

int Watcher::Judge(const std::string& job, VerdictLock* lock, Incident incident) {
  LockKeeper keeper(*lock, parent_);
  const Clock::duration grace =
      std::chrono::milliseconds(static_cast<int64_t>(args_.grace_s * 1000));
  std::string error;
  while (!incident.complete()) {
    if (stop_->Requested()) return kStopRequested;
    if (!ParentAlive(&keeper)) return kExitError;
    if (!lock->StillOurs()) return LostLock();
    const bool local_grace = Clock::now() - first_seen_ >= grace;
    const bool dump_grace =
        WallNowNs() >= incident.start_ns + static_cast<uint64_t>(args_.grace_s * 1e9);
    if (local_grace || dump_grace) {
      std::string missing;
      for (size_t i = 0; i < incident.waiting_for.size() && i < 8; ++i) {
        missing += " " + incident.waiting_for[i];
      }
      if (incident.waiting_for.size() > 8) missing += " ...";
      Complain("grace period over with " + std::to_string(incident.dumped) + " of " +
               std::to_string(incident.expected) + " processes dumped" +
               (missing.empty() ? std::string() : "; no dump from" + missing));
      break;
    }
    if (Sleep()) return kStopRequested;
    if (!scanner_.Scan(&error)) {
      Complain(error);
      return kExitError;
    }
    incident = Assess(job, lock->ReadDone().coverage());
  }
  if (stop_->Requested()) return kStopRequested;  // the analysis is not interrupted
  const AnalysisRun run(scanner_.InputsOf(job), AnalysisSettings{});
  VerdictPaths paths(dir_, job);
  struct Output {
    std::string* path;
    const char* ext;
    ReportFormat format;
  };
  const Output outputs[] = {{&paths.json, "json", ReportFormat::kJson},
                            {&paths.md, "md", ReportFormat::kMarkdown},
                            {&paths.html, "html", ReportFormat::kHtml},
                            {&paths.txt, "txt", ReportFormat::kText}};
  for (const Output& o : outputs) {
    if (stop_->Requested()) return kStopRequested;
    if (!ParentAlive(&keeper)) return kExitError;
    if (!lock->StillOurs()) return LostLock();
    // A unique temporary renamed over the name: whatever another user
    // planted there (a symlink, a file) is replaced, never written through;
    // a name another user's file holds in a sticky directory gives way to
    // our user's own name.
    char user_name[format::kFileNameMax] = {};
    format::UserVerdictReportName(job.c_str(), CommandTrust().uid, o.ext, user_name,
                                  sizeof(user_name));
    const std::string name = VerdictPaths::Name(*o.path);
    const std::string written =
        WriteShared(dirfd_.fd, name, user_name, run.Render(o.format), CommandTrust(), &error);
    if (written.empty()) {
      Complain(*o.path + ": cannot write: " + error);
      return kExitError;
    }
    if (written != name) {
      Complain("another user's file holds " + *o.path + ": the report is " + dir_ + "/" + written);
      *o.path = dir_ + "/" + written;
    }
  }
  if (stop_->Requested()) return kStopRequested;
  if (!lock->StillOurs()) return LostLock();
  if (!lock->MarkDone(incident.start_ns, std::max(incident.newest_ns, WallNowNs()), &error)) {
    Complain(error);
    return kExitError;
  }
  const std::string headline = run.Headline();
  std::printf("flightrec verdict: %s (report: %s)\n", headline.c_str(), paths.txt.c_str());
  std::fflush(stdout);
  if (args_.on_verdict.empty()) return kExitVerdict;
  HookSpec hook;
  hook.command = args_.on_verdict;
  hook.timeout_s = args_.hook_timeout_s;
  hook.stop_fd = stop_->fd();
  std::vector<std::string> dropped;
  hook.env = {{"FLIGHTREC_VERDICT", analysis::VerdictName(run.result().verdict)},
              {"FLIGHTREC_REPORT", paths.json},
              {"FLIGHTREC_REPORT_MD", paths.md},
              {"FLIGHTREC_REPORT_HTML", paths.html},
              {"FLIGHTREC_REPORT_TXT", paths.txt},
              {"FLIGHTREC_HEADLINE", HeadlineVariable(headline)},
              {"FLIGHTREC_JOB_ID", JobIdVariable(job)},
              {"FLIGHTREC_CULPRITS", CulpritsVariable(Culprits(run), &dropped)}};
  for (const std::string& d : dropped) Complain(d);
  // The log: a temporary in the dump directory, published when the hook
  // has ended (hook_runner.h).
  hook.log_dir_fd = dirfd_.fd;
  hook.log_name = VerdictPaths::Name(paths.hook_log);
  hook.log_path = paths.hook_log;
  hook.trust = CommandTrust();
  const HookResult result = RunHook(hook);
  const bool ok = result.started && result.exited && result.status == 0 && result.error.empty();
  // One line the plugin logs in the job's log (recorder/verdict.cc).
  Complain("verdict hook: " + result.Describe() + " (log: " + paths.hook_log + ")" +
           (ok ? "" : "; the verdict stands"));
  return kExitVerdict;
}

// The hook command: --on-verdict (given empty: no hook), else
// --on-verdict-file, else NCCL_FLIGHTREC_ON_VERDICT (unset or empty: no
// hook). False (said on stderr) when the file cannot be used.
bool ResolveHookCommand(WatchArgs* args) {
  if (args->on_verdict_given) return true;
  if (!args->on_verdict_file.empty()) {
    std::string error;
    if (ReadHookCommandFile(args->on_verdict_file, &args->on_verdict, &error)) return true;
    Complain(error);
    return false;
  }
  const char* env = std::getenv(kHookCommandEnv);
  if (env != nullptr) args->on_verdict = env;
  return true;
}

}  // namespace

void AddWatchCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<WatchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "Wait for a job's hang dumps, write its verdict beside them and run a hook (one verdict per "
      "hang, however many watchers)");
  cmd->add_option("dirs", args->dirs,
                  "Directories with rings and dumps; the verdict goes into the first")
      ->required();
  cmd->add_option("--job", args->job, "Job id to follow (default: the majority job found)");
  cmd->add_flag("--once", args->once, "Exit after one verdict (default: watch for the next hang)");
  CLI::Option* on_verdict =
      cmd->add_option("--on-verdict", args->on_verdict,
                      "Run `/bin/sh -c CMD` after each verdict (FLIGHTREC_* variables set; output "
                      "in flightrec-<job>.hook.log). CMD is visible in `ps` to every user of the "
                      "node: prefer --on-verdict-file or NCCL_FLIGHTREC_ON_VERDICT");
  cmd->add_option("--on-verdict-file", args->on_verdict_file,
                  "Take the hook command from FILE (a regular file of yours, mode 0600 or "
                  "stricter). Without either option: NCCL_FLIGHTREC_ON_VERDICT")
      ->excludes(on_verdict);
  cmd->add_option("--grace", args->grace_s,
                  "Seconds after the first hang dump to stop waiting for the others")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--hook-timeout", args->hook_timeout_s,
                  "Seconds before the hook's process group is killed")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--parent-pid", args->parent_pid,
                  "Exit without a verdict when this process dies (the in-job spawn)");
  cmd->add_option("--poll-ms", args->poll_ms, "Directory polling period")
      ->check(CLI::Range(10, 60000))
      ->capture_default_str();
  cmd->callback([args, exit_code, on_verdict]() {
    // A host that ignored SIGCHLD (or blocked signals) passed that on
    // through exec: the hook's exit status needs the default back.
    signal(SIGCHLD, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    args->on_verdict_given = on_verdict->count() > 0;
    if (!ResolveHookCommand(args.get())) {
      *exit_code = kExitError;
      return;
    }
    StopSignal stop;  // before LockKeeper's thread, which inherits its mask
    Watcher watcher(*args, &stop);
    *exit_code = watcher.Run();
  });
}

}  // namespace cli
}  // namespace flightrec

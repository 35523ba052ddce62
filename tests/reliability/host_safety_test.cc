// The host-safety matrix (issue item 4), one test per row. Jobs run as real
// processes: whole emulated jobs under flightrec-emu (several ranks, the
// plugin loaded as NCCL loads it), or a forked child driving the plugin
// through the real ABI when the fault must be set up inside the process
// (descriptor exhaustion), or with an LD_PRELOAD shim that steps the wall
// clock under every rank (clock jumps, clock_jump_shim.cc). In every row the job completes (or is
// stopped and resumed as scripted), init returns success, any disablement reason is logged exactly
// once per process, and `flightrec analyze` over whatever was written exits 0, 1 or 2 with a
// report.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/reader/snapshot_reader.h"
#include "emulator/src/coord.h"
#include "reliability/rel_util.h"
#include "support/abi_driver.h"
#include "support/time_scale.h"

namespace flightrec {
namespace {

constexpr int kRanks = 4;
constexpr int kOps = 64;
const char* const kJobArgs =
    "--ranks 4 --tp 2 --ranks-per-node 2 --ops 64 --step-us 5 "
    "--hang-timeout-s 30";

struct EmuJob {
  std::string dir;
  std::string ring_dir;
  int status = -1;  // raw wait status of the launcher
  nlohmann::json summary;
  std::string log;
};

std::string EmuCommand(const EmuJob& job, const std::string& args,
                       const std::map<std::string, std::string>& env) {
  std::string cmd = "exec env NCCL_PROFILER_PLUGIN=flightrec NCCL_DEBUG=INFO LD_LIBRARY_PATH='" +
                    rel::BuildDir() + "/lib' NCCL_FLIGHTREC_DIR='" + job.ring_dir + "'";
  for (const auto& [k, v] : env) cmd += " '" + k + "=" + v + "'";
  return cmd + " '" + rel::EmuPath() + "' run --job-dir '" + job.dir + "/job' --summary '" +
         job.dir + "/summary.json' --log-file '" + job.dir + "/nccl.log' " + args +
         " >/dev/null 2>&1";
}

void Collect(EmuJob* job) {
  job->summary = nlohmann::json::parse(rel::ReadText(job->dir + "/summary.json"), nullptr, false);
  job->log = rel::ReadText(job->dir + "/nccl.log");
}

EmuJob RunEmu(const std::string& tag, const std::string& ring_dir,
              const std::map<std::string, std::string>& env, const std::string& prefix = "") {
  EmuJob job;
  job.dir = rel::MakeTempDir(tag);
  job.ring_dir = ring_dir.empty() ? job.dir + "/rings" : ring_dir;
  if (ring_dir.empty()) mkdir(job.ring_dir.c_str(), 0755);
  job.status = rel::RunShellStatus(prefix + EmuCommand(job, kJobArgs, env));
  Collect(&job);
  return job;
}

void ExpectCompleted(const EmuJob& job, int ops = kOps) {
  ASSERT_TRUE(WIFEXITED(job.status) && WEXITSTATUS(job.status) == 0)
      << "launcher status " << job.status << "\n"
      << job.log;
  ASSERT_TRUE(job.summary.is_object()) << "no summary";
  ASSERT_EQ(job.summary["ranks"].size(), static_cast<size_t>(kRanks));
  for (const auto& r : job.summary["ranks"]) {
    EXPECT_EQ(r["exit_code"], 0);
    EXPECT_EQ(r["ops_completed"], ops);
  }
}

// Whatever the job left (maybe nothing) is analyzed without a crash.
void ExpectAnalyzeIsClean(const std::string& dir) {
  for (const char* format : {"text", "json"}) {
    rel::AnalyzeRun run = rel::RunAnalyze({dir}, format);
    ASSERT_TRUE(run.exited) << "flightrec analyze died by signal " << run.signal;
    EXPECT_GE(run.code, 0);
    EXPECT_LE(run.code, 2) << run.errors;
    EXPECT_FALSE(run.report.empty()) << format;
  }
}

TEST(HostSafetyTest, DirectoryUnderARegularFileDisablesOncePerProcess) {
  const std::string base = rel::MakeTempDir("notdir");
  ASSERT_TRUE(rel::WriteBytes(base + "/file", "x", 1));
  const std::string bad = base + "/file/rings";
  EmuJob job = RunEmu("notdir-job", bad, {});
  ExpectCompleted(job);
  EXPECT_EQ(rel::CountLines(job.log, "flightrec: disabled"), kRanks) << job.log;
  EXPECT_EQ(rel::CountLines(job.log, bad), kRanks) << "the reason names the path";
  ExpectAnalyzeIsClean(base);
  rel::RemoveTree(job.dir);
  rel::RemoveTree(base);
}

TEST(HostSafetyTest, UnwritableDirectoryDisablesOncePerProcess) {
  // /proc refuses mkdir even for root (chmod would not stop root).
  EmuJob job = RunEmu("unwritable", "/proc/flightrec-rel", {});
  ExpectCompleted(job);
  EXPECT_EQ(rel::CountLines(job.log, "flightrec: disabled"), kRanks) << job.log;
  rel::RemoveTree(job.dir);
}

// A full filesystem: a 64 KiB tmpfs (real ENOSPC) when this host lets us
// mount one, else RLIMIT_FSIZE with SIGXFSZ ignored (EFBIG). Same promise.
TEST(HostSafetyTest, FullFilesystemDisablesOncePerProcess) {
  const std::string mnt = rel::MakeTempDir("fullfs");
  // mode=0700: a ring directory must be ours alone (tmpfs roots are 1777).
  const bool tmpfs = mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k,mode=0700") == 0;
  RecordProperty("full_filesystem", tmpfs ? "tmpfs ENOSPC" : "RLIMIT_FSIZE");
  EmuJob job = tmpfs ? RunEmu("fullfs-job", mnt, {})
                     : RunEmu("fsize-job", "", {}, "ulimit -f 64; trap '' XFSZ; ");
  ExpectCompleted(job);
  EXPECT_EQ(rel::CountLines(job.log, "flightrec: disabled"), kRanks) << job.log;
  EXPECT_EQ(rel::CountLines(job.log, "cannot preallocate"), kRanks) << job.log;
  // Nothing half-written is left for a reader to trip on.
  EXPECT_TRUE(rel::ListFiles(job.ring_dir, ".ring").empty());
  ExpectAnalyzeIsClean(job.ring_dir);
  if (tmpfs) umount2(mnt.c_str(), MNT_DETACH);
  rel::RemoveTree(job.dir);
  rel::RemoveTree(mnt);
}

TEST(HostSafetyTest, NonsenseEnvironmentIsNamedOnceAndDefaultsKept) {
  const std::map<std::string, std::string> env = {
      {"NCCL_FLIGHTREC_TIMEOUT_S", "banana"},    {"NCCL_FLIGHTREC_RECORDS", "-5"},
      {"NCCL_FLIGHTREC_MAX_COMMS", "99999999"},  {"NCCL_FLIGHTREC_CLOCK", "sundial"},
      {"NCCL_FLIGHTREC_POLL_MS", "1e999"},       {"NCCL_FLIGHTREC_MAX_DUMPS", "many"},
      {"NCCL_FLIGHTREC_DUMP_SIGNAL", "SIGKILL"}, {"NCCL_FLIGHTREC_ENABLE", "perhaps"},
      {"NCCL_FLIGHTREC_EVENT_MASK", "0xzz"},     {"NCCL_FLIGHTREC_JOB_ID", "../../etc"}};
  EmuJob job = RunEmu("nonsense", "", env);
  ExpectCompleted(job);
  for (const char* var :
       {"NCCL_FLIGHTREC_TIMEOUT_S", "NCCL_FLIGHTREC_RECORDS", "NCCL_FLIGHTREC_MAX_COMMS",
        "NCCL_FLIGHTREC_CLOCK", "NCCL_FLIGHTREC_POLL_MS", "NCCL_FLIGHTREC_MAX_DUMPS",
        "NCCL_FLIGHTREC_DUMP_SIGNAL", "NCCL_FLIGHTREC_ENABLE"}) {
    EXPECT_EQ(rel::CountLines(job.log, var), kRanks) << var << " in\n" << job.log;
  }
  EXPECT_EQ(rel::CountLines(job.log, "flightrec: disabled"), 0) << job.log;
  // Defaults kept: every rank records, and the job id cannot escape the dir.
  std::vector<std::string> rings = rel::ListFiles(job.ring_dir, ".ring");
  EXPECT_EQ(rings.size(), static_cast<size_t>(kRanks));
  for (const std::string& r : rings) {
    ReadResult rr = ReadSnapshotFile(r);
    ASSERT_TRUE(rr.ok) << rr.error;
    EXPECT_EQ(rr.snapshot.comms.size(), 3u);  // world, tp, dp
  }
  ExpectAnalyzeIsClean(job.ring_dir);
  rel::RemoveTree(job.dir);
}

template <typename F>
bool WaitUntil(F cond, int seconds) {  // liveness bound, not a timing check
  for (int i = 0; i < seconds * 100; ++i) {
    if (cond()) return true;
    usleep(10000);
  }
  return cond();
}

TEST(HostSafetyTest, SigstoppedRankMakesPeersDumpAndResumesAfterSigcont) {
  EmuJob job;
  job.dir = rel::MakeTempDir("sigstop");
  job.ring_dir = job.dir + "/rings";
  ASSERT_EQ(mkdir(job.ring_dir.c_str(), 0755), 0);
  constexpr int kLongOps = 400;
  const std::string cmd = EmuCommand(
      job, "--ranks 4 --tp 2 --ranks-per-node 2 --ops 400 --step-us 100 --hang-timeout-s 60",
      {{"NCCL_FLIGHTREC_TIMEOUT_S", "0.5"}, {"NCCL_FLIGHTREC_POLL_MS", "20"}});
  pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  emu::Coord coord;
  std::string err;
  ASSERT_TRUE(WaitUntil([&] { return coord.Open(job.dir + "/job/coord.shm", &err); }, 30)) << err;
  ASSERT_TRUE(WaitUntil([&] { return emu::Coord::Load(&coord.rank(1)->ops_completed) >= 20; }, 30));
  const pid_t victim = static_cast<pid_t>(__atomic_load_n(&coord.rank(1)->pid, __ATOMIC_ACQUIRE));
  ASSERT_EQ(kill(victim, SIGSTOP), 0);
  // Its peers block in collectives with it; their watchdogs seal dumps.
  auto peer_dumps = [&] {
    int n = 0;
    for (const std::string& d : rel::ListFiles(job.ring_dir, ".frdump")) {
      n += d.find("-" + std::to_string(victim) + "-") == std::string::npos ? 1 : 0;
    }
    return n;
  };
  const bool dumped = WaitUntil([&] { return peer_dumps() >= 1; }, 30);
  ASSERT_EQ(kill(victim, SIGCONT), 0);
  EXPECT_TRUE(dumped) << "no peer sealed a dump while rank 1 was stopped";
  int status = 0;
  ASSERT_EQ(waitpid(launcher, &status, 0), launcher);
  job.status = status;
  Collect(&job);
  ExpectCompleted(job, kLongOps);
  for (const std::string& d : rel::ListFiles(job.ring_dir, ".frdump")) {
    ReadResult dr = ReadSnapshotFile(d);
    EXPECT_TRUE(dr.ok) << dr.error;
    if (dr.ok) {
      EXPECT_TRUE(dr.snapshot.dump_reason == format::kDumpTimeout ||
                  dr.snapshot.dump_reason == format::kDumpTrigger ||
                  dr.snapshot.dump_reason == format::kDumpExit)
          << d;
    }
  }
  ExpectAnalyzeIsClean(job.ring_dir);
  rel::RemoveTree(job.dir);
}

// Descriptor exhaustion must be set up inside the process, after the plugin
// is loaded and before its first init: a forked child does it.
TEST(HostSafetyTest, DescriptorsExhaustedBeforeInitDisablesOnce) {
  const std::string dir = rel::MakeTempDir("nofile");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
    rel::AbiDriver drv(rel::PluginPath());
    if (!drv.ok()) _exit(10);
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    lim.rlim_cur = static_cast<rlim_t>(rel::CountOpenFds() + 2);
    setrlimit(RLIMIT_NOFILE, &lim);
    std::vector<int> hogs;
    for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) hogs.push_back(fd);
    void* ctx[3] = {};
    for (int c = 0; c < 3; ++c) {
      if (drv.Init(&ctx[c], 0x300 + c, "nofile", 2, 0) != 0) _exit(11);  // init succeeds
    }
    for (int c = 0; c < 3; ++c) {
      for (uint64_t i = 0; i < 50; ++i) {
        rel::PendingOp op;
        drv.LaunchColl(ctx[c], 0, i, i, &op);
        drv.CompleteOp(op);
      }
      drv.Finalize(ctx[c]);
    }
    for (int fd : hogs) close(fd);  // room to write the log for the parent
    std::string log;
    for (const std::string& l : rel::LoggedLines()) log += l + "\n";
    rel::WriteBytes(dir + "/log.txt", log.data(), log.size());
    _exit(rel::CountLogged("disabled") == 1 ? 0 : 12);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const std::string log = rel::ReadText(dir + "/log.txt");
  ASSERT_TRUE(WIFEXITED(status)) << "signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "log:\n" << log;
  EXPECT_NE(log.find("Too many open files"), std::string::npos) << log;
  rel::RemoveTree(dir);
}

// ---------------------------------------------------------------------------
// Clock jumps: the host's wall clock steps under a running job, as NTP
// stepping or an operator's `date -s` does. Every process of the job runs
// with clock_jump_shim.cc LD_PRELOADed, which steps CLOCK_REALTIME (and
// gettimeofday, time) on a schedule and leaves CLOCK_MONOTONIC alone. The
// emulator's GPU %globaltimer is CLOCK_REALTIME + a per-rank offset, so the
// emulated GPU timers step with it: the harder case, since the recorder must
// keep them raw.
// ---------------------------------------------------------------------------

constexpr int64_t kSecNs = 1000000000LL;
constexpr int64_t kHourNs = 3600 * kSecNs;

uint64_t ClockNs(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// The sanitizer runtime this binary (and so every binary of this build)
// loaded dynamically, "" in a plain build. It must precede the shim in
// LD_PRELOAD: ASan refuses to start when another preloaded library comes
// before its runtime, and a runtime loaded first sees the shim as the "real"
// clock_gettime behind its interceptors.
std::string SanitizerRuntime() {
  std::string found;
  dl_iterate_phdr(
      [](struct dl_phdr_info* info, size_t, void* out) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr || *name == '\0') return 0;
        const char* slash = strrchr(name, '/');
        const char* base = slash != nullptr ? slash + 1 : name;
        for (const char* rt :
             {"libasan.so", "libtsan.so", "libclang_rt.asan", "libclang_rt.tsan"}) {
          if (strncmp(base, rt, strlen(rt)) == 0) {
            *static_cast<std::string*>(out) = name;
            return 1;
          }
        }
        return 0;
      },
      &found);
  return found;
}

std::map<std::string, std::string> ClockJumpEnv(const std::string& schedule, double timeout_s,
                                                int poll_ms) {
  const std::string runtime = SanitizerRuntime();
  return {{"LD_PRELOAD", (runtime.empty() ? "" : runtime + ":") + FLIGHTREC_CLOCK_JUMP_SHIM},
          {"FLIGHTREC_TEST_CLOCK_JUMPS", schedule},
          {"NCCL_FLIGHTREC_TIMEOUT_S", std::to_string(timeout_s)},
          {"NCCL_FLIGHTREC_POLL_MS", std::to_string(poll_ms)}};
}

// How far a process's wall clock has stepped since its ring was created: a
// CLOCK_REALTIME reading it stored minus the same instant on its init-time
// anchor (mono - created_mono + created_wall, the records' time line).
int64_t WallStepNs(const ProcessSnapshot& s, uint64_t wall_ns, uint64_t mono_ns) {
  return static_cast<int64_t>(wall_ns - (mono_ns - s.created_mono_ns + s.created_wall_ns));
}

bool Near(int64_t value, int64_t want, int64_t tolerance) {
  return value >= want - tolerance && value <= want + tolerance;
}

// A job whose launcher runs in the background while the test watches it.
struct LiveJob {
  EmuJob job;
  pid_t launcher = -1;
  uint64_t launch_mono_ns = 0;  // this (unshimmed) process's clocks at fork
  uint64_t launch_wall_ns = 0;
  emu::Coord coord;
  std::vector<pid_t> pids;  // per rank
};

void StartLiveJob(const std::string& tag, const std::string& args,
                  const std::map<std::string, std::string>& env, LiveJob* live) {
  live->job.dir = rel::MakeTempDir(tag);
  live->job.ring_dir = live->job.dir + "/rings";
  ASSERT_EQ(mkdir(live->job.ring_dir.c_str(), 0755), 0);
  const std::string cmd = EmuCommand(live->job, args, env);
  live->launch_mono_ns = ClockNs(CLOCK_MONOTONIC);
  live->launch_wall_ns = ClockNs(CLOCK_REALTIME);
  live->launcher = fork();
  ASSERT_GE(live->launcher, 0);
  if (live->launcher == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string err;
  ASSERT_TRUE(
      WaitUntil([&] { return live->coord.Open(live->job.dir + "/job/coord.shm", &err); }, 30))
      << err;
  ASSERT_TRUE(WaitUntil(
      [&] {
        for (int r = 0; r < kRanks; ++r) {
          if (__atomic_load_n(&live->coord.rank(r)->pid, __ATOMIC_ACQUIRE) == 0) return false;
        }
        return true;
      },
      30));
  for (int r = 0; r < kRanks; ++r) {
    live->pids.push_back(
        static_cast<pid_t>(__atomic_load_n(&live->coord.rank(r)->pid, __ATOMIC_ACQUIRE)));
  }
}

int WaitLauncher(LiveJob* live) {
  int status = 0;
  while (waitpid(live->launcher, &status, 0) < 0) {
  }
  live->job.status = status;
  Collect(&live->job);
  return status;
}

// The files of one process: flightrec-<job>-<host>-<pid>.ring / -<pid>-<n>.frdump.
std::string RingOf(const LiveJob& live, pid_t pid) {
  for (const std::string& f : rel::ListFiles(live.job.ring_dir, ".ring")) {
    if (f.size() > 6 &&
        f.compare(f.rfind('-'), std::string::npos, "-" + std::to_string(pid) + ".ring") == 0) {
      return f;
    }
  }
  return "";
}

std::vector<std::string> DumpsOf(const LiveJob& live, pid_t pid) {
  std::vector<std::string> out;
  const std::string tag = "-" + std::to_string(pid) + "-";
  for (const std::string& f : rel::ListFiles(live.job.ring_dir, ".frdump")) {
    if (f.find(tag, f.rfind('/')) != std::string::npos) out.push_back(f);
  }
  return out;
}

// Every rank's live ring is still running and shows its wall clock stepped
// by want[rank] since init (at its newest heartbeat).
bool LiveRingsShowSteps(const LiveJob& live, const std::vector<int64_t>& want) {
  for (int r = 0; r < kRanks; ++r) {
    const std::string ring = RingOf(live, live.pids[r]);
    if (ring.empty()) return false;
    ReadResult rr = ReadSnapshotFile(ring);
    if (!rr.ok || rr.snapshot.heartbeat_mono_ns == 0) return false;
    const ProcessSnapshot& s = rr.snapshot;
    if (s.process_state != format::kProcessRunning ||
        !Near(WallStepNs(s, s.heartbeat_wall_ns, s.heartbeat_mono_ns), want[r], kSecNs / 2)) {
      return false;
    }
  }
  return true;
}

// WaitUntil for conditions that read whole rings: polled every 50 ms, with
// the bound in seconds of monotonic time (liveness, not a timing check).
template <typename F>
bool WaitWithin(F cond, int seconds) {
  const uint64_t deadline = ClockNs(CLOCK_MONOTONIC) + static_cast<uint64_t>(seconds) * kSecNs;
  while (ClockNs(CLOCK_MONOTONIC) < deadline) {
    if (cond()) return true;
    usleep(50000);
  }
  return cond();
}

nlohmann::json ShowJson(const std::string& path, int* status) {
  const std::string out = rel::MakeTempDir("show");
  *status = rel::RunShellStatus("exec '" + rel::CliPath() + "' show --json '" + path + "' >'" +
                                out + "/show.json' 2>/dev/null");
  nlohmann::json j = nlohmann::json::parse(rel::ReadText(out + "/show.json"), nullptr, false);
  rel::RemoveTree(out);
  return j;
}

// The live rings of the healthy job, analyzed while it runs, between two
// steps: no hang, nobody dead. --stuck-after 60 keeps a loaded machine's
// scheduling from counting, while an hour's step taken for age would still
// be a hang. The job's steps are 2 s apart, and the rings are checked again
// afterwards: the read did not span a step (ranks step milliseconds apart,
// and two clocks an hour apart would be a different test).
void ExpectLiveRingsHealthy(const LiveJob& live, const std::vector<int64_t>& want,
                            const char* when) {
  rel::AnalyzeRun run = rel::RunAnalyze({live.job.ring_dir}, "json", {"--stuck-after", "60"});
  ASSERT_TRUE(LiveRingsShowSteps(live, want)) << when << ": the job moved on during the analysis";
  ASSERT_TRUE(run.exited) << when << ": analyze died by signal " << run.signal;
  nlohmann::json report = nlohmann::json::parse(run.report, nullptr, false);
  EXPECT_EQ(run.code, 0) << when << ":\n" << run.report << run.errors;
  ASSERT_TRUE(report.is_object()) << when << ": " << run.report;
  EXPECT_EQ(report["verdict"], "healthy") << when << ":\n" << report.dump(1);
  EXPECT_EQ(report["inputs"]["read"].size(), static_cast<size_t>(kRanks)) << when;
}

// One rank's ring, as `flightrec show --json` prints it, after a healthy run
// with wall-clock steps: everything recorded, in op order, every host time
// on one unbroken time line (the wall clock as it read at the last
// heartbeat, which the reader uses for a stepped file and says so), GPU
// timers kept raw and converted onto that time line.
//   init_step: the rank's wall clock minus true time at its init
//   now_step:  the same at the end of the job (the same for every rank)
//   gpu_steps: the steps the rank's wall clock (and so its emulated GPU
//              timer) took while it ran
//   job_ns:    the job's length on this process's monotonic clock
void ExpectRingSurvivedSteps(const std::string& ring, const LiveJob& live, int64_t init_step,
                             int64_t now_step, const std::vector<int64_t>& gpu_steps,
                             uint64_t job_ns) {
  int status = -1;
  const nlohmann::json show = ShowJson(ring, &status);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "show " << ring << ": " << status;
  ASSERT_TRUE(show.is_object()) << ring;
  ASSERT_EQ(show["warnings"].size(), 1u) << show["warnings"].dump();
  EXPECT_NE(show["warnings"][0].get<std::string>().find("the wall clock stepped back by"),
            std::string::npos)
      << show["warnings"].dump();
  // The header keeps the anchor as written: true time plus init_step.
  const int64_t created =
      static_cast<int64_t>(show["header"]["created_wall_ns"].get<uint64_t>() - live.launch_wall_ns);
  EXPECT_TRUE(created >= init_step - kSecNs && created <= init_step + static_cast<int64_t>(job_ns))
      << ring << ": anchor " << created << " ns after launch, wanted step " << init_step;
  // Every host time lies in the job's run as the clock read at the end.
  const uint64_t run_begin = live.launch_wall_ns + static_cast<uint64_t>(now_step);
  const uint64_t run_end = run_begin + job_ns;
  ASSERT_EQ(show["comms"].size(), 3u) << ring;  // world, tp, dp
  std::map<int64_t, int> straddling;            // step -> records whose kernel spanned it
  for (const nlohmann::json& comm : show["comms"]) {
    const std::string name = comm["name"].get<std::string>();
    const nlohmann::json& records = comm["records"];
    EXPECT_EQ(comm["torn"], 0) << name;
    EXPECT_EQ(comm["overwritten"], 0) << name;
    ASSERT_EQ(records.size(), comm["head"].get<uint64_t>()) << name;
    ASSERT_FALSE(records.empty()) << name;
    uint64_t next_coll = 0;
    std::map<std::pair<std::string, int>, uint64_t> next_p2p;  // (func, peer) -> op_index
    uint64_t prev_enqueue = 0;
    for (size_t i = 0; i < records.size(); ++i) {
      const nlohmann::json& r = records[i];
      const std::string where = ring + " " + name + " slot " + std::to_string(i);
      EXPECT_EQ(r["slot"], i) << where;
      EXPECT_EQ(r["state"], "done") << where;
      if (r.contains("peer")) {
        uint64_t& next = next_p2p[{r["func"].get<std::string>(), r["peer"].get<int>()}];
        EXPECT_EQ(r["op_index"], next) << where;
        next = r["op_index"].get<uint64_t>() + 1;
      } else {
        EXPECT_EQ(r["op_index"], next_coll) << where;
        next_coll = r["op_index"].get<uint64_t>() + 1;
      }
      // Host times: one smooth time line, however the wall clock stepped.
      const uint64_t api = r["t_api_ns"].get<uint64_t>();
      const uint64_t enqueue = r["t_enqueue_ns"].get<uint64_t>();
      const uint64_t enqueued = r["t_enqueued_ns"].get<uint64_t>();
      EXPECT_GE(enqueue, prev_enqueue) << where << ": enqueue times go backwards";
      EXPECT_TRUE(enqueue >= run_begin && enqueue <= run_end)
          << where << ": enqueue " << static_cast<int64_t>(enqueue - run_begin)
          << " ns into a run of " << job_ns;
      EXPECT_LE(enqueue, enqueued) << where;
      EXPECT_LE(enqueued, run_end) << where;
      if (api != 0) {
        EXPECT_LE(api, enqueue) << where;
      }
      prev_enqueue = enqueue;
      // GPU timers, raw: a kernel's duration, or, for the one launch in
      // flight when the clock stepped, that step plus a kernel's duration.
      const uint64_t gs = r["gpu_start_raw"].get<uint64_t>();
      const uint64_t ge = r["gpu_end_raw"].get<uint64_t>();
      ASSERT_TRUE(gs != 0 && ge != 0) << where << ": no GPU timers";
      // Converted, the kernel starts at its enqueue (NCCL launches the kernel
      // around the Coll start event: microseconds either way), not hours off.
      const uint64_t start = r["gpu_start_ns"].get<uint64_t>();
      EXPECT_TRUE(start + kSecNs >= enqueue && start <= run_end)
          << where << ": GPU start " << static_cast<int64_t>(start - enqueue)
          << " ns after the enqueue";
      const int64_t d = static_cast<int64_t>(ge - gs);
      if (d >= 0 && d <= 10 * kSecNs) {  // GPU start <= GPU end
        EXPECT_GE(r["gpu_end_ns"].get<uint64_t>(), start) << where;
        continue;
      }
      bool explained = false;
      for (int64_t step : gpu_steps) {
        if (Near(d, step, 10 * kSecNs)) {
          ++straddling[step];
          explained = true;
        }
      }
      EXPECT_TRUE(explained) << where << ": GPU end - start = " << d << " ns";
    }
  }
  // The stream runs one launch at a time (at most two records: a group).
  for (const auto& [step, n] : straddling) EXPECT_LE(n, 2) << ring << " step " << step;
}

// The shim itself, loaded with dlopen (RTLD_LOCAL: nothing here is
// interposed) and called directly: the schedule, the rank filter, which
// clocks step and which do not.
TEST(ClockJumpShimTest, StepsOnlyTheWallClocksOnSchedule) {
  setenv("FLIGHTREC_TEST_CLOCK_JUMPS", "r3:+1@0,+3600@1,-7200.5@2,r7:+5@0", 1);
  setenv("RANK", "3", 1);
  void* h = dlopen(FLIGHTREC_CLOCK_JUMP_SHIM, RTLD_NOW | RTLD_LOCAL);
  const uint64_t loaded = ClockNs(CLOCK_MONOTONIC);
  unsetenv("FLIGHTREC_TEST_CLOCK_JUMPS");
  unsetenv("RANK");
  ASSERT_NE(h, nullptr) << dlerror();
  using ClockGettime = int (*)(clockid_t, struct timespec*);
  using Gettimeofday = int (*)(struct timeval*, void*);
  using Time = time_t (*)(time_t*);
  auto shim_clock = reinterpret_cast<ClockGettime>(dlsym(h, "clock_gettime"));
  auto shim_gtod = reinterpret_cast<Gettimeofday>(dlsym(h, "gettimeofday"));
  auto shim_time = reinterpret_cast<Time>(dlsym(h, "time"));
  ASSERT_TRUE(shim_clock != nullptr && shim_gtod != nullptr && shim_time != nullptr);
  auto shim_ns = [&](clockid_t id) {
    struct timespec ts;
    EXPECT_EQ(shim_clock(id, &ts), 0);
    return static_cast<int64_t>(ts.tv_sec) * kSecNs + ts.tv_nsec;
  };
  auto offset = [&](clockid_t id) { return shim_ns(id) - static_cast<int64_t>(ClockNs(id)); };
  auto check = [&](int64_t want, const char* phase) {
    const int64_t tol = kSecNs / 20;
    EXPECT_TRUE(Near(offset(CLOCK_REALTIME), want, tol)) << phase << " " << offset(CLOCK_REALTIME);
    EXPECT_TRUE(Near(offset(CLOCK_REALTIME_COARSE), want, tol)) << phase;
    EXPECT_TRUE(Near(offset(CLOCK_TAI), want, tol)) << phase;
    for (clockid_t id : {CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_BOOTTIME}) {
      EXPECT_TRUE(Near(offset(id), 0, tol)) << phase << " clock " << id << " must not step";
    }
    struct timeval tv;
    ASSERT_EQ(shim_gtod(&tv, nullptr), 0);
    const int64_t gtod = static_cast<int64_t>(tv.tv_sec) * kSecNs + tv.tv_usec * 1000LL;
    EXPECT_TRUE(Near(gtod - static_cast<int64_t>(ClockNs(CLOCK_REALTIME)), want, tol)) << phase;
    time_t t = 0;
    const time_t ret = shim_time(&t);
    EXPECT_EQ(ret, t);
    EXPECT_TRUE(Near((static_cast<int64_t>(t) - time(nullptr)) * kSecNs, want, 2 * kSecNs))
        << phase;
  };
  auto sleep_until = [&](double s) {
    const uint64_t at = loaded + static_cast<uint64_t>(s * 1e9);
    while (ClockNs(CLOCK_MONOTONIC) < at) usleep(5000);
  };
  // Checked 0.2 s into each 1 s phase.
  sleep_until(0.2);
  check(kSecNs, "from load (r3 only; r7 ignored)");
  sleep_until(1.2);
  check(kSecNs + kHourNs, "after +3600@1");
  sleep_until(2.2);
  check(kSecNs + kHourNs - 2 * kHourNs - kSecNs / 2, "after -7200.5@2");
  dlclose(h);
}

TEST(ClockJumpShimTest, MalformedScheduleAbortsAtLoad) {
  for (const char* bad : {"3600@1", "+3600", "+3600@x", "+1@1;+2@2", "r:+1@0", "+1@-1"}) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int devnull = open("/dev/null", O_WRONLY);
      dup2(devnull, 2);
      setenv("FLIGHTREC_TEST_CLOCK_JUMPS", bad, 1);
      dlopen(FLIGHTREC_CLOCK_JUMP_SHIM, RTLD_NOW | RTLD_LOCAL);
      _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT) << bad << ": " << status;
  }
}

// (a) A healthy job whose wall clock steps forward an hour, then back two,
// mid-run; rank 3 was started after a step the others had not seen yet, so
// its anchor is an hour ahead of theirs (one host, one clock: from 1 s on,
// all four read the same). Nothing may notice: no timeout or trigger dump,
// the live rings analyze healthy between the steps, every ring reads in
// order on one time line, and the job analyzes healthy.
TEST(HostSafetyTest, WallClockStepsLeaveAHealthyJobHealthy) {
  // 3000 ops of at least 2 ms x the time scale (at most 5): the job runs on
  // for 3 s or more after its last step (at 3 s), time for the live
  // analysis after it to end while every rank still runs, however loaded
  // the machine (the ring holds every op: the TP comm gets 7 records per 8
  // ops, 2,625 of its 4,096 slots).
  constexpr int kStepOps = 3000;
  constexpr double kTimeoutS = 5.0;
  const int step_us = 2000 * static_cast<int>(std::min(5.0, testing::TimeScale()));  // scale >= 1
  LiveJob live;
  StartLiveJob("clockstep",
               "--ranks 4 --tp 2 --ranks-per-node 2 --ops " + std::to_string(kStepOps) +
                   " --step-us " + std::to_string(step_us) + " --hang-timeout-s 60",
               // Heartbeat every 200 ms: rings read one after the other while they
               // are written may be a few polls apart, which must not look dead.
               ClockJumpEnv("r3:+3600@0,r0:+3600@1,r1:+3600@1,r2:+3600@1,-7200@3", kTimeoutS, 200),
               &live);
  if (HasFatalFailure()) return;
  // Steps since init, per rank: after 1 s ranks 0-2 are an hour ahead (rank
  // 3 already was at init); after 3 s everyone is two hours back from there.
  const std::vector<int64_t> ahead = {kHourNs, kHourNs, kHourNs, 0};
  const std::vector<int64_t> back = {-kHourNs, -kHourNs, -kHourNs, -2 * kHourNs};
  ASSERT_TRUE(WaitWithin([&] { return LiveRingsShowSteps(live, ahead); }, 30))
      << "no running job showed the +1 h step in its heartbeats";
  ExpectLiveRingsHealthy(live, ahead, "after +1 h");
  ASSERT_TRUE(WaitWithin([&] { return LiveRingsShowSteps(live, back); }, 30))
      << "no running job showed the -2 h step in its heartbeats";
  ExpectLiveRingsHealthy(live, back, "after -2 h");
  WaitLauncher(&live);
  const uint64_t job_ns = ClockNs(CLOCK_MONOTONIC) - live.launch_mono_ns;
  RecordProperty("job_ms", std::to_string(job_ns / 1000000));
  ExpectCompleted(live.job, kStepOps);

  // No spurious hang dump: each rank sealed exactly its exit dump, which saw
  // the net step; nobody left a trigger file or logged a stuck op.
  EXPECT_EQ(rel::CountLines(live.job.log, "op stuck past"), 0) << live.job.log;
  EXPECT_TRUE(rel::ListFiles(live.job.ring_dir, ".trigger").empty());
  const int64_t final_step[kRanks] = {-kHourNs, -kHourNs, -kHourNs, -2 * kHourNs};
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<std::string> dumps = DumpsOf(live, live.pids[r]);
    ASSERT_EQ(dumps.size(), 1u) << "rank " << r;
    ReadResult dr = ReadSnapshotFile(dumps[0]);
    ASSERT_TRUE(dr.ok) << dr.error;
    const ProcessSnapshot& d = dr.snapshot;
    EXPECT_EQ(d.dump_reason, format::kDumpExit) << dumps[0] << ": " << d.dump_detail;
    EXPECT_TRUE(Near(WallStepNs(d, d.dump_wall_ns, d.dump_mono_ns), final_step[r], kSecNs / 2))
        << "rank " << r << " dump saw step " << WallStepNs(d, d.dump_wall_ns, d.dump_mono_ns);
  }

  for (int r = 0; r < kRanks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const std::string ring = RingOf(live, live.pids[r]);
    ASSERT_FALSE(ring.empty());
    ExpectRingSurvivedSteps(
        ring, live, r == 3 ? kHourNs : 0, -kHourNs,
        r == 3 ? std::vector<int64_t>{-2 * kHourNs} : std::vector<int64_t>{kHourNs, -2 * kHourNs},
        job_ns);
  }

  rel::AnalyzeRun run = rel::RunAnalyze({live.job.ring_dir}, "json");
  ASSERT_TRUE(run.exited) << run.signal;
  EXPECT_EQ(run.code, 0) << run.report << run.errors;
  nlohmann::json report = nlohmann::json::parse(run.report, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.report;
  EXPECT_EQ(report["verdict"], "healthy") << report.dump(1);
  EXPECT_TRUE(report["findings"].empty()) << report.dump(1);
  ExpectAnalyzeIsClean(live.job.ring_dir);
  rel::RemoveTree(live.job.dir);
}

// (b) Rank 2 stops before op 16 (outside NCCL); its peers block in
// collectives with it. Then every wall clock steps back two hours, before
// the watchdog timeout: a watchdog timing ops on CLOCK_REALTIME would wait
// two more hours. Rank 1 again started after an hour's step the others took
// later, so anchors differ by an hour. Every rank must still seal a dump
// within timeout + a bound (monotonic time), and analyze names rank 2 alone.
TEST(HostSafetyTest, StuckRankIsDumpedAndNamedAcrossABackwardWallClockStep) {
  constexpr double kTimeoutS = 3.0;
  constexpr int64_t kTimeoutNs = 3 * kSecNs;
  constexpr int64_t kBackStepAtNs = 3 * kSecNs / 2;  // -7200@1.5 below
  constexpr int64_t kBoundNs = 2 * kSecNs;           // poll 20 ms + seal + trigger, loaded host
  constexpr int kStuck = 2;
  LiveJob live;
  StartLiveJob(
      "clockstuck",
      "--ranks 4 --tp 2 --ranks-per-node 2 --ops 1600 --step-us 2000 "
      "--hang-timeout-s 120 --fault stuck:rank=2:op=16",
      ClockJumpEnv("r1:+3600@0,r0:+3600@0.6,r2:+3600@0.6,r3:+3600@0.6,-7200@1.5", kTimeoutS, 20),
      &live);
  if (HasFatalFailure()) return;
  uint64_t stuck_at = 0;  // when rank 2's fault fired (this process's monotonic clock)
  const bool all_dumped = WaitUntil(
      [&] {
        if (stuck_at == 0 &&
            __atomic_load_n(&live.coord.rank(kStuck)->state, __ATOMIC_ACQUIRE) == emu::kRankStuck) {
          stuck_at = ClockNs(CLOCK_MONOTONIC);
        }
        for (pid_t pid : live.pids) {
          if (DumpsOf(live, pid).empty()) return false;
        }
        return true;
      },
      static_cast<int>(kTimeoutS) + 60);
  kill(live.launcher, SIGTERM);  // the launcher kills the ranks and exits 6
  const int status = WaitLauncher(&live);
  ASSERT_TRUE(all_dumped) << "not every rank sealed a dump\n" << live.job.log;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 6) << status;
  // The scenario: the hang began before the backward step.
  ASSERT_NE(stuck_at, 0u);
  const int64_t stuck_after = static_cast<int64_t>(stuck_at - live.launch_mono_ns);
  ASSERT_LT(stuck_after, kBackStepAtNs) << "rank 2 got stuck after the backward step";

  // analyze names rank 2, and rank 2 alone.
  rel::AnalyzeRun run = rel::RunAnalyze({live.job.ring_dir}, "json");
  ASSERT_TRUE(run.exited) << run.signal;
  EXPECT_EQ(run.code, 1) << run.report << run.errors;
  nlohmann::json report = nlohmann::json::parse(run.report, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.report;
  EXPECT_EQ(report["verdict"], "hang") << report.dump(1);
  ASSERT_EQ(report["culprits"].size(), 1u) << report.dump(1);
  EXPECT_EQ(report["culprits"][0]["pid"], live.pids[kStuck]) << report.dump(1);
  rel::AnalyzeRun text = rel::RunAnalyze({live.job.ring_dir}, "text");
  EXPECT_NE(text.report.find("world rank 2"), std::string::npos) << text.report;
  ExpectAnalyzeIsClean(live.job.ring_dir);

  // Every rank's clock ends at true time - 1 h (rank 1: +1 h before init,
  // -2 h; the others: +1 h after init, -2 h), and the reader puts each
  // stepped dump's host times on its clock at the dump: one time line for
  // all four, on which the dumps, the hang and the step are compared.
  const uint64_t launch = live.launch_wall_ns - kHourNs;  // on that line
  struct FirstDump {
    ProcessSnapshot snap;
    uint64_t oldest_pending = 0;  // enqueue of the oldest op not done; 0: none
  };
  std::vector<FirstDump> first(kRanks);
  uint64_t hang_start = UINT64_MAX;
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<std::string> dumps = DumpsOf(live, live.pids[r]);
    ASSERT_FALSE(dumps.empty());
    for (const std::string& path : dumps) {
      ReadResult dr = ReadSnapshotFile(path);
      ASSERT_TRUE(dr.ok) << dr.error;
      EXPECT_TRUE(dr.snapshot.dump_reason == format::kDumpTimeout ||
                  dr.snapshot.dump_reason == format::kDumpTrigger)
          << path << ": " << dr.snapshot.dump_detail;
      if (dr.snapshot.dump_sequence == 1) first[r].snap = dr.snapshot;
    }
    const ProcessSnapshot& s = first[r].snap;
    ASSERT_EQ(s.dump_sequence, 1u) << "rank " << r;
    // The dump saw its clock's steps since init: rank 1's +1 h came before
    // its init, the others' after.
    const int64_t step = WallStepNs(s, s.dump_wall_ns, s.dump_mono_ns);
    EXPECT_TRUE(Near(step, r == 1 ? -2 * kHourNs : -kHourNs, kSecNs / 2))
        << "rank " << r << " step " << step;
    EXPECT_TRUE(Near(static_cast<int64_t>(s.dump_wall_ns - live.launch_wall_ns), -kHourNs,
                     static_cast<int64_t>(kTimeoutS) * kSecNs + kBoundNs + 30 * kSecNs))
        << "rank " << r << ": the clock at the dump is not true time - 1 h";
    for (const CommSnapshot& c : s.comms) {
      for (const OpRecord& op : c.records) {
        if (op.state >= format::kOpDone) continue;
        if (first[r].oldest_pending == 0 || op.t_enqueue_ns < first[r].oldest_pending) {
          first[r].oldest_pending = op.t_enqueue_ns;
        }
      }
    }
    if (r == kStuck) {
      EXPECT_EQ(first[r].oldest_pending, 0u) << "the stuck rank is outside NCCL";
    } else {
      ASSERT_NE(first[r].oldest_pending, 0u) << "rank " << r << " waits in a collective";
      hang_start = std::min(hang_start, first[r].oldest_pending);
    }
  }
  // On that line the hang starts when rank 2 got stuck (the peers' pending
  // ops were enqueued right after it), before the backward step.
  EXPECT_TRUE(Near(static_cast<int64_t>(hang_start - launch), stuck_after, kSecNs / 2))
      << "hang at " << static_cast<int64_t>(hang_start - launch) << " ns after launch, rank 2 "
      << "stuck at " << stuck_after;
  int64_t worst_ns = 0;
  for (int r = 0; r < kRanks; ++r) {
    const ProcessSnapshot& s = first[r].snap;
    const int64_t after_hang = static_cast<int64_t>(s.dump_wall_ns - hang_start);
    worst_ns = std::max(worst_ns, after_hang);
    EXPECT_LE(after_hang, kTimeoutNs + kBoundNs) << "rank " << r << " dumped late";
    if (s.dump_reason == format::kDumpTimeout) {
      const int64_t age = static_cast<int64_t>(s.dump_wall_ns - first[r].oldest_pending);
      EXPECT_GE(age, kTimeoutNs) << "rank " << r << " timed out early";
      EXPECT_LE(age, kTimeoutNs + kBoundNs) << "rank " << r << " timed out late";
    }
  }
  RecordProperty("worst_dump_after_hang_ms", std::to_string(worst_ns / 1000000));
  rel::RemoveTree(live.job.dir);
}

}  // namespace
}  // namespace flightrec

// The host-safety matrix (issue item 4), one test per row. Jobs run as real
// processes: whole emulated jobs under flightrec-emu (several ranks, the
// plugin loaded as NCCL loads it), or a forked child driving the plugin
// through the real ABI when the fault must be set up inside the process
// (descriptor exhaustion). In every row the job completes (or is stopped
// and resumed as scripted), init returns success, any disablement reason is
// logged exactly once per process, and `flightrec analyze` over whatever was
// written exits 0, 1 or 2 with a report.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "analyzer/reader/snapshot_reader.h"
#include "emulator/src/coord.h"
#include "reliability/abi_driver.h"
#include "reliability/rel_util.h"

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
  const bool tmpfs = mount("tmpfs", mnt.c_str(), "tmpfs", 0, "size=64k") == 0;
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

}  // namespace
}  // namespace flightrec

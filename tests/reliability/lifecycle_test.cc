// Host-safety rows driven in-process through the real ABI (abi_driver.h):
// fork without exec, 100 dlopen/dlclose cycles, exit()/_exit while writers
// write flat out, 10,000 communicators created and destroyed, GPU timers
// that jump, the last finalize racing proxy-thread events. Each row: the
// host is never hurt, init returns success, and the ring stays readable and
// truthful.
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FLIGHTREC_REL_SANITIZED 1
// From the sanitizer runtime (gcc ships no allocator_interface.h).
extern "C" size_t __sanitizer_get_current_allocated_bytes(void);
#endif

#include "analyzer/reader/snapshot_reader.h"
#include "reliability/rel_util.h"
#include "support/abi_driver.h"

namespace flightrec {
namespace {

// Memory the process holds, in KiB. Sanitizer allocators keep freed blocks
// in quarantine (RSS grows by design there), so count live heap bytes.
long MemoryKib() {
#ifdef FLIGHTREC_REL_SANITIZED
  return static_cast<long>(__sanitizer_get_current_allocated_bytes() / 1024);
#else
  return rel::ResidentKib();
#endif
}

int CountThreads() {
  DIR* d = opendir("/proc/self/task");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
  closedir(d);
  return n;
}

// A small, fast configuration for one test's recorder.
std::string SetSmallConfig(const std::string& tag) {
  const std::string dir = rel::MakeTempDir(tag);
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", tag.c_str(), 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "4", 1);
  setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
  rel::ClearLoggedLines();
  return dir;
}

void RunOps(rel::AbiDriver* drv, void* ctx, int rank, uint64_t first, uint64_t n) {
  for (uint64_t i = first; i < first + n; ++i) {
    rel::PendingOp op;
    drv->LaunchColl(ctx, rank, i, i, &op);
    op.gpu_start = 1000000 + i * 100;
    op.gpu_end = op.gpu_start + 50;
    drv->CompleteOp(op);
  }
}

ReadResult ReadOnlyRing(const std::string& dir) {
  std::vector<std::string> rings = rel::ListFiles(dir, ".ring");
  if (rings.size() != 1) {
    ReadResult r;
    r.error = dir + ": " + std::to_string(rings.size()) + " ring files";
    return r;
  }
  return ReadSnapshotFile(rings[0]);
}

TEST(LifecycleTest, ForkedChildNeverWritesTheParentsRing) {
  const std::string dir = SetSmallConfig("fork");
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  void* ctx = nullptr;
  ASSERT_EQ(drv.Init(&ctx, 0xf0, "parent", 2, 0), 0);
  RunOps(&drv, ctx, 0, 0, 40);
  const std::string ring = rel::ListFiles(dir, ".ring").at(0);
  std::vector<uint8_t> before = rel::ReadBytes(ring);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // The child keeps calling the plugin: old comm, a new comm, finalize.
    RunOps(&drv, ctx, 0, 40, 500);
    void* child_ctx = nullptr;
    int rc = drv.Init(&child_ctx, 0xf1, "child", 2, 1);
    RunOps(&drv, child_ctx, 1, 0, 100);
    drv.Finalize(child_ctx);
    drv.Finalize(ctx);
    _exit(rc == 0 && rel::CountLogged("forked child") == 1 ? 0 : 3);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  std::vector<uint8_t> after = rel::ReadBytes(ring);
  ASSERT_EQ(before.size(), after.size());
  // The parent's watchdog keeps refreshing the heartbeat words [408, 432).
  for (size_t i = 0; i < before.size(); ++i) {
    if (i >= 408 && i < 432) continue;
    ASSERT_EQ(before[i], after[i]) << "byte " << i << " of the parent's ring changed";
  }
  RunOps(&drv, ctx, 0, 40, 10);  // the parent carries on
  drv.Finalize(ctx);
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  ASSERT_EQ(rr.snapshot.comms.size(), 1u);
  EXPECT_EQ(rr.snapshot.comms[0].head, 50u);
  EXPECT_EQ(rr.snapshot.comms[0].torn, 0u);
  rel::RemoveTree(dir);
}

TEST(LifecycleTest, HundredDlopenDlcloseCycles) {
  const std::string dir = SetSmallConfig("dlopen");
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  // Baselines after the first cycle: a sanitizer runtime starts its own
  // background thread at the first pthread_create.
  int fds_after_first = -1;
  int threads_after_first = -1;
  for (int cycle = 0; cycle < 100; ++cycle) {
    SCOPED_TRACE("cycle " + std::to_string(cycle));
    {
      rel::AbiDriver drv(rel::PluginPath());
      ASSERT_TRUE(drv.ok()) << drv.error();
      void* a = nullptr;
      void* b = nullptr;
      ASSERT_EQ(drv.Init(&a, 0xd0, "a", 2, 0), 0);
      ASSERT_EQ(drv.Init(&b, 0xd1, "b", 2, 0), 0);
      ASSERT_NE(a, nullptr);
      RunOps(&drv, a, 0, 0, 20);
      RunOps(&drv, b, 0, 0, 5);
      drv.Finalize(a);
      drv.Finalize(b);
    }  // dlclose
    // The watchdog was joined and every descriptor closed before unload.
    if (cycle == 0) {
      fds_after_first = rel::CountOpenFds();
      threads_after_first = CountThreads();
    }
    // pthread_join returns when the kernel clears the thread's tid, a moment
    // before the task leaves /proc/self/task: wait (bounded) for the count
    // to settle; a thread that was never joined keeps it high.
    for (int i = 0; i < 200 && CountThreads() != threads_after_first; ++i) usleep(5000);
    EXPECT_EQ(CountThreads(), threads_after_first);
    EXPECT_EQ(rel::CountOpenFds(), fds_after_first);
  }
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  EXPECT_EQ(rr.snapshot.process_state, format::kProcessExited);
  EXPECT_EQ(rel::CountLogged("disabled"), 0);
  unsetenv("NCCL_FLIGHTREC_DUMP_ON_EXIT");
  rel::RemoveTree(dir);
}

enum class ExitHow { kExitFromWriter, kUnderscoreExitFromWriter, kExitFromMain };

// Child: 2 comms x 2 writer threads writing flat out; then `how` ends it.
[[noreturn]] void ExitChild(ExitHow how) {
  static rel::AbiDriver* drv = new rel::AbiDriver(rel::PluginPath());  // never destroyed
  if (!drv->ok()) _exit(100);
  static void* ctx[2] = {};
  if (drv->Init(&ctx[0], 0xe0, "e0", 2, 0) != 0 || drv->Init(&ctx[1], 0xe1, "e1", 2, 0) != 0) {
    _exit(101);
  }
  static std::atomic<uint64_t> written{0};
  for (int t = 0; t < 4; ++t) {
    std::thread([t, how] {
      for (uint64_t i = 0;; ++i) {
        RunOps(drv, ctx[t % 2], 0, i, 1);
        if (written.fetch_add(1) >= 5000 && t == 3) {
          if (how == ExitHow::kExitFromWriter) exit(7);
          if (how == ExitHow::kUnderscoreExitFromWriter) _exit(9);  // exit_group
        }
      }
    }).detach();
  }
  while (written.load() < 5000 || how != ExitHow::kExitFromMain) usleep(100);
  exit(5);  // what returning from main does
}

class ExitWhileWritingTest : public ::testing::TestWithParam<ExitHow> {};

TEST_P(ExitWhileWritingTest, ProcessExitsWithItsStatusAndTheRingReads) {
  const ExitHow how = GetParam();
  const std::string dir = SetSmallConfig("exit");
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ExitChild(how);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const int want = how == ExitHow::kExitFromWriter             ? 7
                   : how == ExitHow::kUnderscoreExitFromWriter ? 9
                                                               : 5;
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), want);
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  ASSERT_EQ(rr.snapshot.comms.size(), 2u);
  for (const CommSnapshot& c : rr.snapshot.comms) {
    EXPECT_GT(c.head, 0u);
    EXPECT_LE(c.torn, 2u) << c.name << ": at most one claim per writer thread in flight";
    EXPECT_EQ(c.records.size() + c.torn, std::min<uint64_t>(c.head, 64)) << c.name;
  }
  if (how == ExitHow::kUnderscoreExitFromWriter) {
    EXPECT_EQ(rr.snapshot.process_state, format::kProcessRunning);  // no handler ran
  } else {
    EXPECT_EQ(rr.snapshot.process_state, format::kProcessExited);
    std::vector<std::string> dumps = rel::ListFiles(dir, ".frdump");
    ASSERT_EQ(dumps.size(), 1u) << "the exit dump";
    ReadResult dr = ReadSnapshotFile(dumps[0]);
    EXPECT_TRUE(dr.ok) << dr.error;
    EXPECT_EQ(dr.snapshot.dump_reason, format::kDumpExit);
  }
  rel::AnalyzeRun run = rel::RunAnalyze({dir}, "text");
  EXPECT_TRUE(run.exited && run.code >= 0 && run.code <= 2) << run.signal << run.errors;
  rel::RemoveTree(dir);
}

INSTANTIATE_TEST_SUITE_P(Lifecycle, ExitWhileWritingTest,
                         ::testing::Values(ExitHow::kExitFromWriter,
                                           ExitHow::kUnderscoreExitFromWriter,
                                           ExitHow::kExitFromMain),
                         [](const ::testing::TestParamInfo<ExitHow>& info) {
                           switch (info.param) {
                             case ExitHow::kExitFromWriter:
                               return std::string("exit");
                             case ExitHow::kUnderscoreExitFromWriter:
                               return std::string("exit_group");
                             default:
                               return std::string("return_from_main");
                           }
                         });

TEST(LifecycleTest, TenThousandCommsRecycleRegionsWithoutGrowth) {
  const std::string dir = SetSmallConfig("churn");
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  void* world = nullptr;  // stays open so the process recorder lives on
  ASSERT_EQ(drv.Init(&world, 0xa0, "world", 2, 0), 0);
  auto churn = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      void* c = nullptr;
      ASSERT_EQ(drv.Init(&c, 0x100000 + i, "churn", 2, 0), 0);
      ASSERT_NE(c, nullptr) << "comm " << i << " got no region";
      RunOps(&drv, c, 0, 0, 2);
      drv.Finalize(c);
      if (i % 500 == 0) {
        EXPECT_EQ(rel::CountLogged("disabled") + rel::CountLogged("WARN"), 0);
        rel::ClearLoggedLines();
      }
    }
  };
  churn(0, 200);  // warm-up: allocator and log buffers reach steady state
  const int fds = rel::CountOpenFds();
  const long mem = MemoryKib();
  rel::ClearLoggedLines();
  churn(200, 10000);
  EXPECT_EQ(rel::CountOpenFds(), fds);
  EXPECT_LT(MemoryKib() - mem, 4096) << "memory grew by more than 4 MiB";
  RunOps(&drv, world, 0, 0, 3);
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  EXPECT_EQ(rr.snapshot.drops[format::kDropNoRegion], 0u);
  uint64_t max_generation = 0;
  for (const CommSnapshot& c : rr.snapshot.comms) {
    max_generation = std::max(max_generation, c.generation);
    if (c.name == "world") {
      EXPECT_EQ(c.head, 3u);
    }
  }
  EXPECT_EQ(max_generation, 10001u);
  drv.Finalize(world);
  rel::RemoveTree(dir);
}

// The lifetime rule (recorder/ring_slab.h): the last finalize (Shutdown:
// watchdog joined, exit state, recorder torn down) races proxy threads that
// keep firing KernelCh and ProxyOp events on that comm's handles. More proxy
// threads than cores, so that at the instant of the shutdown some of them
// are descheduled in the middle of an event, past the handle lookup: on
// resuming they must write into memory that is still ours (under ASan: no
// use-after-free; anywhere: no SIGSEGV from an unmapped ring).
TEST(LifecycleTest, LastFinalizeRacesProxyThreadEvents) {
  const std::string dir = SetSmallConfig("race");
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "1", 1);
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  // Each finalize is raced by every proxy thread's events (thousands in all);
  // the code before the lifetime rule crashed within the first few.
  constexpr int kIterations = 500;
  constexpr int kProxyThreads = 4;
  constexpr uint64_t kOpsPerThread = 4;
  uint64_t events_after_finalize = 0;
  for (int iter = 0; iter < kIterations; ++iter) {
    void* ctx = nullptr;
    ASSERT_EQ(drv.Init(&ctx, 0x7000 + static_cast<uint64_t>(iter), "race", 2, 0), 0);
    ASSERT_NE(ctx, nullptr);
    std::vector<rel::PendingOp> ops(kProxyThreads * kOpsPerThread);
    for (uint64_t i = 0; i < ops.size(); ++i) {
      drv.LaunchColl(ctx, 0, i, i, &ops[i]);
      ops[i].gpu_start = 1000 + i;
      ops[i].gpu_end = 2000 + i;
    }
    std::atomic<int> started{0};
    std::atomic<bool> finalized{false};
    std::atomic<uint64_t> late{0};
    std::vector<std::thread> proxies;
    for (int t = 0; t < kProxyThreads; ++t) {
      proxies.emplace_back([&, t] {
        started.fetch_add(1);
        // Keeps firing for a while after the finalize returned.
        for (int after = 0; after < 3;) {
          for (uint64_t i = 0; i < kOpsPerThread; ++i) drv.CompleteOp(ops[t * kOpsPerThread + i]);
          if (finalized.load()) {
            ++after;
            late.fetch_add(1);
          }
        }
      });
    }
    while (started.load() < kProxyThreads) std::this_thread::yield();
    drv.Finalize(ctx);  // the last comm: the process recorder shuts down
    finalized.store(true);
    for (std::thread& p : proxies) p.join();
    events_after_finalize += late.load();
  }
  EXPECT_GT(events_after_finalize, 0u);
  EXPECT_EQ(rel::CountLogged("disabled"), 0);
  // The ring of the last recorder reads, marked exited.
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  EXPECT_EQ(rr.snapshot.process_state, format::kProcessExited);
  unsetenv("NCCL_FLIGHTREC_DUMP_ON_EXIT");
  rel::RemoveTree(dir);
}

TEST(LifecycleTest, GpuTimersJumpingBackAndForthNeitherCrashNorReorder) {
  const std::string dir = SetSmallConfig("gpujump");
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  void* ctx = nullptr;
  ASSERT_EQ(drv.Init(&ctx, 0xc0, "jumpy", 2, 0), 0);
  // Forward an hour, back to near zero, to the top of the range, end before
  // start: the GPU timer source is not ours to trust.
  const uint64_t starts[] = {
      5000000000ULL, 5000000000ULL + 3600000000000ULL, 1, UINT64_MAX - 10, 4000000000ULL, 0};
  const uint64_t ends[] = {
      5000001000ULL, 5000001000ULL + 3600000000000ULL, 0, UINT64_MAX, 3000000000ULL, 77};
  for (uint64_t i = 0; i < 6; ++i) {
    rel::PendingOp op;
    drv.LaunchColl(ctx, 0, i, i, &op);
    op.gpu_start = starts[i];
    op.gpu_end = ends[i];
    drv.CompleteOp(op);
  }
  ReadResult rr = ReadOnlyRing(dir);
  ASSERT_TRUE(rr.ok) << rr.error;
  ASSERT_EQ(rr.snapshot.comms.size(), 1u);
  const CommSnapshot& c = rr.snapshot.comms[0];
  ASSERT_EQ(c.records.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(c.records[i].op_index, i) << "records must stay in slot order";
    EXPECT_EQ(c.records[i].gpu_start_raw, starts[i]) << i;
    EXPECT_EQ(c.records[i].state, format::kOpDone) << i;
  }
  drv.Finalize(ctx);
  rel::AnalyzeRun run = rel::RunAnalyze({dir}, "json");
  EXPECT_TRUE(run.exited && run.code >= 0 && run.code <= 2) << run.signal << run.errors;
  rel::RemoveTree(dir);
}

}  // namespace
}  // namespace flightrec

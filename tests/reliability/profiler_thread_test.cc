// NCCL 2.31's threads (docs/design/nccl.md §NCCL 2.31): KernelCh events of a
// communicator come from a profiler thread of its own while its ProxyOp
// events still come from the proxy thread, so an op's record has two writer
// threads. The real plugin, loaded through the real ABI, with 2
// communicators, each driven by a user thread (CollApi, Coll), a profiler
// thread (KernelCh start, KernelChStop, stop) and a proxy thread (ProxyOp
// start, stop) working on the same ops at once, and the watchdog polling
// every 10 ms. Every op ends done (a ProxyOp start never moves a done op
// back to running) and the watchdog never takes the job for hung. Run by
// the TSan build like every other test: the record's words must be accessed
// race-free with two writers.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "reliability/rel_util.h"
#include "support/abi_driver.h"

namespace flightrec {
namespace {

constexpr int kComms = 2;
constexpr uint64_t kOps = 1500;
constexpr size_t kMaxInFlight = 16;

// One thread's share of the ops of one communicator.
struct Queue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<rel::PendingOp> ops;
  bool done = false;

  void Push(const rel::PendingOp& op) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ops.size() < kMaxInFlight; });
    ops.push_back(op);
    cv.notify_all();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  }
  bool Pop(rel::PendingOp* op) {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !ops.empty() || done; });
    if (ops.empty()) return false;
    *op = ops.front();
    ops.pop_front();
    cv.notify_all();
    return true;
  }
};

TEST(ProfilerThreadTest, KernelChAndProxyOpFromTwoThreadsLeaveEveryOpDone) {
  const std::string dir = rel::MakeTempDir("profiler-thread");
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "pthread", 1);
  setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
  setenv("NCCL_FLIGHTREC_TIMEOUT_S", "5", 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "4096", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "2", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  void* ctx[kComms] = {};
  for (int c = 0; c < kComms; ++c) {
    const std::string name = "comm" + std::to_string(c);
    ASSERT_EQ(drv.Init(&ctx[c], 0x2000 + c, name.c_str(), 8, c), 0);
    ASSERT_NE(ctx[c], nullptr);
  }
  Queue kernel_q[kComms], proxy_q[kComms];
  std::vector<std::thread> threads;
  for (int c = 0; c < kComms; ++c) {
    threads.emplace_back([&, c] {  // user thread
      for (uint64_t i = 0; i < kOps; ++i) {
        rel::PendingOp op;
        drv.LaunchColl(ctx[c], c, i, i, &op);
        op.gpu_start = 1000000000ULL * (c + 1) + i * 1000;
        op.gpu_end = op.gpu_start + 500;
        proxy_q[c].Push(op);
        kernel_q[c].Push(op);
      }
      proxy_q[c].Close();
      kernel_q[c].Close();
    });
    threads.emplace_back([&, c] {  // NCCL 2.31's profiler thread
      rel::PendingOp op;
      while (kernel_q[c].Pop(&op)) drv.CompleteKernels(op);
    });
    threads.emplace_back([&, c] {  // the proxy thread
      rel::PendingOp op;
      while (proxy_q[c].Pop(&op)) drv.CompleteProxyOps(op);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int c = 0; c < kComms; ++c) drv.Finalize(ctx[c]);

  std::vector<std::string> rings = rel::ListFiles(dir, ".ring");
  ASSERT_EQ(rings.size(), 1u);
  ReadResult rr = ReadSnapshotFile(rings[0]);
  ASSERT_TRUE(rr.ok) << rr.error;
  ASSERT_EQ(rr.snapshot.comms.size(), static_cast<size_t>(kComms));
  for (const CommSnapshot& c : rr.snapshot.comms) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.head, kOps);
    EXPECT_EQ(c.torn, 0u);
    ASSERT_EQ(c.records.size(), kOps);
    uint64_t not_done = 0;
    for (const OpRecord& r : c.records) {
      if (r.state != format::kOpDone) ++not_done;
      EXPECT_EQ(r.channels_started, r.n_channels) << r.op_index;
      EXPECT_EQ(r.channels_stopped, r.n_channels) << r.op_index;
    }
    EXPECT_EQ(not_done, 0u);
    EXPECT_EQ(c.drops[format::kDropStaleHandle], 0u);
  }
  // No op was ever taken for stuck.
  EXPECT_TRUE(rel::ListFiles(dir, ".frdump").empty());
  rel::RemoveTree(dir);
}

}  // namespace
}  // namespace flightrec

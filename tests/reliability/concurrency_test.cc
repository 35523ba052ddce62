// The TSan-relevant shape (issue item 1): the real plugin, loaded through the
// real ABI, with 4 communicators, each driven by its own user thread (CollApi,
// Coll start/stop) and proxy thread (KernelCh, ProxyOp), the watchdog
// polling every 10 ms, a trigger dump requested mid-run, one op left stuck so
// the watchdog's timeout path seals a dump while the other comms write, and
// the ring wrapping. Run by the TSan and ASan builds like every other test.
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <deque>
#include <thread>

#include "analyzer/reader/snapshot_reader.h"
#include "reliability/rel_util.h"
#include "support/abi_driver.h"

namespace flightrec {
namespace {

constexpr int kComms = 4;
constexpr uint64_t kOpsPerComm = 1500;
constexpr uint64_t kCapacity = 256;
constexpr size_t kMaxInFlight = 32;  // the user thread's "stream sync"

// One communicator's user -> proxy hand-off, like NCCL's proxy op pool.
struct ProxyQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<rel::PendingOp> ops;
  bool done = false;
};

void UserThread(rel::AbiDriver* drv, void* ctx, int c, ProxyQueue* q, bool leave_last_stuck) {
  for (uint64_t i = 0; i < kOpsPerComm; ++i) {
    rel::PendingOp op;
    drv->LaunchColl(ctx, c, i, i, &op);
    op.gpu_start = 1000000000ULL * (c + 1) + i * 1000;
    op.gpu_end = op.gpu_start + 500;
    if (leave_last_stuck && i + 1 == kOpsPerComm) {
      drv->StartKernels(op);  // running forever: the watchdog's timeout dump
      break;
    }
    std::unique_lock<std::mutex> lock(q->mu);
    q->cv.wait(lock, [&] { return q->ops.size() < kMaxInFlight; });
    q->ops.push_back(op);
    q->cv.notify_all();
  }
  std::lock_guard<std::mutex> lock(q->mu);
  q->done = true;
  q->cv.notify_all();
}

void ProxyThread(rel::AbiDriver* drv, ProxyQueue* q) {
  for (;;) {
    rel::PendingOp op;
    {
      std::unique_lock<std::mutex> lock(q->mu);
      q->cv.wait(lock, [&] { return !q->ops.empty() || q->done; });
      if (q->ops.empty()) return;
      op = q->ops.front();
      q->ops.pop_front();
      q->cv.notify_all();
    }
    drv->CompleteOp(op);
  }
}

// Leaves the trigger file `flightrec trigger` would (atomically).
void LeaveTrigger(const std::string& dir, const std::string& job) {
  const std::string path = dir + "/flightrec-" + job + ".trigger";
  const std::string line = "test 1 user\n";  // a request: flightrec/job_dir.h
  ASSERT_TRUE(rel::WriteBytes(path + ".tmp", line.data(), line.size()));
  ASSERT_EQ(rename((path + ".tmp").c_str(), path.c_str()), 0);
}

bool WaitForDumps(const std::string& dir, size_t n) {
  for (int i = 0; i < 3000; ++i) {  // liveness bound only (30 s), not a timing check
    if (rel::ListFiles(dir, ".frdump").size() >= n) return true;
    usleep(10000);
  }
  return false;
}

TEST(ConcurrencyTest, FourCommsUserAndProxyThreadsWatchdogAndMidRunDumps) {
  const std::string dir = rel::MakeTempDir("concurrency");
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "conc", 1);
  setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
  setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.3", 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "256", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "4", 1);
  setenv("NCCL_FLIGHTREC_MAX_DUMPS", "10", 1);
  rel::ClearLoggedLines();
  rel::AbiDriver drv(rel::PluginPath());
  ASSERT_TRUE(drv.ok()) << drv.error();
  void* ctx[kComms] = {};
  for (int c = 0; c < kComms; ++c) {
    const std::string name = "comm" + std::to_string(c);
    ASSERT_EQ(drv.Init(&ctx[c], 0x1000 + c, name.c_str(), 8, c), 0);
    ASSERT_NE(ctx[c], nullptr);
  }
  ProxyQueue queues[kComms];
  std::vector<std::thread> threads;
  for (int c = 0; c < kComms; ++c) {
    threads.emplace_back(UserThread, &drv, ctx[c], c, &queues[c], c == kComms - 1);
    threads.emplace_back(ProxyThread, &drv, &queues[c]);
  }
  LeaveTrigger(dir, "conc");  // while every thread writes
  for (std::thread& t : threads) t.join();
  // The stuck op of the last comm makes the watchdog seal a timeout dump.
  ASSERT_TRUE(WaitForDumps(dir, 2)) << "trigger and timeout dumps expected";
  for (int c = 0; c < kComms; ++c) drv.Finalize(ctx[c]);

  std::vector<std::string> rings = rel::ListFiles(dir, ".ring");
  ASSERT_EQ(rings.size(), 1u);
  ReadResult rr = ReadSnapshotFile(rings[0]);
  ASSERT_TRUE(rr.ok) << rr.error;
  EXPECT_EQ(rr.snapshot.process_state, format::kProcessExited);
  ASSERT_EQ(rr.snapshot.comms.size(), static_cast<size_t>(kComms));
  for (const CommSnapshot& c : rr.snapshot.comms) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(c.head, kOpsPerComm);
    EXPECT_EQ(c.torn, 0u);
    ASSERT_EQ(c.records.size(), kCapacity);
    for (size_t i = 0; i < c.records.size(); ++i) {
      const OpRecord& r = c.records[i];
      EXPECT_EQ(r.op_index, kOpsPerComm - kCapacity + i);
      EXPECT_EQ(r.count, 1000 + r.op_index);
      const bool stuck = c.name == "comm3" && r.op_index + 1 == kOpsPerComm;
      EXPECT_EQ(r.state, stuck ? format::kOpRunning : format::kOpDone) << r.op_index;
    }
    EXPECT_EQ(c.drops[format::kDropStaleHandle], 0u);
  }
  // Request (the mid-run trigger: not a timeout), timeout and exit dumps,
  // each a complete image.
  std::vector<std::string> dumps = rel::ListFiles(dir, ".frdump");
  ASSERT_GE(dumps.size(), 3u);
  std::vector<uint32_t> reasons;
  for (const std::string& d : dumps) {
    ReadResult dr = ReadSnapshotFile(d);
    ASSERT_TRUE(dr.ok) << dr.error;
    reasons.push_back(dr.snapshot.dump_reason);
  }
  for (uint32_t want : {format::kDumpRequest, format::kDumpTimeout, format::kDumpExit}) {
    EXPECT_NE(std::find(reasons.begin(), reasons.end(), want), reasons.end()) << want;
  }
  EXPECT_EQ(rel::CountLogged("disabled"), 0);
  rel::RemoveTree(dir);
}

}  // namespace
}  // namespace flightrec

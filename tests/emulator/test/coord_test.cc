// Coordination makes collectives really block: in-process for the counters,
// and end to end with a 4-rank job in which one rank is stuck.
#include "emulator/src/coord.h"
#include "support/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace flightrec {
namespace emu {
namespace {

std::string TempDir() {
  std::string dir = testing::MakeTempDir("emu-coord");
  EXPECT_FALSE(dir.empty());
  return dir;
}

TEST(Coord, WaitAllBlocksUntilEveryMemberPublished) {
  std::string path = TempDir() + "/coord.shm";
  Coord a, b;
  std::string err;
  ASSERT_TRUE(a.Create(path, 4, 2, "job", &err)) << err;
  ASSERT_TRUE(b.Open(path, &err)) << err;  // a second mapping, as another rank
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    ASSERT_TRUE(b.WaitAll(1, 1, 3, 5, nullptr));
    released = true;
  });
  a.Publish(1, a.reached(1, 0), 5);
  a.Publish(1, a.reached(1, 1), 5);
  a.Publish(1, a.reached(1, 2), 4);  // not enough yet
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(released.load());
  a.Publish(1, a.reached(1, 2), 5);
  waiter.join();
  EXPECT_TRUE(released.load());
  EXPECT_EQ(Coord::Load(b.reached(1, 2)), 5u);
}

// Send/Recv launches wait for their peers only (coord.h): a member that is
// not listed does not hold them.
TEST(Coord, WaitMembersWaitsForTheListedMembersOnly) {
  std::string path = TempDir() + "/coord.shm";
  Coord a;
  std::string err;
  ASSERT_TRUE(a.Create(path, 4, 1, "job", &err)) << err;
  std::atomic<bool> released{false};
  std::thread waiter([&] {
    ASSERT_TRUE(a.WaitMembers(0, 3, {1, 3}, 2, nullptr));
    released = true;
  });
  a.Publish(0, a.p2p(0, 1), 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  EXPECT_FALSE(released.load());
  a.Publish(0, a.p2p(0, 3), 2);  // members 0 and 2 never publish
  waiter.join();
  EXPECT_TRUE(released.load());
  EXPECT_EQ(Coord::Load(a.p2p(0, 0)), 0u);
}

// The PXN mailbox (PxnPost/PxnTake): first in, first out across two
// mappings, bounded: a full mailbox refuses the op and changes nothing.
TEST(Coord, PxnMailboxIsABoundedFifoBetweenProcesses) {
  std::string path = TempDir() + "/coord.shm";
  Coord origin, partner;
  std::string err;
  ASSERT_TRUE(origin.Create(path, 2, 3, "job", &err)) << err;
  ASSERT_TRUE(partner.Open(path, &err)) << err;
  PxnOp got;
  EXPECT_FALSE(partner.PxnTake(1, &got));
  for (uint64_t i = 0; i < kPxnSlots; ++i) {
    PxnOp op{};
    op.pid = 1000;
    op.parent = 0xabc000 + i;
    op.channel = static_cast<int32_t>(i % 8);
    ASSERT_TRUE(origin.PxnPost(1, op)) << i;
  }
  PxnOp extra{};
  extra.parent = 0xdead;
  EXPECT_FALSE(origin.PxnPost(1, extra));  // full: refused
  EXPECT_EQ(partner.PxnPosted(1), kPxnSlots);
  for (uint64_t i = 0; i < kPxnSlots; ++i) {
    ASSERT_TRUE(partner.PxnTake(1, &got)) << i;
    EXPECT_EQ(got.parent, 0xabc000 + i);
    EXPECT_EQ(got.pid, 1000);
    EXPECT_EQ(got.channel, static_cast<int32_t>(i % 8));
  }
  EXPECT_FALSE(partner.PxnTake(1, &got));
  EXPECT_EQ(origin.PxnTaken(1), kPxnSlots);
  EXPECT_FALSE(partner.PxnTake(0, &got));  // another rank's mailbox is empty
  ASSERT_TRUE(origin.PxnPost(1, extra));   // room again
  ASSERT_TRUE(partner.PxnTake(1, &got));
  EXPECT_EQ(got.parent, 0xdeadu);
}

// A rank's proxy threads (one per comm) all post to its one PXN partner's
// mailbox: concurrent posts from one process lose nothing and keep each
// thread's order, while the partner's proxy takes them.
TEST(Coord, PxnPostsFromSeveralThreadsOfOneProcessAllArriveOnce) {
  std::string path = TempDir() + "/coord.shm";
  Coord origin, partner;
  std::string err;
  ASSERT_TRUE(origin.Create(path, 2, 3, "job", &err)) << err;
  ASSERT_TRUE(partner.Open(path, &err)) << err;
  constexpr int kThreads = 4;
  constexpr uint64_t kPerThread = 20000;
  // A lost post makes the counters disagree forever (a mailbox that looks
  // full, or never empty): the deadline turns that into a failure.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::atomic<int> posting{kThreads};
  std::vector<std::thread> posters;
  for (int t = 0; t < kThreads; ++t) {
    posters.emplace_back([&origin, &posting, deadline, t] {
      for (uint64_t i = 0; i < kPerThread && std::chrono::steady_clock::now() < deadline; ++i) {
        PxnOp op{};
        op.rank = t;
        op.parent = i;
        while (!origin.PxnPost(1, op) && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();  // full: the taker drains it
        }
      }
      posting.fetch_sub(1);
    });
  }
  std::vector<uint64_t> next(kThreads, 0);
  uint64_t taken = 0, out_of_order = 0;
  PxnOp got;
  uint64_t stray = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    const bool done = posting.load() == 0;  // read before the take: nothing posted is missed
    if (partner.PxnTake(1, &got)) {
      ++taken;
      if (got.rank < 0 || got.rank >= kThreads) {
        ++stray;
        continue;
      }
      if (got.parent != next[got.rank]) ++out_of_order;
      next[got.rank] = got.parent + 1;
    } else if (done) {
      break;
    } else {
      std::this_thread::yield();
    }
  }
  for (auto& p : posters) p.join();
  EXPECT_EQ(stray, 0u);
  EXPECT_EQ(taken, kThreads * kPerThread);
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(partner.PxnPosted(1), kThreads * kPerThread);
  EXPECT_EQ(partner.PxnTaken(1), kThreads * kPerThread);
}

TEST(Coord, OpenRejectsAForeignFileWithItsName) {
  std::string path = TempDir() + "/junk";
  std::ofstream(path) << std::string(4096, 'x');
  Coord c;
  std::string err;
  EXPECT_FALSE(c.Open(path, &err));
  EXPECT_NE(err.find(path), std::string::npos);
}

nlohmann::json RunJob(const std::string& args, int* status) {
  std::string dir = TempDir();
  std::string cmd = "NCCL_PROFILER_PLUGIN=none " EMU_BIN " run --job-dir " + dir + " --summary " +
                    dir + "/summary.json " + args;
  int rc = std::system(cmd.c_str());
  *status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  std::ifstream in(dir + "/summary.json");
  nlohmann::json j;
  in >> j;
  return j;
}

TEST(Coord, AStuckRankReallyBlocksTheOthers) {
  int status = -1;
  // tp=2: TP {0,1},{2,3}; DP {0,2},{1,3}. Op 10 is a DP ReduceScatter, op 11 a
  // world AllReduce: rank 0 must block at op 10, ranks 1 and 3 at op 11.
  nlohmann::json j =
      RunJob("--ranks 4 --tp 2 --ops 40 --step-us 20 --hang-timeout-s 1 --fault stuck:rank=2:op=10",
             &status);
  ASSERT_EQ(status, 3) << j.dump(1);
  EXPECT_EQ(j["status_name"], "hang-timeout");
  const auto& r = j["ranks"];
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2]["state"], "stuck");
  EXPECT_EQ(r[2]["ops_enqueued"], 10);
  EXPECT_LE(r[0]["ops_completed"].get<int>(), 10);
  EXPECT_LE(r[1]["ops_completed"].get<int>(), 11);
  EXPECT_LE(r[3]["ops_completed"].get<int>(), 11);
  for (int k : {0, 1, 3}) {
    EXPECT_EQ(r[k]["state"], "running") << k;
    EXPECT_TRUE(r[k]["killed_by_launcher"].get<bool>()) << k;
    EXPECT_EQ(r[k]["signal"], 9) << k;
    EXPECT_GE(r[k]["ops_completed"].get<int>(), 9) << k;  // ran until the stuck op
  }
}

// The framework's watchdog (--on-hang abort) ends the survivors' comms and
// they exit; the stuck rank can never be released. The launcher ends the
// job then (8), not after --hang-timeout-s (300 s, past ctest's timeout).
TEST(Coord, AJobLeftWithOnlyItsStuckRankEndsAtOnce) {
  int status = -1;
  nlohmann::json j = RunJob(
      "--ranks 4 --tp 2 --ops 40 --step-us 20 --watchdog-s 1 --on-hang abort "
      "--hang-timeout-s 300 --fault stuck:rank=2:op=10",
      &status);
  ASSERT_EQ(status, 8) << j.dump(1);
  EXPECT_EQ(j["status_name"], "only-stuck-left");
  const auto& r = j["ranks"];
  ASSERT_EQ(r.size(), 4u);
  EXPECT_EQ(r[2]["state"], "stuck");
  EXPECT_TRUE(r[2]["killed_by_launcher"].get<bool>());
  for (int k : {0, 1, 3}) {
    EXPECT_EQ(r[k]["state"], "aborted") << k;
    EXPECT_FALSE(r[k]["killed_by_launcher"].get<bool>()) << k;
  }
}

TEST(Coord, AHealthyJobFinishesEveryOp) {
  int status = -1;
  nlohmann::json j = RunJob("--ranks 4 --tp 2 --ops 40 --step-us 0 --hang-timeout-s 20", &status);
  ASSERT_EQ(status, 0) << j.dump(1);
  for (const auto& r : j["ranks"]) {
    EXPECT_EQ(r["ops_completed"], 40);
    EXPECT_EQ(r["exit_code"], 0);
    EXPECT_EQ(r["state"], "finished");
  }
}

}  // namespace
}  // namespace emu
}  // namespace flightrec

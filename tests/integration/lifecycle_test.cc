// Communicators ended with work in flight, end to end: emulated jobs whose
// framework watchdog (flightrec-emu --on-hang) aborts, revokes or shrinks
// after a hang, recorded by the real plugin and read back with the reader
// library and `flightrec analyze --format json` (docs/analyzer.md
// "comm_aborted"). Every test fails when the plugin did not record the
// ended communicators (kRegionEndedInFlight, open_at_finalize).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_format.h"
#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

constexpr const char* kJob = "--ranks 4 --tp 2 --ranks-per-node 2 --ops 200 --step-us 50 ";

std::string Timeouts(int hang_timeout_s) {
  return " --watchdog-s " + testing::ScaledSecondsText(1) + " --hang-timeout-s " +
         testing::ScaledSecondsText(hang_timeout_s);
}

// The plugin's timeout well past the job's: its own watchdog stays out.
std::map<std::string, std::string> Env() { return {{"NCCL_FLIGHTREC_TIMEOUT_S", "120"}}; }

// The rings of the job, read with the reader library, by pid.
std::vector<ProcessSnapshot> Rings(const EmuJob& job) {
  std::vector<ProcessSnapshot> out;
  for (const std::string& path : ListFiles(job.ring_dir, ".ring")) {
    ReadResult r = ReadSnapshotFile(path);
    EXPECT_TRUE(r.ok) << r.error;
    if (r.ok) out.push_back(std::move(r.snapshot));
  }
  return out;
}

int64_t PidOf(const EmuJob& job, int rank) {
  for (const auto& r : job.summary["ranks"]) {
    if (r["rank"] == rank) return r["pid"].get<int64_t>();
  }
  return -1;
}

const ProcessSnapshot* RingOf(const std::vector<ProcessSnapshot>& rings, int64_t pid) {
  for (const ProcessSnapshot& p : rings) {
    if (p.pid == pid) return &p;
  }
  return nullptr;
}

// Communicators of a ring finalized with ops not done.
int EndedInFlight(const ProcessSnapshot& p) {
  int n = 0;
  for (const CommSnapshot& c : p.comms) {
    if ((c.flags & format::kRegionEndedInFlight) == 0) continue;
    EXPECT_EQ(c.state, format::kRegionFinalized) << p.path << " " << c.name;
    EXPECT_GT(c.open_at_finalize, 0u) << p.path << " " << c.name;
    ++n;
  }
  return n;
}

// A hang made the survivors end their comms: recorded as ended in flight on
// every survivor, reported as comm_aborted naming the stuck rank, verdict
// hang, never all_stuck or a survivor blamed.
void ExpectAbortAfterHang(const EmuJob& job, int stuck) {
  // The survivors ended their comms and exited; the launcher killed the
  // stuck rank, which nothing could release any more (8).
  ASSERT_EQ(job.status, 8) << job.summary.dump(1);
  for (const auto& r : job.summary["ranks"]) {
    EXPECT_EQ(r["state"], r["rank"] == stuck ? "stuck" : "aborted") << job.summary.dump(1);
  }
  const std::vector<ProcessSnapshot> rings = Rings(job);
  ASSERT_EQ(rings.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    const ProcessSnapshot* p = RingOf(rings, PidOf(job, r));
    ASSERT_NE(p, nullptr) << "no ring of rank " << r;
    if (r == stuck) {
      EXPECT_EQ(EndedInFlight(*p), 0) << "the stuck rank ended nothing";
    } else {
      EXPECT_GE(EndedInFlight(*p), 1) << "rank " << r << ": no comm recorded as ended in flight";
    }
  }
  const AnalyzeRun a = RunAnalyze({job.ring_dir});
  ASSERT_EQ(a.exit_code, 1) << a.output;
  EXPECT_EQ(a.report["verdict"], "hang") << Describe(a);
  EXPECT_EQ(CulpritWorldRanks(a.report), std::vector<int>{stuck}) << Describe(a);
  const std::vector<nlohmann::json> ended = FindingsOf(a.report, "comm_aborted");
  ASSERT_FALSE(ended.empty()) << Describe(a);
  bool named = false;
  for (const nlohmann::json& f : ended) {
    EXPECT_GT(f["open_at_end"].get<uint64_t>(), 0u) << f.dump(1);
    EXPECT_FALSE(f["recovered"].get<bool>()) << f.dump(1);
    if (f["root_cause"].get<bool>()) {
      EXPECT_EQ(WorldRank(f["processes"][0]), stuck) << f.dump(1);
      named = true;
    }
  }
  EXPECT_TRUE(named) << "no comm_aborted finding names the stuck rank: " << Describe(a);
  EXPECT_TRUE(FindingsOf(a.report, "all_stuck").empty()) << Describe(a);
  for (const nlohmann::json& f : FindingsOf(a.report, "lagging_rank")) {
    EXPECT_EQ(WorldRank(f["processes"][0]), stuck) << Describe(a);
  }
}

TEST(Lifecycle, AbortAfterAHangNamesTheRankThatNeverArrived) {
  JobSlot slot;
  EmuJob job =
      RunEmu("abort",
             std::string(kJob) + "--fault stuck:rank=2:op=60 --on-hang abort" + Timeouts(4), Env());
  ExpectAbortAfterHang(job, 2);
  EXPECT_NE(job.log.find("ncclCommAbort(world) from the framework's watchdog thread"),
            std::string::npos)
      << job.log;
}

TEST(Lifecycle, RevokeThenDestroyReadsAsEndedNotHung) {
  JobSlot slot;
  EmuJob job = RunEmu(
      "revoke", std::string(kJob) + "--fault stuck:rank=1:op=80 --on-hang revoke" + Timeouts(4),
      Env());
  ExpectAbortAfterHang(job, 1);
  EXPECT_NE(job.log.find("ncclCommRevoke(world)"), std::string::npos) << job.log;
}

TEST(Lifecycle, ShrinkDropsTheDeadRankAndTheJobGoesOn) {
  JobSlot slot;
  EmuJob job =
      RunEmu("shrink",
             std::string(kJob) + "--fault kill:rank=3:op=60 --on-hang shrink --shrink-ops 24" +
                 Timeouts(6),
             Env());
  ASSERT_EQ(job.status, 5) << job.summary.dump(1);  // rank 3 killed, the others finished
  for (const auto& r : job.summary["ranks"]) {
    if (r["rank"] != 3) {
      EXPECT_EQ(r["state"], "finished") << job.summary.dump(1);
    }
  }
  const std::vector<ProcessSnapshot> rings = Rings(job);
  ASSERT_EQ(rings.size(), 4u);
  std::set<uint64_t> child_ids;
  for (int r = 0; r < 3; ++r) {
    const ProcessSnapshot* p = RingOf(rings, PidOf(job, r));
    ASSERT_NE(p, nullptr) << "no ring of rank " << r;
    EXPECT_GE(EndedInFlight(*p), 1) << "rank " << r;
    const CommSnapshot* child = nullptr;
    for (const CommSnapshot& c : p->comms) {
      if (c.name == "world-shrink") child = &c;
    }
    ASSERT_NE(child, nullptr) << "rank " << r << " recorded no shrunk comm";
    EXPECT_EQ(child->nranks, 3);
    EXPECT_EQ(child->rank, r);
    EXPECT_EQ(child->coll_count, 24u);
    EXPECT_EQ(child->flags & format::kRegionEndedInFlight, 0u);
    child_ids.insert(child->comm_id);
  }
  EXPECT_EQ(child_ids.size(), 1u) << "the shrunk comm has one commHash on every rank";

  const AnalyzeRun a = RunAnalyze({job.ring_dir});
  EXPECT_EQ(a.report["verdict"], "healthy") << Describe(a);
  EXPECT_EQ(a.exit_code, 0) << a.output;
  bool world = false;
  for (const nlohmann::json& f : FindingsOf(a.report, "comm_aborted")) {
    if (f["comm"]["name"] != "world") continue;
    world = true;
    EXPECT_TRUE(f["root_cause"].get<bool>()) << f.dump(1);
    EXPECT_EQ(WorldRank(f["processes"][0]), 3) << "the dead rank is named for the old comm";
    ASSERT_TRUE(f["successor"].is_object()) << f.dump(1);
    EXPECT_EQ(f["successor"]["name"], "world-shrink");
    EXPECT_TRUE(f["recovered"].get<bool>());
  }
  EXPECT_TRUE(world) << "world not reported as ended: " << Describe(a);
  for (const char* kind : {"lagging_rank", "all_stuck", "dead_rank", "deadlock"}) {
    EXPECT_TRUE(FindingsOf(a.report, kind).empty()) << kind << ": " << Describe(a);
  }
}

TEST(Lifecycle, NonblockingInitRecordsNormally) {
  JobSlot slot;
  EmuJob job = RunEmu("nonblocking",
                      "--ranks 4 --tp 2 --ranks-per-node 2 --ops 64 --step-us 50 "
                      "--nonblocking-init --hang-timeout-s " +
                          testing::ScaledSecondsText(20),
                      Env());
  ASSERT_EQ(job.status, 0) << job.summary.dump(1) << job.stderr_text;
  EXPECT_NE(job.log.find("nonblocking inits done"), std::string::npos) << job.log;
  const std::vector<ProcessSnapshot> rings = Rings(job);
  ASSERT_EQ(rings.size(), 4u);
  for (const ProcessSnapshot& p : rings) {
    ASSERT_EQ(p.comms.size(), 3u) << p.path;
    uint64_t colls = 0;
    for (const CommSnapshot& c : p.comms) {
      EXPECT_NE(c.flags & format::kRegionIdentityFromInit, 0u) << p.path << " " << c.name;
      EXPECT_EQ(c.flags & format::kRegionEndedInFlight, 0u) << p.path << " " << c.name;
      colls += c.coll_count + c.p2p_count;
    }
    EXPECT_GT(colls, 0u) << p.path;
  }
  const AnalyzeRun a = RunAnalyze({job.ring_dir});
  EXPECT_EQ(a.report["verdict"], "healthy") << Describe(a);
  EXPECT_TRUE(FindingsOf(a.report, "comm_aborted").empty()) << Describe(a);
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

// comm_aborted (analyzer/model/lifecycle.h) on synthetic jobs: a hang the
// framework answered by ending the survivors' communicators with work in
// flight (kRegionEndedInFlight), with and without a shrunk successor that
// went on.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/lifecycle.h"
#include "unit/analyzer/analyzer_test_util.h"
#include "unit/analyzer/synthetic_job.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::FindingKind;
using analysis::Verdict;

constexpr uint64_t kSecond = 1000000000ULL;

int WorldRank(const ProcessSnapshot& p) {
  for (const CommSnapshot& c : p.comms) {
    if (c.name == "world") return c.rank;
  }
  return -1;
}

// Every process but `culprit` ends each comm that holds ops not done, as
// ncclCommAbort does: finalized, kRegionEndedInFlight, open_at_finalize.
// Returns when the last one ended.
uint64_t EndSurvivorsComms(std::vector<ProcessSnapshot>* procs, int culprit) {
  uint64_t ended = 0;
  for (ProcessSnapshot& p : *procs) {
    if (WorldRank(p) == culprit) continue;
    for (CommSnapshot& c : p.comms) {
      uint32_t open = 0;
      uint64_t newest = 0;
      for (const OpRecord& r : c.records) {
        if (r.state < format::kOpDone) ++open;
        newest = std::max(newest, r.t_enqueue_ns);
      }
      if (open == 0) continue;
      c.state = format::kRegionFinalized;
      c.flags |= format::kRegionEndedInFlight;
      c.open_at_finalize = open;
      c.finalize_wall_ns = newest + 2 * kSecond;
      ended = std::max(ended, c.finalize_wall_ns);
    }
    p.process_state = format::kProcessExited;
  }
  return ended;
}

// The survivors' world without `dead`, initialized at `init`, with `ops`
// AllReduces done.
void AddShrunkWorld(std::vector<ProcessSnapshot>* procs, int nranks, int dead, uint64_t init,
                    int ops) {
  for (ProcessSnapshot& p : *procs) {
    const int r = WorldRank(p);
    if (r == dead) continue;
    CommSnapshot c;
    c.region_index = static_cast<uint32_t>(p.comms.size());
    c.state = format::kRegionActive;
    c.flags = format::kRegionIdentityFromInit | format::kRegionCompletionTracked;
    c.comm_id = 0x5348524B0001ULL;
    c.name = "world-shrink";
    c.rank = r < dead ? r : r - 1;
    c.nranks = nranks - 1;
    c.nnodes = 1;
    c.generation = 99;
    c.capacity = 4096;
    c.init_wall_ns = init;
    for (int i = 0; i < ops; ++i) {
      OpRecord o;
      o.slot_seq = static_cast<uint64_t>(i);
      o.op_index = static_cast<uint64_t>(i);
      o.nccl_seq = static_cast<uint64_t>(i);
      o.func = format::kFuncAllReduce;
      o.datatype = format::kTypeFloat32;
      o.count = 1024;
      o.bytes = 4096;
      o.n_channels = 2;
      o.state = format::kOpDone;
      o.channels_started = o.channels_stopped = 2;
      o.t_enqueue_ns = init + (static_cast<uint64_t>(i) + 1) * 1000 * kUs;
      o.t_enqueued_ns = o.t_enqueue_ns + 10 * kUs;
      o.gpu_start_ns = o.t_enqueue_ns + 20 * kUs;
      o.gpu_end_ns = o.gpu_start_ns + 100 * kUs;
      o.t_last_progress_ns = o.gpu_start_ns;
      c.records.push_back(o);
    }
    c.head = c.coll_count = static_cast<uint64_t>(ops);
    c.last_enqueue_wall_ns = c.records.empty() ? 0 : c.records.back().t_enqueue_ns;
    p.heartbeat_wall_ns = std::max(p.heartbeat_wall_ns, c.last_enqueue_wall_ns + kSecond);
    if (p.is_dump) p.dump_wall_ns = std::max(p.dump_wall_ns, p.heartbeat_wall_ns);
    p.comms.push_back(std::move(c));
  }
}

JobSpec Spec(Fault fault) {
  JobSpec spec;
  spec.nranks = 8;
  spec.fault = fault;
  spec.rank = 5;
  spec.op = 7;
  return spec;
}

TEST(LifecycleAnalysis, AbortAfterAHangNamesTheRankThatNeverArrived) {
  std::vector<ProcessSnapshot> procs = SyntheticJob(Spec(Fault::kStuckBeforeOp)).Snapshots();
  EndSurvivorsComms(&procs, 5);
  Analyzed a(procs);
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const auto ended = a.All(FindingKind::kCommAborted);
  ASSERT_FALSE(ended.empty());
  bool named = false;
  for (const analysis::Finding* f : ended) {
    EXPECT_GT(f->open_at_end, 0u) << f->summary;
    EXPECT_FALSE(f->recovered) << f->summary;
    EXPECT_TRUE(analysis::EndedCommIsHang(*f) == f->root_cause) << f->summary;
    if (!f->root_cause) continue;
    named = true;
    EXPECT_EQ(WorldRank(procs[f->ranks.front().process]), 5) << f->summary;
    EXPECT_NE(f->summary.find("never enqueued"), std::string::npos) << f->summary;
  }
  EXPECT_TRUE(named);
  EXPECT_EQ(a.First(FindingKind::kAllStuck), nullptr) << a.result.findings.front().summary;
  for (const analysis::Finding* f : a.All(FindingKind::kLaggingRank)) {
    EXPECT_EQ(WorldRank(procs[f->ranks.front().process]), 5) << f->summary;
  }
  ASSERT_EQ(a.result.culprits.size(), 1u);
  EXPECT_EQ(WorldRank(procs[a.result.culprits.front().process]), 5);
}

TEST(LifecycleAnalysis, WithoutTheEndMarkTheSameJobIsAHangOfItsComms) {
  // The control: the same hang without kRegionEndedInFlight is judged by the
  // hang detectors, no comm_aborted.
  Analyzed a(SyntheticJob(Spec(Fault::kStuckBeforeOp)).Snapshots());
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  EXPECT_EQ(a.First(FindingKind::kCommAborted), nullptr);
}

TEST(LifecycleAnalysis, ShrinkThatDropsTheDeadRankAndGoesOnIsNotAHang) {
  std::vector<ProcessSnapshot> procs = SyntheticJob(Spec(Fault::kKilled)).Snapshots();
  const uint64_t ended = EndSurvivorsComms(&procs, 5);
  // NCCL_SHRINK_ABORT: the child's init comes before the parent's finalize.
  AddShrunkWorld(&procs, 8, 5, ended - kSecond, 12);
  Analyzed a(procs);
  std::string all;
  for (const analysis::Finding& f : a.result.findings) {
    all += std::string(analysis::FindingKindName(f.kind)) + ": " + f.summary + "\n";
  }
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy) << all;
  EXPECT_TRUE(a.result.culprits.empty());
  const analysis::Finding* world = nullptr;
  for (const analysis::Finding* f : a.All(FindingKind::kCommAborted)) {
    if (a.index.groups()[f->group].name == "world") world = f;
  }
  ASSERT_NE(world, nullptr);
  EXPECT_TRUE(world->root_cause) << world->summary;
  EXPECT_EQ(WorldRank(procs[world->ranks.front().process]), 5) << world->summary;
  ASSERT_GE(world->successor, 0) << world->summary;
  EXPECT_EQ(a.index.groups()[world->successor].name, "world-shrink");
  EXPECT_TRUE(world->recovered);
  EXPECT_NE(world->summary.find("inferred"), std::string::npos) << world->summary;
  for (FindingKind k : {FindingKind::kLaggingRank, FindingKind::kAllStuck, FindingKind::kDeadlock,
                        FindingKind::kMissingRank}) {
    EXPECT_EQ(a.First(k), nullptr) << analysis::FindingKindName(k);
  }
}

TEST(LifecycleAnalysis, ASuccessorInitializedBeforeTheHangIsNotTaken) {
  std::vector<ProcessSnapshot> procs = SyntheticJob(Spec(Fault::kKilled)).Snapshots();
  EndSurvivorsComms(&procs, 5);
  // A 7-rank comm of the same members made at the job's start: no lineage.
  AddShrunkWorld(&procs, 8, 5, kBaseWallNs, 12);
  Analyzed a(procs);
  for (const analysis::Finding* f : a.All(FindingKind::kCommAborted)) {
    EXPECT_EQ(f->successor, -1) << f->summary;
    EXPECT_FALSE(f->recovered) << f->summary;
  }
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

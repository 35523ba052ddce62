// Copy-engine (CE) collectives end to end (docs/design/nccl.md §Copy-engine
// collectives): emulated NCCL 2.29 jobs whose TP AllGather runs on the copy
// engines (flightrec-emu --ce: GroupApi, CollApi, CeColl with
// CeSync/CeBatch/CeSync, no kernel or proxy events), recorded by the real
// plugin and judged by `flightrec analyze`. Every scenario fails if the
// plugin declined the CE events: the CE op would then be missing from every
// rank's records (no "(CE, ...)" op, and the TP op indices of the ranks
// would not name it).
//
// Op 8k+1 is the CE AllGather on the TP comms (--tp 4: tp0, tp1 of 4 ranks
// each, one node). Op 81 is CE AllGather #51 of its TP comm.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/emu_job_fixture.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kRanks = 8;
constexpr int kCeOp = 81;      // 81 % 8 == 1: the TP AllGather, on the copy engines
constexpr int kCeIndex = 51;   // its op index on its TP comm
constexpr int kFaultRank = 5;  // tp1 rank 1

class CeCollectives : public EmuJobTest {
 protected:
  static std::string Base(int ops, const std::string& extra = "") {
    return TpJobArgs("--ce", "2.29.7", ops, extra);
  }

  // A job that hangs at the CE op: it ends once `dumps` dumps exist, about
  // one watchdog timeout (1 s) after the hang; the ops before it take
  // milliseconds.
  EmuJob Hang(const std::string& tag, const std::string& extra, int dumps) {
    return EmuJobTest::Hang(tag, Base(kCeOp + 48, extra), dumps, testing::ScaledSecondsText(1));
  }
};

// The finding's op is the CE AllGather #51 of comm tp1, shown as such.
// `in_summary`: the finding's summary names the op with its label.
void ExpectCeOp(const nlohmann::json& f, const AnalyzeRun& run, bool in_summary = true) {
  ASSERT_TRUE(f["op"].is_object()) << Describe(run);
  EXPECT_EQ(f["op"].value("func", ""), "AllGather") << Describe(run);
  EXPECT_EQ(f["op"].value("index", -1), kCeIndex) << Describe(run);
  EXPECT_TRUE(f["op"].value("copy_engine", false)) << Describe(run);
  const std::string algo = f["op"].value("algo", "");
  EXPECT_TRUE(algo == "CE_MC" || algo == "CE_UC") << algo;
  EXPECT_EQ(f["comm"].value("name", ""), "tp1") << Describe(run);
  if (in_summary) {
    EXPECT_NE(f.value("summary", "").find("AllGather (CE, "), std::string::npos) << Describe(run);
  }
}

// The lagging_rank finding about the CE op on tp1, or null.
nlohmann::json CeLagging(const AnalyzeRun& run) {
  for (const auto& f : FindingsOf(run.report, "lagging_rank")) {
    if (f["comm"].value("name", "") == "tp1" && f["op"].is_object() &&
        f["op"].value("copy_engine", false) && Names(f, kFaultRank)) {
      return f;
    }
  }
  return nullptr;
}

// (a) A rank stuck outside NCCL before a CE AllGather: it is the one
// culprit, named on the CE op's communicator, one collective behind there.
TEST_F(CeCollectives, StuckBeforeACeAllGatherIsNamedOnItsComm) {
  EmuJob job =
      Hang("ce-stuck",
           "--fault stuck:rank=" + std::to_string(kFaultRank) + ":op=" + std::to_string(kCeOp), 4);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kFaultRank}) << Describe(run);
  const nlohmann::json f = CeLagging(run);
  ASSERT_FALSE(f.is_null()) << Describe(run);
  EXPECT_TRUE(f.value("root_cause", false)) << Describe(run);
  ExpectCeOp(f, run);
  ASSERT_FALSE(f["details"].empty());
  EXPECT_EQ(f["details"][0].value("behind", 0), 1) << Describe(run);
  EXPECT_EQ(f["details"][0].value("where", ""), "outside_nccl") << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "all_stuck").empty()) << Describe(run);
}

// (b) A rank that skipped one CE AllGather and went on: named as the
// skipper of that op, never "all stuck", no mismatch claimed.
TEST_F(CeCollectives, SkippedCeAllGatherIsASkip) {
  EmuJob job =
      Hang("ce-skip",
           "--fault skip:rank=" + std::to_string(kFaultRank) + ":op=" + std::to_string(kCeOp), 4);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kFaultRank}) << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const auto& top = run.report["findings"][0];
  EXPECT_EQ(top.value("kind", ""), "lagging_rank") << Describe(run);
  ExpectCeOp(top, run);
  ASSERT_FALSE(top["details"].empty());
  EXPECT_TRUE(top["details"][0].value("skipped", false)) << Describe(run);
  EXPECT_EQ(top["details"][0].value("behind", 0), 1) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "all_stuck").empty()) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "mismatch").empty()) << Describe(run);
}

// (c) The copies of one rank never finish (gpu-hang inside the CE op), with
// the fake CUDA driver: every member's CUDA start event completed (the
// stream reached the op), none its stop event: all stuck in the CE op, on
// the GPU side, no rank singled out.
TEST_F(CeCollectives, GpuHangInsideACeOpIsStuckOnTheGpu) {
  EmuJob job =
      Hang("ce-gpu-hang",
           "--fault gpu-hang:rank=" + std::to_string(kFaultRank) + ":op=" + std::to_string(kCeOp),
           kRanks);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const auto& top = run.report["findings"][0];
  EXPECT_EQ(top.value("kind", ""), "all_stuck") << Describe(run);
  ExpectCeOp(top, run);
  EXPECT_TRUE(FindingsOf(run.report, "lagging_rank").empty()) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
  const std::string summary = top.value("summary", "");
  EXPECT_NE(summary.find("every one started it on the GPU"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("network moved"), std::string::npos) << summary;
}

// A rank that calls one CE AllGather with another count: a mismatch on the
// CE op, the rank alone named (the job completes: the emulated copies pair
// by order, as NCCL's do).
TEST_F(CeCollectives, CountMismatchOnACeAllGather) {
  EmuJob job = Run("ce-mismatch",
                   Base(kCeOp + 24, "--fault mismatch:rank=" + std::to_string(kFaultRank) +
                                        ":op=" + std::to_string(kCeOp) + ":field=count") +
                       " --hang-timeout-s " + testing::ScaledSecondsText(20),
                   0);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "desync") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kFaultRank}) << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const auto& top = run.report["findings"][0];
  EXPECT_EQ(top.value("kind", ""), "mismatch") << Describe(run);
  ExpectCeOp(top, run, /*in_summary=*/false);
  EXPECT_NE(Describe(run).find("AllGather (CE, "), std::string::npos) << Describe(run);
}

// (d) No CUDA driver in the processes (--no-cuda): CE ops carry
// kFlagNoCompletion. A healthy job is healthy (completion inferred from
// stream order and clean finalize), and a rank stuck before a CE op is
// still found.
TEST_F(CeCollectives, WithoutCudaAHealthyJobIsHealthy) {
  EmuJob job =
      Run("ce-nocuda-ok",
          Base(200, "--no-cuda") + " --hang-timeout-s " + testing::ScaledSecondsText(30), 0);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_TRUE(run.report["findings"].empty()) << Describe(run);
  // No process dumped for a timeout: the watchdog does not judge ops that
  // cannot complete.
  EXPECT_EQ(run.report["inputs"]["read"].size(), static_cast<size_t>(kRanks));
  EXPECT_EQ(job.log.find("stuck past NCCL_FLIGHTREC_TIMEOUT_S"), std::string::npos) << job.log;
}

TEST_F(CeCollectives, WithoutCudaAHangIsStillFound) {
  EmuJob job = Hang(
      "ce-nocuda-stuck",
      "--no-cuda --fault stuck:rank=" + std::to_string(kFaultRank) + ":op=" + std::to_string(kCeOp),
      4);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kFaultRank}) << Describe(run);
  const nlohmann::json f = CeLagging(run);
  ASSERT_FALSE(f.is_null()) << Describe(run);
  ExpectCeOp(f, run);
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

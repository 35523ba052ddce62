// The newest evidence of each process wins (docs/analyzer.md "Which file
// holds a process's state"), end to end: an emulated job whose rank 3
// stalls outside NCCL past a short NCCL_FLIGHTREC_TIMEOUT_S four times; each
// stall makes the ranks dump (timeout, then trigger), so every rank holds
// hang dumps sealed mid-run, and its newest state is in its ring only (no
// exit dump: NCCL_FLIGHTREC_DUMP_ON_EXIT=0, as when the exit dump was
// refused or the process was killed after the stalls). Then (1) the job
// finishes: the verdict is healthy, not a hang read off the mid-run dumps;
// (2) rank 5 gets stuck for good: the verdict names it.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kStalls = 4;

std::string Stalls() {
  std::string s;
  for (int k = 1; k <= kStalls; ++k) {
    // 1.5 s outside NCCL, three times the watchdog timeout.
    s += " --fault pause:rank=3:op=" + std::to_string(8 * 6 * k + 1) + ":us=1500000";
  }
  return s;
}

EmuJob RunStalledJob(const std::string& tag, const std::string& extra, int expected_status) {
  JobSlot slot;
  EmuJob job =
      RunEmu(tag, "--ranks 8 --tp 4 --ranks-per-node 4 --ops 240 --step-us 20" + Stalls() + extra,
             {{"NCCL_FLIGHTREC_TIMEOUT_S", "0.5"},
              {"NCCL_FLIGHTREC_POLL_MS", "50"},
              {"NCCL_FLIGHTREC_DUMP_ON_EXIT", "0"}});
  EXPECT_EQ(job.status, expected_status) << job.dir << "\n" << job.summary.dump(1).substr(0, 2000);
  return job;
}

// Dumps the job left in `dir` (every rank seals some on the stalls).
size_t DumpCount(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    n += e.path().extension() == ".frdump" ? 1 : 0;
  }
  return n;
}

TEST(AnalyzeNewestEvidence, AFinishedJobIsJudgedFromRingsNewerThanItsMidRunDumps) {
  EmuJob job = RunStalledJob("stalls-finish", " --hang-timeout-s 20", 0);
  const AnalyzeRun run = RunAnalyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  // Every process exited after its stall dumps: its ring is its state, and
  // every dump is superseded by it.
  const auto& sources = run.report["inputs"]["sources"];
  ASSERT_EQ(sources.size(), 8u) << Describe(run);
  for (const auto& s : sources) {
    EXPECT_EQ(s.value("kind", ""), "ring") << s.dump();
    EXPECT_NE(s.value("reason", "").find("exited after its newest"), std::string::npos) << s.dump();
  }
  const size_t dumps = DumpCount(job.ring_dir);
  EXPECT_GE(dumps, 8u) << "every rank dumps on the stalls";
  EXPECT_EQ(run.report["inputs"]["superseded"].size(), dumps) << Describe(run);
  if (!HasFailure()) RunShell("rm -rf '" + job.dir + "'");
}

TEST(AnalyzeNewestEvidence, AHangAfterTransientStallsNamesTheCulprit) {
  EmuJob job = RunStalledJob("stalls-hang", " --fault stuck:rank=5:op=225 --hang-timeout-s 4", 3);
  const AnalyzeRun run = RunAnalyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{5}) << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const auto& top = run.report["findings"][0];
  EXPECT_TRUE(top.value("root_cause", false)) << Describe(run);
  ASSERT_FALSE(top["processes"].empty());
  EXPECT_EQ(WorldRank(top["processes"][0]), 5) << Describe(run);
  EXPECT_EQ(run.report["inputs"]["sources"].size(), 8u) << Describe(run);
  if (!HasFailure()) RunShell("rm -rf '" + job.dir + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

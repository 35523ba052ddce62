// The newest evidence of each process wins (docs/analyzer.md "Which file
// holds a process's state"), end to end: an emulated job whose rank 3
// stalls outside NCCL past a short NCCL_FLIGHTREC_TIMEOUT_S four times
// (each stall makes the ranks dump, through the trigger), so every rank
// spends its NCCL_FLIGHTREC_MAX_DUMPS (2 here, so that every rank surely
// spends it, whichever stalls it answers) on transient stalls and its
// newest state exists only in its ring. Then (1) the job finishes: the
// verdict is healthy, not a hang read off the mid-run dumps; (2) rank 5
// gets stuck for good: the verdict names it.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kStalls = 4;
constexpr int kMaxDumps = 2;

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
              {"NCCL_FLIGHTREC_MAX_DUMPS", std::to_string(kMaxDumps)}});
  EXPECT_EQ(job.status, expected_status) << job.dir << "\n" << job.summary.dump(1).substr(0, 2000);
  return job;
}

// Most ranks' states come from their rings, newer than their spent dump
// budget (a rank may sleep through a stall's trigger and keep a dump for
// the end: then that dump, its exit or hang dump, is the newest state).
// `last_dump` is what such a dump must be: "(exit)", or "" for any.
void ExpectStateFromRings(const AnalyzeRun& run, const std::string& last_dump) {
  const auto& sources = run.report["inputs"]["sources"];
  ASSERT_EQ(sources.size(), 8u) << Describe(run);
  int from_ring = 0;
  for (const auto& s : sources) {
    const std::string reason = s.value("reason", "");
    if (s.value("kind", "") == "ring") {
      EXPECT_NE(reason.find("after its newest dump #" + std::to_string(kMaxDumps)),
                std::string::npos)
          << s.dump();
      ++from_ring;
    } else {
      EXPECT_NE(reason.find("dump #" + std::to_string(kMaxDumps) + " " + last_dump),
                std::string::npos)
          << s.dump();
    }
  }
  EXPECT_GE(from_ring, 5) << run.report["inputs"].dump(1);
  EXPECT_EQ(run.report["inputs"]["superseded"].size(), 8u * kMaxDumps) << Describe(run);
}

TEST(AnalyzeNewestEvidence, AFinishedJobWhoseDumpsWereSpentIsHealthy) {
  EmuJob job = RunStalledJob("stalls-finish", " --hang-timeout-s 20", 0);
  const AnalyzeRun run = RunAnalyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  ExpectStateFromRings(run, "(exit)");
  if (!HasFailure()) RunShell("rm -rf '" + job.dir + "'");
}

TEST(AnalyzeNewestEvidence, AHangAfterSpentDumpsNamesTheCulprit) {
  EmuJob job = RunStalledJob("stalls-hang", " --fault stuck:rank=5:op=225 --hang-timeout-s 4", 3);
  const AnalyzeRun run = RunAnalyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{5}) << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const auto& top = run.report["findings"][0];
  EXPECT_TRUE(top.value("root_cause", false)) << Describe(run);
  ASSERT_FALSE(top["processes"].empty());
  EXPECT_EQ(WorldRank(top["processes"][0]), 5) << Describe(run);
  ExpectStateFromRings(run, "");
  if (!HasFailure()) RunShell("rm -rf '" + job.dir + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

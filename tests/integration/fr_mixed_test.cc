// The same emulated job recorded by both paths: flightrec's rings and dumps
// (the real plugin under flightrec-emu) and PyTorch Flight Recorder dumps
// written for the same schedule (tests/unit/reader/fr_pickle_builder.h), each
// fault's rank drawn at random (the seed is printed). `flightrec analyze`
// must give the same verdict and culprit on flightrec's files alone, on the
// FR dumps alone and on both in one directory, where the culprit is our
// process with the FR dump's Python frames attached
// (docs/design/pytorch-fr.md, "Mixed directories").
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "support/files.h"
#include "support/time_scale.h"
#include "tests/unit/reader/fr_pickle_builder.h"

namespace flightrec {
namespace itest {
namespace {

namespace fs = std::filesystem;
using test_support::FrDumpBuilder;

constexpr int kRanks = 4;
constexpr int kOp = 20;  // a Broadcast in the emulator's pattern (20 % 8 == 4)

void WriteFr(const std::string& dir, const FrDumpBuilder& b) {
  for (int r = 0; r < kRanks; ++r) {
    const std::vector<uint8_t> bytes = b.Build(r);
    ASSERT_TRUE(testing::WriteBytes(dir + "/comm_lib_trace_rank_" + std::to_string(r), bytes.data(),
                                    bytes.size()));
  }
}

void CopyFiles(const std::string& from, const std::string& to) {
  for (const auto& e : fs::directory_iterator(from)) {
    if (e.is_regular_file()) fs::copy_file(e.path(), fs::path(to) / e.path().filename());
  }
}

struct Case {
  const char* name;
  std::string emu_fault;  // %d: the rank
  bool mismatch;
};

TEST(FrMixed, SameJobBothPathsSameVerdictAndCulprit) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const Case cases[] = {
      {"stuck", "stuck:rank=%d:op=" + std::to_string(kOp), false},
      {"mismatch", "mismatch:rank=%d:op=" + std::to_string(kOp) + ":field=count", true},
  };
  for (const Case& c : cases) {
    const int culprit = static_cast<int>(rng() % kRanks);
    SCOPED_TRACE(std::string(c.name) + " on rank " + std::to_string(culprit));
    std::string fault = c.emu_fault;
    fault.replace(fault.find("%d"), 2, std::to_string(culprit));
    EmuJob job = RunEmu(std::string("frmix-") + c.name,
                        "--ranks " + std::to_string(kRanks) + " --tp 2 --ops 40 --fault " + fault +
                            " --hang-timeout-s " + testing::ScaledSecondsText(5));
    // A stuck rank hangs the job (the launcher ends it: 3); a mismatched count
    // does not stop the emulated kernels (0).
    ASSERT_EQ(job.status, c.mismatch ? 0 : 3) << job.summary.dump(1);
    const AnalyzeRun ours = RunAnalyze({job.ring_dir});
    ASSERT_EQ(CulpritWorldRanks(ours.report), std::vector<int>{culprit}) << Describe(ours);

    // FR dumps of the same job: the same rank behind (or odd) at the same
    // point of the same step count.
    FrDumpBuilder fr = FrDumpBuilder(kRanks, 1).Steps(kOp);
    if (c.mismatch) {
      fr.Mismatch(culprit);
    } else {
      fr.Behind(culprit);
    }
    const std::string fr_dir = testing::MakeTempDir("frmix-fr");
    WriteFr(fr_dir, fr);
    const AnalyzeRun fr_only = RunAnalyze({fr_dir});
    EXPECT_EQ(fr_only.report["verdict"], ours.report["verdict"]) << Describe(fr_only);
    ASSERT_EQ(fr_only.report["culprits"].size(), 1u) << Describe(fr_only);
    EXPECT_EQ(fr_only.report["culprits"][0]["pytorch_fr"]["global_rank"], culprit);

    const std::string mixed = testing::MakeTempDir("frmix-both");
    CopyFiles(job.ring_dir, mixed);
    WriteFr(mixed, fr);
    const AnalyzeRun both = RunAnalyze({mixed});
    EXPECT_EQ(both.report["verdict"], ours.report["verdict"]) << Describe(both);
    ASSERT_EQ(CulpritWorldRanks(both.report), std::vector<int>{culprit}) << Describe(both);
    const nlohmann::json& p = both.report["culprits"][0];
    EXPECT_EQ(p["pid"], ours.report["culprits"][0]["pid"]) << Describe(both);
    ASSERT_TRUE(p.contains("pytorch_fr")) << p.dump(1);
    EXPECT_EQ(p["pytorch_fr"]["global_rank"], culprit);
    EXPECT_FALSE(p["pytorch_fr"]["python_frames"].empty());
    testing::RemoveTree(fr_dir);
    testing::RemoveTree(mixed);
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

// Symmetric kernels and NCCL 2.31's behaviour end to end (docs/design/nccl.md
// §Symmetric kernels, §NCCL 2.31): emulated jobs whose TP AllReduce runs as a
// symmetric kernel (flightrec-emu --sym), recorded by the real plugin and
// judged by `flightrec analyze`.
//   2.31.2  Coll with isSymColl + kernelVariant, KernelCh and KernelPhase
//           from a profiler thread per communicator;
//   2.30.7  no event at all for a symmetric kernel, seqNumber not advanced.
// The hang scenarios fail if the plugin declined the symmetric events: the
// finding's op would not be symmetric and no phase would place the ranks.
//
// --ranks 8 --tp 4: tp0 = ranks 0-3, tp1 = ranks 4-7, one node. Op 8k is
// the TP AllReduce; op 80 is AllReduce #50 of its TP comm.
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
constexpr int kSymOp = 80;     // 80 % 8 == 0: the TP AllReduce, a symmetric kernel
constexpr int kFaultRank = 5;  // tp1 rank 1

class Symmetric : public EmuJobTest {
 protected:
  static std::string Base(const std::string& version, int ops, const std::string& extra = "") {
    return TpJobArgs("--sym", version, ops, extra);
  }

  EmuJob Hang(const std::string& tag, const std::string& extra, int dumps) {
    return EmuJobTest::Hang(tag, Base("2.31.2", kSymOp + 48, extra), dumps);
  }
};

// The all_stuck finding about the symmetric AllReduce on `comm`, or null.
nlohmann::json SymStuck(const AnalyzeRun& run, const std::string& comm) {
  for (const auto& f : FindingsOf(run.report, "all_stuck")) {
    if (f["comm"].value("name", "") == comm && f["op"].is_object() &&
        f["op"].value("symmetric", false)) {
      return f;
    }
  }
  return nullptr;
}

void ExpectSymOp(const nlohmann::json& f, const AnalyzeRun& run) {
  EXPECT_EQ(f["op"].value("func", ""), "AllReduce") << Describe(run);
  EXPECT_EQ(f["op"].value("index", -1), kSymOp / 8 * 5) << Describe(run);
  EXPECT_EQ(f["op"].value("kernel_variant", ""), "AGxLL_R") << Describe(run);
  EXPECT_NE(f.value("summary", "").find("AllReduce (symmetric AGxLL_R)"), std::string::npos)
      << Describe(run);
}

// (a) One member's symmetric kernel never leaves its compute phase: the
// other members finish computing and wait in the final sync for it. The
// phases name it: the peer that never arrived.
TEST_F(Symmetric, FinalSyncHangNamesThePeerThatNeverArrived) {
  EmuJob job = Hang(
      "sym-final",
      "--fault sym-compute:rank=" + std::to_string(kFaultRank) + ":op=" + std::to_string(kSymOp),
      4);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kFaultRank}) << Describe(run);
  const nlohmann::json f = SymStuck(run, "tp1");
  ASSERT_FALSE(f.is_null()) << Describe(run);
  ExpectSymOp(f, run);
  EXPECT_EQ(f.value("kernel_phase", ""), "peers_in_final_sync") << Describe(run);
  EXPECT_TRUE(Names(f, kFaultRank)) << Describe(run);
  EXPECT_NE(run.output.find("never arrived at the final sync"), std::string::npos) << Describe(run);
}

// (b) Every member stuck computing (the data of the LL exchange never
// arrives): no member reached the final sync, nobody is singled out.
TEST_F(Symmetric, EveryMemberStuckComputingIsSaidSo) {
  EmuJob job = Hang("sym-compute", "--fault sym-compute:op=" + std::to_string(kSymOp), kRanks);
  AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  const nlohmann::json f = SymStuck(run, "tp1");
  ASSERT_FALSE(f.is_null()) << Describe(run);
  ExpectSymOp(f, run);
  EXPECT_EQ(f.value("kernel_phase", ""), "all_computing") << Describe(run);
  EXPECT_NE(f.value("summary", "").find("stuck computing"), std::string::npos) << Describe(run);
  EXPECT_TRUE(CulpritWorldRanks(run.report).empty() ||
              CulpritWorldRanks(run.report).size() == static_cast<size_t>(kRanks))
      << Describe(run);
}

// `flightrec show` of every ring of the job, as text.
std::string ShowRings(const EmuJob& job) {
  const std::string out = job.dir + "/show.txt";
  RunShell(testing::CliPath() + " show " + job.ring_dir + "/*.ring > " + out + " 2>&1");
  return testing::ReadText(out);
}

// The TP comm's AllReduce records of rank 0 in its exit dump.
std::vector<RecView> TpAllReduces(const EmuJob& job) {
  std::vector<RecView> out;
  for (const std::string& path : ListFiles(job.ring_dir, ".frdump")) {
    const FileView v = ReadFileView(path);
    if (!v.ok) continue;
    for (const CommView& c : v.comms) {
      if (c.name != "tp0" || c.rank != 0) continue;
      for (const RecView& r : c.records) {
        if (r.func == "AllReduce") out.push_back(r);
      }
    }
    if (!out.empty()) break;
  }
  return out;
}

// (c) KernelCh and KernelPhase from NCCL 2.31's profiler thread, and
// symmetric kernels invisible up to 2.30: the same schedule records one TP
// AllReduce more per 8 ops on 2.31.2 than on 2.30.7, where the AllReduce
// seqNumbers run on without a gap (seqNumber does not advance for a
// symmetric kernel there), and the analysis of the 2.30 job says what it
// cannot see.
TEST_F(Symmetric, VisibleFrom231InvisibleUpTo230) {
  constexpr int kOps = 64;
  EmuJob v231 = Run("sym-231", Base("2.31.2", kOps), 0);
  EmuJob v230 = Run("sym-230", Base("2.30.7", kOps), 0);
  const std::vector<RecView> a = TpAllReduces(v231);
  const std::vector<RecView> b = TpAllReduces(v230);
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(a.size(), b.size() + kOps / 8);
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b[i].seq, i) << "2.30: AllReduce seqNumbers without the symmetric kernels";
  }
  for (const RecView& r : a) EXPECT_EQ(r.state, "done") << "2.31: op " << r.op_index;
  AnalyzeRun r231 = Analyze(v231);
  AnalyzeRun r230 = Analyze(v230);
  EXPECT_EQ(r231.report.value("verdict", ""), "healthy") << Describe(r231);
  EXPECT_EQ(r230.report.value("verdict", ""), "healthy") << Describe(r230);
  // A finished job nobody suspected of hanging gets no caveat (the note on
  // triggered dumps is in analyzer_model_test).
  EXPECT_EQ(r230.report["notes"].dump().find("reports no symmetric-kernel collectives"),
            std::string::npos)
      << Describe(r230);
  const std::string show = ShowRings(v231);
  EXPECT_NE(show.find("SYMK/AGxLL_R"), std::string::npos) << show.substr(0, 3000);
  EXPECT_NE(show.find("KernelPhase"), std::string::npos) << show.substr(0, 3000);
}

// (d) RAS overrides the mask job-wide at op 40 with one that drops KernelCh
// and adds KernelLaunch: the later ops never report completion. Their ops
// are marked as such, the watchdog never takes the job for hung (no timeout
// dump while it runs on for longer than the timeout), the analysis is not a
// hang, and the regions say the mask was overridden.
TEST_F(Symmetric, RasMaskOverrideIsNoHang) {
  // Coll | P2p | ProxyOp | CollApi | P2pApi | KernelLaunch: no KernelCh.
  const int ras_mask = 2 | 4 | 8 | 512 | 1024 | 2048;
  EmuJob job = Run("sym-ras",
                   "--ranks " + std::to_string(kRanks) +
                       " --tp 4 --ranks-per-node 8 --sym --nccl-version 2.31.2 --ops 200 "
                       "--step-us 15000 --ras-mask 40:" +
                       std::to_string(ras_mask),
                   0, "1");
  for (const std::string& path : ListFiles(job.ring_dir, ".frdump")) {
    const FileView v = ReadFileView(path);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_NE(v.dump_reason, "timeout") << path << ": " << v.dump_detail;
  }
  AnalyzeRun run = Analyze(job);
  EXPECT_NE(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "all_stuck").empty()) << Describe(run);
  const std::string show = ShowRings(job);
  EXPECT_NE(show.find("(overridden: NCCL delivered events outside it, RAS)"), std::string::npos)
      << show.substr(0, 3000);
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

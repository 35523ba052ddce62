// The same emulated job recorded by both paths: flightrec's rings and dumps
// (the real plugin under flightrec-emu) and PyTorch Flight Recorder dumps
// written for the same schedule (tests/unit/reader/fr_pickle_builder.h), each
// fault's rank drawn at random (the seed is printed). `flightrec analyze`
// must give the same verdict and culprit on flightrec's files alone, on the
// FR dumps alone and on both in one directory, where the culprit is our
// process with the FR dump's Python frames attached
// (docs/design/pytorch-fr.md, "Mixed directories").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "support/files.h"
#include "support/fr_from_job.h"
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

// ---- FR dumps converted from the job itself (tests/support/fr_from_job.h) --

// The global rank of a report's Process: the FR dump's, else its rank in
// the widest group ("world" in flightrec files, "default_pg" in FR ones).
int GlobalRank(const nlohmann::json& process) {
  if (process.contains("pytorch_fr")) return process["pytorch_fr"].value("global_rank", -1);
  for (const auto& r : process["ranks"]) {
    const std::string name = r.value("name", "");
    if (name == "world" || name == "default_pg") return r.value("rank", -1);
  }
  return -1;
}

std::vector<int> CulpritGlobalRanks(const nlohmann::json& report) {
  std::vector<int> out;
  for (const auto& c : report["culprits"]) out.push_back(GlobalRank(c));
  return out;
}

std::string FirstKind(const AnalyzeRun& run) {
  const auto& f = run.report["findings"];
  return f.is_array() && !f.empty() ? f[0].value("kind", "") : "";
}

// One emulated fault: the flags of `flightrec-emu run` and what the job does.
struct FaultJob {
  std::string kind;  // stuck | skip | kill | gpu-hang | slow | mismatch
  int rank;
  int op;
};

void PrintTo(const FaultJob& f, std::ostream* os) {
  *os << f.kind << " on rank " << f.rank << ", op " << f.op;
}

std::string FaultArgs(const FaultJob& f, int ranks, int tp) {
  std::string a =
      "--ranks " + std::to_string(ranks) + " --tp " + std::to_string(tp) + " --step-us 20 --fault ";
  if (f.kind == "slow") {
    return a + "slow:rank=" + std::to_string(f.rank) + ":us=40000 --ops 48 --hang-timeout-s " +
           testing::ScaledSecondsText(30);
  }
  a += f.kind + ":rank=" + std::to_string(f.rank) + ":op=" + std::to_string(f.op);
  if (f.kind == "mismatch") {
    return a + ":field=count --ops " + std::to_string(f.op + 16) + " --hang-timeout-s " +
           testing::ScaledSecondsText(20);
  }
  // A hang: the job ends once every live rank sealed its dump (as PyTorch
  // ranks dump on the watchdog's timeout), bounded by --hang-timeout-s.
  const int dumps = f.kind == "kill" ? ranks - 1 : ranks;
  return a + " --ops " + std::to_string(f.op + 48) + " --until-dumps " + std::to_string(dumps) +
         " --hang-timeout-s " + testing::ScaledSecondsText(20);
}

// Exit status of the launcher (tests/emulator/README.md): a hang ends at
// --until-dumps (4); a slow rank or an odd count does not stop the job (0).
int ExpectedStatus(const FaultJob& f) { return f.kind == "slow" || f.kind == "mismatch" ? 0 : 4; }

struct ThreeWays {
  EmuJob job;
  AnalyzeRun ours, fr_only, both;
  std::string fr_dir, mixed;
};

// Runs the job, converts its files into FR dumps (a killed rank writes
// none), and analyzes flightrec's files, the FR dumps, and both together.
ThreeWays RunThreeWays(const FaultJob& f, int ranks, int tp) {
  ThreeWays t;
  const std::string args = FaultArgs(f, ranks, tp);
  {
    JobSlot slot;
    t.job = RunEmu("frjob-" + f.kind, args,
                   {{"NCCL_FLIGHTREC_TIMEOUT_S", testing::ScaledSecondsText(2)},
                    {"NCCL_FLIGHTREC_VERDICT", "0"}});
  }
  EXPECT_EQ(t.job.status, ExpectedStatus(f)) << args << "\n"
                                             << t.job.summary.dump(1).substr(0, 2000);
  t.ours = RunAnalyze({t.job.ring_dir});
  test_support::FrFromJobOptions o;
  if (f.kind == "kill") o.omit.insert(f.rank);
  t.fr_dir = testing::MakeTempDir("frjob-fr");
  const test_support::FrFromJobResult fr =
      test_support::WriteFrDumpsOfJob(t.job.ring_dir, t.fr_dir, o);
  EXPECT_TRUE(fr.ok) << fr.error;
  EXPECT_EQ(fr.written.size(), static_cast<size_t>(ranks) - o.omit.size());
  t.fr_only = RunAnalyze({t.fr_dir});
  t.mixed = testing::MakeTempDir("frjob-both");
  CopyFiles(t.job.ring_dir, t.mixed);
  CopyFiles(t.fr_dir, t.mixed);
  t.both = RunAnalyze({t.mixed});
  return t;
}

// The python frames of the report's culprit `rank` (empty when it has none).
std::vector<std::string> CulpritFrames(const nlohmann::json& report, int rank) {
  for (const auto& c : report["culprits"]) {
    if (GlobalRank(c) == rank && c.contains("pytorch_fr")) {
      return c["pytorch_fr"].value("python_frames", std::vector<std::string>{});
    }
  }
  return {};
}

// What every fault kind must give, FR dumps alone and mixed against
// flightrec's files alone: the same verdict, the same culprit (none for a
// GPU hang, where no record singles out a rank); from FR dumps, the
// culprit's Python frames, except for a rank that wrote no dump (killed),
// which the report names as missing; mixed, the culprit's state comes from
// flightrec's files and, when it dumped, its FR frames are attached.
void ExpectSameVerdict(const ThreeWays& t, const FaultJob& f) {
  SCOPED_TRACE(f.kind + " on rank " + std::to_string(f.rank) + ", op " + std::to_string(f.op));
  ASSERT_TRUE(t.ours.report.is_object()) << t.ours.output.substr(0, 2000);
  ASSERT_TRUE(t.fr_only.report.is_object()) << t.fr_only.output.substr(0, 2000);
  ASSERT_TRUE(t.both.report.is_object()) << t.both.output.substr(0, 2000);
  const std::vector<int> culprit =
      f.kind == "gpu-hang" ? std::vector<int>{} : std::vector<int>{f.rank};
  EXPECT_EQ(CulpritGlobalRanks(t.ours.report), culprit) << Describe(t.ours);

  // FR dumps alone: nothing rejected, the same verdict and culprit.
  EXPECT_TRUE(t.fr_only.report["inputs"]["rejected"].empty()) << t.fr_only.report["inputs"].dump(1);
  EXPECT_EQ(t.fr_only.report["verdict"], t.ours.report["verdict"]) << Describe(t.fr_only);
  if (f.kind == "slow") {
    // CPU-side times alone: a rank held up by the straggler (in a group with
    // it) can enqueue late in another group and be named a lesser
    // straggler too. The straggler is named first, and it made the others
    // wait longest by far.
    const std::vector<int> named = CulpritGlobalRanks(t.fr_only.report);
    ASSERT_FALSE(named.empty()) << Describe(t.fr_only);
    EXPECT_EQ(named.front(), f.rank) << Describe(t.fr_only);
    std::map<int, double> caused;
    for (const auto& s : FindingsOf(t.fr_only.report, "straggler")) {
      for (size_t k = 0; k < s["processes"].size() && k < s["details"].size(); ++k) {
        caused[GlobalRank(s["processes"][k])] += s["details"][k].value("caused_wait_ns", 0.0);
      }
    }
    for (const auto& [rank, ns] : caused) {
      if (rank != f.rank) {
        EXPECT_LT(ns * 2, caused[f.rank]) << rank << "\n" << Describe(t.fr_only);
      }
    }
  } else {
    EXPECT_EQ(CulpritGlobalRanks(t.fr_only.report), culprit) << Describe(t.fr_only);
  }
  EXPECT_EQ(t.fr_only.exit_code, t.ours.exit_code) << Describe(t.fr_only);
  if (f.kind == "kill") {
    // No dump, no frames: the report says the rank is missing.
    EXPECT_EQ(FirstKind(t.fr_only), "missing_rank") << Describe(t.fr_only);
    ASSERT_EQ(t.fr_only.report["culprits"].size(), 1u);
    EXPECT_FALSE(t.fr_only.report["culprits"][0].contains("pytorch_fr"));
  } else if (f.kind == "gpu-hang") {
    // Every rank's entry "started" and none completed, and FR holds no GPU
    // times: its records single out no rank either, and the report says
    // why (no claim about the network, which FR does not see).
    EXPECT_EQ(FirstKind(t.fr_only), "all_stuck") << Describe(t.fr_only);
    const std::string summary = t.fr_only.report["findings"][0].value("summary", "");
    EXPECT_NE(summary.find("single out no rank"), std::string::npos) << summary;
    EXPECT_NE(summary.find("PyTorch FR dumps hold no GPU times"), std::string::npos) << summary;
    EXPECT_EQ(summary.find("network moved"), std::string::npos) << summary;
  } else {
    EXPECT_EQ(FirstKind(t.fr_only), FirstKind(t.ours)) << Describe(t.fr_only);
    const std::vector<std::string> frames = CulpritFrames(t.fr_only.report, f.rank);
    ASSERT_FALSE(frames.empty()) << t.fr_only.report["culprits"].dump(1);
    EXPECT_NE(frames.back().find("main (/job/train.py:120)"), std::string::npos) << frames.back();
  }

  // Both in one directory: flightrec's verdict, its records the evidence,
  // the FR dumps' frames attached.
  EXPECT_EQ(t.both.report["verdict"], t.ours.report["verdict"]) << Describe(t.both);
  EXPECT_EQ(CulpritGlobalRanks(t.both.report), culprit) << Describe(t.both);
  EXPECT_EQ(FirstKind(t.both), FirstKind(t.ours)) << Describe(t.both);
  EXPECT_TRUE(t.both.report["inputs"]["rejected"].empty()) << t.both.report["inputs"].dump(1);
  size_t with_fr = 0;
  for (const auto& c : t.both.report["culprits"]) {
    ASSERT_TRUE(c.contains("source")) << c.dump(1);
    EXPECT_NE(c["source"].value("kind", ""), "") << c.dump(1);
    EXPECT_EQ(c["source"].value("path", "").find("comm_lib_trace_rank_"), std::string::npos)
        << "the state comes from flightrec's files\n"
        << c.dump(1);
    EXPECT_EQ(c["pid"], t.ours.report["culprits"][0]["pid"]) << c.dump(1);
    if (c.contains("pytorch_fr")) {
      ++with_fr;
      EXPECT_FALSE(c["pytorch_fr"]["python_frames"].empty()) << c.dump(1);
    }
  }
  // A killed rank left no FR dump; every other culprit has one attached.
  EXPECT_EQ(with_fr, f.kind == "kill" ? 0u : culprit.size()) << Describe(t.both);
  // Every FR dump is used: attached to its flightrec process, not a process of its own.
  size_t superseded_fr = 0;
  for (const auto& s : t.both.report["inputs"]["superseded"]) {
    if (s.value("path", "").find("comm_lib_trace_rank_") != std::string::npos) ++superseded_fr;
  }
  EXPECT_EQ(superseded_fr, t.fr_only.report["inputs"]["read"].size())
      << t.both.report["inputs"].dump(1);
}

// The job's files are kept when a check failed, or copied to $FR_KEEP (a
// directory) for a look at the reports.
void Cleanup(const ThreeWays& t, bool failed) {
  if (failed) {
    std::printf("kept %s %s %s\n", t.job.dir.c_str(), t.fr_dir.c_str(), t.mixed.c_str());
    return;
  }
  if (const char* keep = std::getenv("FR_KEEP")) {
    const fs::path to = fs::path(keep) / fs::path(t.job.dir).filename();
    fs::create_directories(to);
    fs::copy(t.job.ring_dir, to / "flightrec", fs::copy_options::recursive);
    fs::copy(t.fr_dir, to / "fr", fs::copy_options::recursive);
    fs::copy(t.mixed, to / "both", fs::copy_options::recursive);
  }
  testing::RemoveTree(t.job.dir);
  testing::RemoveTree(t.fr_dir);
  testing::RemoveTree(t.mixed);
}

// Acceptance: each fault kind the emulator injects, from a job that ran:
// FR dumps alone name the culprit, with its Python frames, as flightrec's
// files do; mixed directories agree. 4 ranks, --tp 2 (ops: 8k+1 TP
// AllGather, 8k+2 DP ReduceScatter, 8k+3 world AllReduce, 8k+5 grouped TP,
// 8k+7 DP AllReduce; a skip or an odd count where the comm has a majority).
class FrEachFault : public ::testing::TestWithParam<FaultJob> {};

TEST_P(FrEachFault, FrDumpsOfTheJobNameTheSameCulprit) {
  const ThreeWays t = RunThreeWays(GetParam(), kRanks, 2);
  ExpectSameVerdict(t, GetParam());
  Cleanup(t, HasFailure());
}

INSTANTIATE_TEST_SUITE_P(
    Faults, FrEachFault,
    ::testing::Values(FaultJob{"stuck", 3, 8 * 2 + 1}, FaultJob{"skip", 2, 8 * 2 + 3},
                      FaultJob{"kill", 1, 8 * 2 + 5}, FaultJob{"gpu-hang", 0, 8 * 2 + 2},
                      FaultJob{"slow", 2, 0}, FaultJob{"mismatch", 1, 8 * 2 + 7}),
    [](const ::testing::TestParamInfo<FaultJob>& i) {
      std::string n = i.param.kind;
      std::replace(n.begin(), n.end(), '-', '_');
      return n;
    });

// Acceptance item 4: random jobs of 8 ranks (fault kind, rank and op drawn
// from a printed seed; FR_CROSSCHECK_SEED replays one), each recorded by
// both paths: the same culprit from flightrec's files, from the FR dumps
// converted from them, and from both in one directory.
TEST(FrCrossCheck, RandomJobsGiveTheSameCulpritOnBothPaths) {
  const char* env = std::getenv("FR_CROSSCHECK_SEED");
  const unsigned seed = env != nullptr ? static_cast<unsigned>(std::strtoul(env, nullptr, 10))
                                       : std::random_device{}();
  std::printf("FR_CROSSCHECK_SEED=%u\n", seed);
  std::mt19937 rng(seed);
  const char* kinds[] = {"stuck", "skip", "kill", "mismatch", "gpu-hang"};
  // A skip or a mismatched count on a comm with a majority (a 2-rank TP
  // comm has none: there flightrec's verdict names no rank either): the
  // DP ReduceScatter (8k+2), the world AllReduce (8k+3), the DP AllReduce
  // (8k+7). The other faults on any op.
  const int majority_ops[] = {2, 3, 7};
  for (int j = 0; j < 3; ++j) {
    FaultJob f;
    f.kind = kinds[rng() % 5];
    f.rank = static_cast<int>(rng() % 8);
    int k = static_cast<int>(rng() % 8);
    if (f.kind == "skip" || f.kind == "mismatch") k = majority_ops[rng() % 3];
    f.op = 8 * (2 + static_cast<int>(rng() % 3)) + k;
    SCOPED_TRACE("seed " + std::to_string(seed) + " job " + std::to_string(j));
    const ThreeWays t = RunThreeWays(f, 8, 2);
    ExpectSameVerdict(t, f);
    Cleanup(t, HasFailure());
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

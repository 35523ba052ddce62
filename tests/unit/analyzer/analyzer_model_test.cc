// The analysis on synthetic jobs: one fault each, at 8 and 64 ranks.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>

#include "analyzer/model/host_clocks.h"
#include "analyzer/model/liveness.h"
#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::FindingKind;
using analysis::Verdict;
using analysis::Whereabouts;

class AnalyzerModelTest : public ::testing::TestWithParam<int> {
 protected:
  JobSpec Spec(Fault fault) const {
    JobSpec spec;
    spec.nranks = GetParam();
    spec.fault = fault;
    return spec;
  }
};

INSTANTIATE_TEST_SUITE_P(Ranks, AnalyzerModelTest, ::testing::Values(8, 64));

TEST_P(AnalyzerModelTest, HealthyRunHasNoFindings) {
  Analyzed a(MakeJob(Spec(Fault::kNone)));
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy);
  EXPECT_TRUE(a.result.findings.empty()) << a.result.findings.front().summary;
  EXPECT_TRUE(a.result.culprits.empty());
  EXPECT_EQ(analysis::ExitCodeFor(a.result), 0);
}

// NCCL 2.27-2.30 report no symmetric-kernel collectives (docs/design/nccl.md
// §Symmetric kernels): when a job was thought hung (trigger dumps) but its
// records show nothing pending, the analysis says what it cannot see; not
// for 2.31+, and not for a job nobody suspected.
TEST_P(AnalyzerModelTest, TriggeredDumpsWithNothingPendingOn230NameInvisibleSymmetricKernels) {
  auto job = [](const char* version, uint32_t reason) {
    std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
    for (ProcessSnapshot& p : procs) {
      p.nccl_version = version;
      p.is_dump = true;
      p.dump_reason = reason;
    }
    return procs;
  };
  auto noted = [](const Analyzed& a) {
    for (const std::string& n : a.result.notes) {
      if (n.find("reports no symmetric-kernel collectives") != std::string::npos) return true;
    }
    return false;
  };
  Analyzed v230(job("2.30.7", format::kDumpTrigger));
  EXPECT_EQ(v230.result.verdict, Verdict::kHealthy);
  EXPECT_TRUE(noted(v230));
  EXPECT_FALSE(noted(Analyzed(job("2.31.2", format::kDumpTrigger))));
  EXPECT_FALSE(noted(Analyzed(job("2.30.7", format::kDumpExit))));
}

TEST_P(AnalyzerModelTest, StuckRankIsTheOnlyCulpritAndOutsideNccl) {
  JobSpec spec = Spec(Fault::kStuckBeforeOp);
  spec.op = 6;  // the TP AllReduce of step 2
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  EXPECT_EQ(analysis::ExitCodeFor(a.result), 1);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});

  const analysis::Finding& top = a.result.findings.front();
  EXPECT_EQ(top.kind, FindingKind::kLaggingRank);
  EXPECT_TRUE(top.root_cause);
  EXPECT_EQ(a.CommName(top), "tp1");
  ASSERT_FALSE(top.ranks.empty());
  EXPECT_EQ(top.ranks.front().rank, a.RankIn("tp1", 5));
  EXPECT_EQ(a.Pid(top.ranks.front().process), 4005);
  EXPECT_EQ(top.ranks.front().where, Whereabouts::kOutsideNccl);
  EXPECT_EQ(top.ranks.front().behind, 1);
  EXPECT_EQ(top.op.index, 2u);
  EXPECT_EQ(top.op.func, format::kFuncAllReduce);
  EXPECT_NE(top.summary.find("outside NCCL"), std::string::npos) << top.summary;
  EXPECT_NE(top.summary.find("1 collective behind"), std::string::npos) << top.summary;
  EXPECT_NE(top.summary.find("3 of 4 ranks waiting"), std::string::npos) << top.summary;
  EXPECT_GT(top.confidence, 0.9);

  // Its peers lag in other comms too, but only as victims inside NCCL.
  int victims = 0;
  for (const analysis::Finding* f : a.All(FindingKind::kLaggingRank)) {
    for (const analysis::RankNote& n : f->ranks) {
      if (a.Pid(n.process) == 4005) continue;
      EXPECT_EQ(n.where, Whereabouts::kInsideNccl) << f->summary;
      EXPECT_FALSE(f->root_cause) << f->summary;
      ++victims;
    }
  }
  EXPECT_GT(victims, 0);
  EXPECT_EQ(a.First(FindingKind::kAllStuck), nullptr);
  EXPECT_EQ(a.First(FindingKind::kDeadlock), nullptr);
}

// API v7 carries a per-call user tag (frameworks put the training step
// there): the op a finding names shows it, so the report can be matched
// against the framework's logs. Untagged ops (older APIs) show none.
TEST_P(AnalyzerModelTest, TheStuckOpNamesItsUserTag) {
  JobSpec spec = Spec(Fault::kStuckBeforeOp);
  spec.op = 6;  // the TP AllReduce of step 2
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  for (ProcessSnapshot& p : procs) {
    for (CommSnapshot& c : p.comms) {
      for (OpRecord& r : c.records) r.user_tag = 1000 + r.op_index;
    }
  }
  Analyzed tagged(procs);
  const analysis::Finding& top = tagged.result.findings.front();
  EXPECT_EQ(top.kind, FindingKind::kLaggingRank);
  EXPECT_EQ(top.op.index, 2u);
  EXPECT_EQ(top.op.user_tag, 1002u);
  EXPECT_NE(top.summary.find("AllReduce #2 (user tag 1002)"), std::string::npos) << top.summary;

  Analyzed untagged(MakeJob(spec));
  EXPECT_EQ(untagged.result.findings.front().op.user_tag, 0u);
  EXPECT_EQ(untagged.result.findings.front().summary.find("user tag"), std::string::npos);
}

TEST_P(AnalyzerModelTest, SkippedOpLeavesTheRankOneBehind) {
  JobSpec spec = Spec(Fault::kSkipOp);
  spec.tp = 0;  // one comm: the skip shifts the rank's indices by one
  spec.op = 3;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const analysis::Finding* f = a.First(FindingKind::kLaggingRank);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->ranks.size(), 1u);
  EXPECT_EQ(f->ranks[0].rank, 5);
  EXPECT_EQ(f->ranks[0].behind, 1);
  EXPECT_EQ(f->ranks[0].where, Whereabouts::kOutsideNccl);
  EXPECT_EQ(f->op.index, static_cast<uint64_t>(spec.steps - 1));
  EXPECT_EQ(f->waiting, spec.nranks - 1);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

struct MismatchCase {
  const char* field;
  int op;
  const char* comm_prefix;
};

TEST_P(AnalyzerModelTest, MismatchNamesTheRankAndTheField) {
  for (const MismatchCase& c :
       {MismatchCase{"count", 6, "tp"}, MismatchCase{"datatype", 8, "world"},
        MismatchCase{"root", 8, "world"}, MismatchCase{"func", 6, "tp"}}) {
    SCOPED_TRACE(c.field);
    JobSpec spec = Spec(Fault::kMismatch);
    spec.field = c.field;
    spec.op = c.op;
    Analyzed a(MakeJob(spec));
    EXPECT_EQ(a.result.verdict, Verdict::kDesync);
    const analysis::Finding* f = a.First(FindingKind::kMismatch);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(a.CommName(*f).rfind(c.comm_prefix, 0), 0u);
    ASSERT_EQ(f->ranks.size(), 1u);
    EXPECT_EQ(a.Pid(f->ranks[0].process), 4005);
    EXPECT_NE(std::find(f->fields.begin(), f->fields.end(), c.field), f->fields.end());
    EXPECT_EQ(f->op.index, 2u);
    EXPECT_NE(f->summary.find(std::string(c.field) + " "), std::string::npos) << f->summary;
    EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  }
}

TEST_P(AnalyzerModelTest, KilledRankIsDead) {
  Analyzed a(MakeJob(Spec(Fault::kKilled)));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const analysis::Finding* f = a.First(FindingKind::kDeadRank);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->root_cause);
  EXPECT_EQ(a.Pid(f->ranks.at(0).process), 4005);
  EXPECT_NE(f->summary.find("heartbeat"), std::string::npos);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  // The dead rank is not also reported as lagging.
  for (const analysis::Finding* l : a.All(FindingKind::kLaggingRank)) {
    for (const analysis::RankNote& n : l->ranks) EXPECT_NE(a.Pid(n.process), 4005);
  }
}

TEST_P(AnalyzerModelTest, MissingFileIsMissingRank) {
  JobSpec spec = Spec(Fault::kMissingFile);
  spec.op = 6;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  // One process without a file leaves a hole in world, its tp and its dp
  // comm: it is named once, by the widest comm (the others' holes are it).
  const auto missing = a.All(FindingKind::kMissingRank);
  ASSERT_EQ(missing.size(), 1u);
  const analysis::Finding* f = missing.front();
  EXPECT_EQ(a.CommName(*f), "world");
  ASSERT_EQ(f->ranks.size(), 1u);
  EXPECT_EQ(f->ranks[0].process, -1);
  EXPECT_EQ(f->ranks[0].rank, 5);
  // Those waiting for it lead to the missing member, not to a live process,
  // whichever comm they wait in: one culprit, the world rank.
  ASSERT_EQ(a.result.culprits.size(), 1u);
  const analysis::Culprit& c = a.result.culprits.front();
  EXPECT_EQ(c.process, -1);
  EXPECT_EQ(a.index.groups()[c.group].name, "world");
  EXPECT_EQ(c.rank, 5);
  EXPECT_EQ(a.index.MissingMemberships(c.group, c.rank).size(), 3u);
  EXPECT_TRUE(a.result.findings.front().root_cause);
  EXPECT_EQ(a.result.findings.front().kind, FindingKind::kMissingRank);
}

// A world comm claiming 200,000 ranks (a corrupt header, or a huge job
// with few files collected): the finding names 4,096 of the missing ranks
// and counts the rest, so a report stays small and quick (the fuzzer found
// a 65 KB input that made the JSON report take GBs).
TEST_P(AnalyzerModelTest, MissingRanksAreListedUpToALimitAndCounted) {
  std::vector<ProcessSnapshot> procs = MakeJob(Spec(Fault::kNone));
  for (ProcessSnapshot& p : procs) {
    for (CommSnapshot& c : p.comms) {
      if (c.name == "world") c.nranks = 200000;
    }
  }
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kMissingRank);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->ranks.size(), 4096u);
  EXPECT_EQ(f->ranks.front().rank, GetParam());  // the first rank without a file
  const std::string all = std::to_string(200000 - GetParam()) + " missing in all";
  EXPECT_NE(f->summary.find(all), std::string::npos) << f->summary;
}

TEST_P(AnalyzerModelTest, GpuHangIsAllStuckNotALaggard) {
  Analyzed a(MakeJob(Spec(Fault::kGpuHang)));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const analysis::Finding* f = a.First(FindingKind::kAllStuck);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.CommName(*f), "world");
  EXPECT_EQ(f->ranks.size(), static_cast<size_t>(GetParam()));
  // Every rank started the hung op on the GPU: nothing singles one out, so
  // none is named (the last GPU start is noise, not evidence).
  EXPECT_NE(f->summary.find("single out no rank"), std::string::npos) << f->summary;
  EXPECT_EQ(f->summary.find("(host-"), std::string::npos) << f->summary;
  EXPECT_EQ(f->ranks.front().rank, 0) << f->summary;
  EXPECT_EQ(a.First(FindingKind::kLaggingRank), nullptr);
  EXPECT_TRUE(a.result.culprits.empty());
}

// One rank never started the hung op on the GPU while the others did: the
// records single it out, and it is named.
TEST_P(AnalyzerModelTest, GpuHangNamesTheRankThatNeverStartedIt) {
  std::vector<ProcessSnapshot> procs = MakeJob(Spec(Fault::kGpuHang));
  for (OpRecord& r : procs[3].comms[0].records) {
    if (r.state != format::kOpDone) {
      r.gpu_start_ns = r.gpu_start_raw = 0;
      r.channels_started = 0;
    }
  }
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kAllStuck);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.Pid(f->ranks.front().process), 4003) << f->summary;
  EXPECT_NE(f->summary.find("1 of them never started it on the GPU while the others did, first "
                            "rank 3"),
            std::string::npos)
      << f->summary;
  EXPECT_EQ(f->never_started, 1);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4003});
}

TEST_P(AnalyzerModelTest, SlowRankIsRankedFirstStraggler) {
  Analyzed a(MakeJob(Spec(Fault::kSlowRank)));
  EXPECT_EQ(a.result.verdict, Verdict::kSlow);
  const auto stragglers = a.All(FindingKind::kStraggler);
  ASSERT_FALSE(stragglers.empty());
  for (const analysis::Finding* f : stragglers) {
    EXPECT_EQ(a.Pid(f->ranks.at(0).process), 4005) << f->summary;
    EXPECT_GT(f->ranks[0].late_ns, 1e6);
  }
  for (const analysis::Finding& f : a.result.findings) EXPECT_EQ(f.kind, FindingKind::kStraggler);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

TEST_P(AnalyzerModelTest, InvertedCommsAreADeadlock) {
  JobSpec spec = Spec(Fault::kDeadlock);
  spec.rank = 0;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const analysis::Finding* f = a.First(FindingKind::kDeadlock);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("wait on each other"), std::string::npos);
  bool names_rank0 = false;
  for (const analysis::RankNote& n : f->ranks)
    names_rank0 = names_rank0 || a.Pid(n.process) == 4000;
  EXPECT_TRUE(names_rank0);
  EXPECT_TRUE(a.result.culprits.empty());
}

// A two-member comm has no majority, but its siblings (the other DP comms
// of two, running the same ops) ran the op as rank 1 did: rank 5 is named.
TEST(AnalyzerMismatchTest, TwoMemberTieIsBrokenBySiblingComms) {
  JobSpec spec;
  spec.fault = Fault::kMismatch;
  spec.field = "count";
  spec.op = 7;  // the DP AllGather of step 2: dp1 has two members, 1 and 5
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kDesync);
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.CommName(*f), "dp1");
  ASSERT_EQ(f->ranks.size(), 1u) << f->summary;
  EXPECT_EQ(a.Pid(f->ranks[0].process), 4005) << f->summary;
  EXPECT_FALSE(f->contested);
  EXPECT_EQ(f->tie_break, "siblings");
  EXPECT_NE(f->summary.find("broken by its siblings: 3 of 3"), std::string::npos) << f->summary;
  EXPECT_EQ(f->fields, std::vector<std::string>{"count"});
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// The acceptance case: TP=2, a count mismatch in a TP AllReduce
// names the odd rank, through the other TP comms.
TEST(AnalyzerMismatchTest, TpOfTwoCountMismatchNamesTheOddRank) {
  for (const int nranks : {8, 64}) {
    JobSpec spec;
    spec.nranks = nranks;
    spec.tp = 2;
    spec.fault = Fault::kMismatch;
    spec.field = "count";
    spec.rank = 5;
    spec.op = 6;  // the TP AllReduce of step 2: tp2 is ranks 4 and 5
    Analyzed a(MakeJob(spec));
    const analysis::Finding* f = a.First(FindingKind::kMismatch);
    ASSERT_NE(f, nullptr) << nranks;
    EXPECT_EQ(a.CommName(*f), "tp2");
    ASSERT_EQ(f->ranks.size(), 1u) << f->summary;
    EXPECT_EQ(a.Pid(f->ranks[0].process), 4005) << f->summary;
    EXPECT_EQ(f->tie_break, "siblings");
    EXPECT_GT(f->confidence, 0.5);
    EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  }
}

// Drops every DP comm but dp1 (ranks 1 and 5), so dp1 has no sibling.
void KeepOnlyDp1(std::vector<ProcessSnapshot>* procs) {
  for (ProcessSnapshot& p : *procs) {
    auto& comms = p.comms;
    comms.erase(std::remove_if(comms.begin(), comms.end(),
                               [](const CommSnapshot& c) {
                                 return c.name.rfind("dp", 0) == 0 && c.name != "dp1";
                               }),
                comms.end());
  }
}

// Without siblings, the members' other comms: rank 5 is also the odd one
// in tp1 (where a majority names it), rank 1 nowhere.
TEST(AnalyzerMismatchTest, TwoMemberTieIsBrokenByTheMembersOtherComms) {
  JobSpec spec;
  spec.fault = Fault::kMismatch;
  spec.field = "count";
  spec.op = 7;  // dp1's AllGather #2
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  KeepOnlyDp1(&procs);
  for (CommSnapshot& c : procs[5].comms) {
    if (c.name != "tp1") continue;
    for (OpRecord& r : c.records) {
      if (r.op_index == 2) r.count *= 2;  // tp1's AllReduce #2, 3 of 4 agree
    }
  }
  Analyzed a(std::move(procs));
  const auto found = a.All(FindingKind::kMismatch);
  const analysis::Finding* dp1 = nullptr;
  for (const analysis::Finding* f : found) {
    if (a.CommName(*f) == "dp1") dp1 = f;
  }
  ASSERT_NE(dp1, nullptr);
  ASSERT_EQ(dp1->ranks.size(), 1u) << dp1->summary;
  EXPECT_EQ(a.Pid(dp1->ranks[0].process), 4005) << dp1->summary;
  EXPECT_EQ(dp1->tie_break, "other_comms");
  EXPECT_NE(dp1->summary.find("odd one on another comm too"), std::string::npos) << dp1->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// NCCL gives AllGather and Broadcast in bytes as int8 (the Coll event): a
// rank that passed float16 with twice the count has the others' record;
// the call's datatype (api_datatype, from the CollApi event) names it, and
// the field is `datatype`, not `count`.
TEST(AnalyzerMismatchTest, SameBytesOtherDatatypeIsADatatypeMismatchByTheApiDatatype) {
  JobSpec spec;
  spec.fault = Fault::kMismatch;
  spec.field = "datatype-same-bytes";
  spec.op = 8;  // the world Broadcast of step 2
  spec.api_level = true;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kDesync);
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.CommName(*f), "world");
  ASSERT_EQ(f->ranks.size(), 1u) << f->summary;
  EXPECT_EQ(a.Pid(f->ranks[0].process), 4005) << f->summary;
  EXPECT_EQ(f->fields, std::vector<std::string>{"datatype"}) << f->summary;
  EXPECT_NE(f->summary.find("datatype ncclFloat16 where 7 of 8 ranks used ncclFloat32"),
            std::string::npos)
      << f->summary;
  EXPECT_NE(f->summary.find("byte counts agree"), std::string::npos) << f->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// The same call with the same datatype and twice the count: the bytes
// differ and every record has the call's datatype, so it is the count.
TEST(AnalyzerMismatchTest, InBytesCountMismatchWithAgreeingApiDatatypesIsTheCount) {
  JobSpec spec;
  spec.fault = Fault::kMismatch;
  spec.field = "count";
  spec.op = 8;
  spec.api_level = true;
  Analyzed a(MakeJob(spec));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fields, std::vector<std::string>{"count"}) << f->summary;
  EXPECT_NE(f->summary.find("so its count differs"), std::string::npos) << f->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// One rank without API datatypes (an older plugin): datatypes are compared
// as the Coll event gives them. A healthy job stays healthy (no rank reads
// as different for lacking it); a count difference is reported as before,
// "count or datatype"; a same-bytes datatype difference cannot be seen.
TEST(AnalyzerMismatchTest, WithoutApiDatatypesOnOneRankTheCollEventDecides) {
  JobSpec healthy;
  healthy.api_level = true;
  healthy.no_api_rank = 2;
  EXPECT_EQ(Analyzed(MakeJob(healthy)).First(FindingKind::kMismatch), nullptr);

  JobSpec count = healthy;
  count.fault = Fault::kMismatch;
  count.field = "count";
  count.op = 8;
  Analyzed a(MakeJob(count));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fields, std::vector<std::string>{"count"}) << f->summary;
  EXPECT_NE(f->summary.find("count or its datatype differs"), std::string::npos) << f->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});

  JobSpec same_bytes = count;
  same_bytes.field = "datatype-same-bytes";
  EXPECT_EQ(Analyzed(MakeJob(same_bytes)).First(FindingKind::kMismatch), nullptr);
}

// Symmetric evidence: no sibling, and neither member is odd anywhere else.
// Both are named, nobody is blamed.
TEST(AnalyzerMismatchTest, SymmetricTieNamesBothAndBlamesNoOne) {
  JobSpec spec;
  spec.fault = Fault::kMismatch;
  spec.field = "count";
  spec.op = 7;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  KeepOnlyDp1(&procs);
  Analyzed a(std::move(procs));
  EXPECT_EQ(a.result.verdict, Verdict::kDesync);
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.CommName(*f), "dp1");
  ASSERT_EQ(f->ranks.size(), 2u);
  EXPECT_LE(f->confidence, 0.5);
  EXPECT_TRUE(f->contested);
  EXPECT_TRUE(f->tie_break.empty());
  EXPECT_NE(f->summary.find("no majority"), std::string::npos);
  EXPECT_TRUE(a.result.culprits.empty());
}

TEST(AnalyzerWrapTest, WrappedRingsWithDifferentOverwrittenCountsAlign) {
  JobSpec spec;
  spec.steps = 12;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 3 * 10;  // TP AllReduce #10
  spec.capacity = {{0, 3}, {4, 5}, {6, 7}};
  Analyzed a(MakeJob(spec));
  ASSERT_GT(a.procs[0].comms[0].overwritten, 0u);
  EXPECT_NE(a.procs[0].comms[0].overwritten, a.procs[4].comms[0].overwritten);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  const analysis::Finding& top = a.result.findings.front();
  EXPECT_EQ(top.kind, FindingKind::kLaggingRank);
  EXPECT_EQ(top.op.index, 10u);
  EXPECT_EQ(a.First(FindingKind::kMismatch), nullptr);

  JobSpec mm;
  mm.steps = 12;
  mm.fault = Fault::kMismatch;
  mm.op = 3 * 10 + 2;  // world Broadcast #10
  mm.field = "root";
  mm.capacity = {{0, 3}, {5, 4}, {6, 9}};
  Analyzed b(MakeJob(mm));
  const analysis::Finding* f = b.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op.index, 10u);
  EXPECT_EQ(b.Pid(f->ranks.at(0).process), 4005);
  EXPECT_LT(f->confidence, 0.95);  // history was overwritten
}

TEST(JobIndexTest, FindsRecordsByOpIndexAfterWrap) {
  JobSpec spec;
  spec.capacity = {{2, 4}};
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  analysis::JobIndex index(procs);
  ASSERT_EQ(index.groups().size(), 7u);  // world, tp0, tp1, dp0..dp3
  int32_t world = -1;
  for (size_t g = 0; g < index.groups().size(); ++g) {
    if (index.groups()[g].name == "world") world = static_cast<int32_t>(g);
  }
  ASSERT_GE(world, 0);
  EXPECT_EQ(index.groups()[world].present, 8);
  EXPECT_EQ(index.FindColl(world, 2, 0), nullptr);  // overwritten
  const OpRecord* r = index.FindColl(world, 2, 5);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->op_index, 5u);
  EXPECT_EQ(index.FirstCollIndex(world, 2), 2u);
  EXPECT_EQ(index.FindColl(world, 2, 6), nullptr);  // never enqueued
}

TEST(JobIndexTest, DuplicateAndOutOfRangeRanksAreWarnedNotCrashing) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  procs[1].comms[0].rank = 0;   // claims rank 0 of world too
  procs[2].comms[0].rank = 99;  // beyond nranks
  analysis::JobIndex index(procs);
  EXPECT_EQ(index.warnings().size(), 2u);
  const analysis::Analysis a = analysis::Analyze(index);
  EXPECT_NE(a.verdict, Verdict::kHealthy);  // ranks 1 and 2 of world have no file now
  EXPECT_NE(analysis::Analyze(index).findings.size(), 0u);
}

TEST(AnalyzerEmptyTest, NoInputIsIncomplete) {
  std::vector<ProcessSnapshot> none;
  analysis::JobIndex index(none);
  const analysis::Analysis a = analysis::Analyze(index);
  EXPECT_EQ(a.verdict, Verdict::kIncomplete);
  EXPECT_EQ(analysis::ExitCodeFor(a), 2);
}

// Appends p2p record #0 (float elements) to `c`, after its last record.
void AddP2p(CommSnapshot* c, uint8_t func, int32_t peer, uint64_t count) {
  OpRecord r = c->records.back();
  r.slot_seq = c->head++;
  r.op_index = 0;
  r.nccl_seq = UINT64_MAX;
  r.func = func;
  r.flags = format::kFlagP2p;
  r.root_or_peer = peer;
  r.count = count;
  r.bytes = count * 4;
  c->records.push_back(r);
  c->p2p_count++;
}

TEST(AnalyzerP2pTest, SendRecvCountMismatchNamesBothSides) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  // Rank 0 sends 100 floats to rank 1, which posted a Recv of 50.
  AddP2p(&procs[0].comms[0], format::kFuncSend, 1, 100);
  AddP2p(&procs[1].comms[0], format::kFuncRecv, 0, 50);
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->ranks.size(), 2u);
  EXPECT_EQ(f->ranks[0].rank, 0);
  EXPECT_EQ(f->ranks[1].rank, 1);
  EXPECT_EQ(f->fields, std::vector<std::string>{"bytes"});
  EXPECT_TRUE(f->op.p2p);
}

// A ring exchange where one sender's size differs from every other Send of
// the same index: the sender is named alone and blamed.
TEST(AnalyzerP2pTest, OddSenderAmongAgreeingSendsIsNamedAlone) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  // world ring over 8 ranks: r sends to r+1, receives from r-1; rank 3
  // sends 101 elements where every other Send and every Recv has 100.
  for (int r = 0; r < 8; ++r) {
    AddP2p(&procs[r].comms[0], format::kFuncSend, (r + 1) % 8, r == 3 ? 101 : 100);
    AddP2p(&procs[r].comms[0], format::kFuncRecv, (r + 7) % 8, 100);
  }
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->ranks.size(), 1u) << f->summary;
  EXPECT_EQ(a.Pid(f->ranks[0].process), 4003);
  EXPECT_FALSE(f->contested);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4003});
  EXPECT_NE(f->summary.find("the sender is the odd one"), std::string::npos) << f->summary;
}

// A Send/Recv pair alone on a two-member comm (each DP comm of two runs one
// Send #0 from its rank 0 to its rank 1): dp1's receiver posted a different
// size, and the sibling DP comms, whose pairs all move 100, name it.
TEST(AnalyzerP2pTest, TwoMemberPairTieIsBrokenBySiblingComms) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  for (int r = 0; r < 8; ++r) {
    CommSnapshot* dp = &procs[r].comms[2];
    ASSERT_EQ(dp->name.rfind("dp", 0), 0u);
    if (dp->rank == 0) AddP2p(dp, format::kFuncSend, 1, 100);
    if (dp->rank == 1) AddP2p(dp, format::kFuncRecv, 0, r == 5 ? 50 : 100);
  }
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.CommName(*f), "dp1");
  ASSERT_EQ(f->ranks.size(), 1u) << f->summary;
  EXPECT_EQ(a.Pid(f->ranks[0].process), 4005) << f->summary;
  EXPECT_EQ(f->tie_break, "siblings");
  EXPECT_NE(f->summary.find("the receiver is the odd one"), std::string::npos) << f->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// A process SIGKILLed before its watchdog's first heartbeat: its last sign
// of life is the newest time it wrote, and it never sealed the dump every
// live process sealed on the hang.
TEST(ProgressTest, KilledBeforeTheFirstHeartbeatIsDead) {
  JobSpec spec;
  spec.fault = Fault::kKilled;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  for (ProcessSnapshot& p : procs) {
    if (p.pid == 4005) p.heartbeat_wall_ns = 0;
  }
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kDeadRank);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.Pid(f->ranks.at(0).process), 4005);
  EXPECT_NE(f->summary.find("never wrote a heartbeat"), std::string::npos) << f->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// A job of two processes, one killed: the job's heartbeat jitter (a median
// of the heartbeat gaps) must not be the dead one's own silence, or it
// excuses itself. Found by the randomized sweep.
TEST(ProgressTest, KilledRankOfATwoProcessJobIsDead) {
  JobSpec spec;
  spec.nranks = 2;
  spec.tp = 0;
  spec.fault = Fault::kKilled;
  spec.rank = 1;
  spec.op = 2;
  Analyzed a(MakeJob(spec));
  const analysis::Finding* f = a.First(FindingKind::kDeadRank);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.Pid(f->ranks.at(0).process), 4001);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4001});
}

// A torn record leaves a hole in a member's op indices: lookups around it
// still work (binary search instead of the dense path) and the hole is
// "not held", not a mismatch.
TEST(JobIndexTest, TornRecordLeavesAHoleNotAMismatch) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  std::vector<OpRecord>& recs = procs[3].comms[0].records;  // rank 3, world
  ASSERT_GT(recs.size(), 4u);
  const uint64_t hole = recs[2].op_index;
  recs.erase(recs.begin() + 2);
  procs[3].comms[0].torn = 1;
  Analyzed a(std::move(procs));
  int32_t world = -1;
  for (size_t g = 0; g < a.index.groups().size(); ++g) {
    if (a.index.groups()[g].name == "world") world = static_cast<int32_t>(g);
  }
  ASSERT_GE(world, 0);
  EXPECT_EQ(a.index.FindColl(world, 3, hole), nullptr);
  ASSERT_NE(a.index.FindColl(world, 3, hole + 1), nullptr);
  EXPECT_EQ(a.index.FindColl(world, 3, hole + 1)->op_index, hole + 1);
  ASSERT_NE(a.index.FindColl(world, 3, hole - 1), nullptr);
  EXPECT_EQ(a.index.FindColl(world, 3, hole - 1)->op_index, hole - 1);
  EXPECT_EQ(a.First(FindingKind::kMismatch), nullptr);
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy);
}

// Several differing ops on one comm: the first is described, the rest
// counted, whichever member holds them.
TEST(AnalyzerMismatchTest, LaterDisagreementsAreCounted) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  std::vector<OpRecord>& recs = procs[6].comms[0].records;  // rank 6, world
  ASSERT_GT(recs.size(), 4u);
  recs[1].count += 1;
  recs[3].count += 1;
  recs[4].datatype = format::kTypeFloat64;
  Analyzed a(std::move(procs));
  const analysis::Finding* f = a.First(FindingKind::kMismatch);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op.index, recs[1].op_index);
  ASSERT_EQ(f->ranks.size(), 1u);
  EXPECT_EQ(a.Pid(f->ranks[0].process), 4006);
  EXPECT_NE(f->summary.find("2 later ops on this comm also differ"), std::string::npos)
      << f->summary;
}

// An op still pending in a dump sealed on timeout, trigger or exit is stuck
// however young; in a dump taken on request it must be older than the limit.
TEST(ProgressTest, DumpSealedOnHangNeedsNoMinimumAge) {
  JobSpec spec;
  spec.fault = Fault::kGpuHang;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  for (ProcessSnapshot& p : procs) {
    uint64_t newest = 0;
    for (const CommSnapshot& c : p.comms) {
      for (const OpRecord& r : c.records) newest = std::max(newest, r.t_enqueue_ns);
    }
    p.dump_wall_ns = newest + 10 * kUs;  // sealed 10 us after the last op
  }
  auto stuck_count = [&procs](uint32_t reason, uint64_t stuck_after_ns) {
    for (ProcessSnapshot& p : procs) p.dump_reason = reason;
    analysis::JobIndex index(procs);
    analysis::ProgressOptions options;
    options.stuck_after_ns = stuck_after_ns;
    const analysis::JobProgress progress = analysis::ComputeProgress(index, options);
    int n = 0;
    for (const analysis::ProcessProgress& pp : progress.processes) n += pp.stuck ? 1 : 0;
    return n;
  };
  EXPECT_EQ(stuck_count(format::kDumpTimeout, 0), 8);
  EXPECT_EQ(stuck_count(format::kDumpTrigger, 0), 8);
  EXPECT_EQ(stuck_count(format::kDumpExit, 0), 8);
  EXPECT_EQ(stuck_count(format::kDumpRequest, 0), 0);
  // An explicit --stuck-after still applies to every dump.
  EXPECT_EQ(stuck_count(format::kDumpTimeout, 1000 * 1000 * kUs), 0);
}

TEST(OpRecordTest, LastProgressIsTheNewerOfProgressAndGpuEnd) {
  OpRecord r;
  r.t_last_progress_ns = 100;  // first KernelCh start only
  r.gpu_end_ns = 250;
  EXPECT_EQ(r.last_progress_ns(), 250u);
  r.gpu_end_ns = 0;  // not finished
  EXPECT_EQ(r.last_progress_ns(), 100u);
}

// The reader's per-file warnings reach the report, one note per kind: a
// clock step seen in three files is one note naming the first and the
// count; torn records are left to the per-file torn count.
TEST(AnalyzerNotesTest, ReaderWarningsAreGroupedByKind) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  for (size_t p = 0; p < procs.size(); ++p) procs[p].path = "rank" + std::to_string(p);
  procs[1].warnings.push_back("wall clock stepped by 3600 s since init; times use the dump's");
  procs[4].warnings.push_back("wall clock stepped by 7 s since init; times use the dump's");
  procs[6].warnings.push_back("wall clock stepped by 12 s since init; times use the dump's");
  procs[2].warnings.push_back("unknown dump_reason 9");
  procs[3].warnings.push_back("region 0: 4 torn or in-flight records skipped");
  Analyzed a(std::move(procs));
  ASSERT_EQ(a.result.notes.size(), 2u) << ::testing::PrintToString(a.result.notes);
  EXPECT_EQ(a.result.notes[0],
            "rank1: wall clock stepped by 3600 s since init; times use the dump's (and 2 more "
            "files with the same warning)");
  EXPECT_EQ(a.result.notes[1], "rank2: unknown dump_reason 9");
}

// Live rings of 16 ranks on two hosts whose wall clocks differ by `skew_s`:
// every time host-1 wrote is shifted.
std::vector<ProcessSnapshot> LiveRingsWithSkew(JobSpec spec, int64_t skew_s) {
  spec.nranks = 16;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  const uint64_t skew = static_cast<uint64_t>(skew_s * 1000000000LL);  // mod 2^64
  auto shift = [skew](uint64_t* t) {
    if (*t != 0) *t += skew;
  };
  for (ProcessSnapshot& p : procs) {
    if (!p.is_dump) continue;  // a killed rank's ring keeps its own times
    p.is_dump = false;         // the job is still running: live rings
    p.process_state = format::kProcessRunning;
    p.dump_reason = format::kDumpNone;
    p.dump_wall_ns = 0;
  }
  for (ProcessSnapshot& p : procs) {
    if (p.host != "host-1") continue;
    shift(&p.created_wall_ns);
    shift(&p.heartbeat_wall_ns);
    shift(&p.dump_wall_ns);
    for (CommSnapshot& c : p.comms) {
      shift(&c.init_wall_ns);
      shift(&c.last_enqueue_wall_ns);
      for (OpRecord& r : c.records) {
        for (uint64_t* t : {&r.t_api_ns, &r.t_enqueue_ns, &r.t_enqueued_ns, &r.gpu_start_ns,
                            &r.gpu_end_ns, &r.t_last_progress_ns}) {
          shift(t);
        }
      }
    }
  }
  return procs;
}

// A host whose clock is 20 s ahead (or behind) is not a host of dead ranks:
// its offset is measured from the collectives both hosts finished.
TEST(HostClockTest, ASkewedHostsLiveRanksAreNotDead) {
  for (int64_t skew_s : {20, -20}) {
    SCOPED_TRACE(skew_s);
    Analyzed a(LiveRingsWithSkew(JobSpec{}, skew_s));
    EXPECT_EQ(a.result.verdict, Verdict::kHealthy)
        << (a.result.findings.empty() ? "" : a.result.findings.front().summary);
    const std::vector<int64_t> offset = analysis::HostClockOffsets(a.index);
    for (size_t p = 0; p < a.procs.size(); ++p) {
      const int64_t want = a.procs[p].host == "host-1" ? skew_s * 1000000000LL : 0;
      EXPECT_NEAR(static_cast<double>(offset[p]), static_cast<double>(want), 1e6) << p;
    }
  }
}

// The correction must not hide a real death: rank 5 (host-0) killed while
// host-1 runs 20 s ahead is still the dead rank.
TEST(HostClockTest, ARankThatDiedIsStillDeadAcrossASkewedHost) {
  JobSpec spec;
  spec.fault = Fault::kKilled;
  spec.rank = 5;
  Analyzed a(LiveRingsWithSkew(spec, 20));
  const analysis::Finding* f = a.First(FindingKind::kDeadRank);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(a.Pid(f->ranks.front().process), 4005);
  EXPECT_EQ(a.All(FindingKind::kDeadRank).size(), 1u);
}

// What the analysis concludes, to compare two runs of it: the verdict, the
// culprits, the kinds of the findings in order and the headline.
std::string Conclusion(const Analyzed& a) {
  std::string s = analysis::VerdictName(a.result.verdict);
  s += " culprits:";
  for (int64_t pid : a.CulpritPids()) s += " " + std::to_string(pid);
  s += " findings:";
  for (const analysis::Finding& f : a.result.findings) {
    s += std::string(" ") + analysis::FindingKindName(f.kind);
  }
  if (!a.result.findings.empty()) s += " | " + a.result.findings.front().summary;
  return s;
}

// Hosts 30 s and 10 minutes apart (either way): every time comparison
// (dead, stuck, waiting since, all-stuck order, straggler) is made after
// removing the offset, so the verdict, culprits, findings and headline are
// those of the same job on synchronized clocks.
TEST(HostClockTest, SkewedHostsGiveTheVerdictOfSynchronizedOnes) {
  struct Case {
    Fault fault;
    int rank;
    int op;
  };
  const Case cases[] = {
      {Fault::kNone, 0, 0},      {Fault::kStuckBeforeOp, 5, 15}, {Fault::kStuckBeforeOp, 12, 9},
      {Fault::kKilled, 5, 10},   {Fault::kKilled, 12, 10},       {Fault::kGpuHang, 0, 0},
      {Fault::kSlowRank, 11, 0}, {Fault::kDeadlock, 9, 0},
  };
  for (const Case& c : cases) {
    JobSpec spec;
    spec.fault = c.fault;
    spec.rank = c.rank;
    spec.op = c.op;
    const std::string want = Conclusion(Analyzed(LiveRingsWithSkew(spec, 0)));
    for (int64_t skew_s : {30, -30, 600, -600}) {
      SCOPED_TRACE("fault " + std::to_string(static_cast<int>(c.fault)) + " rank " +
                   std::to_string(c.rank) + ", skew " + std::to_string(skew_s) + " s");
      Analyzed a(LiveRingsWithSkew(spec, skew_s));
      EXPECT_EQ(Conclusion(a), want);
      // Said in the notes, with the size of the offset.
      bool noted = false;
      for (const std::string& n : a.result.notes) {
        noted = noted || n.find("host host-1's wall clock is") != std::string::npos;
      }
      EXPECT_TRUE(noted) << ::testing::PrintToString(a.result.notes);
    }
  }
}

// Rank 5 stuck outside NCCL; the job's live rings beat every 100 ms with a
// 3 s watchdog timeout, the heartbeats `lag_ns[pid]` behind the newest.
std::vector<ProcessSnapshot> StuckWithLaggingHeartbeats(const std::map<int64_t, uint64_t>& lag_ns) {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 15;
  std::vector<ProcessSnapshot> procs = LiveRingsWithSkew(spec, 0);
  for (ProcessSnapshot& p : procs) {
    p.watchdog_poll_ns = 100 * 1000 * kUs;
    p.watchdog_timeout_ns = 3000 * 1000 * kUs;
    p.heartbeat_wall_ns -= static_cast<uint64_t>(p.pid % 7) * 12 * 1000 * kUs;  // 0-72 ms
    const auto lag = lag_ns.find(p.pid);
    if (lag != lag_ns.end()) p.heartbeat_wall_ns -= lag->second;
  }
  return procs;
}

// A live rank starved of CPU (its heartbeat 1.07 s behind, ten polls) is
// not dead: the job's watchdog timeout is 3 s, and a process quiet for less
// than half of it is no more dead than an op pending that long is stuck.
TEST(DeadRuleTest, AStarvedRankIsNotDead) {
  Analyzed a(StuckWithLaggingHeartbeats({{4002, 1070 * 1000 * kUs}}));
  EXPECT_EQ(a.First(FindingKind::kDeadRank), nullptr) << a.First(FindingKind::kDeadRank)->summary;
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  ASSERT_FALSE(a.result.findings.empty());
  EXPECT_EQ(a.Pid(a.result.findings.front().ranks.at(0).process), 4005)
      << a.result.findings.front().summary;
}

// A rank silent for a minute is dead (inferred), but a rank seen stuck
// outside NCCL in its own records stays the headline and first culprit.
TEST(DeadRuleTest, ARankStuckOutsideNcclOutranksASilentOne) {
  Analyzed a(StuckWithLaggingHeartbeats({{4002, 60000 * 1000 * kUs}}));
  const analysis::Finding* dead = a.First(FindingKind::kDeadRank);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(a.Pid(dead->ranks.at(0).process), 4002);
  EXPECT_TRUE(dead->inferred);
  const analysis::Finding& top = a.result.findings.front();
  EXPECT_EQ(top.kind, FindingKind::kLaggingRank) << top.summary;
  EXPECT_EQ(a.Pid(top.ranks.at(0).process), 4005) << top.summary;
  EXPECT_EQ(top.ranks.at(0).where, Whereabouts::kOutsideNccl);
  ASSERT_FALSE(a.CulpritPids().empty());
  EXPECT_EQ(a.CulpritPids().front(), 4005);
}

// On this machine the process can be looked at: one still running is not
// dead however silent (it is starved or stopped), one gone is, and says so.
TEST(DeadRuleTest, AProcessSeenRunningHereIsNotDeadAndOneSeenGoneIs) {
  const uint64_t now =
      static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  for (const bool running : {true, false}) {
    SCOPED_TRACE(running ? "running" : "gone");
    std::vector<ProcessSnapshot> procs = StuckWithLaggingHeartbeats({{4002, 60000 * 1000 * kUs}});
    for (ProcessSnapshot& p : procs) {
      if (p.pid != 4002) continue;
      p.host = analysis::ThisHost();
      p.pid = running ? getpid() : child;
      p.created_wall_ns = now;
      EXPECT_EQ(analysis::CheckLiveness(p),
                running ? analysis::Liveness::kRunning : analysis::Liveness::kGone);
    }
    Analyzed a(std::move(procs));
    const analysis::Finding* dead = a.First(FindingKind::kDeadRank);
    if (running) {
      EXPECT_EQ(dead, nullptr) << dead->summary;
    } else {
      ASSERT_NE(dead, nullptr);
      EXPECT_FALSE(dead->inferred);
      EXPECT_NE(dead->summary.find("gone (checked on this machine)"), std::string::npos)
          << dead->summary;
    }
    // Rank 5 stays a culprit either way (first when the other is not dead).
    const std::vector<int64_t> culprits = a.CulpritPids();
    EXPECT_NE(std::find(culprits.begin(), culprits.end(), 4005), culprits.end());
    if (running) {
      EXPECT_EQ(culprits, std::vector<int64_t>{4005});
    }
  }
}

// Whether a lagging_rank finding calls `pid` a skipper.
bool NamedSkipper(const Analyzed& a, int64_t pid) {
  for (const analysis::Finding& f : a.result.findings) {
    if (f.kind != FindingKind::kLaggingRank) continue;
    for (const analysis::RankNote& n : f.ranks) {
      if (n.skipped && a.Pid(n.process) == pid) return true;
    }
  }
  return false;
}

// Found by the sweep. dp0 = {0, 2}: rank 0 ran DP AllGather #1 with twice
// the count and rank 2 stopped before #2. Rank 2's one op after #0 equals
// rank 0's #2, but one op compared without a majority is no skip: the
// siblings (dp1) ran #1 as rank 2 did, so rank 0 is the odd one.
TEST(AnalyzerLimitsTest, TwoMemberMismatchThenTheOtherStopsIsNoSkip) {
  JobSpec spec;
  spec.nranks = 4;
  spec.tp = 2;
  spec.steps = 3;
  spec.fault = Fault::kMismatch;
  spec.rank = 0;
  spec.op = 4;  // DP AllGather of step 1
  spec.rank2 = 2;
  spec.op2 = 7;  // rank 2 stops before the DP AllGather of step 2
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kDesync);
  EXPECT_FALSE(NamedSkipper(a, 4002));
  const analysis::Finding* m = a.First(FindingKind::kMismatch);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->ranks.size(), 1u) << m->summary;
  EXPECT_EQ(a.Pid(m->ranks[0].process), 4000) << m->summary;
  EXPECT_EQ(m->tie_break, "siblings") << m->summary;
}

// Found by the sweep. TP=2 and the job hung at the first world op, so each
// TP comm holds its op #0 only: no op around it shows the siblings run the
// same schedule, yet 31 sibling comms of two ran #0 as rank 44 did.
TEST(AnalyzerLimitsTest, TwoMemberTieWithNoOpAroundIsBrokenBySiblings) {
  JobSpec spec;
  spec.nranks = 64;
  spec.tp = 2;
  spec.steps = 3;
  spec.fault = Fault::kMismatch;
  spec.rank = 45;
  spec.op = 0;  // TP AllReduce #0 of tp22 = {44, 45}
  spec.rank2 = 31;
  spec.op2 = 2;  // rank 31 never enqueues the world op #0
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kDesync);
  const analysis::Finding* m = a.First(FindingKind::kMismatch);
  ASSERT_NE(m, nullptr);
  ASSERT_EQ(m->ranks.size(), 1u) << m->summary;
  EXPECT_EQ(a.Pid(m->ranks[0].process), 4045) << m->summary;
  EXPECT_EQ(m->tie_break, "siblings") << m->summary;
  EXPECT_FALSE(m->contested);
  const std::vector<int64_t> culprits = a.CulpritPids();
  EXPECT_EQ(culprits, (std::vector<int64_t>{4045, 4031}));
}

// Found by the sweep. One comm of 4: rank 0 skipped op 3 (its #3 is the
// others' #4) and rank 1 stopped before op 4. The majority's first member
// (rank 1) lacks #4; the skip is read against a member that holds it.
TEST(AnalyzerLimitsTest, SkipIsComparedWithAMajorityMemberThatHoldsTheOps) {
  JobSpec spec;
  spec.nranks = 4;
  spec.tp = 0;
  spec.steps = 5;
  spec.count_period = 3;
  spec.fault = Fault::kSkipOp;
  spec.rank = 0;
  spec.op = 3;
  spec.rank2 = 1;
  spec.op2 = 4;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  EXPECT_EQ(a.First(FindingKind::kMismatch), nullptr);
  EXPECT_TRUE(NamedSkipper(a, 4000));
}

// Found by the sweep. Two ranks, counts repeating every 3 steps: rank 1
// skipped op 2, so its ops are rank 0's shifted by one, and rank 0's read
// as rank 1's shifted by two. The smaller shift is the skip.
TEST(AnalyzerLimitsTest, TwoMemberSkipInAPeriodicScheduleIsTheSmallerShift) {
  JobSpec spec;
  spec.nranks = 2;
  spec.tp = 0;
  spec.steps = 8;
  spec.count_period = 3;
  spec.fault = Fault::kSkipOp;
  spec.rank = 1;
  spec.op = 2;
  Analyzed a(MakeJob(spec));
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  EXPECT_EQ(a.First(FindingKind::kMismatch), nullptr);
  EXPECT_TRUE(NamedSkipper(a, 4001));
  EXPECT_FALSE(NamedSkipper(a, 4000));
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

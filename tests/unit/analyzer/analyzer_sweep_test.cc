// The randomized sweep: synthetic jobs of random shapes (2 to 32 ranks, TP
// of 1 to all ranks, so DP comms of one rank too, or no TP at all), one
// random fault each at a random rank and op, and in a third of them a
// second fault at once (another rank's world op #0 mismatched). Each case
// checks what the analysis must conclude whatever the shape. The seed is
// fixed, so a failure reproduces; FLIGHTREC_SWEEP_CASES sets the size
// (default 2,000: about a second, small enough for CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::FindingKind;
using analysis::Verdict;

int SweepCases() {
  const char* env = std::getenv("FLIGHTREC_SWEEP_CASES");
  const int n = env != nullptr ? std::atoi(env) : 0;
  return n > 0 ? n : 2000;
}

struct Case {
  JobSpec spec;
  int second = -1;  // rank whose world op #0 is also mismatched, -1: none
  std::string Describe() const {
    std::ostringstream os;
    os << "nranks " << spec.nranks << " tp " << spec.tp << " steps " << spec.steps << " fault "
       << static_cast<int>(spec.fault) << " rank " << spec.rank << " op " << spec.op << " step "
       << spec.step << " second " << second;
    return os.str();
  }
};

// Members of the comm that program position `op` of `rank` runs in.
int CommSizeAt(const JobSpec& s, int op) {
  if (s.tp <= 0) return s.nranks;
  switch (op % 3) {
    case 0:
      return s.tp;
    case 1:
      return s.nranks / s.tp;
    default:
      return s.nranks;
  }
}

Case RandomCase(std::mt19937* rng) {
  auto pick = [rng](int n) { return static_cast<int>((*rng)() % static_cast<unsigned>(n)); };
  Case c;
  JobSpec& s = c.spec;
  const int sizes[] = {2, 3, 4, 8, 16, 32};
  s.nranks = sizes[pick(6)];
  std::vector<int> tps = {0};
  for (int tp = 1; tp <= s.nranks; ++tp) {
    if (s.nranks % tp == 0) tps.push_back(tp);
  }
  s.tp = tps[pick(static_cast<int>(tps.size()))];
  s.steps = 3 + pick(5);
  s.rank = pick(s.nranks);
  const int ops = s.steps * (s.tp > 0 ? 3 : 1);
  s.op = pick(ops);
  s.step = pick(s.steps);
  const Fault faults[] = {Fault::kStuckBeforeOp, Fault::kMismatch, Fault::kKilled,
                          Fault::kMissingFile, Fault::kGpuHang};
  s.fault = faults[pick(5)];
  s.field = "count";
  if (s.fault == Fault::kMismatch) {
    // A comm of one member has nothing to disagree with: pick an op of a
    // comm of two or more (the world op always is one).
    while (CommSizeAt(s, s.op) < 2) s.op = pick(ops);
  }
  // A second fault: another rank's world op #0 mismatched, where a majority
  // can tell (3 or more ranks with a file) and every rank ran it (the first fault comes
  // after it).
  const int world_op0 = s.tp > 0 ? 2 : 0;
  // Not with a mismatch of a world op: only a comm's first differing op is
  // reported (docs/analyzer.md), so that one would hide the other.
  const bool world_mismatch = s.fault == Fault::kMismatch && (s.tp <= 0 || s.op % 3 == 2);
  if (s.nranks >= 4 && pick(3) == 0 && s.op > world_op0 && s.fault != Fault::kGpuHang &&
      !world_mismatch) {
    c.second = (s.rank + 1 + pick(s.nranks - 1)) % s.nranks;
  }
  return c;
}

std::vector<ProcessSnapshot> Build(const Case& c) {
  std::vector<ProcessSnapshot> procs = MakeJob(c.spec);
  if (c.second < 0) return procs;
  for (ProcessSnapshot& p : procs) {
    if (p.pid != 4000 + c.second) continue;
    for (OpRecord& r : p.comms[0].records) {
      if (r.op_index == 0) r.count *= 3;
    }
  }
  return procs;
}

bool Has(const std::vector<int64_t>& pids, int64_t pid) {
  return std::find(pids.begin(), pids.end(), pid) != pids.end();
}

void Check(const Case& c, const Analyzed& a) {
  const JobSpec& s = c.spec;
  const int64_t pid = 4000 + s.rank;
  const std::vector<int64_t> culprits = a.CulpritPids();
  std::string found;
  for (const analysis::Finding& f : a.result.findings) found += "\n  " + f.summary;
  const std::string why = c.Describe() + found;
  // A mismatch anywhere makes the verdict desync, whatever else hangs.
  const Verdict hang = c.second < 0 ? Verdict::kHang : Verdict::kDesync;
  EXPECT_TRUE(c.second < 0 || Has(culprits, 4000 + c.second)) << why;
  switch (s.fault) {
    case Fault::kStuckBeforeOp:
      EXPECT_EQ(a.result.verdict, hang) << why;
      EXPECT_TRUE(Has(culprits, pid)) << why;
      EXPECT_EQ(culprits.size(), c.second < 0 ? 1u : 2u) << why;
      break;
    case Fault::kKilled:
      EXPECT_EQ(a.result.verdict, hang) << why;
      EXPECT_TRUE(Has(culprits, pid)) << why;
      EXPECT_NE(a.First(FindingKind::kDeadRank), nullptr) << why;
      break;
    case Fault::kMissingFile:
      EXPECT_EQ(a.result.verdict, hang) << why;
      EXPECT_NE(a.First(FindingKind::kMissingRank), nullptr) << why;
      for (int64_t p : culprits) EXPECT_TRUE(p == -1 || p == 4000 + c.second) << why;
      break;
    case Fault::kGpuHang:
      EXPECT_EQ(a.result.verdict, Verdict::kHang) << why;
      EXPECT_NE(a.First(FindingKind::kAllStuck), nullptr) << why;
      EXPECT_EQ(a.First(FindingKind::kLaggingRank), nullptr) << why;
      EXPECT_TRUE(culprits.empty()) << why;
      break;
    case Fault::kMismatch: {
      EXPECT_EQ(a.result.verdict, Verdict::kDesync) << why;
      // A job of two ranks: the two-member comm has no sibling and nothing
      // outside it tells them apart, so nobody is blamed; in every other
      // shape a majority or the sibling comms name the rank.
      if (s.nranks == 2) {
        EXPECT_FALSE(Has(culprits, pid)) << why;
      } else {
        EXPECT_TRUE(Has(culprits, pid)) << why;
      }
      break;
    }
    default:
      break;
  }
}

TEST(AnalyzerSweepTest, RandomShapesAndFaults) {
  std::mt19937 rng(20261125);
  const int cases = SweepCases();
  const ::testing::TestResult* result =
      ::testing::UnitTest::GetInstance()->current_test_info()->result();
  int failed = 0;
  for (int i = 0; i < cases && failed < 5; ++i) {  // the first few say why
    const Case c = RandomCase(&rng);
    const int parts = result->total_part_count();
    Analyzed a(Build(c));
    Check(c, a);
    failed += result->total_part_count() > parts ? 1 : 0;
  }
  RecordProperty("cases", cases);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

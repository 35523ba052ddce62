// The randomized sweep: synthetic jobs of random shapes (2 to 64 ranks, TP
// of 1 to all ranks, so DP comms of one rank too, which record nothing, as
// in NCCL; or no TP at all), one random fault each at a random rank and op
// (stuck, skipped, mismatched, killed (before its first heartbeat when at
// op 0), missing file, GPU hang), a quarter of them on an op of a one-rank
// DP comm, and in a third of them a second fault at once: another rank's
// world op #0 mismatched, or another rank stuck at a later op. Each case
// checks what the analysis must conclude whatever the shape: the earliest
// cause is named, and nobody else is. The seed is fixed, so a failure
// reproduces; FLIGHTREC_SWEEP_CASES sets the size (default 3,000, about a
// second in a release build; scripts/test.sh runs 1,000 under sanitizers).
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
  return n > 0 ? n : 3000;
}

struct Case {
  JobSpec spec;
  int second = -1;  // rank whose world op #0 is also mismatched, -1: none
  std::string Describe() const {
    std::ostringstream os;
    os << "nranks " << spec.nranks << " tp " << spec.tp << " steps " << spec.steps << " fault "
       << static_cast<int>(spec.fault) << " rank " << spec.rank << " op " << spec.op << " step "
       << spec.step << " second " << second << " stuck2 " << spec.rank2 << " op2 " << spec.op2
       << " field " << spec.field << " api_level " << spec.api_level;
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
  const int sizes[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 64};
  s.nranks = sizes[pick(10)];
  std::vector<int> tps = {0};
  for (int tp = 1; tp <= s.nranks; ++tp) {
    if (s.nranks % tp == 0) tps.push_back(tp);
  }
  s.tp = tps[pick(static_cast<int>(tps.size()))];
  // A quarter of the cases: DP comms of one rank (TP = every rank), fault on a DP op.
  const bool one_rank_dp = pick(4) == 0;
  if (one_rank_dp) s.tp = s.nranks;
  s.steps = 3 + pick(5);
  s.rank = pick(s.nranks);
  const int ops = s.steps * (s.tp > 0 ? 3 : 1);
  s.op = pick(ops);
  if (one_rank_dp) s.op = 3 * pick(s.steps) + 1;
  s.step = pick(s.steps);
  const Fault faults[] = {Fault::kStuckBeforeOp, Fault::kMismatch, Fault::kKilled,
                          Fault::kMissingFile,   Fault::kGpuHang,  Fault::kSkipOp};
  s.fault = faults[pick(6)];
  s.field = "count";
  if (s.fault == Fault::kMismatch || s.fault == Fault::kSkipOp) {
    // A comm of one member has nothing to disagree with, and records
    // nothing to leave out: pick an op of a comm of two or more (the world
    // op always is one).
    while (CommSizeAt(s, s.op) < 2) s.op = pick(ops);
  }
  // Half the jobs record as a v5+ plugin does (AllGather/Broadcast in bytes,
  // the call's datatype from CollApi); half of their mismatches are then a
  // datatype of the same byte size, told apart by that datatype alone.
  // Derived from the draws above, so the sequence of cases stays the same.
  s.api_level = (s.rank + s.op) % 2 == 0;
  if (s.fault == Fault::kMismatch && s.api_level && (s.op + s.steps) % 2 == 0) {
    s.field = "datatype-same-bytes";
  }
  if (s.fault == Fault::kSkipOp) {
    // Counts vary by step, so the skipper's later ops are seen shifted; it
    // needs a later op on that comm to be blocked at or shifted by.
    s.count_period = 3 + pick(3);
    const int period = s.tp > 0 ? 3 : 1;
    if (s.op + period >= ops) s.op -= period * ((s.op + period - ops) / period + 1);
    if (s.op < 0 || CommSizeAt(s, s.op) < 2) s.fault = Fault::kStuckBeforeOp;
  }
  if (s.nranks < 4 || pick(3) != 0 || s.fault == Fault::kGpuHang) return c;
  const int other = (s.rank + 1 + pick(s.nranks - 1)) % s.nranks;
  if (pick(2) == 0) {
    // Another rank stuck outside NCCL at a later op than the first fault:
    // the first fault is the earliest cause; the second rank may be a
    // culprit of its own (it stopped before it waited) or a victim.
    if (s.op + 1 >= ops) return c;
    s.rank2 = other;
    s.op2 = s.op + 1 + pick(ops - s.op - 1);
    return c;
  }
  // Another rank's world op #0 mismatched, where a majority can tell (3 or
  // more ranks with a file) and every rank ran it (the first fault comes
  // after it). Not with a mismatch or skip of a world op: only a comm's
  // first differing op is reported (docs/analyzer.md), so that one would
  // hide the other.
  const int world_op0 = s.tp > 0 ? 2 : 0;
  const bool world_fault =
      (s.fault == Fault::kMismatch || s.fault == Fault::kSkipOp) && (s.tp <= 0 || s.op % 3 == 2);
  if (s.op > world_op0 && !world_fault) c.second = other;
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
  // Nobody is blamed but the faulty ranks (a rank with no file is pid -1).
  for (int64_t p : culprits) {
    const bool faulty = p == pid || p == 4000 + c.second || p == 4000 + s.rank2 ||
                        (p == -1 && s.fault == Fault::kMissingFile);
    EXPECT_TRUE(faulty) << "wrong culprit " << p << ": " << why;
  }
  switch (s.fault) {
    case Fault::kSkipOp:
      // The synthetic ranks enqueue an op only once their previous one is
      // done, so when the skipper blocks on another comm the others never
      // hold that op: its records then read exactly as a rank that swapped
      // the two ops' order (docs/analyzer.md, Skips), a deadlock that blames
      // nobody. Otherwise the skipper is named.
      if (a.First(FindingKind::kDeadlock) != nullptr && !Has(culprits, pid)) {
        EXPECT_EQ(a.result.verdict, hang) << why;
        break;
      }
      // Two ranks and one op compared: the skipper's one later op is also
      // the other's odd op read as a mismatch, and nothing outside the comm
      // tells which: a contested mismatch (desync, blaming nobody for it)
      // is right, beside the skipper named as the rank the other waits for.
      if (s.nranks == 2) {
        const analysis::Finding* m = a.First(FindingKind::kMismatch);
        EXPECT_TRUE(m == nullptr || m->contested) << why;
        EXPECT_TRUE(Has(culprits, pid) || m != nullptr) << why;
        break;
      }
      [[fallthrough]];
    case Fault::kStuckBeforeOp:
      EXPECT_EQ(a.result.verdict, hang) << why;
      if (s.fault == Fault::kSkipOp && s.rank2 >= 0) {
        // A skipper that then waits on the second stuck rank in a comm none
        // of the skipped op's other members reach reads as that rank's
        // victim (docs/analyzer.md, Skips): the stuck rank is named.
        EXPECT_FALSE(culprits.empty()) << why;
        break;
      }
      EXPECT_TRUE(Has(culprits, pid)) << why;
      if (s.rank2 < 0) {
        EXPECT_EQ(culprits.size(), c.second < 0 ? 1u : 2u) << why;
      }
      if (s.fault == Fault::kSkipOp) {
        EXPECT_EQ(a.First(FindingKind::kMismatch) != nullptr, c.second >= 0) << why;
      }
      break;
    case Fault::kKilled:
      EXPECT_EQ(a.result.verdict, hang) << why;
      EXPECT_TRUE(Has(culprits, pid)) << why;
      EXPECT_NE(a.First(FindingKind::kDeadRank), nullptr) << why;
      EXPECT_EQ(a.First(FindingKind::kMissingRank), nullptr) << why;
      break;
    case Fault::kMissingFile:
      EXPECT_EQ(a.result.verdict, hang) << why;
      EXPECT_NE(a.First(FindingKind::kMissingRank), nullptr) << why;
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
  RecordProperty("failed", failed);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

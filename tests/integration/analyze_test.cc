// Acceptance tests of `flightrec analyze` (issue 3): each scenario runs a
// real emulated job (flightrec-emu, one process per rank, the real plugin),
// then the CLI on its rings and dumps, and checks the JSON verdict
// (docs/report-schema.md) and the exit code. Communicators: world, TP and DP
// (8 ranks: --tp 4; 64 ranks: --tp 8; 8 ranks per node). The 8-rank layout is
// analyze_acceptance_test, the 64-rank one analyze_acceptance_large_test
// (too heavy for sanitizer builds); the scenarios are the same.
//
// Faulty ranks and op numbers differ per scenario and layout so the culprit
// sits at different places of the period-8 schedule (tests/emulator/README.md):
// i % 8 = 0 TP AllReduce, 1 TP AllGather, 2 DP ReduceScatter, 3 world
// AllReduce, 4 TP Broadcast, 5 TP {AllReduce, ReduceScatter}, 6 TP Send/Recv
// ring, 7 DP AllReduce.
//
// Hung jobs use a 2 s watchdog (NCCL_FLIGHTREC_TIMEOUT_S) and end once every
// rank could have dumped (--until-dumps) or after --hang-timeout-s; both are
// scaled by the machine's load (support/time_scale.h), so that a rank slowed
// down by a busy machine is not taken for a stuck one.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <ostream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

#ifndef FLIGHTREC_ACCEPTANCE_RANKS
#define FLIGHTREC_ACCEPTANCE_RANKS 8
#endif

namespace flightrec {
namespace itest {
namespace {

constexpr int kPeriod = 8;

struct Fault {
  int rank;
  int op;
};

// One layout and the faults its scenarios inject.
struct Layout {
  int ranks;
  int tp;
  Fault stuck;       // a TP op: its peers in other comms lag behind it too
  Fault skip_ahead;  // another op of that comm follows before it blocks
  Fault skip_world;  // it blocks in another comm first
  Fault skip_p2p;    // the Send/Recv ring
  Fault skip_call;   // one call of the grouped TP {ReduceScatter, AllReduce}
  Fault count;       // mismatch:field=count
  Fault datatype;    // mismatch:field=datatype
  Fault func;        // mismatch:field=func (never op % 8 == 6: no func)
  Fault kill;
  Fault gpu_hang;
  Fault slow;   // op unused
  int slow_us;  // a delay well above the job's time per op
  int slow_ops;
  Fault junk_stuck;  // the stuck job that scenario 8 adds junk to
};

const Layout kLayouts[] = {
    {8, 4,
     /*stuck*/ {6, 8 * 23 + 1},
     /*skip_ahead*/ {3, 8 * 17 + 4},
     /*skip_world*/ {2, 8 * 21 + 3},
     /*skip_p2p*/ {7, 8 * 9 + 6},
     /*skip_call*/ {5, 8 * 12 + 5},
     /*count*/ {1, 8 * 19 + 6},
     /*datatype*/ {5, 8 * 14 + 3},
     /*func*/ {7, 8 * 12 + 0},
     /*kill*/ {4, 8 * 16 + 5},
     /*gpu_hang*/ {6, 8 * 15 + 2},
     /*slow*/ {3, 0}, 40000, 50,  // 40 ms: well above a sanitizer build's op time
     /*junk_stuck*/ {2, 8 * 13 + 7}},
    {64, 8,
     /*stuck*/ {37, 8 * 26 + 5},
     /*skip_ahead*/ {50, 8 * 18 + 1},
     /*skip_world*/ {19, 8 * 22 + 2},
     /*skip_p2p*/ {44, 8 * 11 + 6},
     /*skip_call*/ {21, 8 * 14 + 5},
     /*count*/ {29, 8 * 16 + 7},
     /*datatype*/ {58, 8 * 13 + 5},
     /*func*/ {12, 8 * 20 + 4},
     /*kill*/ {45, 8 * 21 + 6},
     /*gpu_hang*/ {23, 8 * 17 + 3},
     /*slow*/ {41, 0}, 30000, 80,
     /*junk_stuck*/ {10, 8 * 15 + 0}},
};

// How gtest names the parameter in listings and failures.
void PrintTo(const Layout& l, std::ostream* os) {
  *os << l.ranks << " ranks, --tp " << l.tp << ", 8 per node";
}

std::string Spec(const std::string& kind, const Fault& f, const std::string& extra = "") {
  return "--fault " + kind + ":rank=" + std::to_string(f.rank) + ":op=" + std::to_string(f.op) +
         extra;
}

class AnalyzeAcceptance : public ::testing::TestWithParam<Layout> {
 protected:
  const Layout& L() const { return GetParam(); }

  std::string Base(int ops) const {
    return "--ranks " + std::to_string(L().ranks) + " --tp " + std::to_string(L().tp) +
           " --ranks-per-node 8 --ops " + std::to_string(ops) + " --step-us 20";
  }

  // A job that hangs at `f.op`: it ends once `dumps` dump files exist (every
  // live rank seals one within the watchdog timeout plus a poll), bounded.
  EmuJob Hang(const std::string& tag, const std::string& fault, int op, int dumps) {
    return Run(tag,
               Base(op + 48) + " " + fault + " --until-dumps " + std::to_string(dumps) +
                   " --hang-timeout-s " + testing::ScaledSecondsText(20),
               4);
  }

  EmuJob Run(const std::string& tag, const std::string& args, int expected_status,
             int ring_records = 1024) {
    EmuJob job;
    {
      JobSlot slot(L().ranks);
      job = RunEmu(tag + std::to_string(L().ranks), args,
                   {{"NCCL_FLIGHTREC_TIMEOUT_S", testing::ScaledSecondsText(2)},
                    {"NCCL_FLIGHTREC_MAX_COMMS", "4"},
                    {"NCCL_FLIGHTREC_RECORDS", std::to_string(ring_records)},
                    // These tests run `flightrec analyze` themselves and count
                    // the files it reads and rejects (verdict_test covers the
                    // in-job verdict).
                    {"NCCL_FLIGHTREC_VERDICT", "0"}});
    }
    dirs_.push_back(job.dir);
    EXPECT_EQ(job.status, expected_status) << "flightrec-emu " << args << " in " << job.dir << "\n"
                                           << job.summary.dump(1).substr(0, 3000);
    return job;
  }

  AnalyzeRun Analyze(const std::vector<std::string>& paths) {
    AnalyzeRun run = RunAnalyze(paths);
    EXPECT_TRUE(run.report.is_object()) << run.output.substr(0, 2000);
    if (run.report.is_object()) {
      EXPECT_EQ(run.report.value("schema", ""), "flightrec.report/1");
      EXPECT_EQ(run.report.value("exit_code", -1), run.exit_code) << "JSON vs CLI exit code";
    }
    return run;
  }

  void TearDown() override {
    // Keep the files of a failed scenario for a look; drop the rest.
    if (HasFailure()) {
      for (const std::string& d : dirs_) std::printf("kept %s\n", d.c_str());
      return;
    }
    for (const std::string& d : dirs_) RunShell("rm -rf '" + d + "'");
  }

  // The single culprit is world rank `rank`, and the first finding (the
  // headline) is a root cause naming it.
  void ExpectCulprit(const AnalyzeRun& run, int rank) {
    EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{rank}) << Describe(run);
    ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
    const auto& top = run.report["findings"][0];
    EXPECT_TRUE(top.value("root_cause", false)) << Describe(run);
    ASSERT_FALSE(top["processes"].empty());
    EXPECT_EQ(WorldRank(top["processes"][0]), rank) << Describe(run);
  }

  void ExpectHang(const AnalyzeRun& run) {
    EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
    EXPECT_EQ(run.exit_code, 1) << Describe(run);
  }

  // A hang whose headline is world rank `rank`, lagging outside NCCL.
  void ExpectStuckOutsideNccl(const AnalyzeRun& run, int rank) {
    ExpectHang(run);
    ExpectCulprit(run, rank);
    const auto& top = run.report["findings"][0];
    EXPECT_EQ(top.value("kind", ""), "lagging_rank") << Describe(run);
    EXPECT_EQ(top["details"][0].value("where", ""), "outside_nccl") << Describe(run);
    EXPECT_GE(top["details"][0].value("behind", 0), 1) << Describe(run);
  }

  // Scenario 2: the skipper is reported lagging, `behind` ops behind, as a
  // skip; it is the only culprit and no field mismatch is claimed.
  void ExpectSkip(const AnalyzeRun& run, int rank, int behind) {
    ExpectHang(run);
    EXPECT_TRUE(FindingsOf(run.report, "mismatch").empty()) << Describe(run);
    ExpectCulprit(run, rank);
    const auto& top = run.report["findings"][0];
    EXPECT_EQ(top.value("kind", ""), "lagging_rank") << Describe(run);
    ASSERT_FALSE(top["details"].empty());
    EXPECT_EQ(top["details"][0].value("behind", 0), behind) << Describe(run);
    EXPECT_TRUE(top["details"][0].value("skipped", false)) << Describe(run);
  }

  // Scenario 3: rank f.rank enqueues op f.op with another `field`; the run
  // completes (the emulator pairs launches by order, as NCCL does).
  void CheckMismatch(const std::string& field, const Fault& f) {
    EmuJob job = Run(field,
                     Base(f.op + 24) + " " + Spec("mismatch", f, ":field=" + field) +
                         " --hang-timeout-s " + testing::ScaledSecondsText(20),
                     0);
    ExpectMismatch(Analyze({job.ring_dir}), f.rank, field);
  }

  // A field mismatch names the rank (alone: every comm used here has a
  // majority) and the field.
  void ExpectMismatch(const AnalyzeRun& run, int rank, const std::string& field) {
    EXPECT_EQ(run.report.value("verdict", ""), "desync") << Describe(run);
    EXPECT_EQ(run.exit_code, 1);
    ExpectCulprit(run, rank);
    ASSERT_TRUE(run.report.contains("findings") && !run.report["findings"].empty())
        << Describe(run);
    const auto& top = run.report["findings"][0];
    EXPECT_EQ(top.value("kind", ""), "mismatch") << Describe(run);
    ASSERT_EQ(top["processes"].size(), 1u) << Describe(run);
    std::vector<std::string> fields = top.value("fields", std::vector<std::string>{});
    if (field == "count" && top["op"].is_object() && top["op"].contains("peer")) {
      // A Send/Recv pair compares sizes in bytes when both sides know them.
      EXPECT_TRUE(std::count(fields.begin(), fields.end(), "bytes") +
                      std::count(fields.begin(), fields.end(), "count") ==
                  1)
          << Describe(run);
    } else {
      EXPECT_EQ(std::count(fields.begin(), fields.end(), field), 1) << Describe(run);
    }
    for (const char* kind : {"lagging_rank", "all_stuck", "dead_rank", "deadlock"}) {
      EXPECT_TRUE(FindingsOf(run.report, kind).empty()) << kind << "\n" << Describe(run);
    }
  }

  std::vector<std::string> dirs_;
};

// Collectives (or Send/Recv pairs) op i makes a rank leave out when skipped.
int OpsInOp(int i) { return i % kPeriod == 5 ? 2 : 1; }

// 1. Stuck outside NCCL before op N: lagging_rank names it outside NCCL, and
// the culprits hold that process alone even though its peers in other
// communicators lag behind it too (they are victims inside NCCL).
TEST_P(AnalyzeAcceptance, StuckRankIsTheOnlyCulprit) {
  const Fault f = L().stuck;
  EmuJob job = Hang("stuck", Spec("stuck", f), f.op, L().ranks);
  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectStuckOutsideNccl(run, f.rank);
  int victims = 0;
  for (const auto& l : FindingsOf(run.report, "lagging_rank")) {
    if (Names(l, f.rank)) {
      EXPECT_TRUE(l.value("root_cause", false)) << l.value("summary", "");
      continue;
    }
    EXPECT_FALSE(l.value("root_cause", true)) << l.value("summary", "");
    for (const auto& d : l["details"]) EXPECT_EQ(d.value("where", ""), "inside_nccl");
    ++victims;
  }
  EXPECT_GT(victims, 0) << "no peer lagged in another comm: pick a TP op\n" << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "deadlock").empty()) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "all_stuck").empty()) << Describe(run);
}

// 1b. The same on NCCL 2.31 (profiler API v7), whose calls carry a user
// tag: the emulator tags each op with its step (op / 8 + 1), as a framework
// would, and the report names it with the op the job waits on.
TEST_P(AnalyzeAcceptance, StuckRankOnApiV7NamesTheStepFromTheUserTag) {
  const Fault f = L().stuck;
  EmuJob job = Hang("stuck-v7", Spec("stuck", f) + " --nccl-version 2.31", f.op, L().ranks);
  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectStuckOutsideNccl(run, f.rank);
  const auto& top = run.report["findings"][0];
  const uint64_t step = static_cast<uint64_t>(f.op / kPeriod + 1);
  EXPECT_EQ(top["op"].value("user_tag", uint64_t{0}), step) << Describe(run);
  EXPECT_NE(run.report.value("headline", "").find("(user tag " + std::to_string(step) + ")"),
            std::string::npos)
      << Describe(run);
}

// 2. Skips op N and runs on. Three shapes: its next op on that comm follows
// (its records are the others' shifted), it blocks in the world comm first,
// and it skips its Send/Recv.
TEST_P(AnalyzeAcceptance, SkippedOpWithMoreOnThatComm) {
  const Fault f = L().skip_ahead;
  EmuJob job = Hang("skip-ahead", Spec("skip", f), f.op, L().ranks);
  ExpectSkip(Analyze({job.ring_dir}), f.rank, OpsInOp(f.op));
}

TEST_P(AnalyzeAcceptance, SkippedOpThenBlockedElsewhere) {
  const Fault f = L().skip_world;
  EmuJob job = Hang("skip-world", Spec("skip", f), f.op, L().ranks);
  ExpectSkip(Analyze({job.ring_dir}), f.rank, OpsInOp(f.op));
}

TEST_P(AnalyzeAcceptance, SkippedSendRecv) {
  const Fault f = L().skip_p2p;
  ASSERT_EQ(f.op % kPeriod, 6);
  EmuJob job = Hang("skip-p2p", Spec("skip", f), f.op, L().ranks);
  ExpectSkip(Analyze({job.ring_dir}), f.rank, 1);
}

// 2a. Leaves one call out of a group of two collectives (op % 8 == 5) and
// goes on: one collective skipped, not the group's two. One call per layout:
// the small ReduceScatter (call 0, launched second) at 8 ranks, the large
// AllReduce (call 1, launched first) at 64.
TEST_P(AnalyzeAcceptance, OneCallLeftOutOfAGroupIsOneOpSkipped) {
  const Fault f = L().skip_call;
  ASSERT_EQ(f.op % kPeriod, 5);
  const std::string call = L().ranks > 8 ? "1" : "0";
  EmuJob job = Hang("skip-call" + call, Spec("skip", f, ":call=" + call), f.op, L().ranks);
  ExpectSkip(Analyze({job.ring_dir}), f.rank, 1);
}

// 3. A field mismatch: the run completes (the emulator pairs launches by
// order, as NCCL does), the verdict is desync.
TEST_P(AnalyzeAcceptance, CountMismatch) { CheckMismatch("count", L().count); }

TEST_P(AnalyzeAcceptance, DatatypeMismatch) { CheckMismatch("datatype", L().datatype); }

TEST_P(AnalyzeAcceptance, FuncMismatch) {
  ASSERT_NE(L().func.op % kPeriod, 6);
  CheckMismatch("func", L().func);
}

// 3c. The TP AllGather called with another datatype of the same byte size
// (float32 with half the count where the others pass bfloat16): NCCL's Coll
// event, in bytes as int8, is the same on every rank; the CollApi event's
// datatype (Record::api_datatype) tells the rank apart, and the finding
// says `datatype`, not `count`, with both values.
TEST_P(AnalyzeAcceptance, SameBytesDatatypeMismatchOnAllGatherIsADatatypeMismatch) {
  const Fault f{L().datatype.rank, 8 * 11 + 1};
  ASSERT_EQ(f.op % kPeriod, 1);  // the TP AllGather, bfloat16
  EmuJob job = Run("dtype-bytes",
                   Base(f.op + 24) + " " + Spec("mismatch", f, ":field=datatype-same-bytes") +
                       " --hang-timeout-s " + testing::ScaledSecondsText(20),
                   0);
  const AnalyzeRun run = Analyze({job.ring_dir});
  ExpectMismatch(run, f.rank, "datatype");
  ASSERT_FALSE(run.report["findings"].empty());
  const auto& top = run.report["findings"][0];
  const std::vector<std::string> fields = top.value("fields", std::vector<std::string>{});
  EXPECT_EQ(fields, std::vector<std::string>{"datatype"}) << Describe(run);
  const std::string summary = top.value("summary", "");
  EXPECT_NE(summary.find("datatype ncclFloat32 where " + std::to_string(L().tp - 1) + " of " +
                         std::to_string(L().tp) + " ranks used ncclBfloat16"),
            std::string::npos)
      << Describe(run);
  EXPECT_EQ(top["op"].value("func", ""), "AllGather") << Describe(run);
}

// 3a. TP=2: every TP comm has two members, so the TP comm itself has no
// majority. Its sibling TP comms, running the same ops, name the odd rank.
TEST_P(AnalyzeAcceptance, CountMismatchOnATwoRankTpCommNamesTheOddRank) {
  const Fault f{L().count.rank, 8 * 19 + 0};  // a TP AllReduce
  ASSERT_EQ(f.op % kPeriod, 0);
  EmuJob job = Run("tp2-count",
                   "--ranks " + std::to_string(L().ranks) + " --tp 2 --ranks-per-node 8 --ops " +
                       std::to_string(f.op + 24) + " --step-us 20 " +
                       Spec("mismatch", f, ":field=count") + " --hang-timeout-s 20",
                   0);
  const AnalyzeRun run = Analyze({job.ring_dir});
  ExpectMismatch(run, f.rank, "count");
  ASSERT_FALSE(run.report["findings"].empty());
  EXPECT_EQ(run.report["findings"][0].value("tie_break", ""), "siblings") << Describe(run);
}

// 3b. A run longer than the analysis window (analyze keeps each file's
// newest 1,024 records in full by default, docs/analyzer.md): a mismatch
// 1,200 ops before the end is found by the default, windowed load as by a
// whole one, and the report says the load was windowed. The count fault is
// a Send/Recv at 8 ranks (older p2p records stay while a file is within its
// memory share) and a DP collective at 64 (compared through signatures).
TEST_P(AnalyzeAcceptance, OldMismatchInALongRunIsFoundThroughTheWindow) {
  const Fault f = L().count;
  EmuJob job = Run("long-count",
                   Base(f.op + 1200) + " " + Spec("mismatch", f, ":field=count") +
                       " --hang-timeout-s " + testing::ScaledSecondsText(120),
                   0, 4096);  // rings that do not wrap: the whole load sees every op
  const AnalyzeRun windowed = Analyze({job.ring_dir});
  const AnalyzeRun whole = RunAnalyze({job.ring_dir}, "--window 0 --record-memory 0");
  ExpectMismatch(windowed, f.rank, "count");
  ExpectMismatch(whole, f.rank, "count");
  EXPECT_EQ(windowed.report.value("headline", ""), whole.report.value("headline", ""));
  ASSERT_EQ(windowed.report["findings"].size(), whole.report["findings"].size());
  for (size_t i = 0; i < whole.report["findings"].size(); ++i) {
    EXPECT_EQ(windowed.report["findings"][i].value("summary", ""),
              whole.report["findings"][i].value("summary", ""));
  }
  EXPECT_EQ(CulpritWorldRanks(windowed.report), CulpritWorldRanks(whole.report));
  const std::string notes = windowed.report["notes"].dump();
  EXPECT_NE(notes.find("--window"), std::string::npos) << notes;
  EXPECT_EQ(whole.report["notes"].dump().find("--window"), std::string::npos);
}

// 4. SIGKILLed at op N: dead_rank. Without its files: missing_rank, once,
// and the culprit is the rank with no file.
TEST_P(AnalyzeAcceptance, KilledRankIsDeadThenMissing) {
  const Fault f = L().kill;
  EmuJob job = Hang("kill", Spec("kill", f), f.op, L().ranks - 1);
  AnalyzeRun dead = Analyze({job.ring_dir});
  ExpectHang(dead);
  ExpectCulprit(dead, f.rank);
  const auto deads = FindingsOf(dead.report, "dead_rank");
  ASSERT_EQ(deads.size(), 1u) << Describe(dead);
  EXPECT_TRUE(Names(deads[0], f.rank)) << Describe(dead);
  EXPECT_TRUE(deads[0].value("root_cause", false)) << Describe(dead);
  EXPECT_EQ(dead.report["findings"][0].value("kind", ""), "dead_rank") << Describe(dead);
  for (const auto& l : FindingsOf(dead.report, "lagging_rank")) {
    EXPECT_FALSE(Names(l, f.rank)) << "the dead rank is not also lagging\n" << Describe(dead);
  }

  // Its ring (and any dump) deleted: found by pid in the launcher summary.
  int pid = -1;
  for (const auto& r : job.summary["ranks"]) {
    if (r.value("rank", -1) == f.rank) pid = r.value("pid", -1);
  }
  ASSERT_GT(pid, 0) << job.summary.dump(1).substr(0, 2000);
  int removed = 0;
  for (const char* suffix : {".ring", ".frdump"}) {
    for (const std::string& p : ListFiles(job.ring_dir, suffix)) {
      const std::string tag = "-" + std::to_string(pid);
      const size_t at = p.rfind(tag);
      if (at == std::string::npos) continue;
      const char next = p[at + tag.size()];
      if (next != '.' && next != '-') continue;
      ASSERT_EQ(std::remove(p.c_str()), 0) << p;
      ++removed;
    }
  }
  ASSERT_GE(removed, 1);
  AnalyzeRun missing = Analyze({job.ring_dir});
  ExpectHang(missing);
  const auto miss = FindingsOf(missing.report, "missing_rank");
  ASSERT_EQ(miss.size(), 1u) << "one process, named once\n" << Describe(missing);
  ASSERT_EQ(miss[0]["processes"].size(), 1u) << Describe(missing);
  EXPECT_TRUE(miss[0]["processes"][0]["pid"].is_null());
  EXPECT_EQ(WorldRank(miss[0]["processes"][0]), f.rank) << Describe(missing);
  EXPECT_TRUE(miss[0].value("root_cause", false)) << Describe(missing);
  EXPECT_EQ(missing.report["findings"][0].value("kind", ""), "missing_rank") << Describe(missing);
  ASSERT_EQ(missing.report["culprits"].size(), 1u) << Describe(missing);
  EXPECT_TRUE(missing.report["culprits"][0]["pid"].is_null());
  EXPECT_EQ(CulpritWorldRanks(missing.report), std::vector<int>{f.rank}) << Describe(missing);
  EXPECT_TRUE(FindingsOf(missing.report, "dead_rank").empty()) << Describe(missing);
}

// 4a. SIGKILLed right after init, before its first op and before its
// watchdog's first heartbeat (the first beat comes one poll, 500 ms, after
// init): dead_rank from its last writes (creation, comm inits), the one
// culprit, never lagging or missing.
TEST_P(AnalyzeAcceptance, KilledBeforeItsFirstHeartbeatIsDead) {
  const Fault f{L().kill.rank, 0};
  EmuJob job = Hang("kill-first", Spec("kill", f), f.op, L().ranks - 1);
  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectHang(run);
  ExpectCulprit(run, f.rank);
  const auto deads = FindingsOf(run.report, "dead_rank");
  ASSERT_EQ(deads.size(), 1u) << Describe(run);
  EXPECT_TRUE(Names(deads[0], f.rank)) << Describe(run);
  EXPECT_TRUE(deads[0].value("root_cause", false)) << Describe(run);
  EXPECT_NE(deads[0].value("summary", "").find("never wrote a heartbeat"), std::string::npos)
      << Describe(run);
  EXPECT_EQ(run.report["findings"][0].value("kind", ""), "dead_rank") << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "missing_rank").empty()) << Describe(run);
  for (const auto& l : FindingsOf(run.report, "lagging_rank")) {
    EXPECT_FALSE(Names(l, f.rank)) << "the dead rank is not also lagging\n" << Describe(run);
  }
}

// 5. The kernel of op N starts everywhere and never ends on rank R: every
// member is inside it, none finished. all_stuck, never a laggard, and no
// process to blame.
TEST_P(AnalyzeAcceptance, GpuHangIsAllStuck) {
  const Fault f = L().gpu_hang;
  EmuJob job = Hang("gpu-hang", Spec("gpu-hang", f), f.op, L().ranks);
  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectHang(run);
  const auto stuck = FindingsOf(run.report, "all_stuck");
  ASSERT_FALSE(stuck.empty()) << Describe(run);
  EXPECT_TRUE(std::any_of(stuck.begin(), stuck.end(), [&](const nlohmann::json& s) {
    return Names(s, f.rank);
  })) << Describe(run);
  EXPECT_EQ(run.report["findings"][0].value("kind", ""), "all_stuck") << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "lagging_rank").empty()) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
  // Every kernel started and spins: the records single out no rank, so
  // none is named (naming the last GPU start sent the reader to a wrong host).
  const std::string summary = run.report["findings"][0].value("summary", "");
  EXPECT_NE(summary.find("single out no rank"), std::string::npos) << summary;
  EXPECT_EQ(summary.find(" pid "), std::string::npos) << summary;
}

// 5b. Both hangs inside CUDA-graph replays (docs/design/nccl.md §CUDA graphs): a replayed
// op's Group/Coll events come from the stream's host callback, parented by
// the capture's long-stopped API handles. The verdicts must not change.
std::string GraphArgs(const Layout& l) {
  return "--ranks " + std::to_string(l.ranks) + " --tp " + std::to_string(l.tp) +
         " --ranks-per-node 8 --ops 16 --graph-replays 60 --step-us 20 --until-dumps " +
         std::to_string(l.ranks) + " --hang-timeout-s " + testing::ScaledSecondsText(20) + " ";
}

TEST_P(AnalyzeAcceptance, StuckBeforeAGraphReplayIsTheOnlyCulprit) {
  const Fault f{L().stuck.rank, 16 + 8 * 20 + L().stuck.op % 8};
  EmuJob job = Run("graph-stuck", GraphArgs(L()) + Spec("stuck", f), 4);
  ExpectStuckOutsideNccl(Analyze({job.ring_dir}), f.rank);
}

TEST_P(AnalyzeAcceptance, GpuHangInAGraphReplayIsAllStuck) {
  const Fault f{L().gpu_hang.rank, 16 + 8 * 25 + L().gpu_hang.op % 8};
  EmuJob job = Run("graph-gpu-hang", GraphArgs(L()) + Spec("gpu-hang", f), 4);
  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectHang(run);
  EXPECT_EQ(run.report["findings"][0].value("kind", ""), "all_stuck") << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "lagging_rank").empty()) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
}

// 6. Rank R sleeps before every op of a run that completes: slow, R the top
// straggler, no hang finding.
TEST_P(AnalyzeAcceptance, SlowRankIsTheTopStraggler) {
  const Fault f = L().slow;
  EmuJob job = Run("slow",
                   Base(L().slow_ops) + " --fault slow:rank=" + std::to_string(f.rank) +
                       ":us=" + std::to_string(L().slow_us) + " --hang-timeout-s " +
                       testing::ScaledSecondsText(30),
                   0);
  AnalyzeRun run = Analyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "slow") << Describe(run);
  EXPECT_EQ(run.exit_code, 1);
  ExpectCulprit(run, f.rank);
  ASSERT_FALSE(run.report["findings"].empty());
  for (const auto& s : run.report["findings"]) {
    EXPECT_EQ(s.value("kind", ""), "straggler") << Describe(run);
    ASSERT_FALSE(s["processes"].empty());
    EXPECT_EQ(WorldRank(s["processes"][0]), f.rank) << Describe(run);
  }
}

// 7. A clean run: healthy, exit 0, nothing found, nothing rejected.
TEST_P(AnalyzeAcceptance, HealthyRunIsHealthy) {
  EmuJob job = Run(
      "healthy",
      Base(L().ranks == 8 ? 400 : 160) + " --hang-timeout-s " + testing::ScaledSecondsText(30), 0);
  AnalyzeRun run = Analyze({job.ring_dir});
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(run.report["findings"].empty()) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
  EXPECT_TRUE(run.report["inputs"]["rejected"].empty()) << run.report["inputs"].dump(1);
  EXPECT_EQ(run.report["inputs"]["read"].size(), static_cast<size_t>(L().ranks));
}

// 8. The stuck scenario's directory plus a truncated ring, a random file and
// a dump of another job: each is listed as rejected with its reason, and
// the culprit is still named.
TEST_P(AnalyzeAcceptance, BadFilesAreRejectedAndTheCulpritStillNamed) {
  const Fault f = L().junk_stuck;
  EmuJob job = Hang("junk", Spec("stuck", f), f.op, L().ranks);
  // A small job with another id, dumping at exit.
  EmuJob other = Run("other",
                     "--ranks 2 --tp 2 --ranks-per-node 8 --ops 40 --step-us 20 "
                     "--job-id another-job --hang-timeout-s " +
                         testing::ScaledSecondsText(20),
                     0);
  const std::vector<std::string> other_dumps = ListFiles(other.ring_dir, ".frdump");
  ASSERT_FALSE(other_dumps.empty()) << other.ring_dir;
  const std::string foreign = job.ring_dir + "/foreign.frdump";
  ASSERT_EQ(RunShell("cp '" + other_dumps[0] + "' '" + foreign + "'"), 0);

  const std::vector<std::string> rings = ListFiles(job.ring_dir, ".ring");
  ASSERT_FALSE(rings.empty());
  const std::string truncated = job.ring_dir + "/truncated.ring";
  {
    const std::string whole = ReadText(rings[0]);
    ASSERT_GT(whole.size(), 8192u);
    std::ofstream(truncated, std::ios::binary) << whole.substr(0, whole.size() / 3);
  }
  const std::string random = job.ring_dir + "/random.bin";
  {
    std::mt19937 rng(20250822);
    std::string bytes(4096, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() & 0xff);
    std::ofstream(random, std::ios::binary) << bytes;
  }

  AnalyzeRun run = Analyze({job.ring_dir});
  ExpectHang(run);
  ExpectCulprit(run, f.rank);
  std::map<std::string, std::string> rejected;
  for (const auto& r : run.report["inputs"]["rejected"]) {
    rejected[r.value("path", "")] = r.value("reason", "");
  }
  EXPECT_EQ(rejected.size(), 3u) << run.report["inputs"]["rejected"].dump(1);
  ASSERT_TRUE(rejected.count(truncated)) << run.report["inputs"]["rejected"].dump(1);
  EXPECT_NE(rejected[truncated].find("truncated"), std::string::npos) << rejected[truncated];
  ASSERT_TRUE(rejected.count(random)) << run.report["inputs"]["rejected"].dump(1);
  EXPECT_NE(rejected[random].find("not a flightrec"), std::string::npos) << rejected[random];
  ASSERT_TRUE(rejected.count(foreign)) << run.report["inputs"]["rejected"].dump(1);
  EXPECT_NE(rejected[foreign].find("foreign job id 'another-job'"), std::string::npos)
      << rejected[foreign];
  for (const auto& p : run.report["inputs"]["read"]) {
    EXPECT_EQ(rejected.count(p.get<std::string>()), 0u) << p;
  }
}

std::vector<Layout> Selected() {
  std::vector<Layout> out;
  for (const Layout& l : kLayouts) {
    if (l.ranks == FLIGHTREC_ACCEPTANCE_RANKS) out.push_back(l);
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Layouts, AnalyzeAcceptance, ::testing::ValuesIn(Selected()),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::to_string(info.param.ranks) + "ranks_tp" +
                                  std::to_string(info.param.tp);
                         });

}  // namespace
}  // namespace itest
}  // namespace flightrec

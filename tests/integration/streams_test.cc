// GPU streams per communicator end to end (flightrec-emu --streams comm,
// tests/emulator/README.md): each comm's launches run on a stream of their
// own, as PyTorch runs each process group, so an op of one comm runs on the
// GPU while the host enqueues the next op on another. 8 ranks, --tp 4
// (tp0 = 0-3, tp1 = 4-7, dp<g> = {g, g+4}, world), every DP op some ms
// longer on every rank (slow-link:comm=dp: a long gradient AllReduce), so
// the DP stream is busy while TP ops run:
//  * the records' GPU times show ops of different comms overlapping on one
//    rank with --streams comm, and never with --streams rank;
//  * rank 3's host pauses 3 ms before every TP op (slow:comm=tp), DP ops
//    4 ms longer: with --streams comm its TP kernels start when it enqueues
//    them, its tp0 peers wait for it, often while its DP op still runs on
//    the GPU, and `flightrec analyze` names it, CPU-side, on tp0 only, and
//    none of its tp0 peers (analyzer/model/straggler.cc, GapClock);
//  * with --streams rank and DP ops 8 ms longer, the same pause ends before
//    its own stream is free: its TP kernels start when they would have
//    anyway, nobody waits and nobody is named;
//  * a healthy --streams comm job names nobody;
//  * copy-engine collectives (--ce, fake CUDA): a CE op's events complete
//    once its own comm's stream finished it: after rank 5's DP op hangs on
//    the GPU its later CE AllGather on tp1 completes with --streams comm,
//    not with --streams rank; when the CE op itself hangs it stays
//    unfinished while the DP op before it (another stream) completes;
//  * --on-hang shrink after a rank died: the abort flag drains every
//    stream, and the shrunk world runs on a stream of its own;
//  * CUDA graphs (--graph-replays): each comm's captured ops replay on its
//    own stream, so a replay's ops of different comms overlap, and a replay
//    starts once the one before finished on every stream; every replayed op
//    completes on every rank; a GPU hang in a replayed DP op leaves the
//    replay's TP and world ops to finish on their streams, the next replay
//    never starts, and the analyzer calls dp1 all stuck; a rank stuck before
//    a graph launch is the verdict's culprit; a GPU-side straggler on TP
//    (gpu-slow:comm=tp) delays its replayed TP ops, not its DP branch.
// DP ops 8 ms longer with --streams comm would make the DP stream the
// bottleneck: DP ops then end at any point of rank 3's pauses, and the
// analyzer measures a host gap from the latest end of an earlier op (a host
// may have waited for it), so some pauses look short. The pauses and the
// longer DP ops are times the machine's TimeScale (PauseScale).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "emulator/src/schedule.h"
#include "emulator/src/topology.h"
#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/emu_job_fixture.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kSlowRank = 3;  // tp0 rank 3, dp3 rank 0

// Rank 3's host pause before every TP op, `us` long.
std::string Pause(int us) { return " --fault slow:rank=3:us=" + std::to_string(us) + ":comm=tp"; }

// The pause scenarios' durations (3 ms pauses, DP ops 4 or 8 ms longer) times
// the machine's TimeScale: a loaded machine wakes a process ms late, and
// its emulated DP ops end that much later, at any point of a 3 ms pause
// (the host gap then looks short). Scaled together, each scenario keeps
// the ratio it needs and the pause stands above the scheduling noise.
struct PauseScale {
  const double k = testing::TimeScale();
  int operator()(int us) const { return static_cast<int>(us * k); }
};

// `dp_us`: how much longer every DP op takes.
std::string Args(const std::string& streams, int ops, int dp_us, const std::string& extra = "") {
  return "--ranks 8 --tp 4 --ranks-per-node 8 --step-us 200 --streams " + streams + " --ops " +
         std::to_string(ops) + " --fault slow-link:comm=dp:us=" + std::to_string(dp_us) +
         " --hang-timeout-s " + testing::ScaledSecondsText(60) + extra;
}

class StreamsJob : public ::testing::Test {
 protected:
  EmuJob Run(const std::string& tag, const std::string& args) {
    EmuJob job;
    {
      JobSlot slot;
      job =
          RunEmu(tag, args, {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"}, {"NCCL_FLIGHTREC_VERDICT", "0"}});
    }
    dirs_.push_back(job.dir);
    EXPECT_EQ(job.status, 0) << "flightrec-emu " << args << " in " << job.dir << "\n"
                             << job.stderr_text.substr(0, 2000);
    return job;
  }

  AnalyzeRun Analyze(const EmuJob& job) {
    AnalyzeRun run = RunAnalyze({job.ring_dir});
    EXPECT_TRUE(run.report.is_object()) << run.output.substr(0, 2000);
    return run;
  }

  void TearDown() override {
    if (HasFailure()) return;  // keep the files of a failed scenario
    for (const std::string& d : dirs_) RunShell("rm -rf '" + d + "'");
  }

  std::vector<std::string> dirs_;
};

struct Interval {
  std::string comm;
  uint64_t start, end;
};

// Per rank file: pairs of GPU intervals of different comms overlapping by
// more than 100 us (tasks of one launch are 40 ns apart, launches of one
// stream follow each other).
std::vector<int> OverlapsPerRank(const EmuJob& job) {
  std::vector<int> out;
  for (const std::string& path : ListFiles(job.ring_dir, ".frdump")) {
    const FileView v = ReadFileView(path);
    EXPECT_TRUE(v.ok) << v.error;
    std::vector<Interval> ops;
    for (const CommView& c : v.comms) {
      for (const RecView& r : c.records) {
        if (r.gpu_start_ns != 0 && r.gpu_end_ns > r.gpu_start_ns) {
          ops.push_back({c.name, r.gpu_start_ns, r.gpu_end_ns});
        }
      }
    }
    EXPECT_GT(ops.size(), 50u) << path;
    int overlaps = 0;
    for (size_t a = 0; a < ops.size(); ++a) {
      for (size_t b = a + 1; b < ops.size(); ++b) {
        if (ops[a].comm == ops[b].comm) continue;
        const uint64_t lo = std::max(ops[a].start, ops[b].start);
        const uint64_t hi = std::min(ops[a].end, ops[b].end);
        if (hi > lo + 100000) ++overlaps;
      }
    }
    out.push_back(overlaps);
  }
  EXPECT_EQ(out.size(), 8u) << job.ring_dir;
  return out;
}

// Every rank runs TP and world ops while its DP op is on the GPU with
// --streams comm; with --streams rank its ops follow each other.
TEST_F(StreamsJob, OpsOfDifferentCommsOverlapOnlyOnPerCommStreams) {
  const EmuJob comm = Run("streams-comm-overlap", Args("comm", 80, 4000));
  for (int n : OverlapsPerRank(comm)) EXPECT_GE(n, 10) << comm.ring_dir;
  const EmuJob rank = Run("streams-rank-overlap", Args("rank", 80, 4000));
  for (int n : OverlapsPerRank(rank)) EXPECT_EQ(n, 0) << rank.ring_dir;
}

// The analyzer's case of a host pause while another comm's op runs
// (analyzer_straggler_test.cc, StreamsJob, synthetic) on an emulated job.
TEST_F(StreamsJob, AHostPauseBeforeTpOpsIsNamedOnTpOnly) {
  const PauseScale us;
  const EmuJob job = Run("streams-pause", Args("comm", 400, us(4000), Pause(us(3000))));
  const AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "slow") << Describe(run);
  EXPECT_EQ(run.exit_code, 1);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kSlowRank}) << Describe(run);
  const std::vector<nlohmann::json> stragglers = FindingsOf(run.report, "straggler");
  ASSERT_EQ(stragglers.size(), 1u) << Describe(run);
  const nlohmann::json& f = stragglers[0];
  EXPECT_EQ(f["comm"].value("name", ""), "tp0") << Describe(run);
  EXPECT_TRUE(Names(f, kSlowRank)) << Describe(run);
  for (int peer : {0, 1, 2}) EXPECT_FALSE(Names(f, peer)) << Describe(run);
  EXPECT_NE(f.value("summary", "").find("CPU-side"), std::string::npos) << Describe(run);
  for (const auto& s : run.report["findings"]) {
    EXPECT_EQ(s.value("kind", ""), "straggler") << Describe(run);
  }
}

// One in-order stream per rank: the pause ends before its DP op does, so
// its TP ops start when they would have anyway. Nobody waited.
TEST_F(StreamsJob, TheSamePauseBehindItsOwnBusyStreamDelaysNobody) {
  const PauseScale us;
  const EmuJob job = Run("streams-rank-pause", Args("rank", 400, us(8000), Pause(us(3000))));
  const AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_TRUE(run.report["findings"].empty()) << Describe(run);
}

TEST_F(StreamsJob, AHealthyJobNamesNobody) {
  const EmuJob job = Run("streams-healthy", Args("comm", 400, 4000));
  const AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_EQ(run.exit_code, 0);
  EXPECT_TRUE(run.report["findings"].empty()) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
  EXPECT_EQ(run.report["inputs"]["read"].size(), 8u) << run.report["inputs"].dump(1);
}

// --ce --streams comm (emu_job_fixture.h: 8 ranks, --tp 4, --step-us 20).
// Op 89 (89 % 8 == 1) is the CE AllGather #56 of tp1; op 82 and op 87 are
// DP ops (#20 and #21 of dp1).
class StreamsCe : public EmuJobTest {
 protected:
  static constexpr int kRank = 5;  // tp1 rank 1, dp1 rank 1

  // A job whose rank 5 hangs on the GPU at `op`, ended once 8 dumps exist;
  // rank 5's records of `comm` (from its ring: it may not have dumped).
  std::vector<RecView> HungRecords(const std::string& tag, const std::string& streams, int op,
                                   const std::string& comm) {
    const EmuJob job = Hang(
        tag,
        TpJobArgs("--ce --streams " + streams, "2.29.7", 140,
                  "--fault gpu-hang:rank=" + std::to_string(kRank) + ":op=" + std::to_string(op)),
        8);
    for (const std::string& path : ListFiles(job.ring_dir, ".ring")) {
      const FileView v = ReadFileView(path);
      EXPECT_TRUE(v.ok) << v.error;
      bool mine = false;
      for (const CommView& c : v.comms) mine |= c.name == "world" && c.rank == kRank;
      if (!mine) continue;
      for (const CommView& c : v.comms) {
        if (c.name == comm) return c.records;
      }
    }
    ADD_FAILURE() << "no ring of rank " << kRank << " with comm " << comm << " in " << job.ring_dir;
    return {};
  }

  static std::string StateOf(const std::vector<RecView>& recs, uint64_t index,
                             const std::string& func) {
    for (const RecView& r : recs) {
      if (!r.p2p && r.op_index == index) {
        EXPECT_EQ(r.func, func) << "op index " << index;
        return r.state;
      }
    }
    return "missing";
  }
};

TEST_F(StreamsCe, ACeOpCompletesWithItsOwnStreamNotBehindAHungOne) {
  EXPECT_EQ(StateOf(HungRecords("streams-ce-comm", "comm", 82, "tp1"), 56, "AllGather"), "done");
  EXPECT_NE(StateOf(HungRecords("streams-ce-rank", "rank", 82, "tp1"), 56, "AllGather"), "done");
}

TEST_F(StreamsCe, AHungCeOpStaysUnfinishedWhileAnotherStreamCompletes) {
  EXPECT_NE(StateOf(HungRecords("streams-ce-hang", "comm", 89, "tp1"), 56, "AllGather"), "done");
  EXPECT_EQ(StateOf(HungRecords("streams-ce-hang-dp", "comm", 89, "dp1"), 21, "AllReduce"), "done");
}

// Rank 5 dies at op 81; the others' watchdogs shrink world without it and
// run 24 AllReduces on the child, then finish.
TEST_F(StreamsJob, ShrinkAfterADeadRankDrainsEveryStreamAndGoesOn) {
  EmuJob job;
  {
    JobSlot slot;
    job = RunEmu("streams-shrink",
                 "--ranks 8 --tp 4 --ranks-per-node 4 --ops 200 --step-us 50 --streams comm "
                 "--fault kill:rank=5:op=81 --on-hang shrink --shrink-ops 24 --watchdog-s " +
                     testing::ScaledSecondsText(1) + " --hang-timeout-s " +
                     testing::ScaledSecondsText(30),
                 {{"NCCL_FLIGHTREC_TIMEOUT_S", "120"}, {"NCCL_FLIGHTREC_VERDICT", "0"}});
  }
  dirs_.push_back(job.dir);
  ASSERT_EQ(job.status, 5) << job.summary.dump(1);  // rank 5 killed, the others finished
  for (const auto& r : job.summary["ranks"]) {
    if (r["rank"] != 5) {
      EXPECT_EQ(r["state"], "finished") << job.summary.dump(1);
    }
  }
  int children = 0;
  for (const std::string& path : ListFiles(job.ring_dir, ".ring")) {
    const FileView v = ReadFileView(path);
    ASSERT_TRUE(v.ok) << v.error;
    for (const CommView& c : v.comms) {
      if (c.name != "world-shrink") continue;
      ++children;
      EXPECT_EQ(c.nranks, 7) << path;
      ASSERT_EQ(c.records.size(), 24u) << path;
      for (const RecView& r : c.records) EXPECT_EQ(r.state, "done") << path;
    }
  }
  EXPECT_EQ(children, 7) << job.ring_dir;
}

// The world rank of the process a ring or dump belongs to (its world comm's
// rank), -1 when it has none.
int WorldRankOf(const FileView& v) {
  for (const CommView& c : v.comms) {
    if (c.name == "world") return c.rank;
  }
  return -1;
}

// --streams comm --graph-replays (tests/emulator/README.md): 16 eager ops,
// then 10 replays of the captured period, DP ops 4 ms longer.
constexpr int kGraphEagerOps = 16;
constexpr int kGraphReplays = 10;

std::string GraphArgs(const std::string& streams) {
  return Args(streams, kGraphEagerOps, 4000, " --graph-replays " + std::to_string(kGraphReplays));
}

// Per world rank: the GPU intervals of each replay (index: replay), from
// the graph records of every comm in the rank's dump (record order within
// a comm), after checking that every record is done and that each comm
// holds the schedule's records.
std::vector<std::vector<std::vector<Interval>>> ReplayIntervals(const EmuJob& job) {
  std::vector<std::vector<std::vector<Interval>>> out(8);
  int files = 0;
  const emu::Topology topo(8, 4, 8, job.summary.value("job_id", ""));
  for (const std::string& path : ListFiles(job.ring_dir, ".frdump")) {
    const FileView v = ReadFileView(path);
    EXPECT_TRUE(v.ok) << v.error;
    const int rank = WorldRankOf(v);
    EXPECT_TRUE(rank >= 0 && rank < 8) << path;
    if (rank < 0 || rank >= 8) continue;
    ++files;
    const auto all = emu::ExpectedRecords(1, kGraphEagerOps, topo, rank, kGraphReplays);
    const auto eager = emu::ExpectedRecords(1, kGraphEagerOps, topo, rank);
    std::vector<std::vector<Interval>> replays(kGraphReplays);
    EXPECT_EQ(v.comms.size(), 3u) << path;
    for (const CommView& c : v.comms) {
      const size_t want = all.at(c.name).size();
      const size_t n_eager = eager.at(c.name).size();
      EXPECT_EQ(c.records.size(), want) << path << " " << c.name;
      const size_t per_replay = (want - n_eager) / kGraphReplays;
      size_t graph = 0;
      for (const RecView& r : c.records) {
        EXPECT_EQ(r.state, "done") << path << " " << c.name << " #" << r.op_index;
        if (!r.graph) continue;
        const size_t replay = graph++ / per_replay;
        if (replay < replays.size()) {
          replays[replay].push_back({c.name, r.gpu_start_ns, r.gpu_end_ns});
        }
      }
      EXPECT_EQ(graph, want - n_eager) << path << " " << c.name;
    }
    out[rank] = replays;
  }
  EXPECT_EQ(files, 8) << job.ring_dir;
  return out;
}

// Pairs of intervals of different comms overlapping by more than 100 us.
int Overlaps(const std::vector<Interval>& ops) {
  int n = 0;
  for (size_t a = 0; a < ops.size(); ++a) {
    for (size_t b = a + 1; b < ops.size(); ++b) {
      if (ops[a].comm == ops[b].comm) continue;
      if (std::min(ops[a].end, ops[b].end) > std::max(ops[a].start, ops[b].start) + 100000) ++n;
    }
  }
  return n;
}

// Each comm's replayed ops run on its own stream: the long DP ops run while
// the TP and world ops do, on every rank in at least half of the replays
// (a DP op waits for its peer's rank process too, and on a loaded machine
// that process may be scheduled after the replay's short ops are done: an
// ASan run beside a TSan build once saw one replay of ten without overlap),
// and a replay starts only after the previous one ended on every stream
// (one graph launch after the other). With --streams rank nothing of any
// replay overlaps. Every replayed op completes on every rank and the
// analyzer finds nothing.
TEST_F(StreamsJob, GraphReplaysOverlapAcrossCommsAndFollowEachOther) {
  const EmuJob comm = Run("streams-graph-comm", GraphArgs("comm"));
  for (const auto& r : comm.summary["ranks"]) {
    EXPECT_EQ(r.value("state", ""), "finished") << comm.summary.dump(1);
    EXPECT_EQ(r.value("ops_completed", 0), kGraphEagerOps + 8 * kGraphReplays)
        << comm.summary.dump(1);
  }
  for (const auto& replays : ReplayIntervals(comm)) {
    size_t overlapping = 0;
    for (size_t k = 0; k < replays.size(); ++k) {
      ASSERT_FALSE(replays[k].empty()) << "replay " << k << " in " << comm.ring_dir;
      if (Overlaps(replays[k]) >= 1) ++overlapping;
      if (k == 0) continue;
      uint64_t prev_end = 0, start = UINT64_MAX;
      for (const Interval& i : replays[k - 1]) prev_end = std::max(prev_end, i.end);
      for (const Interval& i : replays[k]) start = std::min(start, i.start);
      EXPECT_GE(start, prev_end) << "replay " << k << " started before replay " << k - 1
                                 << " ended, in " << comm.ring_dir;
    }
    EXPECT_GE(overlapping * 2, replays.size())
        << overlapping << " of " << replays.size() << " replays overlap across comms, in "
        << comm.ring_dir;
  }
  const AnalyzeRun run = Analyze(comm);
  EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  EXPECT_TRUE(run.report["findings"].empty()) << Describe(run);

  const EmuJob rank = Run("streams-graph-rank", GraphArgs("rank"));
  for (const auto& replays : ReplayIntervals(rank)) {
    for (const auto& ops : replays) EXPECT_EQ(Overlaps(ops), 0) << rank.ring_dir;
  }
}

// Faults in a replay (emu_job_fixture.h: 8 ranks, --tp 4, --step-us 20).
// Op 58 is the DP ReduceScatter of replay 5 (ops 56..63): dp1 #14 for
// rank 5 (dp1 = {1, 5}); replay 5 holds tp1 ops 56, 57, 60, 61, 62 and the
// world AllReduce 59.
class StreamsGraph : public EmuJobTest {
 protected:
  static constexpr int kRank = 5;
  static constexpr int kOp = 58;

  static std::string Args(const std::string& streams, const std::string& fault) {
    return TpJobArgs(
        "--streams " + streams + " --graph-replays 20", "2.28.9", 16,
        "--fault " + fault + ":rank=" + std::to_string(kRank) + ":op=" + std::to_string(kOp));
  }

  // Rank kRank's records of `comm` in its ring (it may not have dumped).
  static std::vector<RecView> RecordsOf(const EmuJob& job, const std::string& comm) {
    for (const std::string& path : ListFiles(job.ring_dir, ".ring")) {
      const FileView v = ReadFileView(path);
      EXPECT_TRUE(v.ok) << v.error;
      if (WorldRankOf(v) != kRank) continue;
      for (const CommView& c : v.comms) {
        if (c.name == comm) return c.records;
      }
    }
    ADD_FAILURE() << "no ring of rank " << kRank << " with comm " << comm << " in " << job.ring_dir;
    return {};
  }

  static int Done(const std::vector<RecView>& recs) {
    return static_cast<int>(std::count_if(recs.begin(), recs.end(),
                                          [](const RecView& r) { return r.state == "done"; }));
  }
};

// Rank 5's kernel of op 58 never finishes. With --streams comm the replay's
// TP and world ops finish on their own streams (tp1: 14 eager + 6 replays
// x 7 records, world: 2 + 6), the DP op stays in flight and replay 6 never
// starts; dp1 is all stuck and no process is blamed. With --streams rank
// the replay's ops behind the hung one never run (tp1: 14 + 5 x 7 + 2).
TEST_F(StreamsGraph, AGpuHangInAReplayedDpOpLeavesTheOtherStreamsToFinishTheReplay) {
  const EmuJob job = Hang("streams-graph-gpu-hang", Args("comm", "gpu-hang"), 8);
  const std::vector<RecView> tp = RecordsOf(job, "tp1");
  EXPECT_EQ(tp.size(), 56u) << job.ring_dir;
  EXPECT_EQ(Done(tp), 56) << job.ring_dir;
  const std::vector<RecView> world = RecordsOf(job, "world");
  EXPECT_EQ(world.size(), 8u) << job.ring_dir;
  EXPECT_EQ(Done(world), 8) << job.ring_dir;
  const std::vector<RecView> dp = RecordsOf(job, "dp1");
  ASSERT_EQ(dp.size(), 15u) << job.ring_dir;
  EXPECT_EQ(dp.back().op_index, 14u);
  EXPECT_NE(dp.back().state, "done") << job.ring_dir;
  EXPECT_EQ(Done(dp), 14) << job.ring_dir;

  const AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  const std::vector<nlohmann::json> stuck = FindingsOf(run.report, "all_stuck");
  ASSERT_EQ(stuck.size(), 1u) << Describe(run);
  EXPECT_EQ(stuck[0]["comm"].value("name", ""), "dp1") << Describe(run);
  EXPECT_TRUE(Names(stuck[0], kRank)) << Describe(run);
  EXPECT_TRUE(stuck[0].value("root_cause", false)) << Describe(run);
  EXPECT_TRUE(run.report["culprits"].empty()) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "lagging_rank").empty()) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "deadlock").empty()) << Describe(run);
  EXPECT_EQ(run.report["findings"][0].value("kind", ""), "all_stuck") << Describe(run);

  const EmuJob rank = Hang("streams-graph-gpu-hang-rank", Args("rank", "gpu-hang"), 8);
  EXPECT_EQ(Done(RecordsOf(rank, "tp1")), 51) << rank.ring_dir;
  EXPECT_EQ(Done(RecordsOf(rank, "world")), 7) << rank.ring_dir;
}

// Rank 5's user thread blocks before op 58: the whole graph launch of
// replay 5 is held. Its peers are inside replay 5's tp1 and world ops at
// once (one per stream): the analyzer counts each of them in both ops
// (analyzer/model/wait_graph.h), finds no deadlock among them, and its top
// finding names rank 5, outside NCCL, the only culprit.
TEST_F(StreamsGraph, AStuckRankBeforeAGraphLaunchIsTheOnlyCulprit) {
  const EmuJob job = Hang("streams-graph-stuck", Args("comm", "stuck"), 8);
  const AnalyzeRun run = Analyze(job);
  EXPECT_EQ(run.report.value("verdict", ""), "hang") << Describe(run);
  EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{kRank}) << Describe(run);
  EXPECT_TRUE(FindingsOf(run.report, "deadlock").empty()) << Describe(run);
  ASSERT_FALSE(run.report["findings"].empty()) << Describe(run);
  const nlohmann::json& top = run.report["findings"][0];
  EXPECT_EQ(top.value("kind", ""), "lagging_rank") << Describe(run);
  EXPECT_TRUE(Names(top, kRank)) << Describe(run);
  EXPECT_TRUE(top.value("root_cause", false)) << Describe(run);
  ASSERT_FALSE(top["details"].empty()) << Describe(run);
  EXPECT_EQ(top["details"][0].value("where", ""), "outside_nccl") << Describe(run);
  for (const auto& f : run.report["findings"]) {
    if (!Names(f, kRank)) {
      EXPECT_FALSE(f.value("root_cause", false)) << Describe(run);
    }
  }
}

// The first GPU interval of a replay on a comm whose name starts with
// `prefix` ("tp", "dp", "world").
Interval FirstOn(const std::vector<Interval>& replay, const std::string& prefix) {
  for (const Interval& i : replay) {
    if (i.comm.compare(0, prefix.size(), prefix) == 0) return i;
  }
  ADD_FAILURE() << "no " << prefix << " op in the replay";
  return {prefix, 0, 0};
}

// gpu-slow:comm=tp in the replays: rank 3's TP stream starts each replayed
// TP launch 3 ms late (times the load scale, at most 10: under TSan on a
// busy machine the streams' threads wait that long to be scheduled). With
// --streams comm its DP branch of the replay does not wait for that: its DP
// ReduceScatter (op 2 of the period) starts at least 1 ms before its first
// TP op (op 0) does. With --streams rank the ReduceScatter runs after both
// TP ops before it on the one stream.
TEST_F(StreamsJob, AGpuSlowTpStreamDelaysOnlyTheReplayedTpOps) {
  const int slow_us = static_cast<int>(3000 * std::min(testing::TimeScale(), 10.0));
  const std::string slow = " --fault gpu-slow:rank=3:us=" + std::to_string(slow_us) + ":comm=tp";
  const EmuJob comm = Run("streams-graph-gpu-slow",
                          Args("comm", kGraphEagerOps, 200,
                               " --graph-replays " + std::to_string(kGraphReplays) + slow));
  const auto replays = ReplayIntervals(comm)[kSlowRank];
  ASSERT_EQ(replays.size(), static_cast<size_t>(kGraphReplays));
  for (size_t k = 0; k < replays.size(); ++k) {
    const Interval tp = FirstOn(replays[k], "tp");
    const Interval dp = FirstOn(replays[k], "dp");
    EXPECT_LT(dp.start + 1000000, tp.start) << "replay " << k << " in " << comm.ring_dir;
  }
  const EmuJob rank = Run("streams-graph-gpu-slow-rank",
                          Args("rank", kGraphEagerOps, 200,
                               " --graph-replays " + std::to_string(kGraphReplays) + slow));
  const auto one_stream = ReplayIntervals(rank)[kSlowRank];
  ASSERT_EQ(one_stream.size(), static_cast<size_t>(kGraphReplays));
  for (size_t k = 0; k < one_stream.size(); ++k) {
    EXPECT_GT(FirstOn(one_stream[k], "dp").start, FirstOn(one_stream[k], "tp").end)
        << "replay " << k << " in " << rank.ring_dir;
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

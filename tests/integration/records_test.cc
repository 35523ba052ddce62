// (a) every collective of every communicator reaches every rank's ring with
// the values the emulator's schedule says NCCL gave; (c) the same through
// every API version v3..v7, each on the NCCL release that speaks it natively.
#include <gtest/gtest.h>

#include <map>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "emulator/src/schedule.h"
#include "emulator/src/topology.h"
#include "flightrec/record_names.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

namespace fmt = ::flightrec::format;
using emu::ExpectedRecord;

constexpr int kRanks = 8;
constexpr int kTp = 4;

struct RankRings {
  int rank;
  FileView view;
};

// Reads every rank's ring, found by the pid the launcher reports.
std::vector<RankRings> ReadRings(const EmuJob& job) {
  std::vector<RankRings> out;
  std::vector<std::string> rings = ListFiles(job.ring_dir, ".ring");
  for (const auto& r : job.summary["ranks"]) {
    std::string suffix = "-" + std::to_string(r["pid"].get<int>()) + ".ring";
    for (const std::string& path : rings) {
      if (path.size() > suffix.size() &&
          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0) {
        out.push_back({r["rank"].get<int>(), ReadFileView(path)});
      }
    }
  }
  return out;
}

// Compares one rank's ring against the schedule; `gpu_timers` says whether
// KernelCh carries %globaltimer values (v4+). After `ops` eager ops come
// `graph_replays` replays of a captured period (docs/design/nccl.md §CUDA graphs): each
// replay is its own record, marked graph-captured, whose API call is the
// capture's (the same time in every replay, before the replay's enqueue).
void ExpectRanksRecords(const EmuJob& job, int64_t ops, bool gpu_timers, int graph_replays = 0) {
  ASSERT_EQ(job.status, 0) << job.summary.dump(1) << "\nstderr:\n" << job.stderr_text;
  std::string job_id = job.summary["job_id"];
  emu::Topology topo(kRanks, kTp, 4, job_id);
  std::vector<RankRings> rings = ReadRings(job);
  ASSERT_EQ(rings.size(), static_cast<size_t>(kRanks)) << "one ring per rank in " << job.ring_dir;
  for (const RankRings& rr : rings) {
    ASSERT_TRUE(rr.view.ok) << rr.view.error;
    auto expected = emu::ExpectedRecords(1, ops, topo, rr.rank, graph_replays);
    auto eager = emu::ExpectedRecords(1, ops, topo, rr.rank);
    for (emu::CommKind kind : {emu::CommKind::kWorld, emu::CommKind::kTp, emu::CommKind::kDp}) {
      emu::CommInfo info = topo.CommOf(kind, rr.rank);
      const CommView* c = rr.view.Comm(info.comm_hash);
      ASSERT_NE(c, nullptr) << "rank " << rr.rank << " has no region for " << info.name << " ("
                            << rr.view.source << ")";
      const std::vector<ExpectedRecord>& want = expected[info.name];
      ASSERT_EQ(c->records.size(), want.size()) << "rank " << rr.rank << " comm " << info.name;
      EXPECT_EQ(c->torn, 0u);
      const size_t n_eager = eager[info.name].size();
      const size_t per_replay = graph_replays > 0 ? (want.size() - n_eager) / graph_replays : 0;
      EXPECT_EQ(c->rank, info.my_rank);
      for (size_t k = 0; k < want.size(); ++k) {
        const RecView& got = c->records[k];
        const ExpectedRecord& w = want[k];
        SCOPED_TRACE("rank " + std::to_string(rr.rank) + " " + info.name + " record " +
                     std::to_string(k));
        ASSERT_EQ(got.func, fmt::FuncName(w.func));
        ASSERT_EQ(got.count, w.count);
        ASSERT_EQ(got.datatype, fmt::DataTypeName(w.datatype));
        // The call's own datatype, wherever the op's API call was matched
        // (AllGather/Broadcast: the user's type behind the bytes).
        if (got.t_api_ns != 0) {
          ASSERT_EQ(got.api_datatype, fmt::DataTypeName(w.api_datatype));
        }
        ASSERT_EQ(got.op_index, w.op_index);
        ASSERT_EQ(got.root_or_peer, w.root_or_peer);
        if (w.nccl_seq == UINT64_MAX) {
          ASSERT_TRUE(got.p2p);
        } else {
          ASSERT_TRUE(got.has_seq);
          ASSERT_EQ(got.seq, w.nccl_seq);
        }
        ASSERT_EQ(got.state, "done");
        ASSERT_EQ(got.graph, k >= n_eager);
        if (got.graph) {
          ASSERT_NE(got.t_api_ns, 0u);
          ASSERT_LT(got.t_api_ns, got.t_enqueue_ns);
          if (k >= n_eager + per_replay) {
            ASSERT_EQ(got.t_api_ns, c->records[k - per_replay].t_api_ns);
          }
        }
        if (gpu_timers) {
          ASSERT_NE(got.gpu_start_raw, 0u);
          ASSERT_LE(got.gpu_start_raw, got.gpu_end_raw);
          ASSERT_LE(got.gpu_start_ns, got.gpu_end_ns);
        } else {
          ASSERT_EQ(got.gpu_start_raw, 0u);
          ASSERT_EQ(got.gpu_end_raw, 0u);
        }
      }
    }
  }
}

TEST(PluginRecords, EightRanks2000OpsApiV5MatchTheSchedule) {
  EmuJob job = RunEmu("records-v5",
                      "--ranks 8 --tp 4 --ranks-per-node 4 --ops 2000 --step-us 5 "
                      "--nccl-version 2.28.9 --hang-timeout-s 30");
  ExpectRanksRecords(job, 2000, /*gpu_timers=*/true);
}

TEST(PluginRecords, EveryGraphReplayIsRecordedWithTheCaptureAsItsApiCall) {
  EmuJob job = RunEmu("records-graph",
                      "--ranks 8 --tp 4 --ranks-per-node 4 --ops 16 --graph-replays 40 "
                      "--step-us 5 --nccl-version 2.28.9 --hang-timeout-s 30");
  ExpectRanksRecords(job, 16, /*gpu_timers=*/true, /*graph_replays=*/40);
}

// Without KernelCh (and on one node, so no network proxy ops) a captured
// plan has no proxy ops: NCCL runs its Group/Coll events once, at capture,
// and its replays execute without any (nccl.md §CUDA graphs). One record per captured call.
TEST(PluginRecords, WithoutKernelChACapturedPlanIsRecordedOnceAtCapture) {
  const int mask = 2 | 4 | (1 << 9) | (1 << 10);  // Coll, P2p, CollApi, P2pApi
  EmuJob job = RunEmu("records-graph-nokch",
                      "--ranks 8 --tp 4 --ranks-per-node 8 --ops 16 --graph-replays 20 "
                      "--step-us 5 --nccl-version 2.28.9 --hang-timeout-s 30",
                      {{"NCCL_FLIGHTREC_EVENT_MASK", std::to_string(mask)}});
  ASSERT_EQ(job.status, 0) << job.summary.dump(1) << "\nstderr:\n" << job.stderr_text;
  EXPECT_EQ(job.summary["ranks"][0]["ops_completed"], 16 + 8 * 20);
  emu::Topology topo(kRanks, kTp, 8, job.summary["job_id"].get<std::string>());
  for (const RankRings& rr : ReadRings(job)) {
    ASSERT_TRUE(rr.view.ok) << rr.view.error;
    auto once = emu::ExpectedRecords(1, 16, topo, rr.rank, /*graph_replays=*/1);
    auto eager = emu::ExpectedRecords(1, 16, topo, rr.rank);
    for (emu::CommKind kind : {emu::CommKind::kWorld, emu::CommKind::kTp, emu::CommKind::kDp}) {
      const emu::CommInfo info = topo.CommOf(kind, rr.rank);
      const CommView* c = rr.view.Comm(info.comm_hash);
      ASSERT_NE(c, nullptr);
      ASSERT_EQ(c->records.size(), once[info.name].size())
          << "rank " << rr.rank << " " << info.name;
      for (size_t k = 0; k < c->records.size(); ++k) {
        EXPECT_EQ(c->records[k].graph, k >= eager[info.name].size()) << info.name << " " << k;
      }
    }
  }
}

// PXN (docs/design/nccl.md §PXN): each rank's network sends on odd channels are
// reported by its node partner's proxy, in the partner's process, with this
// rank's context, parent handle and pid. Handles encode region and slot
// numbers, and partners run the same schedule, so the partner's handles
// would decode as valid ones here: only proxyOp.pid tells them apart. Every
// rank's records must still match the schedule, its ops must count only the
// proxy ops its own proxy ran, and every foreign op it reported must be
// declined and counted as such (pxn_foreign, not a loss: the analyzer stays
// quiet about them).
TEST(PluginRecords, PxnProxyOpsOfAnotherProcessAreDeclinedAndCounted) {
  EmuJob job = RunEmu("records-pxn",
                      "--ranks 8 --tp 4 --ranks-per-node 4 --ops 400 --step-us 5 --pxn "
                      "--nccl-version 2.28.9 --hang-timeout-s 30");
  ExpectRanksRecords(job, 400, /*gpu_timers=*/true);
  std::map<int, uint64_t> reported;
  for (const auto& r : job.summary["ranks"]) {
    reported[r["rank"].get<int>()] = r["pxn_reported"].get<uint64_t>();
  }
  emu::Topology topo(kRanks, kTp, 4, job.summary["job_id"].get<std::string>());
  for (const RankRings& rr : ReadRings(job)) {
    SCOPED_TRACE("rank " + std::to_string(rr.rank));
    // 400 ops, ~half of them on comms that span nodes, several odd channels
    // each: hundreds reported, and each one declined.
    EXPECT_GT(reported[rr.rank], 200u);
    EXPECT_EQ(rr.view.pxn_foreign_drops, reported[rr.rank]);
    EXPECT_EQ(rr.view.foreign_handle_drops, 0u);
    for (emu::CommKind kind : {emu::CommKind::kWorld, emu::CommKind::kTp, emu::CommKind::kDp}) {
      const emu::CommInfo info = topo.CommOf(kind, rr.rank);
      const CommView* c = rr.view.Comm(info.comm_hash);
      ASSERT_NE(c, nullptr);
      for (const RecView& r : c->records) {
        // A send and a receive per channel, less the sends of odd channels.
        const int own = info.nnodes > 1 ? 2 * r.channels - r.channels / 2 : 0;
        ASSERT_EQ(r.proxy_ops_started, own) << info.name << " op " << r.op_index;
      }
    }
  }
  // The analysis calls the job healthy and says nothing of dropped events:
  // declining another process's ops loses nothing.
  const analysis::Inputs in = analysis::LoadInputs({job.ring_dir});
  const analysis::JobIndex index(in.processes);
  const analysis::Analysis a = analysis::Analyze(index);
  EXPECT_EQ(a.verdict, analysis::Verdict::kHealthy);
  for (const std::string& note : a.notes) {
    EXPECT_EQ(note.find("dropped"), std::string::npos) << note;
  }
}

struct ApiCase {
  int api;
  const char* nccl;
};

void PrintTo(const ApiCase& c, std::ostream* os) { *os << "v" << c.api << " on NCCL " << c.nccl; }

class PluginRecordsPerApi : public ::testing::TestWithParam<ApiCase> {};

TEST_P(PluginRecordsPerApi, SameJobGivesTheSameRecords) {
  ApiCase p = GetParam();
  EmuJob job =
      RunEmu("records-api" + std::to_string(p.api),
             "--ranks 8 --tp 4 --ranks-per-node 4 --ops 240 --step-us 5 --api " +
                 std::to_string(p.api) + " --nccl-version " + p.nccl + " --hang-timeout-s 30");
  ExpectRanksRecords(job, 240, /*gpu_timers=*/p.api >= 4);
  for (const RankRings& rr : ReadRings(job)) EXPECT_EQ(rr.view.api_version, p.api);
}

INSTANTIATE_TEST_SUITE_P(Apis, PluginRecordsPerApi,
                         ::testing::Values(ApiCase{3, "2.26.2"}, ApiCase{4, "2.27.7"},
                                           ApiCase{5, "2.28.9"}, ApiCase{6, "2.29.2"},
                                           ApiCase{7, "master"}),
                         [](const auto& info) { return "v" + std::to_string(info.param.api); });

}  // namespace
}  // namespace itest
}  // namespace flightrec

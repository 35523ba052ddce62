// The schedule is deterministic, covers the patterns the plugin must see,
// and numbers collectives as NCCL does (docs/design/nccl.md §Call sequences v5).
#include "emulator/src/schedule.h"

#include <gtest/gtest.h>

#include <set>

#include "flightrec/record_names.h"

namespace flightrec {
namespace emu {
namespace {

namespace fmt = ::flightrec::format;

TEST(Schedule, IsDeterministicAndAgreesAcrossMembers) {
  Topology topo(8, 4, 4, "job");
  for (int64_t i = 0; i < 64; ++i) {
    Op a = ScheduleOp(7, i, topo, 1);
    Op b = ScheduleOp(7, i, topo, 2);  // same TP group, other member
    ASSERT_EQ(a.calls.size(), b.calls.size());
    EXPECT_EQ(a.comm, b.comm);
    for (size_t k = 0; k < a.calls.size(); ++k) {
      EXPECT_EQ(a.calls[k].func, b.calls[k].func);
      EXPECT_EQ(a.calls[k].count, b.calls[k].count);
      EXPECT_EQ(a.calls[k].channels, b.calls[k].channels);
      EXPECT_EQ(a.calls[k].root, b.calls[k].root);
    }
  }
  // Another seed changes counts somewhere.
  bool differs = false;
  for (int64_t i = 0; i < 64; ++i) {
    differs |= ScheduleOp(7, i, topo, 1).calls[0].count != ScheduleOp(8, i, topo, 1).calls[0].count;
  }
  EXPECT_TRUE(differs);
}

// The comm of each op of the period (schedule.h's table), the same in every
// period and in the graph replays.
TEST(Schedule, EachOpOfThePeriodRunsOnItsComm) {
  const CommKind kTable[kPeriod] = {CommKind::kTp, CommKind::kTp, CommKind::kDp, CommKind::kWorld,
                                    CommKind::kTp, CommKind::kTp, CommKind::kTp, CommKind::kDp};
  Topology topo(8, 4, 4, "job");
  for (int64_t i = 0; i < 3 * kPeriod; ++i) {
    EXPECT_EQ(ScheduleOp(3, i, topo, 5).comm, kTable[i % kPeriod]) << i;
    EXPECT_EQ(GraphOp(3, i + 2 * kPeriod, topo, 5).comm, kTable[i % kPeriod]) << i;
  }
}

TEST(Schedule, ChannelsAreTwoToEightAndNotAlwaysDense) {
  Topology topo(8, 4, 4, "job");
  std::set<size_t> sizes;
  bool sparse = false;
  for (int64_t i = 0; i < 200; ++i) {
    for (const Call& c : ScheduleOp(1, i, topo, 0).calls) {
      ASSERT_GE(c.channels.size(), 2u);
      ASSERT_LE(c.channels.size(), 8u);
      sizes.insert(c.channels.size());
      for (uint8_t id : c.channels) ASSERT_LT(id, kMaxChannels);
      sparse |= c.channels.front() != 0 || c.channels.back() != c.channels.size() - 1;
    }
  }
  EXPECT_EQ(sizes.size(), 7u);
  EXPECT_TRUE(sparse);
}

TEST(Schedule, AllGatherAndBroadcastTasksCountBytesAsInt8) {
  Topology topo(8, 4, 4, "job");
  Op ag = ScheduleOp(1, 1, topo, 0);
  ASSERT_EQ(ag.calls[0].func, fmt::kFuncAllGather);
  EXPECT_EQ(ag.calls[0].datatype, fmt::kTypeBfloat16);
  EXPECT_EQ(ag.calls[0].TaskCount(), ag.calls[0].count * 2);
  EXPECT_EQ(ag.calls[0].TaskDatatype(), fmt::kTypeInt8);
  Op bc = ScheduleOp(1, 8 + 4, topo, 0);
  ASSERT_EQ(bc.calls[0].func, fmt::kFuncBroadcast);
  EXPECT_EQ(bc.calls[0].root, 1);  // (i / 8) % tp
  EXPECT_EQ(bc.calls[0].TaskCount(), bc.calls[0].count * 4);
}

// mismatch:field=datatype-same-bytes: the call's datatype and count change,
// the task NCCL makes of an AllGather/Broadcast (bytes as int8) does not.
TEST(Schedule, SameBytesDatatypeMismatchChangesTheCallNotTheTask) {
  Topology topo(8, 4, 4, "job");
  for (const int64_t i : {int64_t{1}, int64_t{8 + 4}, int64_t{0}}) {
    const Op normal = ScheduleOp(1, i, topo, 0);
    Op odd = normal;
    ApplyMismatch(MismatchField::kDatatypeSameBytes, &odd);
    const Call& a = normal.calls[0];
    const Call& b = odd.calls[0];
    SCOPED_TRACE(fmt::FuncName(a.func));
    EXPECT_NE(b.datatype, a.datatype);
    EXPECT_EQ(b.count * fmt::DataTypeSize(b.datatype), a.count * fmt::DataTypeSize(a.datatype));
    if (a.func == fmt::kFuncAllGather || a.func == fmt::kFuncBroadcast) {
      EXPECT_EQ(b.TaskCount(), a.TaskCount());
      EXPECT_EQ(b.TaskDatatype(), a.TaskDatatype());
    }
  }
}

TEST(Schedule, GroupedOpsLaunchInNcclOrderNotCallOrder) {
  Topology topo(8, 4, 4, "job");
  Op g = ScheduleOp(1, 5, topo, 0);
  ASSERT_TRUE(g.grouped);
  ASSERT_EQ(g.calls.size(), 2u);
  EXPECT_EQ(g.calls[0].func, fmt::kFuncReduceScatter);
  std::vector<int> order = LaunchOrder(g);
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(g.calls[order[0]].func, fmt::kFuncAllReduce);  // larger class first
  Op p2p = ScheduleOp(1, 6, topo, 1);
  EXPECT_EQ(p2p.calls[0].func, fmt::kFuncSend);
  EXPECT_EQ(p2p.calls[0].peer, 2);
  EXPECT_EQ(p2p.calls[1].peer, 0);
  // Same class: ascending size inside the class, call order for ties.
  Op same;
  same.calls.resize(3);
  for (auto& c : same.calls) c.func = fmt::kFuncAllReduce, c.datatype = fmt::kTypeFloat32;
  same.calls[0].count = 100, same.calls[1].count = 10, same.calls[2].count = 10;
  EXPECT_EQ(LaunchOrder(same), (std::vector<int>{1, 2, 0}));
}

TEST(Schedule, SeqNumbersArePerCommPerFunctionAndSkipP2p) {
  Topology topo(8, 4, 4, "job");
  auto recs = ExpectedRecords(3, 160, topo, 2);
  ASSERT_EQ(recs.count("tp0"), 1u);
  ASSERT_EQ(recs.count("dp2"), 1u);
  ASSERT_EQ(recs.count("world"), 1u);
  for (const auto& [name, list] : recs) {
    std::map<uint8_t, uint64_t> next;
    uint64_t coll_index = 0;
    for (const ExpectedRecord& r : list) {
      if (r.func == fmt::kFuncSend || r.func == fmt::kFuncRecv) {
        EXPECT_EQ(r.nccl_seq, UINT64_MAX);
        continue;
      }
      EXPECT_EQ(r.nccl_seq, next[r.func]++) << name;
      EXPECT_EQ(r.op_index, coll_index++) << name;
    }
  }
  // 160 ops = 20 periods: world has one AllReduce per period.
  EXPECT_EQ(recs["world"].size(), 20u);
  EXPECT_EQ(recs["world"].back().nccl_seq, 19u);
  // TP: AllReduce x2 (ops 0 and 5), AllGather, Broadcast, ReduceScatter, Send, Recv.
  EXPECT_EQ(recs["tp0"].size(), 20u * 7);
}

TEST(Schedule, OneRankCommsProduceNoCollectiveRecords) {
  Topology topo(4, 4, 4, "job");  // DP groups of one rank
  auto recs = ExpectedRecords(1, 16, topo, 0);
  EXPECT_EQ(recs.count("dp0"), 0u);
}

TEST(Topology, CommHashesAgreeOnMembersAndDifferPerComm) {
  Topology topo(8, 4, 2, "jobA");
  CommInfo a = topo.CommOf(CommKind::kTp, 1), b = topo.CommOf(CommKind::kTp, 3);
  EXPECT_EQ(a.comm_hash, b.comm_hash);
  EXPECT_EQ(a.name, "tp0");
  EXPECT_EQ(a.my_rank, 1);
  EXPECT_EQ(a.nnodes, 2);
  std::set<uint64_t> hashes;
  for (int g = 0; g < topo.num_comms(); ++g) hashes.insert(topo.CommAt(g).comm_hash);
  EXPECT_EQ(hashes.size(), static_cast<size_t>(topo.num_comms()));
  EXPECT_NE(Topology(8, 4, 2, "jobB").CommOf(CommKind::kWorld, 0).comm_hash,
            topo.CommOf(CommKind::kWorld, 0).comm_hash);
  CommInfo dp = topo.CommOf(CommKind::kDp, 6);
  EXPECT_EQ(dp.name, "dp2");
  EXPECT_EQ(dp.members, (std::vector<int>{2, 6}));
  EXPECT_EQ(dp.my_rank, 1);
}

// --graph-replays: the op numbers after the eager ones replay the first
// period's calls (counts, channels, root) and count on like eager ops.
TEST(Schedule, GraphReplaysRepeatTheFirstPeriodAndNumberOn) {
  Topology topo(8, 4, 4, "job");
  for (int64_t i = 16; i < 16 + 8 * 3; ++i) {
    const Op replay = OpAt(5, 16, i, topo, 2);
    const Op first = ScheduleOp(5, i % kPeriod, topo, 2);
    EXPECT_EQ(replay.index, i);
    EXPECT_EQ(replay.comm, first.comm);
    ASSERT_EQ(replay.calls.size(), first.calls.size());
    for (size_t k = 0; k < first.calls.size(); ++k) {
      EXPECT_EQ(replay.calls[k].count, first.calls[k].count) << i;
      EXPECT_EQ(replay.calls[k].root, first.calls[k].root) << i;
      EXPECT_EQ(replay.calls[k].channels, first.calls[k].channels) << i;
    }
  }
  EXPECT_EQ(OpAt(5, 16, 15, topo, 2).calls[0].count, ScheduleOp(5, 15, topo, 2).calls[0].count);
  auto eager = ExpectedRecords(5, 16, topo, 2);
  auto replayed = ExpectedRecords(5, 16, topo, 2, 3);
  ASSERT_EQ(replayed["world"].size(), eager["world"].size() + 3);
  EXPECT_EQ(replayed["world"].back().nccl_seq, 4u);  // seqNumber counts every replay
  EXPECT_EQ(replayed["world"].back().count, replayed["world"][0].count);
  EXPECT_EQ(TotalOps(16, 3), 40);
}

}  // namespace
}  // namespace emu
}  // namespace flightrec

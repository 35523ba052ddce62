#include "emulator/src/options.h"

#include <gtest/gtest.h>

#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {
namespace {

// Fail-slow faults hold from op N on (every op without op=N); a slow link
// has no rank.
TEST(Options, SlowFaultsHoldFromTheirOpOn) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions({"--ranks", "8", "--fault", "gpu-slow:rank=4:us=3000", "--fault",
                            "slow:rank=3:us=500:op=40", "--fault", "slow-link:us=2000:op=100"},
                           &o, &err))
      << err;
  EXPECT_NE(o.FindFault(FaultKind::kGpuSlow, 4, 0), nullptr);
  EXPECT_EQ(o.FindFault(FaultKind::kGpuSlow, 3, 0), nullptr);
  EXPECT_EQ(o.FindFault(FaultKind::kSlow, 3, 39), nullptr);
  EXPECT_NE(o.FindFault(FaultKind::kSlow, 3, 40), nullptr);
  EXPECT_EQ(o.FindLinkFault(99), nullptr);
  ASSERT_NE(o.FindLinkFault(100), nullptr);
  EXPECT_EQ(o.FindLinkFault(100)->us, 2000);
  Fault f;
  EXPECT_FALSE(ParseFault("slow-link:rank=1:us=5", &f, &err));
  EXPECT_NE(err.find("every rank"), std::string::npos) << err;
  EXPECT_FALSE(ParseFault("gpu-slow:rank=1", &f, &err));
  EXPECT_NE(err.find("us=X"), std::string::npos) << err;
  EXPECT_FALSE(ParseFault("slow-link:op=3", &f, &err));
}

// comm=world|tp|dp restricts a fail-slow fault to that comm kind's ops.
TEST(Options, FailSlowFaultsCanHoldForOneCommKind) {
  Options o;
  std::string err;
  ASSERT_TRUE(
      ParseOptions({"--ranks", "8", "--tp", "4", "--fault", "slow:rank=3:us=500:comm=tp", "--fault",
                    "slow-link:us=2000:comm=dp", "--fault", "gpu-slow:rank=1:us=9:comm=world"},
                   &o, &err))
      << err;
  const CommKind world = CommKind::kWorld;
  const CommKind tp = CommKind::kTp;
  const CommKind dp = CommKind::kDp;
  EXPECT_NE(o.FindFaultOn(FaultKind::kSlow, 3, 0, tp), nullptr);
  EXPECT_EQ(o.FindFaultOn(FaultKind::kSlow, 3, 0, dp), nullptr);
  EXPECT_EQ(o.FindFaultOn(FaultKind::kSlow, 3, 0, world), nullptr);
  EXPECT_NE(o.FindLinkFaultOn(7, dp), nullptr);
  EXPECT_EQ(o.FindLinkFaultOn(7, tp), nullptr);
  EXPECT_NE(o.FindFaultOn(FaultKind::kGpuSlow, 1, 3, world), nullptr);
  EXPECT_EQ(o.FindFaultOn(FaultKind::kGpuSlow, 1, 3, tp), nullptr);
  // Without comm= a fault holds on every comm.
  Options all;
  ASSERT_TRUE(ParseOptions({"--fault", "slow:rank=3:us=5"}, &all, &err)) << err;
  EXPECT_NE(all.FindFaultOn(FaultKind::kSlow, 3, 0, dp), nullptr);
  Fault f;
  EXPECT_FALSE(ParseFault("slow:rank=3:us=5:comm=pp", &f, &err));
  EXPECT_NE(err.find("comm=pp"), std::string::npos) << err;
  EXPECT_FALSE(ParseFault("stuck:rank=3:op=5:comm=tp", &f, &err));
  EXPECT_NE(err.find("only slow, gpu-slow and slow-link"), std::string::npos) << err;
}

// --streams rank (default) or comm; comm takes CUDA graphs (each comm's
// captured ops replay on its stream).
TEST(Options, StreamsModeParsesAndTakesGraphs) {
  Options o;
  std::string err;
  EXPECT_EQ(o.streams, StreamMode::kRank);
  ASSERT_TRUE(ParseOptions({"--streams", "comm", "--on-hang", "shrink"}, &o, &err)) << err;
  EXPECT_EQ(o.streams, StreamMode::kComm);
  Options r;
  ASSERT_TRUE(ParseOptions({"--streams=rank"}, &r, &err)) << err;
  EXPECT_EQ(r.streams, StreamMode::kRank);
  Options bad;
  EXPECT_FALSE(ParseOptions({"--streams", "gpu"}, &bad, &err));
  EXPECT_NE(err.find("--streams"), std::string::npos) << err;
  Options graph;
  ASSERT_TRUE(ParseOptions({"--streams", "comm", "--ops", "16", "--graph-replays", "2", "--fault",
                            "gpu-slow:rank=1:us=50:comm=dp"},
                           &graph, &err))
      << err;
  EXPECT_EQ(graph.streams, StreamMode::kComm);
  EXPECT_EQ(graph.graph_replays, 2);
}

TEST(Options, ParsesFaultsAndRejectsBadOnesWithTheSpec) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions({"--ranks", "8", "--tp=4", "--fault", "stuck:rank=5:op=700", "--fault",
                            "mismatch:rank=1:op=3:field=datatype", "--fault", "slow:rank=2:us=50"},
                           &o, &err))
      << err;
  ASSERT_EQ(o.faults.size(), 3u);
  EXPECT_NE(o.FindFault(FaultKind::kStuck, 5, 700), nullptr);
  EXPECT_EQ(o.FindFault(FaultKind::kStuck, 5, 701), nullptr);
  EXPECT_EQ(o.faults[1].field, MismatchField::kDatatype);
  EXPECT_NE(o.FindFault(FaultKind::kSlow, 2, 12345), nullptr);

  Fault f;
  EXPECT_FALSE(ParseFault("explode:rank=1:op=2", &f, &err));
  EXPECT_NE(err.find("explode"), std::string::npos);
  EXPECT_FALSE(ParseFault("mismatch:rank=1:op=2", &f, &err));
  EXPECT_NE(err.find("field="), std::string::npos);
  EXPECT_TRUE(ParseFault("mismatch:rank=1:op=9:field=datatype-same-bytes", &f, &err)) << err;
  EXPECT_EQ(f.field, MismatchField::kDatatypeSameBytes);
  EXPECT_FALSE(ParseFault("stuck:rank=1", &f, &err));
  // A pause is one stall before one op: it needs both.
  EXPECT_FALSE(ParseFault("pause:rank=1:op=2", &f, &err));
  EXPECT_NE(err.find("op=N:us=X"), std::string::npos) << err;
  ASSERT_TRUE(ParseFault("pause:rank=1:op=2:us=300", &f, &err)) << err;
  EXPECT_EQ(f.kind, FaultKind::kPause);
  EXPECT_EQ(f.us, 300);
  Options bad;
  EXPECT_FALSE(ParseOptions({"--ranks", "8", "--fault", "kill:rank=9:op=1"}, &bad, &err));
  EXPECT_NE(err.find("rank 9"), std::string::npos);
  EXPECT_FALSE(ParseOptions({"--ranks", "6", "--tp", "4"}, &bad, &err));
  // The Send/Recv ring (op % 8 == 6) has no collective function to change.
  Options p2p_func, p2p_count;
  EXPECT_FALSE(ParseOptions({"--ranks", "8", "--fault", "mismatch:rank=1:op=14:field=func"},
                            &p2p_func, &err));
  EXPECT_NE(err.find("Send/Recv"), std::string::npos) << err;
  EXPECT_TRUE(ParseOptions({"--ranks", "8", "--fault", "mismatch:rank=1:op=14:field=count"},
                           &p2p_count, &err))
      << err;
  // Leaving one call out of a group: only skip, only the grouped collective op.
  Options group_skip;
  ASSERT_TRUE(
      ParseOptions({"--ranks", "8", "--fault", "skip:rank=2:op=13:call=1"}, &group_skip, &err))
      << err;
  EXPECT_EQ(group_skip.faults[0].call, 1);
  EXPECT_NE(group_skip.FindSkipFault(2, 13, /*one_call=*/true), nullptr);
  EXPECT_EQ(group_skip.FindSkipFault(2, 13, /*one_call=*/false), nullptr);
  for (const char* fault :
       {"skip:rank=2:op=12:call=0", "skip:rank=2:op=13:call=2", "stuck:rank=2:op=13:call=0"}) {
    Options refused;
    EXPECT_FALSE(ParseOptions({"--ranks", "8", "--fault", fault}, &refused, &err)) << fault;
    EXPECT_NE(err.find("call="), std::string::npos) << err;
  }
  EXPECT_FALSE(ParseOptions({"--bogus"}, &bad, &err));
  EXPECT_FALSE(ParseOptions({"--ops"}, &bad, &err));
  EXPECT_FALSE(ParseOptions({"--nccl-version", "3.0"}, &bad, &err));
}

TEST(Options, PxnNeedsSeveralNodesOfAtLeastTwoRanks) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions({"--ranks", "8", "--ranks-per-node", "4", "--pxn"}, &o, &err)) << err;
  EXPECT_TRUE(o.pxn);
  for (const char* per_node : {"8", "1"}) {
    Options bad;
    EXPECT_FALSE(ParseOptions({"--ranks", "8", "--ranks-per-node", per_node, "--pxn"}, &bad, &err))
        << per_node;
    EXPECT_NE(err.find("--pxn"), std::string::npos) << err;
  }
}

TEST(Options, GraphReplaysStartAtAPeriodAndCannotSkipOrChangeAReplayedOp) {
  Options o;
  std::string err;
  ASSERT_TRUE(ParseOptions({"--ops", "16", "--graph-replays", "5", "--fault", "stuck:rank=1:op=30",
                            "--fault", "skip:rank=1:op=9"},
                           &o, &err))
      << err;
  EXPECT_EQ(o.graph_replays, 5);
  Options bad;
  EXPECT_FALSE(ParseOptions({"--ops", "12", "--graph-replays", "2"}, &bad, &err));
  EXPECT_NE(err.find("multiple of 8"), std::string::npos) << err;
  for (const char* fault : {"skip:rank=1:op=16", "mismatch:rank=1:op=20:field=count"}) {
    Options b;
    EXPECT_FALSE(ParseOptions({"--ops", "16", "--graph-replays", "2", "--fault", fault}, &b, &err))
        << fault;
    EXPECT_NE(err.find("CUDA-graph replay"), std::string::npos) << err;
  }
  EXPECT_FALSE(ParseOptions({"--graph-replays", "-1"}, &bad, &err));
}

}  // namespace
}  // namespace emu
}  // namespace flightrec

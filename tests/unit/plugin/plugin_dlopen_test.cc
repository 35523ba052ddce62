// Loads the built libnccl-profiler-flightrec.so exactly as NCCL does
// (dlopen RTLD_NOW|RTLD_LOCAL, dlsym ncclProfiler_vN), drives each API
// version through NCCL's call sequences, and checks the ring file bytes.
// The recorder is process-global, so every scenario runs in a forked child;
// the parent inspects the file the child left behind.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "flightrec/record_format.h"
#include "support/files.h"
#include "support/plugin_child.h"
#include "support/ring_image.h"
#include "unit/plugin/plugin_driver.h"

#ifndef FLIGHTREC_PLUGIN_PATH
#error "FLIGHTREC_PLUGIN_PATH must name the built plugin"
#endif

namespace flightrec {
namespace testing_plugin {
namespace {

using testing::RingImage;

using Env = testing::PluginEnv;

constexpr int kDefaultMask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh |
                             abi::kProfileCollApi | abi::kProfileP2pApi | abi::kProfileProxyOp;

class PluginTest : public testing::PluginChildTest {
 protected:
  PluginTest() : PluginChildTest("plugin") {}

  // Runs body(lib) in a child with a fresh recorder; returns its exit code
  // (100 + signal number when it died).
  template <typename Body>
  int RunInChild(Body body, const Env& env = {}) {
    return testing::RunPluginInChild(dir_, env, nullptr,
                                     [&](void* lib, void*) { return body(lib); });
  }
};

// One AllReduce (API events, Coll, 2 KernelCh), then a Send (ProxyOp with
// one network step) and a Recv (one KernelCh), as NCCL orders them.
template <int V>
int DriveCollAndSendRecv(void* lib) {
  const auto* table = Table<V>(lib);
  CHILD_REQUIRE(table != nullptr, 2);
  CHILD_REQUIRE(strcmp(table->name, "flightrec") == 0, 3);
  Driver<V> drv(table);
  int mask = 0;
  CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 4);
  CHILD_REQUIRE(drv.ctx() != nullptr, 5);
  // v6+ add the copy-engine bits, v7 KernelPhase (docs/plugin.md).
  CHILD_REQUIRE((mask & kDefaultMask) == kDefaultMask, 6);
  CHILD_REQUIRE(((mask & abi::kProfileKernelPhase) != 0) == (V >= 7), 6);

  // API-level types exist from v5 (v1-v4 descriptors have an 8-bit type).
  void* group_api = V >= 5 ? drv.StartDeclined(emu::Ev::kGroupApi) : nullptr;
  CHILD_REQUIRE(group_api == nullptr, 7);
  drv.Record(group_api, abi::kGroupStartApiStop, nullptr);
  void* coll_api = drv.StartCollApi();
  CHILD_REQUIRE(V < 5 || coll_api != nullptr, 8);
  drv.Stop(coll_api);
  drv.Record(group_api, abi::kGroupEndApiStart, nullptr);
  CHILD_REQUIRE(V < 5 || drv.StartDeclined(emu::Ev::kKernelLaunch) == nullptr, 9);
  // NCCL 2.23-2.27 (tables v1-v4) start Coll/P2p only under an accepted
  // Group handle (docs/design/nccl.md §Activation mask); from v5 on the Group is not needed.
  void* group = drv.StartDeclined(emu::Ev::kGroup);
  CHILD_REQUIRE(V >= 5 ? group == nullptr : group != nullptr, 9);

  void* coll = drv.StartColl(V >= 5 ? coll_api : group);
  CHILD_REQUIRE(coll != nullptr, 10);
  // The proxy thread may start KernelCh before the launch thread stops Coll.
  void* k0 = drv.StartKernelCh(coll, 0);
  void* k1 = drv.StartKernelCh(coll, 1);
  CHILD_REQUIRE(V < 3 || (k0 != nullptr && k1 != nullptr), 11);
  drv.Stop(coll);
  drv.Stop(coll);  // repeated stops are tolerated
  drv.Stop(group);
  drv.StopKernelCh(k0, 0);
  drv.StopKernelCh(k1, 1);
  // v4+: the stop came with KernelChStop, so a repeated stopEvent is a no-op
  // (on v3 stopEvent itself is the stop).
  if (V >= 4) drv.Stop(k1);

  void* send_api = drv.StartP2pApi("Send");
  drv.Stop(send_api);
  void* recv_api = drv.StartP2pApi("Recv");
  drv.Stop(recv_api);
  void* send = drv.StartP2p(send_api, true);
  void* recv = drv.StartP2p(recv_api, false);
  CHILD_REQUIRE(send != nullptr && recv != nullptr, 12);
  void* proxy_op = drv.StartProxyOp(send, static_cast<int32_t>(getpid()));
  CHILD_REQUIRE(proxy_op != nullptr, 13);
  drv.NetStep(proxy_op);
  drv.Stop(send);
  drv.Stop(recv);
  drv.Stop(proxy_op);
  void* kr = drv.StartKernelCh(recv, 0);
  drv.StopKernelCh(kr, 0);
  drv.Finalize();
  return 0;
}

template <int V>
void CheckCollAndSendRecv(const RingImage& ring, uint32_t region) {
  SCOPED_TRACE("API v" + std::to_string(V));
  EXPECT_EQ(ring.header().api_version, static_cast<uint32_t>(V));
  for (uint32_t c = 0; c < format::kNumDropCauses; ++c) {
    EXPECT_EQ(ring.header().drops[c], 0u) << "drop cause " << c;
  }
  const format::RegionDesc rd = ring.Region(region);
  EXPECT_EQ(rd.state, static_cast<uint32_t>(format::kRegionFinalized));
  EXPECT_EQ(rd.comm_id, kCommId);
  EXPECT_EQ(rd.rank, kRank);
  EXPECT_EQ(rd.nranks, V >= 4 ? kNranks : 0);
  EXPECT_STREQ(rd.comm_name, kCommName);
  EXPECT_EQ((rd.flags & format::kRegionIdentityFromInit) != 0, V >= 4);
  EXPECT_EQ(rd.head, 3u);
  EXPECT_EQ(rd.coll_count, 1u);
  EXPECT_EQ(rd.p2p_count, 2u);

  const uint8_t api_flag = V >= 5 ? format::kFlagHasApi : 0;
  const format::Record coll = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(coll, 0));
  EXPECT_EQ(coll.op_index, 0u);
  EXPECT_EQ(coll.func, format::kFuncAllReduce);
  EXPECT_EQ(coll.datatype, format::kTypeFloat32);
  // The call's datatype, from CollApi (v5+).
  EXPECT_EQ(coll.api_datatype, V >= 5 ? format::kTypeFloat32 : format::kTypeUnknown);
  EXPECT_EQ(coll.type_size, 4);
  EXPECT_EQ(coll.count, kCollCount);
  EXPECT_EQ(coll.nccl_seq, kCollSeq);
  EXPECT_EQ(coll.root_or_peer, 0);
  EXPECT_EQ(coll.algo, format::kAlgoRing);
  EXPECT_EQ(coll.proto, format::kProtoSimple);
  EXPECT_EQ(coll.n_channels, kCollChannels);
  EXPECT_EQ(coll.n_warps, kCollWarps);
  EXPECT_EQ(coll.flags & ~format::kFlagGpuTimed, api_flag);
  EXPECT_EQ(coll.user_tag, V >= 7 ? kUserTag : 0u);
  EXPECT_EQ(coll.stream, V >= 5 ? kStream : 0u);
  EXPECT_EQ(coll.t_api_ns != 0, V >= 5);
  EXPECT_NE(coll.t_enqueue_ns, 0u);
  EXPECT_LE(coll.t_api_ns, coll.t_enqueue_ns);
  EXPECT_GE(coll.t_enqueued_ns, coll.t_enqueue_ns);
  EXPECT_EQ(coll.channels_started, V >= 3 ? 2 : 0);
  EXPECT_EQ(coll.channels_stopped, V >= 3 ? 2 : 0);
  EXPECT_EQ(coll.state, V >= 3 ? format::kOpDone : format::kOpEnqueued);
  EXPECT_EQ(coll.gpu_start_raw, V >= 4 ? kGpuStartBase : 0u);
  EXPECT_EQ(coll.gpu_end_raw, V >= 4 ? kGpuStopBase + 1 : 0u);
  EXPECT_EQ(coll.proxy_ops_started, 0);

  const format::Record send = ring.Record(region, 1);
  ASSERT_TRUE(RingImage::Valid(send, 1));
  EXPECT_EQ(send.op_index, 0u);
  EXPECT_EQ(send.func, format::kFuncSend);
  EXPECT_EQ(send.datatype, format::kTypeInt32);
  EXPECT_EQ(send.api_datatype, V >= 5 ? format::kTypeInt32 : format::kTypeUnknown);
  EXPECT_EQ(send.count, kSendCount);
  EXPECT_EQ(send.root_or_peer, kSendPeer);
  EXPECT_EQ(send.nccl_seq, UINT64_MAX);
  EXPECT_EQ(send.flags, format::kFlagP2p | api_flag);
  EXPECT_EQ(send.n_channels, V >= 4 ? 1 : 0);
  EXPECT_EQ(send.user_tag, V >= 7 ? kUserTag : 0u);
  EXPECT_EQ(send.proxy_ops_started, 1);
  EXPECT_EQ(send.proxy_ops_stopped, 1);
  EXPECT_EQ(send.net_bytes, kStepBytes);
  EXPECT_EQ(send.state, format::kOpDone);

  const format::Record recv = ring.Record(region, 2);
  ASSERT_TRUE(RingImage::Valid(recv, 2));
  EXPECT_EQ(recv.op_index, 0u);
  EXPECT_EQ(recv.func, format::kFuncRecv);
  EXPECT_EQ(recv.root_or_peer, kRecvPeer);
  EXPECT_EQ(recv.flags, format::kFlagP2p | api_flag);
  EXPECT_EQ(recv.state, V >= 3 ? format::kOpDone : format::kOpEnqueued);
  EXPECT_EQ(recv.gpu_end_raw, V >= 4 ? kGpuStopBase : 0u);
}

#define FLIGHTREC_VERSION_TEST(N)                      \
  TEST_F(PluginTest, CollAndSendRecvV##N) {            \
    ASSERT_EQ(RunInChild(DriveCollAndSendRecv<N>), 0); \
    RingImage ring;                                    \
    uint32_t region = 0;                               \
    ASSERT_TRUE(LoadRing(&ring, &region));             \
    CheckCollAndSendRecv<N>(ring, region);             \
  }
FLIGHTREC_VERSION_TEST(1)
FLIGHTREC_VERSION_TEST(2)
FLIGHTREC_VERSION_TEST(3)
FLIGHTREC_VERSION_TEST(4)
FLIGHTREC_VERSION_TEST(5)
FLIGHTREC_VERSION_TEST(6)
FLIGHTREC_VERSION_TEST(7)
#undef FLIGHTREC_VERSION_TEST

// NULL parents, foreign pointers as parent/context/handle: declined or
// ignored, counted, never dereferenced.
TEST_F(PluginTest, NullParentAndForeignPointers) {
  ASSERT_EQ(RunInChild([](void* lib) {
              Driver<5> drv(Table<5>(lib));
              int mask = 0;
              CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess && drv.ctx() != nullptr, 2);
              void* coll = drv.StartColl(nullptr);  // API events declined upstream
              CHILD_REQUIRE(coll != nullptr, 3);
              CHILD_REQUIRE(drv.StartKernelCh(nullptr, 0) == nullptr, 4);
              int local = 0;
              CHILD_REQUIRE(drv.StartKernelCh(&local, 0) == nullptr, 5);  // foreign #1
              drv.Stop(&local);                                           // foreign #2
              drv.Stop(nullptr);
              drv.Record(nullptr, abi::kKernelChStop, nullptr);
              void* ctx = drv.ctx();
              drv.set_ctx(&local);
              CHILD_REQUIRE(drv.StartColl(nullptr) == nullptr, 6);  // foreign #3
              drv.set_ctx(ctx);
              drv.Stop(coll);
              drv.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  EXPECT_EQ(ring.header().drops[format::kDropForeignHandle], 3u);
  const format::Record coll = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(coll, 0));
  EXPECT_EQ(coll.flags & format::kFlagHasApi, 0);
  EXPECT_EQ(coll.t_api_ns, 0u);
  EXPECT_EQ(coll.state, format::kOpEnqueued);
  EXPECT_EQ(ring.Region(region).head, 1u);
}

// A KernelCh whose op was overwritten by 64 newer ops (ring of 64) changes
// nothing and is counted stale.
TEST_F(PluginTest, StaleHandleAfterWrap) {
  ASSERT_EQ(RunInChild([](void* lib) {
              Driver<5> drv(Table<5>(lib));
              int mask = 0;
              CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess && drv.ctx() != nullptr, 2);
              void* old_op = drv.StartColl(nullptr, 0);
              CHILD_REQUIRE(old_op != nullptr, 3);
              drv.Stop(old_op);
              for (uint64_t i = 1; i <= 64; ++i) drv.Stop(drv.StartColl(nullptr, i));
              void* k = drv.StartKernelCh(old_op, 0);
              drv.StopKernelCh(k, 0);
              drv.Stop(old_op);
              drv.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  ASSERT_EQ(ring.header().region_capacity, 64u);
  const format::RegionDesc rd = ring.Region(region);
  EXPECT_EQ(rd.head, 65u);
  EXPECT_GE(rd.drops[format::kDropStaleHandle], 3u);  // KernelCh start, stop, Coll stop
  const format::Record newest = ring.Record(region, 64);
  ASSERT_TRUE(RingImage::Valid(newest, 64));
  EXPECT_EQ(newest.nccl_seq, 64u);
  EXPECT_EQ(newest.channels_started, 0);
  EXPECT_EQ(newest.gpu_start_raw, 0u);
}

// A CUDA-graph replay's Coll names the capture's CollApi handle, whose
// parked entry newer API calls recycle (256 per comm): the op keeps the
// graph flag, loses only the API time, and nothing is counted dropped. An
// eager call's recycled entry is still a drop.
TEST_F(PluginTest, AGraphReplayKeepsItsFlagAfterItsApiEntryIsRecycled) {
  ASSERT_EQ(RunInChild([](void* lib) {
              Driver<5> drv(Table<5>(lib));
              int mask = 0;
              CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess && drv.ctx() != nullptr, 2);
              void* captured = drv.StartCollApi(/*graph_captured=*/true);
              CHILD_REQUIRE(captured != nullptr, 3);
              drv.Stop(captured);
              void* eager = drv.StartCollApi();
              drv.Stop(eager);
              for (int i = 0; i < 300; ++i) drv.Stop(drv.StartCollApi());
              drv.Stop(drv.StartColl(captured, 0));  // a replay, long after the capture
              drv.Stop(drv.StartColl(eager, 1));     // a stale eager parent
              drv.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  const format::Record replay = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(replay, 0));
  EXPECT_EQ(replay.flags & (format::kFlagGraphCaptured | format::kFlagHasApi),
            format::kFlagGraphCaptured);
  EXPECT_EQ(replay.t_api_ns, 0u);
  EXPECT_EQ(replay.api_datatype, format::kTypeUnknown);  // the recycled entry's is not taken
  const format::Record stale = ring.Record(region, 1);
  ASSERT_TRUE(RingImage::Valid(stale, 1));
  EXPECT_EQ(stale.flags & (format::kFlagGraphCaptured | format::kFlagHasApi), 0);
  EXPECT_EQ(ring.header().drops[format::kDropNoApiSlot], 1u);
}

// Events for a finalized comm's context are dropped, while another comm of
// the process keeps recording.
TEST_F(PluginTest, ContextAfterFinalizeIsStale) {
  ASSERT_EQ(RunInChild([](void* lib) {
              Driver<5> a(Table<5>(lib));
              Driver<5> b(Table<5>(lib));
              int mask = 0;
              CHILD_REQUIRE(a.Init(&mask) == abi::kSuccess && a.ctx() != nullptr, 2);
              CHILD_REQUIRE(b.Init(&mask) == abi::kSuccess && b.ctx() != nullptr, 3);
              CHILD_REQUIRE(a.ctx() != b.ctx(), 4);
              a.Finalize();
              CHILD_REQUIRE(a.StartColl(nullptr) == nullptr, 5);
              CHILD_REQUIRE(b.StartColl(nullptr) != nullptr, 6);
              b.Finalize();
              return 0;
            }),
            0);
  std::string error;
  RingImage ring;
  ASSERT_TRUE(ring.Load(dir_, &error)) << error;
  EXPECT_EQ(ring.header().drops[format::kDropStaleHandle], 1u);
}

// PXN: a ProxyOp from another process is declined before its parent is
// looked at; ours is recorded.
TEST_F(PluginTest, ForeignProxyOpPidDeclined) {
  ASSERT_EQ(RunInChild([](void* lib) {
              Driver<5> drv(Table<5>(lib));
              int mask = 0;
              CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess && drv.ctx() != nullptr, 2);
              void* coll = drv.StartColl(nullptr);
              CHILD_REQUIRE(coll != nullptr, 3);
              const int32_t other = static_cast<int32_t>(getpid()) + 1;
              void* foreign = drv.StartProxyOp(coll, other);
              CHILD_REQUIRE(foreign == nullptr, 4);
              drv.NetStep(foreign);  // NULL parent: declined, not counted
              void* ours = drv.StartProxyOp(coll, static_cast<int32_t>(getpid()));
              CHILD_REQUIRE(ours != nullptr, 5);
              drv.Stop(coll);
              drv.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  // Counted apart from garbage handles: PXN is normal on multi-node jobs.
  EXPECT_EQ(ring.header().drops[format::kDropPxnForeign], 1u);
  EXPECT_EQ(ring.header().drops[format::kDropForeignHandle], 0u);
  EXPECT_GE(ring.header().version_minor, 1);  // kDropPxnForeign arrived with format 1.1
  const format::Record coll = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(coll, 0));
  EXPECT_EQ(coll.proxy_ops_started, 1);
  EXPECT_EQ(coll.net_bytes, 0u);
}

// A directory we cannot create: init still succeeds, declines the comm, and
// says why through NCCL's logger; every later call tolerates the NULL
// context.
TEST_F(PluginTest, UnwritableDirDeclinesAndLogs) {
  const std::string blocker = dir_ + "/not-a-dir";
  FILE* f = fopen(blocker.c_str(), "w");
  ASSERT_NE(f, nullptr);
  fclose(f);
  ASSERT_EQ(RunInChild(
                [](void* lib) {
                  Driver<5> drv(Table<5>(lib));
                  int mask = 0;
                  CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 2);
                  CHILD_REQUIRE(drv.ctx() == nullptr, 3);
                  CHILD_REQUIRE(g_log_calls > 0 && g_log_text[0] != '\0', 4);
                  fprintf(stderr, "child: logged: %s\n", g_log_text);
                  CHILD_REQUIRE(mask == 0, 5);  // a declined comm asks for nothing
                  CHILD_REQUIRE(drv.StartCollApi() == nullptr, 6);
                  CHILD_REQUIRE(drv.StartColl(nullptr) == nullptr, 7);
                  drv.Stop(nullptr);
                  drv.Finalize();
                  return 0;
                },
                {{"NCCL_FLIGHTREC_DIR", blocker + "/sub"}}),
            0);
}

// Child body: init of ncclProfiler_vV with the mask preset to `before`;
// the comm is declined or not as `declined` says, NCCL gets `after` back and
// the plugin's last log line names `logged` (when given).
template <int V>
int InitGivesMask(void* lib, int before, bool declined, int after, const char* logged = nullptr) {
  Driver<V> drv(Table<V>(lib));
  int mask = before;
  CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 2);
  CHILD_REQUIRE((drv.ctx() == nullptr) == declined, 3);
  CHILD_REQUIRE(mask == after, 4);
  CHILD_REQUIRE(logged == nullptr || strstr(g_log_text, logged) != nullptr, 5);
  drv.Finalize();
  return 0;
}

TEST_F(PluginTest, DisabledDeclinesWithoutTouchingMask) {
  ASSERT_EQ(RunInChild(
                [](void* lib) {
                  return InitGivesMask<7>(lib, abi::kProfileGroup, true, abi::kProfileGroup);
                },
                {{"NCCL_FLIGHTREC_ENABLE", "0"}}),
            0);
}

TEST_F(PluginTest, EventMaskOverrideReplacesMask) {
  ASSERT_EQ(RunInChild(
                [](void* lib) {
                  return InitGivesMask<5>(lib, abi::kProfileGroup, false,
                                          abi::kProfileColl | abi::kProfileP2p);
                },
                {{"NCCL_FLIGHTREC_EVENT_MASK", "0x6"}}),
            0);
}

TEST_F(PluginTest, NetStepsAddsProxyStepAndKeepsOtherBits) {
  ASSERT_EQ(RunInChild(
                [](void* lib) {
                  return InitGivesMask<4>(
                      lib, abi::kProfileGroup, false,
                      abi::kProfileGroup | kDefaultMask | abi::kProfileProxyStep);
                },
                {{"NCCL_FLIGHTREC_NET_STEPS", "1"}}),
            0);
}

TEST_F(PluginTest, BadEventMaskFallsBackAndWarns) {
  ASSERT_EQ(RunInChild(
                [](void* lib) {
                  return InitGivesMask<5>(lib, 0, false, kDefaultMask, "NCCL_FLIGHTREC_EVENT_MASK");
                },
                {{"NCCL_FLIGHTREC_EVENT_MASK", "coll"}}),
            0);
}

}  // namespace
}  // namespace testing_plugin
}  // namespace flightrec

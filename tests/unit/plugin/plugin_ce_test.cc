// Copy-engine collectives through the v6 and v7 tables (docs/design/nccl.md
// §Copy-engine collectives): CeColl recorded as a collective of its comm,
// CeSync/CeBatch as its progress, completion through CUDA events when a
// driver is loaded (the emulator's fake libcuda.so.1), kFlagNoCompletion
// without one. Every scenario runs in a forked child (the recorder is
// process-global); the parent reads the ring file it left.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "flightrec/record_format.h"
#include "support/files.h"
#include "support/plugin_child.h"
#include "support/ring_image.h"
#include "unit/plugin/plugin_driver.h"

#ifndef FLIGHTREC_PLUGIN_PATH
#error "FLIGHTREC_PLUGIN_PATH must name the built plugin"
#endif
#ifndef FLIGHTREC_FAKE_CUDA_PATH
#error "FLIGHTREC_FAKE_CUDA_PATH must name the emulator's fake libcuda.so.1"
#endif

namespace flightrec {
namespace testing_plugin {
namespace {

using testing::RingImage;

constexpr uint32_t kCeSeq = 6;  // ceSeqNum of the first CE op (3 before it)
constexpr uint64_t kCeBytes = 4096;
constexpr uint64_t kUserTag = 77;
void* const kStream = reinterpret_cast<void*>(uintptr_t{0x7f0000005000});

using StreamFn = void (*)(void*);

class PluginCeTest : public testing::PluginChildTest {
 public:
  PluginCeTest() : PluginChildTest("plugin-ce") {}

  // body(lib, fake_cuda) in a child; `cuda`: load the fake driver first.
  template <typename Body>
  int RunInChild(bool cuda, Body body) {
    return testing::RunPluginInChild(dir_, {}, cuda ? FLIGHTREC_FAKE_CUDA_PATH : nullptr, body);
  }
  using PluginChildTest::dir_;
  using PluginChildTest::LoadRing;
};

// ncclLaunchCeColl's sequence for one AllGather of bfloat16 (the CollApi
// event carries the user's type; CeColl bytes as ncclInt8). `between` runs
// after the copies are queued, before CeColl stops (the emulated stream's
// enqueue). Returns the CeColl handle's stop status through `ok`.
template <int V, typename Between>
bool DriveCeAllGather(Driver<V>* drv, uint32_t ce_seq, const char* sync, Between between) {
  emu::EventDesc api;
  api.type = emu::Ev::kCollApi;
  api.func = format::kFuncAllGather;
  api.count = kCeBytes / 2;
  api.datatype = format::kTypeBfloat16;
  api.stream = kStream;
  api.user_tag = kUserTag;
  void* coll_api = drv->Start(api);
  if (coll_api == nullptr) return false;
  drv->Stop(coll_api);
  emu::EventDesc ce;
  ce.type = emu::Ev::kCeColl;
  ce.parent = coll_api;
  ce.func = format::kFuncAllGather;
  ce.count = kCeBytes;
  ce.datatype = format::kTypeInt8;
  ce.seq = ce_seq;
  ce.ce_seq = ce_seq;
  ce.sync_strategy = sync;
  ce.num_batches = 1;
  ce.stream = kStream;
  ce.user_tag = kUserTag;
  void* h = drv->Start(ce);
  if (h == nullptr) return false;
  emu::EventDesc s;
  s.type = emu::Ev::kCeSync;
  s.parent = h;
  s.n_ranks = 4;
  drv->Stop(drv->Start(s));  // NCCL records no state for CE events
  emu::EventDesc b;
  b.type = emu::Ev::kCeBatch;
  b.parent = h;
  b.num_ops = 3;
  b.total_bytes = 3 * kCeBytes;
  drv->Stop(drv->Start(b));
  between();
  s.is_complete = true;
  drv->Stop(drv->Start(s));
  drv->Stop(h);
  return true;
}

// Without a CUDA driver: recorded, kFlagNoCompletion, never done; the next
// kernel collective takes the next op_index.
template <int V>
void CheckWithoutCuda(PluginCeTest* t) {
  SCOPED_TRACE("API v" + std::to_string(V));
  ASSERT_EQ(t->RunInChild(false,
                          [](void* lib, void*) {
                            Driver<V> drv(Table<V>(lib));
                            int mask = 0;
                            CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 2);
                            const int ce_bits =
                                abi::kProfileCeColl | abi::kProfileCeSync | abi::kProfileCeBatch;
                            CHILD_REQUIRE((mask & ce_bits) == ce_bits, 3);
                            CHILD_REQUIRE(DriveCeAllGather(&drv, kCeSeq, "MC", [] {}), 4);
                            void* coll_api = drv.StartCollApi();
                            drv.Stop(coll_api);
                            void* coll = drv.StartColl(coll_api);
                            CHILD_REQUIRE(coll != nullptr, 5);
                            drv.Stop(coll);
                            CHILD_REQUIRE(DriveCeAllGather(&drv, kCeSeq + 2, "UC", [] {}), 6);
                            drv.Finalize();
                            return 0;
                          }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(t->LoadRing(&ring, &region));
  const format::Record ce = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(ce, 0));
  EXPECT_EQ(ce.op_index, 0u);
  EXPECT_EQ(ce.nccl_seq, kCeSeq);
  EXPECT_EQ(ce.func, format::kFuncAllGather);
  EXPECT_EQ(ce.count, kCeBytes);
  EXPECT_EQ(ce.datatype, format::kTypeInt8);
  EXPECT_EQ(ce.api_datatype, format::kTypeBfloat16);
  EXPECT_EQ(ce.algo, format::kAlgoCeMulticast);
  EXPECT_EQ(ce.stream, reinterpret_cast<uintptr_t>(kStream));
  EXPECT_EQ(ce.flags & format::kFlagCopyEngine, format::kFlagCopyEngine);
  EXPECT_EQ(ce.flags & format::kFlagNoCompletion, format::kFlagNoCompletion);
  EXPECT_EQ(ce.flags & format::kFlagHasApi, format::kFlagHasApi);
  EXPECT_EQ(ce.flags & format::kFlagP2p, 0);
  EXPECT_EQ(ce.user_tag, V >= 7 ? kUserTag : 0u);
  EXPECT_EQ(ce.net_bytes, 3 * kCeBytes);  // the CeBatch's totalBytes
  EXPECT_NE(ce.t_enqueued_ns, 0u);        // CeColl stop
  EXPECT_NE(ce.t_last_progress_ns, 0u);   // CeSync/CeBatch
  EXPECT_EQ(ce.state, format::kOpEnqueued);
  const format::Record coll = ring.Record(region, 1);
  ASSERT_TRUE(RingImage::Valid(coll, 1));
  EXPECT_EQ(coll.op_index, 1u);  // CE ops are collectives of the comm
  EXPECT_EQ(coll.flags & format::kFlagCopyEngine, 0);
  const format::Record ce2 = ring.Record(region, 2);
  ASSERT_TRUE(RingImage::Valid(ce2, 2));
  EXPECT_EQ(ce2.op_index, 2u);
  EXPECT_EQ(ce2.nccl_seq, kCeSeq + 2);
  EXPECT_EQ(ce2.algo, format::kAlgoCeUnicast);
  // Ops that cannot complete are not counted open at finalize.
  EXPECT_EQ(ring.Region(region).open_at_finalize, 1u);  // the kernel AllReduce (no KernelCh)
}

TEST_F(PluginCeTest, RecordedWithoutCudaV6) { CheckWithoutCuda<6>(this); }
TEST_F(PluginCeTest, RecordedWithoutCudaV7) { CheckWithoutCuda<7>(this); }

// With the (fake) driver: the first op's copies complete on the stream (its
// stop event too), the second's never do (its start event completes: the
// stream reached it). Finalize polls the events once more.
TEST_F(PluginCeTest, CompletionThroughCudaEvents) {
  ASSERT_EQ(
      RunInChild(
          true,
          [](void* lib, void* cuda) {
            auto enqueued = reinterpret_cast<StreamFn>(dlsym(cuda, "flightrec_fake_cuda_enqueued"));
            auto completed =
                reinterpret_cast<StreamFn>(dlsym(cuda, "flightrec_fake_cuda_completed"));
            CHILD_REQUIRE(enqueued != nullptr && completed != nullptr, 2);
            Driver<6> drv(Table<6>(lib));
            int mask = 0;
            CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 3);
            CHILD_REQUIRE(DriveCeAllGather(&drv, kCeSeq, "MC", [&] { enqueued(kStream); }), 4);
            completed(kStream);  // the stream ran the first op
            CHILD_REQUIRE(DriveCeAllGather(&drv, kCeSeq + 2, "MC", [&] { enqueued(kStream); }), 5);
            drv.Finalize();
            return 0;
          }),
      0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  const format::Record done = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(done, 0));
  EXPECT_EQ(done.flags & format::kFlagNoCompletion, 0);
  EXPECT_EQ(done.state, format::kOpDone);
  const format::Record running = ring.Record(region, 1);
  ASSERT_TRUE(RingImage::Valid(running, 1));
  EXPECT_EQ(running.flags & format::kFlagNoCompletion, 0);
  EXPECT_EQ(running.state, format::kOpRunning);
  EXPECT_NE(ring.Region(region).flags & format::kRegionCompletionTracked, 0u);
  EXPECT_EQ(ring.Region(region).open_at_finalize, 1u);
}

// A v5 table never sees CE events (NCCL's shim drops them); the mask it is
// given has no CE bits.
TEST_F(PluginCeTest, V5TableAsksForNoCeEvents) {
  ASSERT_EQ(RunInChild(false,
                       [](void* lib, void*) {
                         Driver<5> drv(Table<5>(lib));
                         int mask = 0;
                         CHILD_REQUIRE(drv.Init(&mask) == abi::kSuccess, 2);
                         CHILD_REQUIRE((mask & (abi::kProfileCeColl | abi::kProfileCeSync |
                                                abi::kProfileCeBatch)) == 0,
                                       3);
                         drv.Finalize();
                         return 0;
                       }),
            0);
}

}  // namespace
}  // namespace testing_plugin
}  // namespace flightrec

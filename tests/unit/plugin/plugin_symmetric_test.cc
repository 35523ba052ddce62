// Symmetric kernels and the NCCL 2.31 behaviour, through the built plugin's
// ncclProfiler_v7 table loaded as NCCL loads it: isSymColl and kernelVariant
// recorded, KernelPhase counted per channel, the per-version default mask
// written to NCCL and to the region, events outside that mask flagging the
// region, kernel channels never stopped (abort), and KernelCh events from a
// thread other than the proxy thread (NCCL 2.31's profiler thread). Each
// scenario runs in a forked child (the recorder is process-global); the
// parent reads the ring file the child left. The descriptors are NCCL's v7
// layout (plugin/nccl/profiler_v7.h), filled as src/plugin/profiler.cc
// fills them.
#include <dlfcn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
#include "plugin/enum_map.h"
#include "plugin/nccl/profiler_abi.h"
#include "support/files.h"
#include "support/plugin_child.h"
#include "support/ring_image.h"

#ifndef FLIGHTREC_PLUGIN_PATH
#error "FLIGHTREC_PLUGIN_PATH must name the built plugin"
#endif

// libnccl's ncclGetVersion and its process-global ncclProfilerEventMask, as
// the plugin finds them in a process where NCCL loaded it (this binary
// exports the symbol: ENABLE_EXPORTS).
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  *version = 23102;  // 2.31.2
  return 0;
}
int g_nccl_event_mask = 0;  // NOLINT: NCCL's global

namespace flightrec {
namespace {

namespace abi = nccl_abi;
using testing::RingImage;
using Env = testing::PluginEnv;

constexpr uint64_t kCommId = 0x5E11C0FFEEULL;
constexpr int kRank = 1;
constexpr int kNranks = 4;
constexpr int kBaseMask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh |
                          abi::kProfileCollApi | abi::kProfileP2pApi | abi::kProfileProxyOp;

// NCCL's strings (static in libnccl): the plugin caches them by pointer.
constexpr const char* kPhaseNames[] = {"initial_sync", "compute", "final_sync"};

// One ncclProfiler_v7 table with NCCL's descriptors.
class V7 {
 public:
  explicit V7(void* lib) : t_(static_cast<const abi::ProfilerV7*>(dlsym(lib, "ncclProfiler_v7"))) {}
  bool ok() const { return t_ != nullptr; }
  int Init(int* mask) {
    return t_->init(&ctx_, kCommId, mask, "symtest", 1, kNranks, kRank, nullptr);
  }
  void* ctx() const { return ctx_; }
  void Finalize() { t_->finalize(ctx_); }

  void* Start(abi::EventDescrV7* d) {
    void* h = reinterpret_cast<void*>(0xdeadbeef);  // the plugin must overwrite it
    t_->startEvent(ctx_, &h, d);
    return h;
  }
  // A Coll as ncclProfilerStartTaskEvents fills it: a symmetric plan gives
  // the variant as kernelVariant, its tail as algo and "" as proto.
  void* StartColl(uint64_t seq, const char* variant, uint8_t n_channels) {
    abi::EventDescrV7 d{};
    d.type = abi::kProfileColl;
    d.rank = kRank;
    d.coll.seqNumber = seq;
    d.coll.func = "AllReduce";
    d.coll.count = 4096;
    d.coll.datatype = "ncclBfloat16";
    d.coll.nChannels = n_channels;
    d.coll.nWarps = 16;
    d.coll.isSymColl = variant != nullptr ? 1 : 0;
    d.coll.kernelVariant = variant;
    if (variant != nullptr) {
      const char* u = strchr(variant, '_');
      d.coll.algo = u != nullptr ? u + 1 : variant;
      d.coll.proto = "";
    } else {
      d.coll.algo = "RING";
      d.coll.proto = "SIMPLE";
    }
    return Start(&d);
  }
  void* StartKernelCh(void* op, uint8_t channel, uint64_t ptimer) {
    abi::EventDescrV7 d{};
    d.type = abi::kProfileKernelCh;
    d.parentObj = op;
    d.kernelCh.channelId = channel;
    d.kernelCh.pTimer = ptimer;
    return Start(&d);
  }
  void StopKernelCh(void* ch, uint64_t ptimer) {
    abi::StateArgsV7 a{};
    a.kernelCh.pTimer = ptimer;
    t_->recordEventState(ch, abi::kKernelChStop, &a);
    t_->stopEvent(ch);
  }
  // A KernelPhase start and, when `stop`, its KernelPhaseStop and stopEvent.
  void* Phase(void* ch, uint8_t channel, uint8_t phase, uint64_t ptimer, bool stop) {
    abi::EventDescrV7 d{};
    d.type = abi::kProfileKernelPhase;
    d.parentObj = ch;
    d.kernelPhase.channelId = channel;
    d.kernelPhase.phaseId = phase;
    d.kernelPhase.phaseName = kPhaseNames[phase];
    d.kernelPhase.pTimer = ptimer;
    void* h = Start(&d);
    if (stop && h != nullptr) {
      abi::StateArgsV7 a{};
      a.kernelCh.pTimer = ptimer + 10;
      t_->recordEventState(h, abi::kKernelPhaseStop, &a);
      t_->stopEvent(h);
    }
    return h;
  }
  void* StartProxyOp(void* op) {
    abi::EventDescrV7 d{};
    d.type = abi::kProfileProxyOp;
    d.parentObj = op;
    d.rank = kRank;
    d.proxyOp.pid = getpid();
    d.proxyOp.peer = 0;
    d.proxyOp.nSteps = 1;
    d.proxyOp.isSend = 1;
    return Start(&d);
  }
  void* StartTyped(uint64_t type) {
    abi::EventDescrV7 d{};
    d.type = type;
    return Start(&d);
  }
  void Stop(void* h) { t_->stopEvent(h); }

 private:
  const abi::ProfilerV7* t_;
  void* ctx_ = nullptr;
};

class SymmetricPluginTest : public testing::PluginChildTest {
 protected:
  SymmetricPluginTest() : PluginChildTest("plugin-sym") {}

  template <typename Body>
  int RunInChild(Body body, const Env& env = {}) {
    Env all = {{"NCCL_FLIGHTREC_RECORDS", "4096"},
               {"NCCL_FLIGHTREC_VERDICT", "0"},
               {"NCCL_FLIGHTREC_JOB_ID", "symtest"}};
    all.insert(all.end(), env.begin(), env.end());
    return testing::RunPluginInChild(dir_, all, nullptr, [&](void* lib, void*) {
      V7 p(lib);
      if (!p.ok()) return 91;
      return body(p);
    });
  }
};

// NCCL's kernel names -> the format's variant codes (the slow path behind
// the pointer cache).
TEST(KernelVariantMapTest, MapsEveryNcclNameTheFormatKnows) {
  using plugin::VariantFromName;
  EXPECT_EQ(VariantFromName(nullptr), format::kVariantNone);
  EXPECT_EQ(VariantFromName(""), format::kVariantNone);
  EXPECT_EQ(VariantFromName("AllReduce_AGxLL_R"), format::kVariantAGxLL_R);
  EXPECT_EQ(VariantFromName("AllReduce_AGxLLMC_R"), format::kVariantAGxLLMC_R);
  EXPECT_EQ(VariantFromName("AllReduce_RSxLD_AGxST"), format::kVariantRSxLD_AGxST);
  EXPECT_EQ(VariantFromName("AllReduce_RSxLDMC_AGxSTMC"), format::kVariantRSxLDMC_AGxSTMC);
  EXPECT_EQ(VariantFromName("AllReduce_RSxTmaLD_AGxTmaST"), format::kVariantRSxTmaLD_AGxTmaST);
  EXPECT_EQ(VariantFromName("AllGather_LL"), format::kVariantAllGatherLL);
  EXPECT_EQ(VariantFromName("AllGather_LLMC"), format::kVariantAllGatherLLMC);
  EXPECT_EQ(VariantFromName("AllGather_ST"), format::kVariantAllGatherST);
  EXPECT_EQ(VariantFromName("AllGather_STMC"), format::kVariantAllGatherSTMC);
  EXPECT_EQ(VariantFromName("AllGather_TmaST"), format::kVariantAllGatherTmaST);
  EXPECT_EQ(VariantFromName("AllGather_TmaSTMC"), format::kVariantAllGatherTmaSTMC);
  EXPECT_EQ(VariantFromName("ReduceScatter_LL"), format::kVariantReduceScatterLL);
  EXPECT_EQ(VariantFromName("ReduceScatter_LD"), format::kVariantReduceScatterLD);
  EXPECT_EQ(VariantFromName("ReduceScatter_LDMC"), format::kVariantReduceScatterLDMC);
  // Names the format does not know (newer NCCL kernels, "Unknown") are
  // recorded as "other", never as a wrong variant.
  EXPECT_EQ(VariantFromName("AllGather_RailRing_LsaSTMC"), format::kVariantOther);
  EXPECT_EQ(VariantFromName("ReduceScatter_TmaLD"), format::kVariantOther);
  EXPECT_EQ(VariantFromName("Unknown"), format::kVariantOther);
  EXPECT_EQ(VariantFromName("AllGather_LD"), format::kVariantOther);  // LD is ReduceScatter's
}

TEST(KernelVariantMapTest, CachedByPointerLikeTheOtherNames) {
  static const char name[] = "AllGather_STMC";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(plugin::MapName(plugin::NameKind::kVariant, name), format::kVariantAllGatherSTMC);
  }
  EXPECT_EQ(plugin::MapName(plugin::NameKind::kVariant, nullptr), format::kVariantNone);
}

// A symmetric AllReduce on two channels: channel 0 reached its final sync,
// channel 1 only computes; no KernelCh stopped (the kernel still runs).
// Then a symmetric plan of two tasks: the head carries the plan's channel
// and completes; the other task carries nChannels 0 and never gets a
// KernelCh (NCCL posts them all to the head).
TEST_F(SymmetricPluginTest, RecordsVariantFlagAndPhaseCounters) {
  ASSERT_EQ(RunInChild([](V7& p) {
              int mask = 0;
              CHILD_REQUIRE(p.Init(&mask) == 0 && p.ctx() != nullptr, 2);
              // The v7 default asks for KernelPhase (and keeps KernelCh).
              CHILD_REQUIRE((mask & kBaseMask) == kBaseMask, 3);
              CHILD_REQUIRE((mask & abi::kProfileKernelPhase) != 0, 3);
              void* op = p.StartColl(7, "AllReduce_AGxLL_R", 2);
              CHILD_REQUIRE(op != nullptr, 4);
              void* ch0 = p.StartKernelCh(op, 0, 1000);
              void* ch1 = p.StartKernelCh(op, 1, 1001);
              CHILD_REQUIRE(ch0 != nullptr && ch1 != nullptr, 5);
              for (uint8_t ph = 0; ph < 3; ++ph) {
                CHILD_REQUIRE(p.Phase(ch0, 0, ph, 1100 + ph, /*stop=*/ph < 2) != nullptr, 6);
              }
              for (uint8_t ph = 0; ph < 2; ++ph) {
                CHILD_REQUIRE(p.Phase(ch1, 1, ph, 1200 + ph, /*stop=*/ph < 1) != nullptr, 7);
              }
              p.Stop(op);
              void* head = p.StartColl(8, "AllGather_LL", 1);
              void* tail = p.StartColl(9, "AllGather_LL", 0);
              CHILD_REQUIRE(head != nullptr && tail != nullptr, 8);
              void* hch = p.StartKernelCh(head, 0, 2000);
              for (uint8_t ph = 0; ph < 3; ++ph) p.Phase(hch, 0, ph, 2100 + ph, true);
              p.StopKernelCh(hch, 2500);
              p.Stop(head);
              p.Stop(tail);
              // A regular collective keeps its algo/proto and counts no phase.
              void* ring = p.StartColl(10, nullptr, 1);
              void* rch = p.StartKernelCh(ring, 0, 3000);
              p.StopKernelCh(rch, 3100);
              p.Stop(ring);
              p.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  for (uint32_t c = 0; c < format::kNumDropCauses; ++c) {
    EXPECT_EQ(ring.header().drops[c], 0u) << format::kDropCauseNames[c];
  }
  const format::RegionDesc rd = ring.Region(region);
  EXPECT_EQ(rd.event_mask & static_cast<uint32_t>(kBaseMask | abi::kProfileKernelPhase),
            static_cast<uint32_t>(kBaseMask | abi::kProfileKernelPhase));
  EXPECT_EQ(rd.flags & format::kRegionMaskOverridden, 0u);
  EXPECT_EQ(rd.head, 4u);

  const format::Record sym = ring.Record(region, 0);
  ASSERT_TRUE(RingImage::Valid(sym, 0));
  EXPECT_EQ(sym.func, format::kFuncAllReduce);
  EXPECT_EQ(sym.nccl_seq, 7u);
  EXPECT_NE(sym.flags & format::kFlagSymmetric, 0);
  EXPECT_EQ(sym.flags & format::kFlagNoCompletion, 0);
  EXPECT_EQ(sym.algo, format::kAlgoSymmetric);
  EXPECT_EQ(sym.proto, format::kVariantAGxLL_R);
  EXPECT_EQ(sym.n_channels, 2);
  EXPECT_EQ(sym.channels_started, 2);
  EXPECT_EQ(sym.channels_stopped, 0);
  EXPECT_EQ(sym.phase_compute_channels, 2);
  EXPECT_EQ(sym.phase_final_channels, 1);
  EXPECT_EQ(sym.state, format::kOpRunning);

  const format::Record head = ring.Record(region, 1);
  ASSERT_TRUE(RingImage::Valid(head, 1));
  EXPECT_EQ(head.proto, format::kVariantAllGatherLL);
  EXPECT_EQ(head.phase_compute_channels, 1);
  EXPECT_EQ(head.phase_final_channels, 1);
  EXPECT_EQ(head.state, format::kOpDone);
  EXPECT_EQ(head.flags & format::kFlagNoCompletion, 0);

  const format::Record tail = ring.Record(region, 2);
  ASSERT_TRUE(RingImage::Valid(tail, 2));
  EXPECT_NE(tail.flags & format::kFlagSymmetric, 0);
  EXPECT_NE(tail.flags & format::kFlagNoCompletion, 0);  // never judged stuck
  EXPECT_EQ(tail.state, format::kOpEnqueued);

  const format::Record regular = ring.Record(region, 3);
  ASSERT_TRUE(RingImage::Valid(regular, 3));
  EXPECT_EQ(regular.flags & (format::kFlagSymmetric | format::kFlagNoCompletion), 0);
  EXPECT_EQ(regular.algo, format::kAlgoRing);
  EXPECT_EQ(regular.proto, format::kProtoSimple);
  EXPECT_EQ(regular.phase_compute_channels, 0);
  EXPECT_EQ(regular.state, format::kOpDone);
}

// Older tables never ask for KernelPhase.
TEST_F(SymmetricPluginTest, V6DefaultMaskHasNoKernelPhase) {
  ASSERT_EQ(RunInChild([](V7&) {
              void* lib = dlopen(FLIGHTREC_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
              const auto* t6 = static_cast<const abi::ProfilerV6*>(dlsym(lib, "ncclProfiler_v6"));
              CHILD_REQUIRE(t6 != nullptr, 2);
              void* ctx = nullptr;
              int mask = 0;
              CHILD_REQUIRE(t6->init(&ctx, kCommId, &mask, "v6", 1, kNranks, kRank, nullptr) == 0,
                            3);
              CHILD_REQUIRE((mask & kBaseMask) == kBaseMask, 4);
              CHILD_REQUIRE((mask & abi::kProfileKernelPhase) == 0, 4);
              t6->finalize(ctx);
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  const uint32_t written = ring.Region(region).event_mask;
  EXPECT_EQ(written & static_cast<uint32_t>(kBaseMask), static_cast<uint32_t>(kBaseMask));
  EXPECT_EQ(written & static_cast<uint32_t>(abi::kProfileKernelPhase), 0u);
}

// RAS's job-wide override (ncclProfilerSetRasOverride) can hand the plugin
// events it did not ask for. A KernelPhase outside a user mask is still
// counted, and the region says the mask was overridden; Group/GroupApi
// (which NCCL starts whenever an op type is asked for) do not say so.
TEST_F(SymmetricPluginTest, EventsOutsideTheWrittenMaskFlagTheRegion) {
  const int user_mask = kBaseMask;  // no KernelPhase
  ASSERT_EQ(RunInChild(
                [](V7& p) {
                  int mask = 0;
                  CHILD_REQUIRE(p.Init(&mask) == 0 && p.ctx() != nullptr, 2);
                  CHILD_REQUIRE(mask == kBaseMask, 3);
                  p.StartTyped(abi::kProfileGroup);
                  p.StartTyped(abi::kProfileGroupApi);
                  void* op = p.StartColl(1, "AllReduce_RSxLD_AGxST", 1);
                  void* ch = p.StartKernelCh(op, 0, 10);
                  CHILD_REQUIRE(p.Phase(ch, 0, 1, 20, true) != nullptr, 4);
                  p.StopKernelCh(ch, 30);
                  p.Stop(op);
                  p.Finalize();
                  return 0;
                },
                {{"NCCL_FLIGHTREC_EVENT_MASK", std::to_string(user_mask)}}),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  const format::RegionDesc rd = ring.Region(region);
  EXPECT_EQ(rd.event_mask, static_cast<uint32_t>(user_mask));
  EXPECT_NE(rd.flags & format::kRegionMaskOverridden, 0u);
  const format::Record r = ring.Record(region, 0);
  EXPECT_EQ(r.phase_compute_channels, 1);
  EXPECT_EQ(r.state, format::kOpDone);
}

TEST_F(SymmetricPluginTest, KernelLaunchOutsideTheMaskFlagsTheRegion) {
  ASSERT_EQ(RunInChild([](V7& p) {
              int mask = 0;
              CHILD_REQUIRE(p.Init(&mask) == 0, 2);
              CHILD_REQUIRE(p.StartTyped(abi::kProfileGroup) == nullptr, 3);
              CHILD_REQUIRE(p.StartTyped(abi::kProfileGroupApi) == nullptr, 4);
              CHILD_REQUIRE(p.StartTyped(abi::kProfileKernelLaunch) == nullptr, 5);  // declined
              p.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  // KernelLaunch is started only when its own bit is set: that one did flag.
  EXPECT_NE(ring.Region(region).flags & format::kRegionMaskOverridden, 0u);
}

TEST_F(SymmetricPluginTest, GroupAndGroupApiAloneLeaveTheRegionUnflagged) {
  ASSERT_EQ(RunInChild([](V7& p) {
              int mask = 0;
              CHILD_REQUIRE(p.Init(&mask) == 0, 2);
              p.StartTyped(abi::kProfileGroup);
              p.StartTyped(abi::kProfileGroupApi);
              p.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  EXPECT_EQ(ring.Region(region).flags & format::kRegionMaskOverridden, 0u);
}

// RAS's override can take KernelCh out of NCCL's mask job-wide: the ops
// started after it never get a KernelCh, so they would never complete. The
// plugin reads NCCL's mask at each op start and marks such ops
// kFlagNoCompletion (never judged stuck) and the region overridden; ops
// started before or after (mask restored) stay judged.
TEST_F(SymmetricPluginTest, KernelChTakenOutOfNcclsMaskMarksOpsWithoutCompletion) {
  ASSERT_EQ(RunInChild([](V7& p) {
              g_nccl_event_mask = 0;
              CHILD_REQUIRE(p.Init(&g_nccl_event_mask) == 0 && p.ctx() != nullptr, 2);
              const int asked = g_nccl_event_mask;
              void* a = p.StartColl(1, nullptr, 1);
              void* ach = p.StartKernelCh(a, 0, 10);
              p.StopKernelCh(ach, 20);
              p.Stop(a);
              // ncclProfilerSetRasOverride(mask without KernelCh)
              __atomic_store_n(&g_nccl_event_mask, asked & ~abi::kProfileKernelCh,
                               __ATOMIC_RELAXED);
              void* b = p.StartColl(2, "AllReduce_AGxLL_R", 2);
              p.Stop(b);  // no KernelCh ever comes for b
              __atomic_store_n(&g_nccl_event_mask, asked, __ATOMIC_RELAXED);
              void* c = p.StartColl(3, nullptr, 1);
              p.Stop(c);  // judged again: KernelCh is asked for
              p.Finalize();
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  EXPECT_NE(ring.Region(region).flags & format::kRegionMaskOverridden, 0u);
  const format::Record a = ring.Record(region, 0);
  const format::Record b = ring.Record(region, 1);
  const format::Record c = ring.Record(region, 2);
  EXPECT_EQ(a.flags & format::kFlagNoCompletion, 0);
  EXPECT_EQ(a.state, format::kOpDone);
  EXPECT_NE(b.flags & format::kFlagNoCompletion, 0);
  EXPECT_EQ(b.state, format::kOpEnqueued);
  EXPECT_EQ(c.flags & format::kFlagNoCompletion, 0);
}

// NCCL 2.31 on abort: kernel-channel ops that will never finish are
// recycled without stopEvent. The handles are integers (nothing to leak);
// the op stays running (it never finished), nothing is counted as a drop,
// and finalize closes the region.
TEST_F(SymmetricPluginTest, KernelChannelsNeverStoppedLeaveTheOpRunning) {
  ASSERT_EQ(RunInChild([](V7& p) {
              int mask = 0;
              CHILD_REQUIRE(p.Init(&mask) == 0, 2);
              void* op = p.StartColl(3, "AllReduce_AGxLL_R", 2);
              void* ch0 = p.StartKernelCh(op, 0, 10);
              void* ch1 = p.StartKernelCh(op, 1, 11);
              p.Phase(ch0, 0, 0, 12, false);
              p.Phase(ch1, 1, 0, 13, false);
              p.Stop(op);
              p.Finalize();  // ncclCommAbort: no KernelChStop, no stopEvent
              return 0;
            }),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  for (uint32_t c = 0; c < format::kNumDropCauses; ++c) {
    EXPECT_EQ(ring.header().drops[c], 0u) << format::kDropCauseNames[c];
  }
  EXPECT_EQ(ring.Region(region).state, static_cast<uint32_t>(format::kRegionFinalized));
  const format::Record r = ring.Record(region, 0);
  EXPECT_EQ(r.state, format::kOpRunning);
  EXPECT_EQ(r.channels_started, 2);
  EXPECT_EQ(r.phase_compute_channels, 0);  // both still in the initial sync
}

// NCCL 2.31 delivers KernelCh from a profiler thread of the communicator's
// own, while ProxyOp events come from the proxy thread: two writers of an
// op's state. A ProxyOp start racing a KernelCh stop must never move a done
// op back to running (that would read as a hang). Many ops, each with its
// KernelCh on one thread and its ProxyOp on another, all end done.
TEST_F(SymmetricPluginTest, KernelChFromAProfilerThreadNeverUndoesDone) {
  constexpr int kOps = 2000;
  ASSERT_EQ(RunInChild(
                [](V7& p) {
                  int mask = 0;
                  CHILD_REQUIRE(p.Init(&mask) == 0, 2);
                  std::vector<void*> ops(kOps);
                  for (int i = 0; i < kOps; ++i) {
                    ops[i] = p.StartColl(static_cast<uint64_t>(i), nullptr, 1);
                    if (ops[i] == nullptr) return 3;
                    p.Stop(ops[i]);
                  }
                  std::thread profiler([&] {
                    for (int i = 0; i < kOps; ++i) {
                      void* ch = p.StartKernelCh(ops[i], 0, 100 + i);
                      p.StopKernelCh(ch, 200 + i);
                    }
                  });
                  std::thread proxy([&] {
                    for (int i = 0; i < kOps; ++i) {
                      void* po = p.StartProxyOp(ops[i]);
                      p.Stop(po);
                    }
                  });
                  profiler.join();
                  proxy.join();
                  p.Finalize();
                  return 0;
                },
                {{"NCCL_FLIGHTREC_RECORDS", "4096"}}),
            0);
  RingImage ring;
  uint32_t region = 0;
  ASSERT_TRUE(LoadRing(&ring, &region));
  int not_done = 0;
  for (uint64_t s = 0; s < kOps; ++s) {
    const format::Record r = ring.Record(region, s);
    ASSERT_TRUE(RingImage::Valid(r, s));
    if (r.state != format::kOpDone) ++not_done;
    EXPECT_EQ(r.channels_started, 1);
    EXPECT_EQ(r.channels_stopped, 1);
  }
  EXPECT_EQ(not_done, 0);
}

}  // namespace
}  // namespace flightrec

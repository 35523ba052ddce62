// Test helper: drives one ncclProfiler_vN table through NCCL's real call
// sequences (docs/design/nccl.md §Call sequences v5) with descriptors built from
// our ABI header, the way the emulator does.
#ifndef FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_
#define FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>

#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace testing_plugin {

namespace abi = nccl_abi;

constexpr uint64_t kCommId = 0xC0FFEE1234ULL;
constexpr const char* kCommName = "plugintest";
constexpr int kRank = 2;
constexpr int kNranks = 4;
constexpr uint64_t kCollCount = 1024;
constexpr uint64_t kCollSeq = 5;
constexpr uint8_t kCollChannels = 2;
constexpr uint8_t kCollWarps = 8;
constexpr uint64_t kSendCount = 256;
constexpr int kSendPeer = 1;
constexpr int kRecvPeer = 3;
constexpr uint64_t kUserTag = 77;
constexpr uint64_t kStream = 0x1234;
constexpr uint64_t kGpuStartBase = 1000;  // channel c starts at base + c
constexpr uint64_t kGpuStopBase = 5000;   // channel c stops at base + c
constexpr uint64_t kStepBytes = 4096;

// Captures what the plugin logs through the logger we pass at init.
inline char g_log_text[512];
inline int g_log_calls = 0;
__attribute__((format(printf, 5, 6))) inline void TestLogger(int level, unsigned long flags,
                                                             const char* file, int line,
                                                             const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(g_log_text, sizeof(g_log_text), fmt, ap);
  va_end(ap);
  ++g_log_calls;
}

// Version traits: table, descriptor and args types of ncclProfiler_vN.
template <int V>
struct Api;
#define FLIGHTREC_TEST_API(N, ARGS)                             \
  template <>                                                   \
  struct Api<N> {                                               \
    using Table = abi::ProfilerV##N;                            \
    using Descr = abi::EventDescrV##N;                          \
    using Args = abi::StateArgs##ARGS;                          \
    static constexpr const char* kSymbol = "ncclProfiler_v" #N; \
  };
FLIGHTREC_TEST_API(1, V1)
FLIGHTREC_TEST_API(2, V1)
FLIGHTREC_TEST_API(3, V1)
FLIGHTREC_TEST_API(4, V4)
FLIGHTREC_TEST_API(5, V4)
FLIGHTREC_TEST_API(6, V4)
FLIGHTREC_TEST_API(7, V4)
#undef FLIGHTREC_TEST_API

template <int V>
class Driver {
 public:
  using T = typename Api<V>::Table;
  using D = typename Api<V>::Descr;
  using A = typename Api<V>::Args;

  explicit Driver(const T* table) : t_(table) {}

  abi::Result Init(int* mask) {
    if constexpr (V <= 3) {
      return t_->init(&ctx_, mask);
    } else if constexpr (V == 4) {
      return t_->init(&ctx_, mask, kCommName, kCommId, 1, kNranks, kRank, TestLogger);
    } else {
      return t_->init(&ctx_, kCommId, mask, kCommName, 1, kNranks, kRank, TestLogger);
    }
  }
  void* ctx() const { return ctx_; }
  void set_ctx(void* c) { ctx_ = c; }

  void* Start(D* d) {
    void* h = reinterpret_cast<void*>(0xdeadbeef);  // must be overwritten
    t_->startEvent(ctx_, &h, d);
    return h;
  }
  void Stop(void* h) { t_->stopEvent(h); }
  void Record(void* h, abi::EventState s, A* args) { t_->recordEventState(h, s, args); }
  void Finalize() { t_->finalize(ctx_); }

  static D Blank(uint64_t type, void* parent) {
    D d;
    memset(&d, 0, sizeof(d));
    d.type = static_cast<decltype(d.type)>(type);
    d.parentObj = parent;
    return d;
  }

  // CollApi (v5+) for the AllReduce; nullptr before v5.
  void* StartCollApi(bool graph_captured = false) {
    if constexpr (V >= 5) {
      D d = Blank(abi::kProfileCollApi, nullptr);
      d.collApi.graphCaptured = graph_captured;
      d.collApi.func = "AllReduce";
      d.collApi.count = kCollCount;
      d.collApi.datatype = "ncclFloat32";
      d.collApi.stream = reinterpret_cast<void*>(kStream);
      if constexpr (V >= 7) d.collApi.userTag = kUserTag;
      return Start(&d);
    }
    return nullptr;
  }

  void* StartP2pApi(const char* func) {
    if constexpr (V >= 5) {
      D d = Blank(abi::kProfileP2pApi, nullptr);
      d.p2pApi.func = func;
      d.p2pApi.count = kSendCount;
      d.p2pApi.datatype = "ncclInt32";
      d.p2pApi.stream = reinterpret_cast<void*>(kStream);
      if constexpr (V >= 7) d.p2pApi.userTag = kUserTag;
      return Start(&d);
    }
    return nullptr;
  }

  void* StartColl(void* parent, uint64_t seq_number = kCollSeq) {
    D d = Blank(abi::kProfileColl, parent);
    d.rank = kRank;
    d.coll.seqNumber = seq_number;
    d.coll.count = kCollCount;
    d.coll.root = 0;
    d.coll.nWarps = kCollWarps;
    if constexpr (V == 1) {
      d.coll.func = abi::v1::kFuncAllReduce;
      d.coll.datatype = abi::v1::kFloat32;
      d.coll.algo = abi::v1::kAlgoRing;
      d.coll.proto = abi::v1::kProtoSimple;
    } else {
      d.coll.func = "AllReduce";
      d.coll.datatype = "ncclFloat32";
      d.coll.algo = "RING";
      d.coll.proto = "SIMPLE";
    }
    if constexpr (V <= 3) {
      d.coll.name = kCommName;
      d.coll.commHash = kCommId;
      d.coll.nMaxChannels = kCollChannels;
    } else {
      d.coll.nChannels = kCollChannels;
    }
    if constexpr (V >= 7) d.coll.userTag = kUserTag;
    return Start(&d);
  }

  void* StartP2p(void* parent, bool send) {
    D d = Blank(abi::kProfileP2p, parent);
    d.rank = kRank;
    d.p2p.count = kSendCount;
    d.p2p.peer = send ? kSendPeer : kRecvPeer;
    if constexpr (V == 1) {
      d.p2p.func = send ? abi::v1::kFuncSend : abi::v1::kFuncRecv;
      d.p2p.datatype = abi::v1::kInt32;
    } else {
      d.p2p.func = send ? "Send" : "Recv";
      d.p2p.datatype = "ncclInt32";
    }
    if constexpr (V <= 3) {
      d.p2p.name = kCommName;
      d.p2p.commHash = kCommId;
    } else {
      d.p2p.nChannels = 1;
    }
    if constexpr (V >= 7) d.p2p.userTag = kUserTag;
    return Start(&d);
  }

  // KernelCh start (v3+); nullptr before v3.
  void* StartKernelCh(void* parent, uint8_t channel) {
    if constexpr (V >= 3) {
      D d = Blank(abi::kProfileKernelCh, parent);
      d.kernelCh.channelId = channel;
      if constexpr (V >= 4) d.kernelCh.pTimer = kGpuStartBase + channel;
      return Start(&d);
    }
    return nullptr;
  }

  // KernelChStop (v4+) then stop, as the proxy thread does; v3: stop only.
  void StopKernelCh(void* h, uint8_t channel) {
    if constexpr (V >= 4) {
      A args;
      memset(&args, 0, sizeof(args));
      args.kernelCh.pTimer = kGpuStopBase + channel;
      Record(h, abi::kKernelChStop, &args);
    }
    Stop(h);
  }

  void* StartProxyOp(void* parent, int32_t pid) {
    D d = Blank(abi::kProfileProxyOp, parent);
    d.rank = kRank;
    d.proxyOp.pid = pid;
    d.proxyOp.peer = kSendPeer;
    d.proxyOp.nSteps = 1;
    d.proxyOp.isSend = 1;
    return Start(&d);
  }

  // One network step with transSize on SendWait, as net.cc does.
  void NetStep(void* proxy_op) {
    D d = Blank(abi::kProfileProxyStep, proxy_op);
    d.proxyStep.step = 0;
    void* h = Start(&d);
    Record(h, abi::kProxyStepSendGPUWait, nullptr);
    A args;
    memset(&args, 0, sizeof(args));
    if constexpr (V >= 4) {
      args.proxyStep.transSize = kStepBytes;
    } else {
      args.proxyOp.transSize = kStepBytes;
    }
    Record(h, abi::kProxyStepSendWait, &args);
    Stop(h);
  }

  // GroupApi / Group / KernelLaunch / ProxyCtrl: flightrec declines them.
  void* StartDeclined(uint64_t type) {
    D d = Blank(type, nullptr);
    return Start(&d);
  }

 private:
  const T* t_;
  void* ctx_ = nullptr;
};

}  // namespace testing_plugin
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_

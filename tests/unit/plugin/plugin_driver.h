// Test helper: drives one ncclProfiler_vN table through NCCL's real call
// sequences (docs/design/nccl.md §Call sequences v5) with the descriptors of
// the one ABI driver, support/profiler_shim.h, in its raw-descriptor mode.
#ifndef FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_
#define FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include <cstdint>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
#include "plugin/nccl/profiler_abi.h"
#include "support/profiler_shim.h"

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

using emu::Api;

// The ncclProfiler_vV table of a dlopened plugin (nullptr when absent).
template <int V>
const typename Api<V>::Table* Table(void* lib) {
  return static_cast<const typename Api<V>::Table*>(dlsym(lib, Api<V>::kSymbol));
}

// One ncclProfiler_vN table driven as NCCL 2.x of that version does, through
// the shim's raw-descriptor mode: each event's descriptor is the shim's
// (support/profiler_shim.h), handed to startEvent as is with the handle
// preset to a placeholder the plugin must overwrite.
template <int V>
class Driver {
 public:
  using T = typename Api<V>::Table;
  using D = typename Api<V>::Descr;
  using A = typename Api<V>::Args;

  explicit Driver(const T* table) : shim_(table, V, V), raw_(shim_) {}

  abi::Result Init(int* mask) {
    return static_cast<abi::Result>(
        shim_.Init(&ctx_, kCommId, mask, kCommName, 1, kNranks, kRank, TestLogger));
  }
  void* ctx() const { return ctx_; }
  void set_ctx(void* c) { ctx_ = c; }

  // The handle the plugin wrote (never the placeholder when it behaves);
  // nullptr when the release does not call version V for `e`.
  void* Start(const emu::EventDesc& e) {
    D d;
    return raw_.Describe(e, &d) ? raw_.Start(ctx_, &d) : nullptr;
  }
  void Stop(void* h) { raw_.Stop(h); }
  void Record(void* h, abi::EventState s, A* args) { raw_.Record(h, s, args); }
  void Finalize() { shim_.Finalize(ctx_); }

  // CollApi (v5+) for the AllReduce; nullptr before v5.
  void* StartCollApi(bool graph_captured = false) {
    emu::EventDesc e = Op(emu::Ev::kCollApi, kCollCount, format::kTypeFloat32);
    e.func = format::kFuncAllReduce;
    e.graph_captured = graph_captured;
    return Start(e);
  }

  void* StartP2pApi(const char* func) {
    emu::EventDesc e = Op(emu::Ev::kP2pApi, kSendCount, format::kTypeInt32);
    e.func = static_cast<uint8_t>(format::FuncFromName(func));
    return Start(e);
  }

  // `parent`: the CollApi handle (v5+) or the Group handle (v1-v4).
  void* StartColl(void* parent, uint64_t seq_number = kCollSeq) {
    emu::EventDesc e = Op(emu::Ev::kColl, kCollCount, format::kTypeFloat32);
    Parent(&e, parent);
    e.func = format::kFuncAllReduce;
    e.seq = seq_number;
    e.n_channels = kCollChannels;
    e.n_warps = kCollWarps;
    e.algo = format::kAlgoRing;
    e.proto = format::kProtoSimple;
    return Start(e);
  }

  void* StartP2p(void* parent, bool send) {
    emu::EventDesc e = Op(emu::Ev::kP2p, kSendCount, format::kTypeInt32);
    Parent(&e, parent);
    e.func = send ? format::kFuncSend : format::kFuncRecv;
    e.peer = send ? kSendPeer : kRecvPeer;
    e.n_channels = 1;
    return Start(e);
  }

  // KernelCh start (v3+); nullptr before v3.
  void* StartKernelCh(void* parent, uint8_t channel) {
    emu::EventDesc e;
    e.type = emu::Ev::kKernelCh;
    e.parent = parent;
    e.channel_id = channel;
    e.ptimer = kGpuStartBase + channel;
    return Start(e);
  }

  // KernelChStop (v4+) then stop, as the proxy thread does; v3: stop only.
  void StopKernelCh(void* h, uint8_t channel) {
    emu::StateArgs a;
    a.ptimer = kGpuStopBase + channel;
    shim_.Record(h, abi::kKernelChStop, a);
    Stop(h);
  }

  void* StartProxyOp(void* parent, int32_t pid) {
    emu::EventDesc e;
    e.type = emu::Ev::kProxyOp;
    e.parent = parent;
    e.rank = kRank;
    e.pid = pid;
    e.peer = kSendPeer;
    e.n_steps = 1;
    e.is_send = 1;
    return Start(e);
  }

  // One network step with transSize on SendWait, as net.cc does.
  void NetStep(void* proxy_op) {
    emu::EventDesc e;
    e.type = emu::Ev::kProxyStep;
    e.parent = proxy_op;
    void* h = Start(e);
    emu::StateArgs wait;
    wait.null_args = true;
    shim_.Record(h, abi::kProxyStepSendGPUWait, wait);
    emu::StateArgs sent;
    sent.trans_size = kStepBytes;
    shim_.Record(h, abi::kProxyStepSendWait, sent);
    Stop(h);
  }

  // GroupApi / Group / KernelLaunch / ProxyCtrl: flightrec declines them.
  void* StartDeclined(emu::Ev type) {
    emu::EventDesc e;
    e.type = type;
    return Start(e);
  }

 private:
  static emu::EventDesc Op(emu::Ev type, uint64_t count, uint8_t datatype) {
    emu::EventDesc e;
    e.type = type;
    e.rank = kRank;
    e.count = count;
    e.datatype = datatype;
    e.stream = reinterpret_cast<void*>(kStream);
    e.user_tag = kUserTag;
    e.comm_name = kCommName;
    e.comm_hash = kCommId;
    return e;
  }
  // NCCL names the Group handle as the parent before v5, the API handle from v5.
  static void Parent(emu::EventDesc* e, void* parent) {
    if (V <= 4) {
      e->parent_group = parent;
    } else {
      e->parent = parent;
    }
  }

  emu::ProfilerShim shim_;
  emu::RawProfiler<V> raw_;
  void* ctx_ = nullptr;
};

}  // namespace testing_plugin
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_PLUGIN_PLUGIN_DRIVER_H_

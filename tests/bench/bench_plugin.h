// Benchmark helper: loads a profiler plugin the way NCCL does (dlopen
// RTLD_NOW | RTLD_LOCAL, dlsym "ncclProfiler_v5") and replays NCCL 2.28's
// call sequence for one collective (docs/design/nccl.md §Call sequences v5) through
// the v5 table, in the raw-descriptor mode of the one ABI driver
// (support/profiler_shim.h). Descriptors are built once per communicator by
// the shim and only their per-call fields (parent, seqNumber, timers) change,
// as NCCL fills a stack descriptor per call: the cost is the same for every
// plugin compared.
#ifndef FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_
#define FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <string>

#include "flightrec/record_format.h"
#include "plugin/nccl/profiler_abi.h"
#include "support/profiler_shim.h"

namespace flightrec {
namespace bench {

namespace abi = nccl_abi;

constexpr int kChannels = 8;         // KernelCh events per collective
constexpr int kProxyOps = 2;         // ProxyOps per collective (network variant)
constexpr int kStepsPerProxyOp = 4;  // ProxySteps per ProxyOp
constexpr uint64_t kStepBytes = 1 << 20;
// GPU time per collective in the replay: below the host time a collective
// takes with either plugin (KernelSide).
constexpr uint64_t kGpuNsPerCollective = 32;

inline void SilentLogger(int, unsigned long, const char*, int, const char*, ...) {}

constexpr int kApi = 5;  // NCCL 2.28 calls ncclProfiler_v5
using Raw = emu::RawProfiler<kApi>;
using Descr = Raw::Descr;

struct Plugin {
  void* dl = nullptr;
  std::unique_ptr<emu::ProfilerShim> shim;
};

// Loads `path` as NCCL does. False with `err` naming the file and the problem.
inline bool LoadPlugin(const char* path, Plugin* out, std::string* err) {
  out->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (out->dl == nullptr) {
    *err = std::string("cannot dlopen ") + path + ": " + dlerror();
    return false;
  }
  const void* table = dlsym(out->dl, emu::Api<kApi>::kSymbol);
  if (table == nullptr) {
    *err = std::string(path) + " exports no " + emu::Api<kApi>::kSymbol;
    return false;
  }
  out->shim.reset(new emu::ProfilerShim(table, kApi, kApi));
  return true;
}

// NCCL's one process-global event mask (ncclProfilerEventMask): every init
// receives its address, and the plugin writes the types it wants. NCCL
// starts KernelLaunch only when its bit is set (docs/design/nccl.md §NCCL
// 2.31, "RAS mask override"), so the sequence below follows this mask as
// NCCL does; flightrec's init writes it, the do-nothing plugin leaves it,
// and both plugins see the same calls.
inline int g_nccl_event_mask = 0;

// One communicator as NCCL drives it. UserSide() is what the user/launch
// thread does; KernelSide()/NetSide() what the proxy thread does for the op
// UserSide() returned.
class Comm {
 public:
  bool Init(const Plugin& plugin, uint64_t comm_id, int rank, int nranks) {
    shim_ = plugin.shim.get();
    raw_ = Raw(*shim_);
    if (shim_->Init(&ctx_, comm_id, &g_nccl_event_mask, "bench", 1, nranks, rank, SilentLogger) !=
        abi::kSuccess) {
      return false;
    }
    BuildDescriptors(rank);
    return ctx_ != nullptr;
  }
  void Finalize() {
    if (shim_ != nullptr) shim_->Finalize(ctx_);
    ctx_ = nullptr;
  }
  void* context() const { return ctx_; }

  // GroupApi start, GroupStartApiStop, CollApi start/stop, GroupEndApiStart,
  // KernelLaunch start/stop (when the mask asks for it), Group start, Coll
  // start/stop, Group stop, GroupApi stop. Returns the Coll handle the proxy
  // thread's events name.
  void* UserSide() {
    const Raw& t = raw_;
    void* group_api = t.Start(ctx_, &group_api_);
    t.Record(group_api, abi::kGroupStartApiStop, nullptr);
    coll_api_.parentObj = group_api;
    void* coll_api = t.Start(ctx_, &coll_api_);
    t.Stop(coll_api);
    t.Record(group_api, abi::kGroupEndApiStart, nullptr);
    if ((__atomic_load_n(&g_nccl_event_mask, __ATOMIC_RELAXED) & abi::kProfileKernelLaunch) != 0) {
      launch_.parentObj = group_api;
      t.Stop(t.Start(ctx_, &launch_));
    }
    void* group = t.Start(ctx_, &group_);
    coll_.parentObj = coll_api;
    coll_.coll.parentGroup = group;
    coll_.coll.seqNumber = seq_++;
    void* coll = t.Start(ctx_, &coll_);
    t.Stop(coll);
    t.Stop(group);
    t.Stop(group_api);
    return coll;
  }

  // KernelCh start on every channel, then KernelChStop + stop on each.
  // The GPU timers (%globaltimer, ns) advance by kGpuNsPerCollective per
  // collective, less than the host clock does on either plugin: as in a job,
  // where a timer is read on the GPU before the proxy observes it, the
  // GPU-to-host offset's minimum improves only now and then, not on every op.
  void KernelSide(void* coll) {
    const Raw& t = raw_;
    void* ch[kChannels];
    kernel_.parentObj = coll;
    for (int c = 0; c < kChannels; ++c) {
      kernel_.kernelCh.channelId = static_cast<uint8_t>(c);
      kernel_.kernelCh.pTimer = gpu_ns_ + c;
      ch[c] = t.Start(ctx_, &kernel_);
    }
    Raw::Args args;
    for (int c = 0; c < kChannels; ++c) {
      args.kernelCh.pTimer = gpu_ns_ + kGpuNsPerCollective / 2 + c;
      t.Record(ch[c], abi::kKernelChStop, &args);
      t.Stop(ch[c]);
    }
    gpu_ns_ += kGpuNsPerCollective;
  }

  // kProxyOps ProxyOps of kStepsPerProxyOp steps: SendGPUWait, SendWait
  // (transSize), stop; then the ProxyOp stop.
  void NetSide(void* coll) {
    const Raw& t = raw_;
    Raw::Args args;
    args.proxyStep.transSize = kStepBytes;
    proxy_op_.parentObj = coll;
    for (int op = 0; op < kProxyOps; ++op) {
      proxy_op_.proxyOp.channelId = static_cast<uint8_t>(op);
      void* h_op = t.Start(ctx_, &proxy_op_);
      proxy_step_.parentObj = h_op;
      for (int s = 0; s < kStepsPerProxyOp; ++s) {
        proxy_step_.proxyStep.step = s;
        void* h_step = t.Start(ctx_, &proxy_step_);
        t.Record(h_step, abi::kProxyStepSendGPUWait, nullptr);
        t.Record(h_step, abi::kProxyStepSendWait, &args);
        t.Stop(h_step);
      }
      t.Stop(h_op);
    }
  }

  void Collective(bool net) {
    void* coll = UserSide();
    KernelSide(coll);
    if (net) NetSide(coll);
  }

 private:
  // The shim's v5 descriptor of `e` on this rank.
  Descr Describe(emu::EventDesc e, int rank) const {
    e.rank = rank;
    Descr d;
    raw_.Describe(e, &d);
    return d;
  }

  void BuildDescriptors(int rank) {
    emu::EventDesc e;
    e.type = emu::Ev::kGroupApi;
    e.group_depth = 1;
    group_api_ = Describe(e, rank);
    emu::EventDesc op;
    op.func = format::kFuncAllReduce;
    op.count = 1 << 20;
    op.datatype = format::kTypeFloat32;
    op.stream = reinterpret_cast<void*>(uintptr_t{0x5000});
    op.n_channels = kChannels;
    op.n_warps = 16;
    op.algo = format::kAlgoRing;
    op.proto = format::kProtoSimple;
    op.type = emu::Ev::kCollApi;
    coll_api_ = Describe(op, rank);
    op.type = emu::Ev::kColl;
    op.stream = nullptr;
    coll_ = Describe(op, rank);
    e = emu::EventDesc();
    e.type = emu::Ev::kKernelLaunch;
    launch_ = Describe(e, rank);
    e.type = emu::Ev::kGroup;
    group_ = Describe(e, rank);
    e.type = emu::Ev::kKernelCh;
    kernel_ = Describe(e, rank);
    e.type = emu::Ev::kProxyStep;
    proxy_step_ = Describe(e, rank);
    e.type = emu::Ev::kProxyOp;
    e.pid = static_cast<int>(getpid());
    e.peer = (rank + 1) % 8;
    e.n_steps = kStepsPerProxyOp;
    e.chunk_size = 1 << 19;
    e.is_send = 1;
    proxy_op_ = Describe(e, rank);
  }

  const emu::ProfilerShim* shim_ = nullptr;
  Raw raw_;
  void* ctx_ = nullptr;
  uint64_t seq_ = 0;
  uint64_t gpu_ns_ = 1000000;
  Descr group_api_, coll_api_, launch_, group_, coll_, kernel_, proxy_op_, proxy_step_;
};

}  // namespace bench
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_

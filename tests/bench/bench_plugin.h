// Benchmark helper: loads a profiler plugin the way NCCL does (dlopen
// RTLD_NOW | RTLD_LOCAL, dlsym "ncclProfiler_v5") and replays NCCL 2.28's
// call sequence for one collective (docs/design/nccl.md §Call sequences v5) through
// the v5 table. Descriptors are built once per communicator and only their
// per-call fields (parent, seqNumber, timers) change, as NCCL fills a stack
// descriptor per call: the cost is the same for every plugin compared.
#ifndef FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_
#define FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_

#include <dlfcn.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace bench {

namespace abi = nccl_abi;

constexpr int kChannels = 8;         // KernelCh events per collective
constexpr int kProxyOps = 2;         // ProxyOps per collective (network variant)
constexpr int kStepsPerProxyOp = 4;  // ProxySteps per ProxyOp
constexpr uint64_t kStepBytes = 1 << 20;

inline void SilentLogger(int, unsigned long, const char*, int, const char*, ...) {}

struct Plugin {
  void* dl = nullptr;
  const abi::ProfilerV5* table = nullptr;
};

// Loads `path` as NCCL does. False with `err` naming the file and the problem.
inline bool LoadPlugin(const char* path, Plugin* out, std::string* err) {
  out->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (out->dl == nullptr) {
    *err = std::string("cannot dlopen ") + path + ": " + dlerror();
    return false;
  }
  out->table = static_cast<const abi::ProfilerV5*>(dlsym(out->dl, "ncclProfiler_v5"));
  if (out->table == nullptr) {
    *err = std::string(path) + " exports no ncclProfiler_v5";
    return false;
  }
  return true;
}

// One communicator as NCCL drives it. UserSide() is what the user/launch
// thread does; KernelSide()/NetSide() what the proxy thread does for the op
// UserSide() returned.
class Comm {
 public:
  bool Init(const Plugin& plugin, uint64_t comm_id, int rank, int nranks) {
    t_ = plugin.table;
    mask_ = 0;
    if (t_->init(&ctx_, comm_id, &mask_, "bench", 1, nranks, rank, SilentLogger) != abi::kSuccess) {
      return false;
    }
    BuildDescriptors(rank);
    return ctx_ != nullptr;
  }
  void Finalize() {
    if (t_ != nullptr) t_->finalize(ctx_);
    ctx_ = nullptr;
  }
  void* context() const { return ctx_; }

  // GroupApi start, GroupStartApiStop, CollApi start/stop, GroupEndApiStart,
  // KernelLaunch start/stop, Group start, Coll start/stop, Group stop,
  // GroupApi stop. Returns the Coll handle the proxy thread's events name.
  void* UserSide() {
    void* group_api = Start(&group_api_);
    t_->recordEventState(group_api, abi::kGroupStartApiStop, nullptr);
    coll_api_.parentObj = group_api;
    void* coll_api = Start(&coll_api_);
    t_->stopEvent(coll_api);
    t_->recordEventState(group_api, abi::kGroupEndApiStart, nullptr);
    launch_.parentObj = group_api;
    t_->stopEvent(Start(&launch_));
    void* group = Start(&group_);
    coll_.parentObj = coll_api;
    coll_.coll.parentGroup = group;
    coll_.coll.seqNumber = seq_++;
    void* coll = Start(&coll_);
    t_->stopEvent(coll);
    t_->stopEvent(group);
    t_->stopEvent(group_api);
    return coll;
  }

  // KernelCh start on every channel, then KernelChStop + stop on each.
  void KernelSide(void* coll) {
    void* ch[kChannels];
    kernel_.parentObj = coll;
    for (int c = 0; c < kChannels; ++c) {
      kernel_.kernelCh.channelId = static_cast<uint8_t>(c);
      kernel_.kernelCh.pTimer = gpu_ns_ + c;
      ch[c] = Start(&kernel_);
    }
    abi::StateArgsV5 args;
    for (int c = 0; c < kChannels; ++c) {
      args.kernelCh.pTimer = gpu_ns_ + 1000 + c;
      t_->recordEventState(ch[c], abi::kKernelChStop, &args);
      t_->stopEvent(ch[c]);
    }
    gpu_ns_ += 2000;
  }

  // kProxyOps ProxyOps of kStepsPerProxyOp steps: SendGPUWait, SendWait
  // (transSize), stop; then the ProxyOp stop.
  void NetSide(void* coll) {
    abi::StateArgsV5 args;
    args.proxyStep.transSize = kStepBytes;
    proxy_op_.parentObj = coll;
    for (int op = 0; op < kProxyOps; ++op) {
      proxy_op_.proxyOp.channelId = static_cast<uint8_t>(op);
      void* h_op = Start(&proxy_op_);
      proxy_step_.parentObj = h_op;
      for (int s = 0; s < kStepsPerProxyOp; ++s) {
        proxy_step_.proxyStep.step = s;
        void* h_step = Start(&proxy_step_);
        t_->recordEventState(h_step, abi::kProxyStepSendGPUWait, nullptr);
        t_->recordEventState(h_step, abi::kProxyStepSendWait, &args);
        t_->stopEvent(h_step);
      }
      t_->stopEvent(h_op);
    }
  }

  void Collective(bool net) {
    void* coll = UserSide();
    KernelSide(coll);
    if (net) NetSide(coll);
  }

 private:
  void* Start(abi::EventDescrV5* d) {
    void* h = nullptr;
    t_->startEvent(ctx_, &h, d);
    return h;
  }

  static abi::EventDescrV5 Blank(uint64_t type, int rank) {
    abi::EventDescrV5 d;
    memset(&d, 0, sizeof(d));
    d.type = type;
    d.rank = rank;
    return d;
  }

  void BuildDescriptors(int rank) {
    group_api_ = Blank(abi::kProfileGroupApi, rank);
    group_api_.groupApi.groupDepth = 1;
    coll_api_ = Blank(abi::kProfileCollApi, rank);
    coll_api_.collApi.func = "AllReduce";
    coll_api_.collApi.count = 1 << 20;
    coll_api_.collApi.datatype = "ncclFloat32";
    coll_api_.collApi.stream = reinterpret_cast<void*>(uintptr_t{0x5000});
    launch_ = Blank(abi::kProfileKernelLaunch, rank);
    group_ = Blank(abi::kProfileGroup, rank);
    coll_ = Blank(abi::kProfileColl, rank);
    coll_.coll.func = "AllReduce";
    coll_.coll.count = 1 << 20;
    coll_.coll.datatype = "ncclFloat32";
    coll_.coll.nChannels = kChannels;
    coll_.coll.nWarps = 16;
    coll_.coll.algo = "RING";
    coll_.coll.proto = "SIMPLE";
    kernel_ = Blank(abi::kProfileKernelCh, rank);
    proxy_op_ = Blank(abi::kProfileProxyOp, rank);
    proxy_op_.proxyOp.pid = static_cast<int32_t>(getpid());
    proxy_op_.proxyOp.peer = (rank + 1) % 8;
    proxy_op_.proxyOp.nSteps = kStepsPerProxyOp;
    proxy_op_.proxyOp.chunkSize = 1 << 19;
    proxy_op_.proxyOp.isSend = 1;
    proxy_step_ = Blank(abi::kProfileProxyStep, rank);
  }

  const abi::ProfilerV5* t_ = nullptr;
  void* ctx_ = nullptr;
  int mask_ = 0;
  uint64_t seq_ = 0;
  uint64_t gpu_ns_ = 1000000;
  abi::EventDescrV5 group_api_, coll_api_, launch_, group_, coll_, kernel_, proxy_op_, proxy_step_;
};

}  // namespace bench
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_BENCH_BENCH_PLUGIN_H_

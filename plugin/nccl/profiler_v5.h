// ncclProfiler_v5 (NCCL 2.28): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v5; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V5_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V5_H_

#include "plugin/nccl/profiler_v4.h"

namespace flightrec {
namespace nccl_abi {

// Event-type bits new in v5 (descriptor `type` and the activation mask).
constexpr int kProfileGroupApi = 1 << 8;
constexpr int kProfileCollApi = 1 << 9;
constexpr int kProfileP2pApi = 1 << 10;
constexpr int kProfileKernelLaunch = 1 << 11;

// v5 and v6: the legacy Group handle moves to parentGroup.
struct CollV5 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};

struct P2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};

// v5+ API-level events.
struct GroupApiDescr {
  bool graphCaptured;
  int groupDepth;
};

struct CollApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};

struct P2pApiV5 {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};

struct KernelLaunchDescr {
  void* stream;
};

struct EventDescrV5 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiV5 collApi;
    P2pApiV5 p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollV5 coll;
    P2pV5 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
  };
};

using StateArgsV5 = StateArgsV4;

// v5+: commId moved to the second position.
using InitFnV5 = Result (*)(void** context, uint64_t commId, int* eActivationMask,
                            const char* commName, int nNodes, int nranks, int rank,
                            DebugLogger logfn);

using ProfilerV5 = ProfilerTable<InitFnV5, EventDescrV5, StateArgsV5>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V5_H_

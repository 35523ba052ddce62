// ncclProfiler_v3 (NCCL 2.26): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v3; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V3_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V3_H_

#include "plugin/nccl/profiler_v2.h"

namespace flightrec {
namespace nccl_abi {

// Event-type bits new in v3 (descriptor `type` and the activation mask).
constexpr int kProfileKernelCh = 1 << 6;
constexpr int kProfileNetPlugin = 1 << 7;

// v3: trafficBytes gone.
struct CollV3 {
  const char* name;
  uint64_t commHash;
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  uint8_t nMaxChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};

using P2pV3 = P2pV2;

// v3: no GPU timer.
struct KernelChV3 {
  uint8_t channelId;
};

// v3+.
struct NetPluginDescr {
  int64_t id;
  void* data;
};

struct EventDescrV3 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV3 coll;
    P2pV3 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV3 kernelCh;
    NetPluginDescr netPlugin;
  };
};

using StateArgsV3 = StateArgsV1;

using ProfilerV3 = ProfilerTable<InitFnV1, EventDescrV3, StateArgsV3>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V3_H_

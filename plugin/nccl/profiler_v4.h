// ncclProfiler_v4 (NCCL 2.27): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v4; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V4_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V4_H_

#include "plugin/nccl/profiler_v3.h"

namespace flightrec {
namespace nccl_abi {

// v4: comm identity moved to init; nMaxChannels renamed nChannels.
struct CollV4 {
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
};

struct P2pV4 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
};

// v4+: start time as GPU %globaltimer ns.
struct KernelChV4 {
  uint8_t channelId;
  uint64_t pTimer;
};

struct EventDescrV4 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV4 coll;
    P2pV4 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
  };
};

// v4-v7 (a KernelPhase stop reuses kernelCh.pTimer).
union StateArgsV4 {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

// v4: identity after the mask.
using InitFnV4 = Result (*)(void** context, int* eActivationMask, const char* commName,
                            uint64_t commHash, int nNodes, int nranks, int rank, DebugLogger logfn);

using ProfilerV4 = ProfilerTable<InitFnV4, EventDescrV4, StateArgsV4>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V4_H_

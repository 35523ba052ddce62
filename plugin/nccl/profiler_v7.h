// ncclProfiler_v7 (NCCL 2.31+): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v7; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V7_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V7_H_

#include "plugin/nccl/profiler_v6.h"

namespace flightrec {
namespace nccl_abi {

// Event-type bits new in v7 (descriptor `type` and the activation mask).
constexpr int kProfileKernelPhase = 1 << 15;

// v7: kernel variant, symmetric flag and the per-call user tag.
struct CollV7 {
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
  const char* kernelVariant;
  uint8_t isSymColl;
  uint64_t userTag;
};

struct P2pV7 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
  uint64_t userTag;
};

struct CollApiV7 {
  const char* func;
  size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
  uint64_t userTag;
};

struct P2pApiV7 {
  const char* func;
  size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
  uint64_t userTag;
};

struct CeCollV7 {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
  uint64_t userTag;
};

// v7: phases of symmetric kernels (sub-events of KernelCh).
struct KernelPhaseDescr {
  uint8_t channelId;
  uint8_t phaseId;  // 0 initial_sync, 1 compute, 2 final_sync
  const char* phaseName;
  uint64_t pTimer;  // start, GPU %globaltimer ns
};

struct EventDescrV7 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiV7 collApi;
    P2pApiV7 p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollV7 coll;
    P2pV7 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
    CeCollV7 ceColl;
    CeCollSyncDescr ceCollSync;
    CeCollBatchDescr ceCollBatch;
    KernelPhaseDescr kernelPhase;
  };
};

using StateArgsV7 = StateArgsV4;

using ProfilerV7 = ProfilerTable<InitFnV5, EventDescrV7, StateArgsV7>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V7_H_

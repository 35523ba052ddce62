// ncclProfiler_v6 (NCCL 2.29-2.30): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v6; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V6_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V6_H_

#include "plugin/nccl/profiler_v5.h"

namespace flightrec {
namespace nccl_abi {

// Event-type bits new in v6 (descriptor `type` and the activation mask).
constexpr int kProfileCeColl = 1 << 12;
constexpr int kProfileCeSync = 1 << 13;
constexpr int kProfileCeBatch = 1 << 14;

using CollV6 = CollV5;

using P2pV6 = P2pV5;

// v6+ copy-engine events.
struct CeCollV6 {
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
};

struct CeCollSyncDescr {
  bool isComplete;
  int nRanks;
};

struct CeCollBatchDescr {
  int numOps;
  size_t totalBytes;
  bool useIntraSync;
};

struct EventDescrV6 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    GroupApiDescr groupApi;
    CollApiV5 collApi;
    P2pApiV5 p2pApi;
    KernelLaunchDescr kernelLaunch;
    CollV6 coll;
    P2pV6 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
    KernelChV4 kernelCh;
    NetPluginDescr netPlugin;
    CeCollV6 ceColl;
    CeCollSyncDescr ceCollSync;
    CeCollBatchDescr ceCollBatch;
  };
};

using StateArgsV6 = StateArgsV4;

using ProfilerV6 = ProfilerTable<InitFnV5, EventDescrV6, StateArgsV6>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V6_H_

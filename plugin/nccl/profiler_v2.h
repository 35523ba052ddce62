// ncclProfiler_v2 (NCCL 2.24-2.25): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v2; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V2_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V2_H_

#include "plugin/nccl/profiler_v1.h"

namespace flightrec {
namespace nccl_abi {

// v2: strings instead of enum codes; op/isCollnet/isNvls gone.
struct CollV2 {
  const char* name;
  uint64_t commHash;
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  const char* datatype;
  size_t trafficBytes;
  uint8_t nMaxChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
};

// v2 and v3.
struct P2pV2 {
  const char* name;
  uint64_t commHash;
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
};

struct EventDescrV2 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV2 coll;
    P2pV2 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

using StateArgsV2 = StateArgsV1;

using ProfilerV2 = ProfilerTable<InitFnV1, EventDescrV2, StateArgsV2>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V2_H_

// ncclProfiler_v1 (NCCL 2.23): what this version adds to the ones before.
// docs/design/nccl.md §Profiler ABI v1; layout pinned in abi_pins.inc.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_V1_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_V1_H_

#include "plugin/nccl/profiler_common.h"

namespace flightrec {
namespace nccl_abi {

// Event-type bits new in v1 (descriptor `type` and the activation mask).
constexpr int kProfileGroup = 1 << 0;
constexpr int kProfileColl = 1 << 1;
constexpr int kProfileP2p = 1 << 2;
constexpr int kProfileProxyOp = 1 << 3;
constexpr int kProfileProxyStep = 1 << 4;
constexpr int kProfileProxyCtrl = 1 << 5;

// v1 descriptors carry NCCL's internal enum codes (uint8_t) instead of
// strings: ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*.
namespace v1 {
constexpr uint8_t kFuncBroadcast = 0;
constexpr uint8_t kFuncReduce = 1;
constexpr uint8_t kFuncAllGather = 2;
constexpr uint8_t kFuncReduceScatter = 3;
constexpr uint8_t kFuncAllReduce = 4;
constexpr uint8_t kFuncSendRecv = 5;
constexpr uint8_t kFuncSend = 6;
constexpr uint8_t kFuncRecv = 7;

constexpr uint8_t kInt8 = 0;
constexpr uint8_t kUint8 = 1;
constexpr uint8_t kInt32 = 2;
constexpr uint8_t kUint32 = 3;
constexpr uint8_t kInt64 = 4;
constexpr uint8_t kUint64 = 5;
constexpr uint8_t kFloat16 = 6;
constexpr uint8_t kFloat32 = 7;
constexpr uint8_t kFloat64 = 8;
constexpr uint8_t kBfloat16 = 9;
constexpr uint8_t kFloat8e4m3 = 10;
constexpr uint8_t kFloat8e5m2 = 11;

constexpr uint8_t kAlgoTree = 0;
constexpr uint8_t kAlgoRing = 1;
constexpr uint8_t kAlgoCollnetDirect = 2;
constexpr uint8_t kAlgoCollnetChain = 3;
constexpr uint8_t kAlgoNvls = 4;
constexpr uint8_t kAlgoNvlsTree = 5;
constexpr uint8_t kAlgoPat = 6;

constexpr uint8_t kProtoLL = 0;
constexpr uint8_t kProtoLL128 = 1;
constexpr uint8_t kProtoSimple = 2;
}  // namespace v1

// v1: enum codes as uint8_t.
struct CollV1 {
  const char* name;
  uint64_t commHash;
  uint64_t seqNumber;
  uint8_t func;
  const void* sendBuff;
  void* recvBuff;
  size_t count;
  int root;
  uint8_t datatype;
  uint32_t op;
  size_t trafficBytes;
  uint8_t nMaxChannels;
  uint8_t nWarps;
  uint8_t algo;
  uint8_t proto;
  int isCollnet;
  int isNvls;
};

struct P2pV1 {
  const char* name;
  uint64_t commHash;
  uint8_t func;
  void* buff;
  uint8_t datatype;
  size_t count;
  int peer;
};

// v1+ (unchanged through v7). `pid` is a pid_t (4 bytes on Linux).
struct ProxyOpDescr {
  int32_t pid;
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};

struct ProxyStepDescr {
  int step;
};

struct EventDescrV1 {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    CollV1 coll;
    P2pV1 p2p;
    ProxyOpDescr proxyOp;
    ProxyStepDescr proxyStep;
  };
};

// v1-v3.
union StateArgsV1 {
  struct {
    size_t transSize;
    int steps;
  } proxyOp;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
};

// v1-v3: no comm identity at init.
using InitFnV1 = Result (*)(void** context, int* eActivationMask);

using ProfilerV1 = ProfilerTable<InitFnV1, EventDescrV1, StateArgsV1>;

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_V1_H_

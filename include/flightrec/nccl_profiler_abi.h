// Our own declarations of NCCL's profiler plugin ABI, API versions v1..v7.
//
// Written from the facts in /work/shared/nccl (profiler-api.md section b,
// profiler-abi.json, profiler-v7.md), not copied from NCCL's headers. Every
// size, alignment and offset those facts list is pinned below with
// static_assert, so a typo here fails the build instead of corrupting a
// descriptor at run time.
//
// Field names deliberately keep NCCL's spelling (seqNumber, parentObj, ...)
// instead of our snake_case: these structs mirror a foreign ABI, and the
// names must be greppable against profiler-abi.json. Everything is a plain
// standard-layout struct so the emulator (tests/emulator) can fill them.
//
// VERSION MAP (NCCL release -> newest table it looks up)
//   2.23 v1 | 2.24-2.25 v2 | 2.26 v3 | 2.27 v4 | 2.28 v5 | 2.29-2.30 v6 | 2.31+ v7
//
// SHAPES
//   descriptor header: type (uint8_t in v1-v4, uint64_t in v5+) @0,
//                      parentObj @8, rank @16, anonymous union @24.
//   state args:        StateArgsV1 (16 bytes) for v1-v3, StateArgsV4 (8 bytes)
//                      for v4-v7.
//   function table:    name, init, startEvent, stopEvent, recordEventState,
//                      finalize (48 bytes in every version); init's argument
//                      list differs in v1-v3, v4 and v5+.
#ifndef FLIGHTREC_NCCL_PROFILER_ABI_H_
#define FLIGHTREC_NCCL_PROFILER_ABI_H_

#include <stddef.h>
#include <stdint.h>

namespace flightrec {
namespace nccl_abi {

// ncclResult_t: a 4-byte enum.
enum Result : int32_t {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
  kInProgress = 7,
};

// ncclDebugLogger_t. NCCL's first parameter is the ncclDebugLogLevel enum,
// which is passed exactly like an int.
using DebugLogger = void (*)(int level, unsigned long flags, const char* file, int line,
                             const char* fmt, ...);

// ncclDebugLogLevel values.
constexpr int kLogNone = 0;
constexpr int kLogVersion = 1;
constexpr int kLogWarn = 2;
constexpr int kLogInfo = 3;
constexpr int kLogAbort = 4;
constexpr int kLogTrace = 5;

// Event-type bits: descriptor `type` and the activation mask (an int).
constexpr int kProfileGroup = 1 << 0;          // v1
constexpr int kProfileColl = 1 << 1;           // v1
constexpr int kProfileP2p = 1 << 2;            // v1
constexpr int kProfileProxyOp = 1 << 3;        // v1
constexpr int kProfileProxyStep = 1 << 4;      // v1
constexpr int kProfileProxyCtrl = 1 << 5;      // v1
constexpr int kProfileKernelCh = 1 << 6;       // v3
constexpr int kProfileNetPlugin = 1 << 7;      // v3
constexpr int kProfileGroupApi = 1 << 8;       // v5
constexpr int kProfileCollApi = 1 << 9;        // v5
constexpr int kProfileP2pApi = 1 << 10;        // v5
constexpr int kProfileKernelLaunch = 1 << 11;  // v5
constexpr int kProfileCeColl = 1 << 12;        // v6
constexpr int kProfileCeSync = 1 << 13;        // v6
constexpr int kProfileCeBatch = 1 << 14;       // v6
constexpr int kProfileKernelPhase = 1 << 15;   // v7

// ncclProfilerEventState_t (every version; values were never renumbered).
enum EventState : int32_t {
  kProxyOpSendPosted = 0,  // states 0-7: emitted by NCCL <= 2.26 only
  kProxyOpSendRemFifoWait = 1,
  kProxyOpSendTransmitted = 2,
  kProxyOpSendDone = 3,
  kProxyOpRecvPosted = 4,
  kProxyOpRecvReceived = 5,
  kProxyOpRecvTransmitted = 6,
  kProxyOpRecvDone = 7,
  kProxyStepSendGPUWait = 8,
  kProxyStepSendWait = 9,  // args carry transSize
  kProxyStepRecvWait = 10,
  kProxyStepRecvFlushWait = 11,  // args carry transSize
  kProxyStepRecvGPUWait = 12,
  kProxyCtrlIdle = 13,
  kProxyCtrlActive = 14,
  kProxyCtrlSleep = 15,
  kProxyCtrlWakeup = 16,
  kProxyCtrlAppend = 17,
  kProxyCtrlAppendEnd = 18,
  kProxyOpInProgressV4 = 19,      // v4
  kProxyStepSendPeerWaitV4 = 20,  // v4
  kNetPluginUpdate = 21,          // v4
  kKernelChStop = 22,             // v4: args.kernelCh.pTimer = GPU stop time
  kGroupStartApiStop = 23,        // v5: args may be NULL or uninitialized
  kGroupEndApiStart = 24,         // v5: args may be NULL or uninitialized
  kCeCollStart = 25,              // v6: declared, never recorded by NCCL core
  kCeCollComplete = 26,
  kCeSyncStart = 27,
  kCeSyncComplete = 28,
  kCeBatchStart = 29,
  kCeBatchComplete = 30,
  kKernelPhaseStop = 31,  // v7
};

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

// ---------------------------------------------------------------------------
// Union members of the descriptors. Each starts at descriptor offset 24.
// ---------------------------------------------------------------------------

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
using P2pV3 = P2pV2;

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
using CollV6 = CollV5;

struct P2pV5 {
  const char* func;
  void* buff;
  const char* datatype;
  size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};
using P2pV6 = P2pV5;

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

// v3: no GPU timer.
struct KernelChV3 {
  uint8_t channelId;
};

// v4+: start time as GPU %globaltimer ns.
struct KernelChV4 {
  uint8_t channelId;
  uint64_t pTimer;
};

// v3+.
struct NetPluginDescr {
  int64_t id;
  void* data;
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

struct CeCollSyncDescr {
  bool isComplete;
  int nRanks;
};

struct CeCollBatchDescr {
  int numOps;
  size_t totalBytes;
  bool useIntraSync;
};

// v7: phases of symmetric kernels (sub-events of KernelCh).
struct KernelPhaseDescr {
  uint8_t channelId;
  uint8_t phaseId;  // 0 initial_sync, 1 compute, 2 final_sync
  const char* phaseName;
  uint64_t pTimer;  // start, GPU %globaltimer ns
};

// ---------------------------------------------------------------------------
// Event descriptors (ncclProfilerEventDescr_vN_t).
// ---------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------
// State arguments (ncclProfilerEventStateArgs_vN_t).
// ---------------------------------------------------------------------------

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
using StateArgsV2 = StateArgsV1;
using StateArgsV3 = StateArgsV1;

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
using StateArgsV5 = StateArgsV4;
using StateArgsV6 = StateArgsV4;
using StateArgsV7 = StateArgsV4;

// ---------------------------------------------------------------------------
// Function tables (ncclProfiler_vN_t), exported as data objects named
// ncclProfiler_vN.
// ---------------------------------------------------------------------------

// v1-v3: no comm identity at init.
using InitFnV1 = Result (*)(void** context, int* eActivationMask);
// v4: identity after the mask.
using InitFnV4 = Result (*)(void** context, int* eActivationMask, const char* commName,
                            uint64_t commHash, int nNodes, int nranks, int rank, DebugLogger logfn);
// v5+: commId moved to the second position.
using InitFnV5 = Result (*)(void** context, uint64_t commId, int* eActivationMask,
                            const char* commName, int nNodes, int nranks, int rank,
                            DebugLogger logfn);

struct ProfilerV1 {
  const char* name;
  InitFnV1 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV1* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV1* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV2 {
  const char* name;
  InitFnV1 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV2* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV2* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV3 {
  const char* name;
  InitFnV1 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV3* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV3* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV4 {
  const char* name;
  InitFnV4 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV4* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV4* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV5 {
  const char* name;
  InitFnV5 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV5* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV5* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV6 {
  const char* name;
  InitFnV5 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV6* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV6* eStateArgs);
  Result (*finalize)(void* context);
};

struct ProfilerV7 {
  const char* name;
  InitFnV5 init;
  Result (*startEvent)(void* context, void** eHandle, EventDescrV7* eDescr);
  Result (*stopEvent)(void* eHandle);
  Result (*recordEventState)(void* eHandle, EventState eState, StateArgsV7* eStateArgs);
  Result (*finalize)(void* context);
};

// ---------------------------------------------------------------------------
// Layout pins: every sizeof, alignof and offsetof in profiler-abi.json (v1-v6)
// and profiler-v7.md (v7), x86-64. Generated once from those files.
// ---------------------------------------------------------------------------

static_assert(sizeof(Result) == 4, "ncclResult_t is 4 bytes");
static_assert(sizeof(EventState) == 4, "ncclProfilerEventState_t is 4 bytes");
static_assert(sizeof(int32_t) == 4, "pid_t is 4 bytes");
static_assert(kProfileGroup == 1, "ncclProfileGroup");
static_assert(kProfileColl == 2, "ncclProfileColl");
static_assert(kProfileP2p == 4, "ncclProfileP2p");
static_assert(kProfileProxyOp == 8, "ncclProfileProxyOp");
static_assert(kProfileProxyStep == 16, "ncclProfileProxyStep");
static_assert(kProfileProxyCtrl == 32, "ncclProfileProxyCtrl");
static_assert(kProfileKernelCh == 64, "ncclProfileKernelCh");
static_assert(kProfileNetPlugin == 128, "ncclProfileNetPlugin");
static_assert(kProfileGroupApi == 256, "ncclProfileGroupApi");
static_assert(kProfileCollApi == 512, "ncclProfileCollApi");
static_assert(kProfileP2pApi == 1024, "ncclProfileP2pApi");
static_assert(kProfileKernelLaunch == 2048, "ncclProfileKernelLaunch");
static_assert(kProfileCeColl == 4096, "ncclProfileCeColl");
static_assert(kProfileCeSync == 8192, "ncclProfileCeSync");
static_assert(kProfileCeBatch == 16384, "ncclProfileCeBatch");
static_assert(kProfileKernelPhase == 32768, "ncclProfileKernelPhase");
static_assert(kProxyOpSendPosted == 0, "ncclProfilerProxyOpSendPosted");
static_assert(kProxyOpSendRemFifoWait == 1, "ncclProfilerProxyOpSendRemFifoWait");
static_assert(kProxyOpSendTransmitted == 2, "ncclProfilerProxyOpSendTransmitted");
static_assert(kProxyOpSendDone == 3, "ncclProfilerProxyOpSendDone");
static_assert(kProxyOpRecvPosted == 4, "ncclProfilerProxyOpRecvPosted");
static_assert(kProxyOpRecvReceived == 5, "ncclProfilerProxyOpRecvReceived");
static_assert(kProxyOpRecvTransmitted == 6, "ncclProfilerProxyOpRecvTransmitted");
static_assert(kProxyOpRecvDone == 7, "ncclProfilerProxyOpRecvDone");
static_assert(kProxyOpInProgressV4 == 19, "ncclProfilerProxyOpInProgress_v4");
static_assert(kProxyStepSendGPUWait == 8, "ncclProfilerProxyStepSendGPUWait");
static_assert(kProxyStepSendPeerWaitV4 == 20, "ncclProfilerProxyStepSendPeerWait_v4");
static_assert(kProxyStepSendWait == 9, "ncclProfilerProxyStepSendWait");
static_assert(kProxyStepRecvWait == 10, "ncclProfilerProxyStepRecvWait");
static_assert(kProxyStepRecvFlushWait == 11, "ncclProfilerProxyStepRecvFlushWait");
static_assert(kProxyStepRecvGPUWait == 12, "ncclProfilerProxyStepRecvGPUWait");
static_assert(kProxyCtrlIdle == 13, "ncclProfilerProxyCtrlIdle");
static_assert(kProxyCtrlActive == 14, "ncclProfilerProxyCtrlActive");
static_assert(kProxyCtrlSleep == 15, "ncclProfilerProxyCtrlSleep");
static_assert(kProxyCtrlWakeup == 16, "ncclProfilerProxyCtrlWakeup");
static_assert(kProxyCtrlAppend == 17, "ncclProfilerProxyCtrlAppend");
static_assert(kProxyCtrlAppendEnd == 18, "ncclProfilerProxyCtrlAppendEnd");
static_assert(kNetPluginUpdate == 21, "ncclProfilerNetPluginUpdate");
static_assert(kKernelChStop == 22, "ncclProfilerKernelChStop");
static_assert(kGroupStartApiStop == 23, "ncclProfilerGroupStartApiStop");
static_assert(kGroupEndApiStart == 24, "ncclProfilerGroupEndApiStart");
static_assert(kCeCollStart == 25, "ncclProfilerCeCollStart");
static_assert(kCeCollComplete == 26, "ncclProfilerCeCollComplete");
static_assert(kCeSyncStart == 27, "ncclProfilerCeSyncStart");
static_assert(kCeSyncComplete == 28, "ncclProfilerCeSyncComplete");
static_assert(kCeBatchStart == 29, "ncclProfilerCeBatchStart");
static_assert(kCeBatchComplete == 30, "ncclProfilerCeBatchComplete");
static_assert(kKernelPhaseStop == 31, "ncclProfilerKernelPhaseStop");
static_assert(kSuccess == 0, "ncclSuccess");
static_assert(kUnhandledCudaError == 1, "ncclUnhandledCudaError");
static_assert(kSystemError == 2, "ncclSystemError");
static_assert(kInternalError == 3, "ncclInternalError");
static_assert(kInvalidArgument == 4, "ncclInvalidArgument");
static_assert(kInvalidUsage == 5, "ncclInvalidUsage");
static_assert(kRemoteError == 6, "ncclRemoteError");
static_assert(kInProgress == 7, "ncclInProgress");

static_assert(sizeof(EventDescrV1) == 120, "EventDescrV1 size");
static_assert(alignof(EventDescrV1) == 8, "EventDescrV1 align");
static_assert(offsetof(EventDescrV1, type) == 0, "");
static_assert(sizeof(EventDescrV1::type) == 1, "");
static_assert(offsetof(EventDescrV1, parentObj) == 8, "");
static_assert(sizeof(EventDescrV1::parentObj) == 8, "");
static_assert(offsetof(EventDescrV1, rank) == 16, "");
static_assert(sizeof(EventDescrV1::rank) == 4, "");
static_assert(offsetof(EventDescrV1, coll) == 24, "");
static_assert(sizeof(EventDescrV1::coll) == 96, "");
static_assert(offsetof(EventDescrV1, coll.name) == 24, "");
static_assert(sizeof(EventDescrV1::coll.name) == 8, "");
static_assert(offsetof(EventDescrV1, coll.commHash) == 32, "");
static_assert(sizeof(EventDescrV1::coll.commHash) == 8, "");
static_assert(offsetof(EventDescrV1, coll.seqNumber) == 40, "");
static_assert(sizeof(EventDescrV1::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV1, coll.func) == 48, "");
static_assert(sizeof(EventDescrV1::coll.func) == 1, "");
static_assert(offsetof(EventDescrV1, coll.sendBuff) == 56, "");
static_assert(sizeof(EventDescrV1::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV1, coll.recvBuff) == 64, "");
static_assert(sizeof(EventDescrV1::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV1, coll.count) == 72, "");
static_assert(sizeof(EventDescrV1::coll.count) == 8, "");
static_assert(offsetof(EventDescrV1, coll.root) == 80, "");
static_assert(sizeof(EventDescrV1::coll.root) == 4, "");
static_assert(offsetof(EventDescrV1, coll.datatype) == 84, "");
static_assert(sizeof(EventDescrV1::coll.datatype) == 1, "");
static_assert(offsetof(EventDescrV1, coll.op) == 88, "");
static_assert(sizeof(EventDescrV1::coll.op) == 4, "");
static_assert(offsetof(EventDescrV1, coll.trafficBytes) == 96, "");
static_assert(sizeof(EventDescrV1::coll.trafficBytes) == 8, "");
static_assert(offsetof(EventDescrV1, coll.nMaxChannels) == 104, "");
static_assert(sizeof(EventDescrV1::coll.nMaxChannels) == 1, "");
static_assert(offsetof(EventDescrV1, coll.nWarps) == 105, "");
static_assert(sizeof(EventDescrV1::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV1, coll.algo) == 106, "");
static_assert(sizeof(EventDescrV1::coll.algo) == 1, "");
static_assert(offsetof(EventDescrV1, coll.proto) == 107, "");
static_assert(sizeof(EventDescrV1::coll.proto) == 1, "");
static_assert(offsetof(EventDescrV1, coll.isCollnet) == 108, "");
static_assert(sizeof(EventDescrV1::coll.isCollnet) == 4, "");
static_assert(offsetof(EventDescrV1, coll.isNvls) == 112, "");
static_assert(sizeof(EventDescrV1::coll.isNvls) == 4, "");
static_assert(offsetof(EventDescrV1, p2p) == 24, "");
static_assert(sizeof(EventDescrV1::p2p) == 56, "");
static_assert(offsetof(EventDescrV1, p2p.name) == 24, "");
static_assert(sizeof(EventDescrV1::p2p.name) == 8, "");
static_assert(offsetof(EventDescrV1, p2p.commHash) == 32, "");
static_assert(sizeof(EventDescrV1::p2p.commHash) == 8, "");
static_assert(offsetof(EventDescrV1, p2p.func) == 40, "");
static_assert(sizeof(EventDescrV1::p2p.func) == 1, "");
static_assert(offsetof(EventDescrV1, p2p.buff) == 48, "");
static_assert(sizeof(EventDescrV1::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV1, p2p.datatype) == 56, "");
static_assert(sizeof(EventDescrV1::p2p.datatype) == 1, "");
static_assert(offsetof(EventDescrV1, p2p.count) == 64, "");
static_assert(sizeof(EventDescrV1::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV1, p2p.peer) == 72, "");
static_assert(sizeof(EventDescrV1::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV1, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV1::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV1, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV1::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV1, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV1::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV1, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV1::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV1, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV1::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV1, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV1::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV1, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV1::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV1, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV1::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV1, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV1::proxyStep.step) == 4, "");

static_assert(sizeof(StateArgsV1) == 16, "StateArgsV1 size");
static_assert(alignof(StateArgsV1) == 8, "StateArgsV1 align");
static_assert(offsetof(StateArgsV1, proxyOp) == 0, "");
static_assert(sizeof(StateArgsV1::proxyOp) == 16, "");
static_assert(offsetof(StateArgsV1, proxyOp.transSize) == 0, "");
static_assert(sizeof(StateArgsV1::proxyOp.transSize) == 8, "");
static_assert(offsetof(StateArgsV1, proxyOp.steps) == 8, "");
static_assert(sizeof(StateArgsV1::proxyOp.steps) == 4, "");
static_assert(offsetof(StateArgsV1, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV1::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV1, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV1::proxyCtrl.appendedProxyOps) == 4, "");

static_assert(sizeof(ProfilerV1) == 48, "ProfilerV1 size");
static_assert(alignof(ProfilerV1) == 8, "ProfilerV1 align");
static_assert(offsetof(ProfilerV1, name) == 0, "");
static_assert(sizeof(ProfilerV1::name) == 8, "");
static_assert(offsetof(ProfilerV1, init) == 8, "");
static_assert(sizeof(ProfilerV1::init) == 8, "");
static_assert(offsetof(ProfilerV1, startEvent) == 16, "");
static_assert(sizeof(ProfilerV1::startEvent) == 8, "");
static_assert(offsetof(ProfilerV1, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV1::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV1, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV1::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV1, finalize) == 40, "");
static_assert(sizeof(ProfilerV1::finalize) == 8, "");

static_assert(sizeof(EventDescrV2) == 128, "EventDescrV2 size");
static_assert(alignof(EventDescrV2) == 8, "EventDescrV2 align");
static_assert(offsetof(EventDescrV2, type) == 0, "");
static_assert(sizeof(EventDescrV2::type) == 1, "");
static_assert(offsetof(EventDescrV2, parentObj) == 8, "");
static_assert(sizeof(EventDescrV2::parentObj) == 8, "");
static_assert(offsetof(EventDescrV2, rank) == 16, "");
static_assert(sizeof(EventDescrV2::rank) == 4, "");
static_assert(offsetof(EventDescrV2, coll) == 24, "");
static_assert(sizeof(EventDescrV2::coll) == 104, "");
static_assert(offsetof(EventDescrV2, coll.name) == 24, "");
static_assert(sizeof(EventDescrV2::coll.name) == 8, "");
static_assert(offsetof(EventDescrV2, coll.commHash) == 32, "");
static_assert(sizeof(EventDescrV2::coll.commHash) == 8, "");
static_assert(offsetof(EventDescrV2, coll.seqNumber) == 40, "");
static_assert(sizeof(EventDescrV2::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV2, coll.func) == 48, "");
static_assert(sizeof(EventDescrV2::coll.func) == 8, "");
static_assert(offsetof(EventDescrV2, coll.sendBuff) == 56, "");
static_assert(sizeof(EventDescrV2::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV2, coll.recvBuff) == 64, "");
static_assert(sizeof(EventDescrV2::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV2, coll.count) == 72, "");
static_assert(sizeof(EventDescrV2::coll.count) == 8, "");
static_assert(offsetof(EventDescrV2, coll.root) == 80, "");
static_assert(sizeof(EventDescrV2::coll.root) == 4, "");
static_assert(offsetof(EventDescrV2, coll.datatype) == 88, "");
static_assert(sizeof(EventDescrV2::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV2, coll.trafficBytes) == 96, "");
static_assert(sizeof(EventDescrV2::coll.trafficBytes) == 8, "");
static_assert(offsetof(EventDescrV2, coll.nMaxChannels) == 104, "");
static_assert(sizeof(EventDescrV2::coll.nMaxChannels) == 1, "");
static_assert(offsetof(EventDescrV2, coll.nWarps) == 105, "");
static_assert(sizeof(EventDescrV2::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV2, coll.algo) == 112, "");
static_assert(sizeof(EventDescrV2::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV2, coll.proto) == 120, "");
static_assert(sizeof(EventDescrV2::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV2, p2p) == 24, "");
static_assert(sizeof(EventDescrV2::p2p) == 56, "");
static_assert(offsetof(EventDescrV2, p2p.name) == 24, "");
static_assert(sizeof(EventDescrV2::p2p.name) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.commHash) == 32, "");
static_assert(sizeof(EventDescrV2::p2p.commHash) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.func) == 40, "");
static_assert(sizeof(EventDescrV2::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.buff) == 48, "");
static_assert(sizeof(EventDescrV2::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.datatype) == 56, "");
static_assert(sizeof(EventDescrV2::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.count) == 64, "");
static_assert(sizeof(EventDescrV2::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV2, p2p.peer) == 72, "");
static_assert(sizeof(EventDescrV2::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV2, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV2::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV2, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV2::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV2, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV2::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV2, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV2::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV2, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV2::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV2, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV2::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV2, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV2::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV2, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV2::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV2, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV2::proxyStep.step) == 4, "");

static_assert(sizeof(StateArgsV2) == 16, "StateArgsV2 size");
static_assert(alignof(StateArgsV2) == 8, "StateArgsV2 align");
static_assert(offsetof(StateArgsV2, proxyOp) == 0, "");
static_assert(sizeof(StateArgsV2::proxyOp) == 16, "");
static_assert(offsetof(StateArgsV2, proxyOp.transSize) == 0, "");
static_assert(sizeof(StateArgsV2::proxyOp.transSize) == 8, "");
static_assert(offsetof(StateArgsV2, proxyOp.steps) == 8, "");
static_assert(sizeof(StateArgsV2::proxyOp.steps) == 4, "");
static_assert(offsetof(StateArgsV2, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV2::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV2, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV2::proxyCtrl.appendedProxyOps) == 4, "");

static_assert(sizeof(ProfilerV2) == 48, "ProfilerV2 size");
static_assert(alignof(ProfilerV2) == 8, "ProfilerV2 align");
static_assert(offsetof(ProfilerV2, name) == 0, "");
static_assert(sizeof(ProfilerV2::name) == 8, "");
static_assert(offsetof(ProfilerV2, init) == 8, "");
static_assert(sizeof(ProfilerV2::init) == 8, "");
static_assert(offsetof(ProfilerV2, startEvent) == 16, "");
static_assert(sizeof(ProfilerV2::startEvent) == 8, "");
static_assert(offsetof(ProfilerV2, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV2::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV2, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV2::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV2, finalize) == 40, "");
static_assert(sizeof(ProfilerV2::finalize) == 8, "");

static_assert(sizeof(EventDescrV3) == 120, "EventDescrV3 size");
static_assert(alignof(EventDescrV3) == 8, "EventDescrV3 align");
static_assert(offsetof(EventDescrV3, type) == 0, "");
static_assert(sizeof(EventDescrV3::type) == 1, "");
static_assert(offsetof(EventDescrV3, parentObj) == 8, "");
static_assert(sizeof(EventDescrV3::parentObj) == 8, "");
static_assert(offsetof(EventDescrV3, rank) == 16, "");
static_assert(sizeof(EventDescrV3::rank) == 4, "");
static_assert(offsetof(EventDescrV3, coll) == 24, "");
static_assert(sizeof(EventDescrV3::coll) == 96, "");
static_assert(offsetof(EventDescrV3, coll.name) == 24, "");
static_assert(sizeof(EventDescrV3::coll.name) == 8, "");
static_assert(offsetof(EventDescrV3, coll.commHash) == 32, "");
static_assert(sizeof(EventDescrV3::coll.commHash) == 8, "");
static_assert(offsetof(EventDescrV3, coll.seqNumber) == 40, "");
static_assert(sizeof(EventDescrV3::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV3, coll.func) == 48, "");
static_assert(sizeof(EventDescrV3::coll.func) == 8, "");
static_assert(offsetof(EventDescrV3, coll.sendBuff) == 56, "");
static_assert(sizeof(EventDescrV3::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV3, coll.recvBuff) == 64, "");
static_assert(sizeof(EventDescrV3::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV3, coll.count) == 72, "");
static_assert(sizeof(EventDescrV3::coll.count) == 8, "");
static_assert(offsetof(EventDescrV3, coll.root) == 80, "");
static_assert(sizeof(EventDescrV3::coll.root) == 4, "");
static_assert(offsetof(EventDescrV3, coll.datatype) == 88, "");
static_assert(sizeof(EventDescrV3::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV3, coll.nMaxChannels) == 96, "");
static_assert(sizeof(EventDescrV3::coll.nMaxChannels) == 1, "");
static_assert(offsetof(EventDescrV3, coll.nWarps) == 97, "");
static_assert(sizeof(EventDescrV3::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV3, coll.algo) == 104, "");
static_assert(sizeof(EventDescrV3::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV3, coll.proto) == 112, "");
static_assert(sizeof(EventDescrV3::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV3, p2p) == 24, "");
static_assert(sizeof(EventDescrV3::p2p) == 56, "");
static_assert(offsetof(EventDescrV3, p2p.name) == 24, "");
static_assert(sizeof(EventDescrV3::p2p.name) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.commHash) == 32, "");
static_assert(sizeof(EventDescrV3::p2p.commHash) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.func) == 40, "");
static_assert(sizeof(EventDescrV3::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.buff) == 48, "");
static_assert(sizeof(EventDescrV3::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.datatype) == 56, "");
static_assert(sizeof(EventDescrV3::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.count) == 64, "");
static_assert(sizeof(EventDescrV3::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV3, p2p.peer) == 72, "");
static_assert(sizeof(EventDescrV3::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV3, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV3::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV3, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV3::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV3, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV3::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV3, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV3::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV3, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV3::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV3, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV3::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV3, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV3::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV3, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV3::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV3, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV3::proxyStep.step) == 4, "");
static_assert(offsetof(EventDescrV3, kernelCh) == 24, "");
static_assert(sizeof(EventDescrV3::kernelCh) == 1, "");
static_assert(offsetof(EventDescrV3, kernelCh.channelId) == 24, "");
static_assert(sizeof(EventDescrV3::kernelCh.channelId) == 1, "");
static_assert(offsetof(EventDescrV3, netPlugin) == 24, "");
static_assert(sizeof(EventDescrV3::netPlugin) == 16, "");
static_assert(offsetof(EventDescrV3, netPlugin.id) == 24, "");
static_assert(sizeof(EventDescrV3::netPlugin.id) == 8, "");
static_assert(offsetof(EventDescrV3, netPlugin.data) == 32, "");
static_assert(sizeof(EventDescrV3::netPlugin.data) == 8, "");

static_assert(sizeof(StateArgsV3) == 16, "StateArgsV3 size");
static_assert(alignof(StateArgsV3) == 8, "StateArgsV3 align");
static_assert(offsetof(StateArgsV3, proxyOp) == 0, "");
static_assert(sizeof(StateArgsV3::proxyOp) == 16, "");
static_assert(offsetof(StateArgsV3, proxyOp.transSize) == 0, "");
static_assert(sizeof(StateArgsV3::proxyOp.transSize) == 8, "");
static_assert(offsetof(StateArgsV3, proxyOp.steps) == 8, "");
static_assert(sizeof(StateArgsV3::proxyOp.steps) == 4, "");
static_assert(offsetof(StateArgsV3, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV3::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV3, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV3::proxyCtrl.appendedProxyOps) == 4, "");

static_assert(sizeof(ProfilerV3) == 48, "ProfilerV3 size");
static_assert(alignof(ProfilerV3) == 8, "ProfilerV3 align");
static_assert(offsetof(ProfilerV3, name) == 0, "");
static_assert(sizeof(ProfilerV3::name) == 8, "");
static_assert(offsetof(ProfilerV3, init) == 8, "");
static_assert(sizeof(ProfilerV3::init) == 8, "");
static_assert(offsetof(ProfilerV3, startEvent) == 16, "");
static_assert(sizeof(ProfilerV3::startEvent) == 8, "");
static_assert(offsetof(ProfilerV3, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV3::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV3, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV3::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV3, finalize) == 40, "");
static_assert(sizeof(ProfilerV3::finalize) == 8, "");

static_assert(sizeof(EventDescrV4) == 104, "EventDescrV4 size");
static_assert(alignof(EventDescrV4) == 8, "EventDescrV4 align");
static_assert(offsetof(EventDescrV4, type) == 0, "");
static_assert(sizeof(EventDescrV4::type) == 1, "");
static_assert(offsetof(EventDescrV4, parentObj) == 8, "");
static_assert(sizeof(EventDescrV4::parentObj) == 8, "");
static_assert(offsetof(EventDescrV4, rank) == 16, "");
static_assert(sizeof(EventDescrV4::rank) == 4, "");
static_assert(offsetof(EventDescrV4, coll) == 24, "");
static_assert(sizeof(EventDescrV4::coll) == 80, "");
static_assert(offsetof(EventDescrV4, coll.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV4::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV4, coll.func) == 32, "");
static_assert(sizeof(EventDescrV4::coll.func) == 8, "");
static_assert(offsetof(EventDescrV4, coll.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV4::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV4, coll.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV4::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV4, coll.count) == 56, "");
static_assert(sizeof(EventDescrV4::coll.count) == 8, "");
static_assert(offsetof(EventDescrV4, coll.root) == 64, "");
static_assert(sizeof(EventDescrV4::coll.root) == 4, "");
static_assert(offsetof(EventDescrV4, coll.datatype) == 72, "");
static_assert(sizeof(EventDescrV4::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV4, coll.nChannels) == 80, "");
static_assert(sizeof(EventDescrV4::coll.nChannels) == 1, "");
static_assert(offsetof(EventDescrV4, coll.nWarps) == 81, "");
static_assert(sizeof(EventDescrV4::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV4, coll.algo) == 88, "");
static_assert(sizeof(EventDescrV4::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV4, coll.proto) == 96, "");
static_assert(sizeof(EventDescrV4::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV4, p2p) == 24, "");
static_assert(sizeof(EventDescrV4::p2p) == 40, "");
static_assert(offsetof(EventDescrV4, p2p.func) == 24, "");
static_assert(sizeof(EventDescrV4::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV4, p2p.buff) == 32, "");
static_assert(sizeof(EventDescrV4::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV4, p2p.datatype) == 40, "");
static_assert(sizeof(EventDescrV4::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV4, p2p.count) == 48, "");
static_assert(sizeof(EventDescrV4::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV4, p2p.peer) == 56, "");
static_assert(sizeof(EventDescrV4::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV4, p2p.nChannels) == 60, "");
static_assert(sizeof(EventDescrV4::p2p.nChannels) == 1, "");
static_assert(offsetof(EventDescrV4, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV4::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV4, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV4::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV4, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV4::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV4, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV4::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV4, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV4::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV4, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV4::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV4, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV4::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV4, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV4::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV4, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV4::proxyStep.step) == 4, "");
static_assert(offsetof(EventDescrV4, kernelCh) == 24, "");
static_assert(sizeof(EventDescrV4::kernelCh) == 16, "");
static_assert(offsetof(EventDescrV4, kernelCh.channelId) == 24, "");
static_assert(sizeof(EventDescrV4::kernelCh.channelId) == 1, "");
static_assert(offsetof(EventDescrV4, kernelCh.pTimer) == 32, "");
static_assert(sizeof(EventDescrV4::kernelCh.pTimer) == 8, "");
static_assert(offsetof(EventDescrV4, netPlugin) == 24, "");
static_assert(sizeof(EventDescrV4::netPlugin) == 16, "");
static_assert(offsetof(EventDescrV4, netPlugin.id) == 24, "");
static_assert(sizeof(EventDescrV4::netPlugin.id) == 8, "");
static_assert(offsetof(EventDescrV4, netPlugin.data) == 32, "");
static_assert(sizeof(EventDescrV4::netPlugin.data) == 8, "");

static_assert(sizeof(StateArgsV4) == 8, "StateArgsV4 size");
static_assert(alignof(StateArgsV4) == 8, "StateArgsV4 align");
static_assert(offsetof(StateArgsV4, proxyStep) == 0, "");
static_assert(sizeof(StateArgsV4::proxyStep) == 8, "");
static_assert(offsetof(StateArgsV4, proxyStep.transSize) == 0, "");
static_assert(sizeof(StateArgsV4::proxyStep.transSize) == 8, "");
static_assert(offsetof(StateArgsV4, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV4::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV4, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV4::proxyCtrl.appendedProxyOps) == 4, "");
static_assert(offsetof(StateArgsV4, netPlugin) == 0, "");
static_assert(sizeof(StateArgsV4::netPlugin) == 8, "");
static_assert(offsetof(StateArgsV4, netPlugin.data) == 0, "");
static_assert(sizeof(StateArgsV4::netPlugin.data) == 8, "");
static_assert(offsetof(StateArgsV4, kernelCh) == 0, "");
static_assert(sizeof(StateArgsV4::kernelCh) == 8, "");
static_assert(offsetof(StateArgsV4, kernelCh.pTimer) == 0, "");
static_assert(sizeof(StateArgsV4::kernelCh.pTimer) == 8, "");

static_assert(sizeof(ProfilerV4) == 48, "ProfilerV4 size");
static_assert(alignof(ProfilerV4) == 8, "ProfilerV4 align");
static_assert(offsetof(ProfilerV4, name) == 0, "");
static_assert(sizeof(ProfilerV4::name) == 8, "");
static_assert(offsetof(ProfilerV4, init) == 8, "");
static_assert(sizeof(ProfilerV4::init) == 8, "");
static_assert(offsetof(ProfilerV4, startEvent) == 16, "");
static_assert(sizeof(ProfilerV4::startEvent) == 8, "");
static_assert(offsetof(ProfilerV4, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV4::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV4, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV4::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV4, finalize) == 40, "");
static_assert(sizeof(ProfilerV4::finalize) == 8, "");

static_assert(sizeof(EventDescrV5) == 112, "EventDescrV5 size");
static_assert(alignof(EventDescrV5) == 8, "EventDescrV5 align");
static_assert(offsetof(EventDescrV5, type) == 0, "");
static_assert(sizeof(EventDescrV5::type) == 8, "");
static_assert(offsetof(EventDescrV5, parentObj) == 8, "");
static_assert(sizeof(EventDescrV5::parentObj) == 8, "");
static_assert(offsetof(EventDescrV5, rank) == 16, "");
static_assert(sizeof(EventDescrV5::rank) == 4, "");
static_assert(offsetof(EventDescrV5, groupApi) == 24, "");
static_assert(sizeof(EventDescrV5::groupApi) == 8, "");
static_assert(offsetof(EventDescrV5, groupApi.graphCaptured) == 24, "");
static_assert(sizeof(EventDescrV5::groupApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV5, groupApi.groupDepth) == 28, "");
static_assert(sizeof(EventDescrV5::groupApi.groupDepth) == 4, "");
static_assert(offsetof(EventDescrV5, collApi) == 24, "");
static_assert(sizeof(EventDescrV5::collApi) == 48, "");
static_assert(offsetof(EventDescrV5, collApi.func) == 24, "");
static_assert(sizeof(EventDescrV5::collApi.func) == 8, "");
static_assert(offsetof(EventDescrV5, collApi.count) == 32, "");
static_assert(sizeof(EventDescrV5::collApi.count) == 8, "");
static_assert(offsetof(EventDescrV5, collApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV5::collApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV5, collApi.root) == 48, "");
static_assert(sizeof(EventDescrV5::collApi.root) == 4, "");
static_assert(offsetof(EventDescrV5, collApi.stream) == 56, "");
static_assert(sizeof(EventDescrV5::collApi.stream) == 8, "");
static_assert(offsetof(EventDescrV5, collApi.graphCaptured) == 64, "");
static_assert(sizeof(EventDescrV5::collApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV5, p2pApi) == 24, "");
static_assert(sizeof(EventDescrV5::p2pApi) == 40, "");
static_assert(offsetof(EventDescrV5, p2pApi.func) == 24, "");
static_assert(sizeof(EventDescrV5::p2pApi.func) == 8, "");
static_assert(offsetof(EventDescrV5, p2pApi.count) == 32, "");
static_assert(sizeof(EventDescrV5::p2pApi.count) == 8, "");
static_assert(offsetof(EventDescrV5, p2pApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV5::p2pApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV5, p2pApi.stream) == 48, "");
static_assert(sizeof(EventDescrV5::p2pApi.stream) == 8, "");
static_assert(offsetof(EventDescrV5, p2pApi.graphCaptured) == 56, "");
static_assert(sizeof(EventDescrV5::p2pApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV5, kernelLaunch) == 24, "");
static_assert(sizeof(EventDescrV5::kernelLaunch) == 8, "");
static_assert(offsetof(EventDescrV5, kernelLaunch.stream) == 24, "");
static_assert(sizeof(EventDescrV5::kernelLaunch.stream) == 8, "");
static_assert(offsetof(EventDescrV5, coll) == 24, "");
static_assert(sizeof(EventDescrV5::coll) == 88, "");
static_assert(offsetof(EventDescrV5, coll.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV5::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV5, coll.func) == 32, "");
static_assert(sizeof(EventDescrV5::coll.func) == 8, "");
static_assert(offsetof(EventDescrV5, coll.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV5::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV5, coll.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV5::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV5, coll.count) == 56, "");
static_assert(sizeof(EventDescrV5::coll.count) == 8, "");
static_assert(offsetof(EventDescrV5, coll.root) == 64, "");
static_assert(sizeof(EventDescrV5::coll.root) == 4, "");
static_assert(offsetof(EventDescrV5, coll.datatype) == 72, "");
static_assert(sizeof(EventDescrV5::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV5, coll.nChannels) == 80, "");
static_assert(sizeof(EventDescrV5::coll.nChannels) == 1, "");
static_assert(offsetof(EventDescrV5, coll.nWarps) == 81, "");
static_assert(sizeof(EventDescrV5::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV5, coll.algo) == 88, "");
static_assert(sizeof(EventDescrV5::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV5, coll.proto) == 96, "");
static_assert(sizeof(EventDescrV5::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV5, coll.parentGroup) == 104, "");
static_assert(sizeof(EventDescrV5::coll.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV5, p2p) == 24, "");
static_assert(sizeof(EventDescrV5::p2p) == 48, "");
static_assert(offsetof(EventDescrV5, p2p.func) == 24, "");
static_assert(sizeof(EventDescrV5::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV5, p2p.buff) == 32, "");
static_assert(sizeof(EventDescrV5::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV5, p2p.datatype) == 40, "");
static_assert(sizeof(EventDescrV5::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV5, p2p.count) == 48, "");
static_assert(sizeof(EventDescrV5::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV5, p2p.peer) == 56, "");
static_assert(sizeof(EventDescrV5::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV5, p2p.nChannels) == 60, "");
static_assert(sizeof(EventDescrV5::p2p.nChannels) == 1, "");
static_assert(offsetof(EventDescrV5, p2p.parentGroup) == 64, "");
static_assert(sizeof(EventDescrV5::p2p.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV5, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV5::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV5, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV5::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV5, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV5::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV5, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV5::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV5, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV5::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV5, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV5::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV5, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV5::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV5, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV5::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV5, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV5::proxyStep.step) == 4, "");
static_assert(offsetof(EventDescrV5, kernelCh) == 24, "");
static_assert(sizeof(EventDescrV5::kernelCh) == 16, "");
static_assert(offsetof(EventDescrV5, kernelCh.channelId) == 24, "");
static_assert(sizeof(EventDescrV5::kernelCh.channelId) == 1, "");
static_assert(offsetof(EventDescrV5, kernelCh.pTimer) == 32, "");
static_assert(sizeof(EventDescrV5::kernelCh.pTimer) == 8, "");
static_assert(offsetof(EventDescrV5, netPlugin) == 24, "");
static_assert(sizeof(EventDescrV5::netPlugin) == 16, "");
static_assert(offsetof(EventDescrV5, netPlugin.id) == 24, "");
static_assert(sizeof(EventDescrV5::netPlugin.id) == 8, "");
static_assert(offsetof(EventDescrV5, netPlugin.data) == 32, "");
static_assert(sizeof(EventDescrV5::netPlugin.data) == 8, "");

static_assert(sizeof(StateArgsV5) == 8, "StateArgsV5 size");
static_assert(alignof(StateArgsV5) == 8, "StateArgsV5 align");
static_assert(offsetof(StateArgsV5, proxyStep) == 0, "");
static_assert(sizeof(StateArgsV5::proxyStep) == 8, "");
static_assert(offsetof(StateArgsV5, proxyStep.transSize) == 0, "");
static_assert(sizeof(StateArgsV5::proxyStep.transSize) == 8, "");
static_assert(offsetof(StateArgsV5, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV5::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV5, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV5::proxyCtrl.appendedProxyOps) == 4, "");
static_assert(offsetof(StateArgsV5, netPlugin) == 0, "");
static_assert(sizeof(StateArgsV5::netPlugin) == 8, "");
static_assert(offsetof(StateArgsV5, netPlugin.data) == 0, "");
static_assert(sizeof(StateArgsV5::netPlugin.data) == 8, "");
static_assert(offsetof(StateArgsV5, kernelCh) == 0, "");
static_assert(sizeof(StateArgsV5::kernelCh) == 8, "");
static_assert(offsetof(StateArgsV5, kernelCh.pTimer) == 0, "");
static_assert(sizeof(StateArgsV5::kernelCh.pTimer) == 8, "");

static_assert(sizeof(ProfilerV5) == 48, "ProfilerV5 size");
static_assert(alignof(ProfilerV5) == 8, "ProfilerV5 align");
static_assert(offsetof(ProfilerV5, name) == 0, "");
static_assert(sizeof(ProfilerV5::name) == 8, "");
static_assert(offsetof(ProfilerV5, init) == 8, "");
static_assert(sizeof(ProfilerV5::init) == 8, "");
static_assert(offsetof(ProfilerV5, startEvent) == 16, "");
static_assert(sizeof(ProfilerV5::startEvent) == 8, "");
static_assert(offsetof(ProfilerV5, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV5::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV5, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV5::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV5, finalize) == 40, "");
static_assert(sizeof(ProfilerV5::finalize) == 8, "");

static_assert(sizeof(EventDescrV6) == 112, "EventDescrV6 size");
static_assert(alignof(EventDescrV6) == 8, "EventDescrV6 align");
static_assert(offsetof(EventDescrV6, type) == 0, "");
static_assert(sizeof(EventDescrV6::type) == 8, "");
static_assert(offsetof(EventDescrV6, parentObj) == 8, "");
static_assert(sizeof(EventDescrV6::parentObj) == 8, "");
static_assert(offsetof(EventDescrV6, rank) == 16, "");
static_assert(sizeof(EventDescrV6::rank) == 4, "");
static_assert(offsetof(EventDescrV6, groupApi) == 24, "");
static_assert(sizeof(EventDescrV6::groupApi) == 8, "");
static_assert(offsetof(EventDescrV6, groupApi.graphCaptured) == 24, "");
static_assert(sizeof(EventDescrV6::groupApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV6, groupApi.groupDepth) == 28, "");
static_assert(sizeof(EventDescrV6::groupApi.groupDepth) == 4, "");
static_assert(offsetof(EventDescrV6, collApi) == 24, "");
static_assert(sizeof(EventDescrV6::collApi) == 48, "");
static_assert(offsetof(EventDescrV6, collApi.func) == 24, "");
static_assert(sizeof(EventDescrV6::collApi.func) == 8, "");
static_assert(offsetof(EventDescrV6, collApi.count) == 32, "");
static_assert(sizeof(EventDescrV6::collApi.count) == 8, "");
static_assert(offsetof(EventDescrV6, collApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV6::collApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV6, collApi.root) == 48, "");
static_assert(sizeof(EventDescrV6::collApi.root) == 4, "");
static_assert(offsetof(EventDescrV6, collApi.stream) == 56, "");
static_assert(sizeof(EventDescrV6::collApi.stream) == 8, "");
static_assert(offsetof(EventDescrV6, collApi.graphCaptured) == 64, "");
static_assert(sizeof(EventDescrV6::collApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV6, p2pApi) == 24, "");
static_assert(sizeof(EventDescrV6::p2pApi) == 40, "");
static_assert(offsetof(EventDescrV6, p2pApi.func) == 24, "");
static_assert(sizeof(EventDescrV6::p2pApi.func) == 8, "");
static_assert(offsetof(EventDescrV6, p2pApi.count) == 32, "");
static_assert(sizeof(EventDescrV6::p2pApi.count) == 8, "");
static_assert(offsetof(EventDescrV6, p2pApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV6::p2pApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV6, p2pApi.stream) == 48, "");
static_assert(sizeof(EventDescrV6::p2pApi.stream) == 8, "");
static_assert(offsetof(EventDescrV6, p2pApi.graphCaptured) == 56, "");
static_assert(sizeof(EventDescrV6::p2pApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV6, kernelLaunch) == 24, "");
static_assert(sizeof(EventDescrV6::kernelLaunch) == 8, "");
static_assert(offsetof(EventDescrV6, kernelLaunch.stream) == 24, "");
static_assert(sizeof(EventDescrV6::kernelLaunch.stream) == 8, "");
static_assert(offsetof(EventDescrV6, coll) == 24, "");
static_assert(sizeof(EventDescrV6::coll) == 88, "");
static_assert(offsetof(EventDescrV6, coll.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV6::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV6, coll.func) == 32, "");
static_assert(sizeof(EventDescrV6::coll.func) == 8, "");
static_assert(offsetof(EventDescrV6, coll.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV6::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV6, coll.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV6::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV6, coll.count) == 56, "");
static_assert(sizeof(EventDescrV6::coll.count) == 8, "");
static_assert(offsetof(EventDescrV6, coll.root) == 64, "");
static_assert(sizeof(EventDescrV6::coll.root) == 4, "");
static_assert(offsetof(EventDescrV6, coll.datatype) == 72, "");
static_assert(sizeof(EventDescrV6::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV6, coll.nChannels) == 80, "");
static_assert(sizeof(EventDescrV6::coll.nChannels) == 1, "");
static_assert(offsetof(EventDescrV6, coll.nWarps) == 81, "");
static_assert(sizeof(EventDescrV6::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV6, coll.algo) == 88, "");
static_assert(sizeof(EventDescrV6::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV6, coll.proto) == 96, "");
static_assert(sizeof(EventDescrV6::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV6, coll.parentGroup) == 104, "");
static_assert(sizeof(EventDescrV6::coll.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV6, p2p) == 24, "");
static_assert(sizeof(EventDescrV6::p2p) == 48, "");
static_assert(offsetof(EventDescrV6, p2p.func) == 24, "");
static_assert(sizeof(EventDescrV6::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV6, p2p.buff) == 32, "");
static_assert(sizeof(EventDescrV6::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV6, p2p.datatype) == 40, "");
static_assert(sizeof(EventDescrV6::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV6, p2p.count) == 48, "");
static_assert(sizeof(EventDescrV6::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV6, p2p.peer) == 56, "");
static_assert(sizeof(EventDescrV6::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV6, p2p.nChannels) == 60, "");
static_assert(sizeof(EventDescrV6::p2p.nChannels) == 1, "");
static_assert(offsetof(EventDescrV6, p2p.parentGroup) == 64, "");
static_assert(sizeof(EventDescrV6::p2p.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV6, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV6::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV6, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV6::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV6, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV6::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV6, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV6::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV6, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV6::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV6, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV6::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV6, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV6::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV6, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV6::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV6, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV6::proxyStep.step) == 4, "");
static_assert(offsetof(EventDescrV6, kernelCh) == 24, "");
static_assert(sizeof(EventDescrV6::kernelCh) == 16, "");
static_assert(offsetof(EventDescrV6, kernelCh.channelId) == 24, "");
static_assert(sizeof(EventDescrV6::kernelCh.channelId) == 1, "");
static_assert(offsetof(EventDescrV6, kernelCh.pTimer) == 32, "");
static_assert(sizeof(EventDescrV6::kernelCh.pTimer) == 8, "");
static_assert(offsetof(EventDescrV6, netPlugin) == 24, "");
static_assert(sizeof(EventDescrV6::netPlugin) == 16, "");
static_assert(offsetof(EventDescrV6, netPlugin.id) == 24, "");
static_assert(sizeof(EventDescrV6::netPlugin.id) == 8, "");
static_assert(offsetof(EventDescrV6, netPlugin.data) == 32, "");
static_assert(sizeof(EventDescrV6::netPlugin.data) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl) == 24, "");
static_assert(sizeof(EventDescrV6::ceColl) == 88, "");
static_assert(offsetof(EventDescrV6, ceColl.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV6::ceColl.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.func) == 32, "");
static_assert(sizeof(EventDescrV6::ceColl.func) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV6::ceColl.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV6::ceColl.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.count) == 56, "");
static_assert(sizeof(EventDescrV6::ceColl.count) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.root) == 64, "");
static_assert(sizeof(EventDescrV6::ceColl.root) == 4, "");
static_assert(offsetof(EventDescrV6, ceColl.datatype) == 72, "");
static_assert(sizeof(EventDescrV6::ceColl.datatype) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.syncStrategy) == 80, "");
static_assert(sizeof(EventDescrV6::ceColl.syncStrategy) == 8, "");
static_assert(offsetof(EventDescrV6, ceColl.intraBatchSync) == 88, "");
static_assert(sizeof(EventDescrV6::ceColl.intraBatchSync) == 1, "");
static_assert(offsetof(EventDescrV6, ceColl.batchSize) == 92, "");
static_assert(sizeof(EventDescrV6::ceColl.batchSize) == 4, "");
static_assert(offsetof(EventDescrV6, ceColl.numBatches) == 96, "");
static_assert(sizeof(EventDescrV6::ceColl.numBatches) == 4, "");
static_assert(offsetof(EventDescrV6, ceColl.ceSeqNum) == 100, "");
static_assert(sizeof(EventDescrV6::ceColl.ceSeqNum) == 4, "");
static_assert(offsetof(EventDescrV6, ceColl.stream) == 104, "");
static_assert(sizeof(EventDescrV6::ceColl.stream) == 8, "");
static_assert(offsetof(EventDescrV6, ceCollSync) == 24, "");
static_assert(sizeof(EventDescrV6::ceCollSync) == 8, "");
static_assert(offsetof(EventDescrV6, ceCollSync.isComplete) == 24, "");
static_assert(sizeof(EventDescrV6::ceCollSync.isComplete) == 1, "");
static_assert(offsetof(EventDescrV6, ceCollSync.nRanks) == 28, "");
static_assert(sizeof(EventDescrV6::ceCollSync.nRanks) == 4, "");
static_assert(offsetof(EventDescrV6, ceCollBatch) == 24, "");
static_assert(sizeof(EventDescrV6::ceCollBatch) == 24, "");
static_assert(offsetof(EventDescrV6, ceCollBatch.numOps) == 24, "");
static_assert(sizeof(EventDescrV6::ceCollBatch.numOps) == 4, "");
static_assert(offsetof(EventDescrV6, ceCollBatch.totalBytes) == 32, "");
static_assert(sizeof(EventDescrV6::ceCollBatch.totalBytes) == 8, "");
static_assert(offsetof(EventDescrV6, ceCollBatch.useIntraSync) == 40, "");
static_assert(sizeof(EventDescrV6::ceCollBatch.useIntraSync) == 1, "");

static_assert(sizeof(StateArgsV6) == 8, "StateArgsV6 size");
static_assert(alignof(StateArgsV6) == 8, "StateArgsV6 align");
static_assert(offsetof(StateArgsV6, proxyStep) == 0, "");
static_assert(sizeof(StateArgsV6::proxyStep) == 8, "");
static_assert(offsetof(StateArgsV6, proxyStep.transSize) == 0, "");
static_assert(sizeof(StateArgsV6::proxyStep.transSize) == 8, "");
static_assert(offsetof(StateArgsV6, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV6::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV6, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV6::proxyCtrl.appendedProxyOps) == 4, "");
static_assert(offsetof(StateArgsV6, netPlugin) == 0, "");
static_assert(sizeof(StateArgsV6::netPlugin) == 8, "");
static_assert(offsetof(StateArgsV6, netPlugin.data) == 0, "");
static_assert(sizeof(StateArgsV6::netPlugin.data) == 8, "");
static_assert(offsetof(StateArgsV6, kernelCh) == 0, "");
static_assert(sizeof(StateArgsV6::kernelCh) == 8, "");
static_assert(offsetof(StateArgsV6, kernelCh.pTimer) == 0, "");
static_assert(sizeof(StateArgsV6::kernelCh.pTimer) == 8, "");

static_assert(sizeof(ProfilerV6) == 48, "ProfilerV6 size");
static_assert(alignof(ProfilerV6) == 8, "ProfilerV6 align");
static_assert(offsetof(ProfilerV6, name) == 0, "");
static_assert(sizeof(ProfilerV6::name) == 8, "");
static_assert(offsetof(ProfilerV6, init) == 8, "");
static_assert(sizeof(ProfilerV6::init) == 8, "");
static_assert(offsetof(ProfilerV6, startEvent) == 16, "");
static_assert(sizeof(ProfilerV6::startEvent) == 8, "");
static_assert(offsetof(ProfilerV6, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV6::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV6, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV6::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV6, finalize) == 40, "");
static_assert(sizeof(ProfilerV6::finalize) == 8, "");

static_assert(sizeof(EventDescrV7) == 136, "EventDescrV7 size");
static_assert(alignof(EventDescrV7) == 8, "EventDescrV7 align");
static_assert(offsetof(EventDescrV7, type) == 0, "");
static_assert(sizeof(EventDescrV7::type) == 8, "");
static_assert(offsetof(EventDescrV7, parentObj) == 8, "");
static_assert(sizeof(EventDescrV7::parentObj) == 8, "");
static_assert(offsetof(EventDescrV7, rank) == 16, "");
static_assert(sizeof(EventDescrV7::rank) == 4, "");
static_assert(offsetof(EventDescrV7, groupApi) == 24, "");
static_assert(sizeof(EventDescrV7::groupApi) == 8, "");
static_assert(offsetof(EventDescrV7, groupApi.graphCaptured) == 24, "");
static_assert(sizeof(EventDescrV7::groupApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV7, groupApi.groupDepth) == 28, "");
static_assert(sizeof(EventDescrV7::groupApi.groupDepth) == 4, "");
static_assert(offsetof(EventDescrV7, collApi) == 24, "");
static_assert(sizeof(EventDescrV7::collApi) == 56, "");
static_assert(offsetof(EventDescrV7, collApi.func) == 24, "");
static_assert(sizeof(EventDescrV7::collApi.func) == 8, "");
static_assert(offsetof(EventDescrV7, collApi.count) == 32, "");
static_assert(sizeof(EventDescrV7::collApi.count) == 8, "");
static_assert(offsetof(EventDescrV7, collApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV7::collApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV7, collApi.root) == 48, "");
static_assert(sizeof(EventDescrV7::collApi.root) == 4, "");
static_assert(offsetof(EventDescrV7, collApi.stream) == 56, "");
static_assert(sizeof(EventDescrV7::collApi.stream) == 8, "");
static_assert(offsetof(EventDescrV7, collApi.graphCaptured) == 64, "");
static_assert(sizeof(EventDescrV7::collApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV7, collApi.userTag) == 72, "");
static_assert(sizeof(EventDescrV7::collApi.userTag) == 8, "");
static_assert(offsetof(EventDescrV7, p2pApi) == 24, "");
static_assert(sizeof(EventDescrV7::p2pApi) == 48, "");
static_assert(offsetof(EventDescrV7, p2pApi.func) == 24, "");
static_assert(sizeof(EventDescrV7::p2pApi.func) == 8, "");
static_assert(offsetof(EventDescrV7, p2pApi.count) == 32, "");
static_assert(sizeof(EventDescrV7::p2pApi.count) == 8, "");
static_assert(offsetof(EventDescrV7, p2pApi.datatype) == 40, "");
static_assert(sizeof(EventDescrV7::p2pApi.datatype) == 8, "");
static_assert(offsetof(EventDescrV7, p2pApi.stream) == 48, "");
static_assert(sizeof(EventDescrV7::p2pApi.stream) == 8, "");
static_assert(offsetof(EventDescrV7, p2pApi.graphCaptured) == 56, "");
static_assert(sizeof(EventDescrV7::p2pApi.graphCaptured) == 1, "");
static_assert(offsetof(EventDescrV7, p2pApi.userTag) == 64, "");
static_assert(sizeof(EventDescrV7::p2pApi.userTag) == 8, "");
static_assert(offsetof(EventDescrV7, kernelLaunch) == 24, "");
static_assert(sizeof(EventDescrV7::kernelLaunch) == 8, "");
static_assert(offsetof(EventDescrV7, kernelLaunch.stream) == 24, "");
static_assert(sizeof(EventDescrV7::kernelLaunch.stream) == 8, "");
static_assert(offsetof(EventDescrV7, coll) == 24, "");
static_assert(sizeof(EventDescrV7::coll) == 112, "");
static_assert(offsetof(EventDescrV7, coll.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV7::coll.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV7, coll.func) == 32, "");
static_assert(sizeof(EventDescrV7::coll.func) == 8, "");
static_assert(offsetof(EventDescrV7, coll.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV7::coll.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV7, coll.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV7::coll.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV7, coll.count) == 56, "");
static_assert(sizeof(EventDescrV7::coll.count) == 8, "");
static_assert(offsetof(EventDescrV7, coll.root) == 64, "");
static_assert(sizeof(EventDescrV7::coll.root) == 4, "");
static_assert(offsetof(EventDescrV7, coll.datatype) == 72, "");
static_assert(sizeof(EventDescrV7::coll.datatype) == 8, "");
static_assert(offsetof(EventDescrV7, coll.nChannels) == 80, "");
static_assert(sizeof(EventDescrV7::coll.nChannels) == 1, "");
static_assert(offsetof(EventDescrV7, coll.nWarps) == 81, "");
static_assert(sizeof(EventDescrV7::coll.nWarps) == 1, "");
static_assert(offsetof(EventDescrV7, coll.algo) == 88, "");
static_assert(sizeof(EventDescrV7::coll.algo) == 8, "");
static_assert(offsetof(EventDescrV7, coll.proto) == 96, "");
static_assert(sizeof(EventDescrV7::coll.proto) == 8, "");
static_assert(offsetof(EventDescrV7, coll.parentGroup) == 104, "");
static_assert(sizeof(EventDescrV7::coll.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV7, coll.kernelVariant) == 112, "");
static_assert(sizeof(EventDescrV7::coll.kernelVariant) == 8, "");
static_assert(offsetof(EventDescrV7, coll.isSymColl) == 120, "");
static_assert(sizeof(EventDescrV7::coll.isSymColl) == 1, "");
static_assert(offsetof(EventDescrV7, coll.userTag) == 128, "");
static_assert(sizeof(EventDescrV7::coll.userTag) == 8, "");
static_assert(offsetof(EventDescrV7, p2p) == 24, "");
static_assert(sizeof(EventDescrV7::p2p) == 56, "");
static_assert(offsetof(EventDescrV7, p2p.func) == 24, "");
static_assert(sizeof(EventDescrV7::p2p.func) == 8, "");
static_assert(offsetof(EventDescrV7, p2p.buff) == 32, "");
static_assert(sizeof(EventDescrV7::p2p.buff) == 8, "");
static_assert(offsetof(EventDescrV7, p2p.datatype) == 40, "");
static_assert(sizeof(EventDescrV7::p2p.datatype) == 8, "");
static_assert(offsetof(EventDescrV7, p2p.count) == 48, "");
static_assert(sizeof(EventDescrV7::p2p.count) == 8, "");
static_assert(offsetof(EventDescrV7, p2p.peer) == 56, "");
static_assert(sizeof(EventDescrV7::p2p.peer) == 4, "");
static_assert(offsetof(EventDescrV7, p2p.nChannels) == 60, "");
static_assert(sizeof(EventDescrV7::p2p.nChannels) == 1, "");
static_assert(offsetof(EventDescrV7, p2p.parentGroup) == 64, "");
static_assert(sizeof(EventDescrV7::p2p.parentGroup) == 8, "");
static_assert(offsetof(EventDescrV7, p2p.userTag) == 72, "");
static_assert(sizeof(EventDescrV7::p2p.userTag) == 8, "");
static_assert(offsetof(EventDescrV7, proxyOp) == 24, "");
static_assert(sizeof(EventDescrV7::proxyOp) == 24, "");
static_assert(offsetof(EventDescrV7, proxyOp.pid) == 24, "");
static_assert(sizeof(EventDescrV7::proxyOp.pid) == 4, "");
static_assert(offsetof(EventDescrV7, proxyOp.channelId) == 28, "");
static_assert(sizeof(EventDescrV7::proxyOp.channelId) == 1, "");
static_assert(offsetof(EventDescrV7, proxyOp.peer) == 32, "");
static_assert(sizeof(EventDescrV7::proxyOp.peer) == 4, "");
static_assert(offsetof(EventDescrV7, proxyOp.nSteps) == 36, "");
static_assert(sizeof(EventDescrV7::proxyOp.nSteps) == 4, "");
static_assert(offsetof(EventDescrV7, proxyOp.chunkSize) == 40, "");
static_assert(sizeof(EventDescrV7::proxyOp.chunkSize) == 4, "");
static_assert(offsetof(EventDescrV7, proxyOp.isSend) == 44, "");
static_assert(sizeof(EventDescrV7::proxyOp.isSend) == 4, "");
static_assert(offsetof(EventDescrV7, proxyStep) == 24, "");
static_assert(sizeof(EventDescrV7::proxyStep) == 4, "");
static_assert(offsetof(EventDescrV7, proxyStep.step) == 24, "");
static_assert(sizeof(EventDescrV7::proxyStep.step) == 4, "");
static_assert(offsetof(EventDescrV7, kernelCh) == 24, "");
static_assert(sizeof(EventDescrV7::kernelCh) == 16, "");
static_assert(offsetof(EventDescrV7, kernelCh.channelId) == 24, "");
static_assert(sizeof(EventDescrV7::kernelCh.channelId) == 1, "");
static_assert(offsetof(EventDescrV7, kernelCh.pTimer) == 32, "");
static_assert(sizeof(EventDescrV7::kernelCh.pTimer) == 8, "");
static_assert(offsetof(EventDescrV7, netPlugin) == 24, "");
static_assert(sizeof(EventDescrV7::netPlugin) == 16, "");
static_assert(offsetof(EventDescrV7, netPlugin.id) == 24, "");
static_assert(sizeof(EventDescrV7::netPlugin.id) == 8, "");
static_assert(offsetof(EventDescrV7, netPlugin.data) == 32, "");
static_assert(sizeof(EventDescrV7::netPlugin.data) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl) == 24, "");
static_assert(sizeof(EventDescrV7::ceColl) == 96, "");
static_assert(offsetof(EventDescrV7, ceColl.seqNumber) == 24, "");
static_assert(sizeof(EventDescrV7::ceColl.seqNumber) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.func) == 32, "");
static_assert(sizeof(EventDescrV7::ceColl.func) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.sendBuff) == 40, "");
static_assert(sizeof(EventDescrV7::ceColl.sendBuff) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.recvBuff) == 48, "");
static_assert(sizeof(EventDescrV7::ceColl.recvBuff) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.count) == 56, "");
static_assert(sizeof(EventDescrV7::ceColl.count) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.root) == 64, "");
static_assert(sizeof(EventDescrV7::ceColl.root) == 4, "");
static_assert(offsetof(EventDescrV7, ceColl.datatype) == 72, "");
static_assert(sizeof(EventDescrV7::ceColl.datatype) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.syncStrategy) == 80, "");
static_assert(sizeof(EventDescrV7::ceColl.syncStrategy) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.intraBatchSync) == 88, "");
static_assert(sizeof(EventDescrV7::ceColl.intraBatchSync) == 1, "");
static_assert(offsetof(EventDescrV7, ceColl.batchSize) == 92, "");
static_assert(sizeof(EventDescrV7::ceColl.batchSize) == 4, "");
static_assert(offsetof(EventDescrV7, ceColl.numBatches) == 96, "");
static_assert(sizeof(EventDescrV7::ceColl.numBatches) == 4, "");
static_assert(offsetof(EventDescrV7, ceColl.ceSeqNum) == 100, "");
static_assert(sizeof(EventDescrV7::ceColl.ceSeqNum) == 4, "");
static_assert(offsetof(EventDescrV7, ceColl.stream) == 104, "");
static_assert(sizeof(EventDescrV7::ceColl.stream) == 8, "");
static_assert(offsetof(EventDescrV7, ceColl.userTag) == 112, "");
static_assert(sizeof(EventDescrV7::ceColl.userTag) == 8, "");
static_assert(offsetof(EventDescrV7, ceCollSync) == 24, "");
static_assert(sizeof(EventDescrV7::ceCollSync) == 8, "");
static_assert(offsetof(EventDescrV7, ceCollSync.isComplete) == 24, "");
static_assert(sizeof(EventDescrV7::ceCollSync.isComplete) == 1, "");
static_assert(offsetof(EventDescrV7, ceCollSync.nRanks) == 28, "");
static_assert(sizeof(EventDescrV7::ceCollSync.nRanks) == 4, "");
static_assert(offsetof(EventDescrV7, ceCollBatch) == 24, "");
static_assert(sizeof(EventDescrV7::ceCollBatch) == 24, "");
static_assert(offsetof(EventDescrV7, ceCollBatch.numOps) == 24, "");
static_assert(sizeof(EventDescrV7::ceCollBatch.numOps) == 4, "");
static_assert(offsetof(EventDescrV7, ceCollBatch.totalBytes) == 32, "");
static_assert(sizeof(EventDescrV7::ceCollBatch.totalBytes) == 8, "");
static_assert(offsetof(EventDescrV7, ceCollBatch.useIntraSync) == 40, "");
static_assert(sizeof(EventDescrV7::ceCollBatch.useIntraSync) == 1, "");
static_assert(offsetof(EventDescrV7, kernelPhase) == 24, "");
static_assert(sizeof(EventDescrV7::kernelPhase) == 24, "");
static_assert(offsetof(EventDescrV7, kernelPhase.channelId) == 24, "");
static_assert(sizeof(EventDescrV7::kernelPhase.channelId) == 1, "");
static_assert(offsetof(EventDescrV7, kernelPhase.phaseId) == 25, "");
static_assert(sizeof(EventDescrV7::kernelPhase.phaseId) == 1, "");
static_assert(offsetof(EventDescrV7, kernelPhase.phaseName) == 32, "");
static_assert(sizeof(EventDescrV7::kernelPhase.phaseName) == 8, "");
static_assert(offsetof(EventDescrV7, kernelPhase.pTimer) == 40, "");
static_assert(sizeof(EventDescrV7::kernelPhase.pTimer) == 8, "");

static_assert(sizeof(StateArgsV7) == 8, "StateArgsV7 size");
static_assert(alignof(StateArgsV7) == 8, "StateArgsV7 align");
static_assert(offsetof(StateArgsV7, proxyStep) == 0, "");
static_assert(sizeof(StateArgsV7::proxyStep) == 8, "");
static_assert(offsetof(StateArgsV7, proxyStep.transSize) == 0, "");
static_assert(sizeof(StateArgsV7::proxyStep.transSize) == 8, "");
static_assert(offsetof(StateArgsV7, proxyCtrl) == 0, "");
static_assert(sizeof(StateArgsV7::proxyCtrl) == 4, "");
static_assert(offsetof(StateArgsV7, proxyCtrl.appendedProxyOps) == 0, "");
static_assert(sizeof(StateArgsV7::proxyCtrl.appendedProxyOps) == 4, "");
static_assert(offsetof(StateArgsV7, netPlugin) == 0, "");
static_assert(sizeof(StateArgsV7::netPlugin) == 8, "");
static_assert(offsetof(StateArgsV7, netPlugin.data) == 0, "");
static_assert(sizeof(StateArgsV7::netPlugin.data) == 8, "");
static_assert(offsetof(StateArgsV7, kernelCh) == 0, "");
static_assert(sizeof(StateArgsV7::kernelCh) == 8, "");
static_assert(offsetof(StateArgsV7, kernelCh.pTimer) == 0, "");
static_assert(sizeof(StateArgsV7::kernelCh.pTimer) == 8, "");

static_assert(sizeof(ProfilerV7) == 48, "ProfilerV7 size");
static_assert(alignof(ProfilerV7) == 8, "ProfilerV7 align");
static_assert(offsetof(ProfilerV7, name) == 0, "");
static_assert(sizeof(ProfilerV7::name) == 8, "");
static_assert(offsetof(ProfilerV7, init) == 8, "");
static_assert(sizeof(ProfilerV7::init) == 8, "");
static_assert(offsetof(ProfilerV7, startEvent) == 16, "");
static_assert(sizeof(ProfilerV7::startEvent) == 8, "");
static_assert(offsetof(ProfilerV7, stopEvent) == 24, "");
static_assert(sizeof(ProfilerV7::stopEvent) == 8, "");
static_assert(offsetof(ProfilerV7, recordEventState) == 32, "");
static_assert(sizeof(ProfilerV7::recordEventState) == 8, "");
static_assert(offsetof(ProfilerV7, finalize) == 40, "");
static_assert(sizeof(ProfilerV7::finalize) == 8, "");

}  // namespace nccl_abi
}  // namespace flightrec

#endif  // FLIGHTREC_NCCL_PROFILER_ABI_H_

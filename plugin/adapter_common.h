// Pieces shared by the thin ncclProfiler_vN adapters: descriptor field
// extraction (templates over the per-version structs) and the entry points
// whose shape is the same in every version.
#ifndef FLIGHTREC_PLUGIN_ADAPTER_COMMON_H_
#define FLIGHTREC_PLUGIN_ADAPTER_COMMON_H_

#include <stdint.h>

#include "flightrec/record_format.h"
#include "plugin/enum_map.h"
#include "plugin/event_model.h"
#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace plugin {

namespace abi = nccl_abi;

#define FLIGHTREC_EXPORT extern "C" __attribute__((visibility("default")))

constexpr const char* kPluginName = "flightrec";

inline uint64_t PtrBits(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}

// Event types flightrec deliberately declines (*eHandle = NULL, no count):
// they carry nothing a flight record of ops needs.
constexpr uint64_t kDeclinedTypes = abi::kProfileGroup | abi::kProfileGroupApi |
                                    abi::kProfileKernelLaunch | abi::kProfileProxyCtrl |
                                    abi::kProfileNetPlugin;

// Declined types NCCL starts only when their own bit is in the mask (the
// others, Group and GroupApi, come whenever an op type is asked for): one of
// these arriving outside the mask the plugin wrote means the mask was
// overridden (RAS, NCCL 2.31+; docs/design/nccl.md §NCCL 2.31).
constexpr uint64_t kSelfGatedDeclinedTypes =
    abi::kProfileKernelLaunch | abi::kProfileProxyCtrl | abi::kProfileNetPlugin;

inline bool IsDeclinedType(uint64_t type) {
  return type != 0 && (type & (type - 1)) == 0 && (type & kDeclinedTypes) != 0;
}

// v2+: a Coll with string func/datatype/algo/proto.
template <typename Coll>
inline OpStart CollFromStrings(const Coll& c, uint8_t n_channels) {
  OpStart op;
  op.desc.func = MapName(NameKind::kFunc, c.func);
  op.desc.datatype = MapName(NameKind::kDataType, c.datatype);
  op.desc.algo = MapName(NameKind::kAlgo, c.algo);
  op.desc.proto = MapName(NameKind::kProto, c.proto);
  op.desc.n_channels = n_channels;
  op.desc.n_warps = c.nWarps;
  op.desc.root_or_peer = c.root;
  op.desc.count = c.count;
  op.desc.nccl_seq = c.seqNumber;
  return op;
}

// v2+: a P2p with string func/datatype. Send/Recv carry no seqNumber.
template <typename P2p>
inline OpStart P2pFromStrings(const P2p& p, uint8_t n_channels) {
  OpStart op;
  op.desc.func = MapName(NameKind::kFunc, p.func);
  op.desc.datatype = MapName(NameKind::kDataType, p.datatype);
  op.desc.n_channels = n_channels;
  op.desc.flags = format::kFlagP2p;
  op.desc.root_or_peer = p.peer;
  op.desc.count = p.count;
  op.desc.nccl_seq = UINT64_MAX;
  return op;
}

// v1-v3: the descriptor carries the comm identity; bind it on first use.
template <typename CollOrP2p>
inline void AddIdentity(const CollOrP2p& c, int rank, OpStart* op) {
  op->bind_identity = true;
  op->comm_hash = c.commHash;
  op->comm_name = c.name;
  op->rank = rank;
}

// v5+: CollApi/P2pApi carry the user's call: its datatype as NCCL's name
// (AllGather/Broadcast keep it here; their Coll event is in bytes as
// ncclInt8, docs/design/nccl.md §Call sequences v5).
template <typename Api>
inline ApiStart ApiFrom(const Api& a) {
  ApiStart api;
  api.stream = PtrBits(a.stream);
  api.graph_captured = a.graphCaptured;
  api.datatype = MapName(NameKind::kDataType, a.datatype);
  return api;
}

// v1-v3 state args: transSize lives in proxyOp. Never read args for other
// states (NCCL may pass NULL or, through shims, uninitialized memory).
inline uint64_t StateValueV1(abi::EventState state, const abi::StateArgsV1* args) {
  if (args == nullptr) return 0;
  if (state == abi::kProxyStepSendWait || state == abi::kProxyStepRecvFlushWait) {
    return args->proxyOp.transSize;
  }
  return 0;
}

// v4+ state args.
inline uint64_t StateValueV4(abi::EventState state, const abi::StateArgsV4* args) {
  if (args == nullptr) return 0;
  switch (state) {
    case abi::kKernelChStop:
    case abi::kKernelPhaseStop:  // v7: a phase's stop reuses kernelCh.pTimer
      return args->kernelCh.pTimer;
    case abi::kProxyStepSendWait:
    case abi::kProxyStepRecvFlushWait:
      return args->proxyStep.transSize;
    default:
      return 0;
  }
}

// init: never an error (a failing init is unsafe on several NCCL versions);
// *context = nullptr declines the comm.
inline abi::Result InitCommon(void** context, int* event_mask, const InitRequest& req) {
  if (context == nullptr) return abi::kSuccess;
  *context = InitContext(req, event_mask);
  return abi::kSuccess;
}

// v4+ init: the communicator's identity arrives with it.
inline abi::Result InitWithIdentity(int api_version, void** context, int* event_mask,
                                    uint64_t comm_id, const char* comm_name, int nnodes, int nranks,
                                    int rank, abi::DebugLogger log) {
  InitRequest req;
  req.api_version = api_version;
  req.has_identity = true;
  req.comm_id = comm_id;
  req.comm_name = comm_name;
  req.nnodes = nnodes;
  req.nranks = nranks;
  req.rank = rank;
  req.log = log;
  return InitCommon(context, event_mask, req);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
inline abi::Result StopEventAny(void* handle) {
  StopEvent(handle);
  return abi::kSuccess;
}

inline abi::Result FinalizeAny(void* context) {
  FinalizeContext(context);
  return abi::kSuccess;
}

// The descriptor and state-args types of a table ncclProfiler_vN_t.
template <typename Table>
struct TableTypes;
template <typename InitFn, typename Descr, typename StateArgs>
struct TableTypes<abi::ProfilerTable<InitFn, Descr, StateArgs>> {
  using DescrType = Descr;
  using StateArgsType = StateArgs;
};
template <typename Table>
using DescrOf = typename TableTypes<Table>::DescrType;
template <typename Table>
using StateArgsOf = typename TableTypes<Table>::StateArgsType;

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_ADAPTER_COMMON_H_

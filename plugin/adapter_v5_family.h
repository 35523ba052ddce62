// The entry points of ncclProfiler_v5, _v6 and _v7, written once. The three
// descriptors agree on every field flightrec reads; v6 adds copy-engine
// events and v7 per-call user tags, symmetric-kernel collectives
// (isSymColl, kernelVariant) and KernelPhase events (recorded when present).
// plugin/adapters.cc instantiates these for each version and exports the
// tables.
#ifndef FLIGHTREC_PLUGIN_ADAPTER_V5_FAMILY_H_
#define FLIGHTREC_PLUGIN_ADAPTER_V5_FAMILY_H_

#include <stdint.h>

#include <type_traits>

#include "plugin/adapter_common.h"
#include "plugin/ce_events.h"

namespace flightrec {
namespace plugin {

// Descriptors that carry the user's per-call tag (v7+): coll.userTag exists.
template <typename Descr, typename = void>
inline constexpr bool kHasUserTag = false;
template <typename Descr>
inline constexpr bool kHasUserTag<Descr, std::void_t<decltype(Descr::coll.userTag)>> = true;

// v7+: coll.isSymColl and the KernelPhase descriptor exist.
template <typename Descr, typename = void>
inline constexpr bool kHasSymmetric = false;
template <typename Descr>
inline constexpr bool kHasSymmetric<
    Descr, std::void_t<decltype(Descr::coll.isSymColl), decltype(Descr::kernelPhase)>> = true;

// A symmetric kernel's Coll (v7, isSymColl): algo kAlgoSymmetric, the
// variant in proto (NCCL gives the variant's tail as `algo` and "" as
// `proto`). NCCL posts every KernelCh of a symmetric plan against its head
// task (nChannels = the plan's channels); the plan's other tasks carry
// nChannels 0 and never get one: kFlagNoCompletion, so that they never read
// as stuck (docs/design/nccl.md §Symmetric kernels).
inline void MarkSymmetric(const char* kernel_variant, OpStart* op) {
  op->desc.flags |= format::kFlagSymmetric;
  op->desc.algo = format::kAlgoSymmetric;
  op->desc.proto = MapName(NameKind::kVariant, kernel_variant);
  if (op->desc.n_channels == 0) op->desc.flags |= format::kFlagNoCompletion;
}

template <int kApiVersion>
abi::Result InitV5Family(void** context, uint64_t comm_id, int* event_mask, const char* comm_name,
                         int nnodes, int nranks, int rank, abi::DebugLogger log) {
  return InitWithIdentity(kApiVersion, context, event_mask, comm_id, comm_name, nnodes, nranks,
                          rank, log);
}

// Every start but KernelCh, ProxyStep and the declined types: ops, API
// calls, ProxyOps, copy-engine events.
template <typename Descr>
inline void* StartOtherEvent(void* context, const Descr* d) {
  switch (d->type) {
    case abi::kProfileColl: {
      OpStart op = CollFromStrings(d->coll, d->coll.nChannels);
      op.parent_is_api = true;
      if constexpr (kHasUserTag<Descr>) op.desc.user_tag = d->coll.userTag;
      if constexpr (kHasSymmetric<Descr>) {
        if (d->coll.isSymColl != 0) MarkSymmetric(d->coll.kernelVariant, &op);
      }
      return StartOp(context, d->parentObj, op);
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromStrings(d->p2p, d->p2p.nChannels);
      op.parent_is_api = true;
      if constexpr (kHasUserTag<Descr>) op.desc.user_tag = d->p2p.userTag;
      return StartOp(context, d->parentObj, op);
    }
    case abi::kProfileCollApi: {
      ApiStart api = ApiFrom(d->collApi);
      if constexpr (kHasUserTag<Descr>) api.user_tag = d->collApi.userTag;
      return StartApi(context, api);
    }
    case abi::kProfileP2pApi: {
      ApiStart api = ApiFrom(d->p2pApi);
      if constexpr (kHasUserTag<Descr>) api.user_tag = d->p2pApi.userTag;
      return StartApi(context, api);
    }
    case abi::kProfileProxyOp:
      return StartProxyOp(context, d->parentObj, d->proxyOp.pid);
    case abi::kProfileProxyStep:
      return StartProxyStep(d->parentObj);
    case abi::kProfileCeColl:
    case abi::kProfileCeSync:
    case abi::kProfileCeBatch:
      if constexpr (kHasCeColl<Descr>) return StartCeEvent(context, d);
      CountUnknownEvent(context);  // NCCL's shim drops CE events for v5 tables
      return nullptr;
    case abi::kProfileKernelPhase:
      if constexpr (kHasSymmetric<Descr>) {
        if (FLIGHTREC_UNLIKELY((WrittenMask() & abi::kProfileKernelPhase) == 0)) {
          NoteUnaskedEvent(context, abi::kProfileKernelPhase);
        }
        return StartKernelPhase(d->parentObj, d->kernelPhase.phaseId);
      }
      CountUnknownEvent(context);  // NCCL's shims drop phases for v5/v6 tables
      return nullptr;
    default:
      CountUnknownEvent(context);
      return nullptr;
  }
}

// StartOtherEvent out of line, writing the handle itself: the op path's
// frame (descriptor, record image) stays out of the entry point that also
// serves the eight KernelCh starts of a collective, and the entry point's
// call to it is a tail call, so that no value of the entry point lives
// across a call and it saves no register.
template <typename Descr>
__attribute__((noinline)) abi::Result StartOtherV5Family(void* context, void** handle,
                                                         const Descr* d) {
  *handle = StartOtherEvent(context, d);
  return abi::kSuccess;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
template <typename Descr>
abi::Result StartEventV5Family(void* context, void** handle, Descr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  const uint64_t type = d->type;
  if (type == abi::kProfileKernelCh) {  // one per channel: the most frequent start
    // The stop timer arrives with KernelChStop.
    StartKernelCh(handle, d->parentObj, d->kernelCh.pTimer, true);
    return abi::kSuccess;
  }
  if (type == abi::kProfileProxyStep) {  // 4+ per ProxyOp: a kind check, no call
    *handle = StartProxyStep(d->parentObj);
    return abi::kSuccess;
  }
  if (IsDeclinedType(type)) {  // Group, GroupApi, KernelLaunch, ...
    if (FLIGHTREC_UNLIKELY((type & kSelfGatedDeclinedTypes) != 0)) NoteUnaskedEvent(context, type);
    return abi::kSuccess;
  }
  return StartOtherV5Family(context, handle, d);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
// (StateArgsV5 and later are StateArgsV4.)
inline abi::Result RecordEventStateV5Family(void* handle, abi::EventState state,
                                            abi::StateArgsV4* args) {
  RecordStateOf(handle, state,
                [args](abi::EventState recorded) { return StateValueV4(recorded, args); });
  return abi::kSuccess;
}

// The table ncclProfiler_vN (N >= 5) of these entry points.
template <typename Table, int kApiVersion>
constexpr Table V5FamilyTable() {
  return {kPluginName,  InitV5Family<kApiVersion>, StartEventV5Family<DescrOf<Table>>,
          StopEventAny, RecordEventStateV5Family,  FinalizeAny};
}

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_ADAPTER_V5_FAMILY_H_

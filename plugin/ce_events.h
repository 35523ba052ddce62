// Copy-engine (CE) collectives, profiler API v6+ (NCCL 2.29+): CeColl
// recorded as a collective of its communicator, CeSync/CeBatch as its
// progress, completion through CUDA events (recorder/ce_completion.h).
// The sequence NCCL emits and the fields used: docs/design/nccl.md
// §Copy-engine collectives; the record's meaning: the CE paragraph of
// include/flightrec/record_format.h.
#ifndef FLIGHTREC_PLUGIN_CE_EVENTS_H_
#define FLIGHTREC_PLUGIN_CE_EVENTS_H_

#include <stdint.h>

#include <type_traits>

#include "flightrec/record_format.h"
#include "plugin/adapter_common.h"
#include "plugin/enum_map.h"
#include "plugin/event_model.h"
#include "plugin/handle.h"
#include "recorder/ce_completion.h"

namespace flightrec {
namespace plugin {

// Descriptors with the CE events (v6+): ceColl exists.
template <typename Descr, typename = void>
inline constexpr bool kHasCeColl = false;
template <typename Descr>
inline constexpr bool kHasCeColl<Descr, std::void_t<decltype(Descr::ceColl)>> = true;
// v7+: ceColl.userTag exists.
template <typename Descr, typename = void>
inline constexpr bool kHasCeUserTag = false;
template <typename Descr>
inline constexpr bool kHasCeUserTag<Descr, std::void_t<decltype(Descr::ceColl.userTag)>> = true;

constexpr uint64_t kCeTypes = static_cast<uint64_t>(abi::kProfileCeColl) |
                              static_cast<uint64_t>(abi::kProfileCeSync) |
                              static_cast<uint64_t>(abi::kProfileCeBatch);

// ceColl.syncStrategy ("MC" multicast, "UC" unicast: ncclLaunchCeColl) ->
// format::Algo. Reads at most three bytes of NCCL's static string.
inline uint8_t CeAlgoFromSyncStrategy(const char* s) {
  if (s == nullptr || s[0] == '\0' || s[1] != 'C' || s[2] != '\0') return format::kAlgoUnknown;
  if (s[0] == 'M') return format::kAlgoCeMulticast;
  if (s[0] == 'U') return format::kAlgoCeUnicast;
  return format::kAlgoUnknown;
}

// The op a CeColl start describes (before the API call is attached).
template <typename CeColl>
inline OpDesc CeOpDesc(const CeColl& ce) {
  OpDesc desc;
  desc.func = MapName(NameKind::kFunc, ce.func);
  desc.datatype = MapName(NameKind::kDataType, ce.datatype);
  desc.algo = CeAlgoFromSyncStrategy(ce.syncStrategy);
  desc.flags = format::kFlagCopyEngine;
  desc.root_or_peer = ce.root;
  desc.count = ce.count;
  // The comm's CE counter (comm->ceColl.ceSeqNum, +2 per CE op), not the
  // per-function seqNumber of kernel collectives.
  desc.nccl_seq = ce.ceSeqNum;
  desc.stream = PtrBits(ce.stream);
  return desc;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
// CeColl start: claims the op's slot (op_index from the comm's collective
// counter, like any collective), arms its CUDA start event, and returns a
// kCeColl handle (payload: slot sequence).
FLIGHTREC_HOT_INLINE void* StartCeColl(void* context, void* parent, OpDesc desc) {
  CommRecorder* comm = detail::ResolveContext(context);
  if (comm == nullptr) return nullptr;
  const uint64_t ctx = HandleBits(context);
  const uint64_t stream = desc.stream;
  // parentObj is the CollApi handle (ceCollTaskAppend keeps it in the task).
  if (parent != nullptr) detail::AttachApiCall(comm, ctx, parent, &desc);
  if (stream != 0) desc.stream = stream;  // the stream the copies are queued on
  const int entry = rec::CeArm(desc.stream);
  if (entry == rec::kCeNoEntry) desc.flags |= format::kFlagNoCompletion;
  const uint64_t seq = comm->BeginOp(desc);
  if (seq == kNoSlot) {
    rec::CeAbandon(entry);
    return nullptr;
  }
  if (entry != rec::kCeNoEntry) {
    rec::CeBind(entry, HandleRegion(ctx), HandleGeneration(ctx), seq);
    comm->CeReached(seq, format::kOpEnqueued, 0);  // the region reports completion
  }
  return HandleToPtr(RekindHandle(ctx, HandleKind::kCeColl, seq));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
// CeSync/CeBatch start: progress of the parent CeColl (`bytes`: a batch's
// totalBytes). Returns no handle: their stop carries nothing.
FLIGHTREC_HOT_INLINE void* StartCeChild(void* parent, uint64_t bytes) {
  if (parent == nullptr) return nullptr;  // NCCL starts them only under a CeColl handle
  const uint64_t h = HandleBits(parent);
  CommRecorder* comm = detail::ResolveAs(h, HandleKind::kCeColl);
  if (comm != nullptr) comm->CeProgress(HandlePayload(h), bytes);
  return nullptr;
}

// The CE events of a v6+ descriptor.
template <typename Descr>
inline void* StartCeEvent(void* context, const Descr* d) {
  switch (d->type) {
    case abi::kProfileCeColl: {
      OpDesc desc = CeOpDesc(d->ceColl);
      if constexpr (kHasCeUserTag<Descr>) desc.user_tag = d->ceColl.userTag;
      return StartCeColl(context, d->parentObj, desc);
    }
    case abi::kProfileCeBatch:
      return StartCeChild(d->parentObj, d->ceCollBatch.totalBytes);
    default:  // CeSync
      return StartCeChild(d->parentObj, 0);
  }
}

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_CE_EVENTS_H_

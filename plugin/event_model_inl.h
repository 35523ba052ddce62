// Inline bodies of the event model's hot path. Included by event_model.h
// only.
//
// Why inline: a collective makes ~36 ABI calls (8 channels); with the bodies
// here each entry point of an adapter compiles into one function that keeps
// the handle's bits in registers, instead of a chain of out-of-line calls
// (adapter -> event model -> recorder) passing a decoded handle through
// memory (docs/performance.md, "Hot path" under "Why the code is as it is").
//
// Every function here: no lock, no allocation, no syscall, no exception,
// bounded work. Failures (foreign, stale, NULL handles) take out-of-line
// counting calls.
#ifndef FLIGHTREC_PLUGIN_EVENT_MODEL_INL_H_
#define FLIGHTREC_PLUGIN_EVENT_MODEL_INL_H_

#include <stdint.h>

#include <atomic>

#include "flightrec/record_format.h"
#include "plugin/event_model.h"
#include "plugin/handle.h"
#include "plugin/nccl/profiler_abi.h"
#include "plugin/process_setup.h"
#include "recorder/ce_completion.h"
#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"

#define FLIGHTREC_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace flightrec {
namespace plugin {
namespace detail {

// v1-v3: generation_low8 + 1 of the comm whose identity is bound, per
// region (0 = none). Relaxed: BindCommIdentity is idempotent, so a race
// only costs a second, ignored, bind call. Defined in event_model.cc.
extern std::atomic<uint32_t> g_bound[format::kMaxRegions];

// Slow path of StartOp for v1-v3 (first op of a comm): binds the identity.
// Scalars, not the OpStart: its address must not escape the inlined op path.
void BindSlow(CommRecorder* comm, uint64_t handle, uint64_t comm_hash, const char* comm_name,
              int32_t rank);

// Counting paths, out of line: only foreign, stale or NULL handles reach
// them. (Not declared cold here: GCC 12 then moved whole op paths into
// .text.unlikely; the branches to them carry __builtin_expect instead.)
void CountForeign();
void CountPxnForeign();
void CountStale();
void CountNullContext();
// NCCL's live mask lost KernelCh (RAS override, NCCL 2.31+) while the mask
// we wrote asked for it: the op can never report completion, so it is marked
// kFlagNoCompletion (never judged stuck) and the region overridden. Returns
// the op's flags to add (by value: an OpDesc whose address escaped to an
// out-of-line call would have to live in memory, zeroed field by field).
uint8_t NoteLostCompletion(CommRecorder* comm);

// The live comm a handle names, or nullptr after counting it stale
// (finalized, or the region was reused by a newer comm).
FLIGHTREC_HOT_INLINE CommRecorder* LiveComm(uint64_t h) {
  CommRecorder* comm = rec::LookupComm(HandleRegion(h), HandleGeneration(h));
  if (FLIGHTREC_UNLIKELY(comm == nullptr)) CountStale();
  return comm;
}

// Resolves a non-NULL handle that must be of kind `want`. Anything else is
// not ours (a PXN pointer from another process, garbage) and is counted.
FLIGHTREC_HOT_INLINE CommRecorder* ResolveAs(uint64_t h, HandleKind want) {
  if (FLIGHTREC_UNLIKELY(!HasKind(h, want))) {
    CountForeign();
    return nullptr;
  }
  return LiveComm(h);
}

// A context: NULL means NCCL kept calling for a comm we declined.
FLIGHTREC_HOT_INLINE CommRecorder* ResolveContext(const void* context) {
  if (FLIGHTREC_UNLIKELY(context == nullptr)) {
    CountNullContext();
    return nullptr;
  }
  return ResolveAs(HandleBits(context), HandleKind::kContext);
}

// Copies the parked CollApi/P2pApi data into the op. A parent that is not an
// API handle of this comm is counted foreign and ignored; the op is kept.
FLIGHTREC_HOT_INLINE void AttachApiCall(CommRecorder* comm, uint64_t ctx, const void* parent,
                                        OpDesc* desc) {
  const uint64_t p = HandleBits(parent);
  // Same kind nibble and the same (generation, region) bits as the context.
  if (FLIGHTREC_UNLIKELY(!HasKind(p, HandleKind::kApi) || !SameOwner(p, ctx))) {
    comm->CountDrop(format::kDropForeignHandle);
    return;
  }
  // A graph replay's parent is the capture's API handle, whose entry newer
  // calls may have recycled: the op stays marked graph-captured, without
  // API time and stream, and that is expected, not a drop.
  const bool graph = (HandlePayload(p) & kApiGraphBit) != 0;
  if (graph) desc->flags |= format::kFlagGraphCaptured;
  ApiCall call;
  if (!comm->LookupApiCall(HandlePayload(p) & kApiTokenMask, &call, /*count_miss=*/!graph)) {
    return;  // counted kDropNoApiSlot unless graph-captured
  }
  desc->t_api_ns = call.t_api_ns;
  desc->stream = call.stream;
  desc->api_datatype = call.datatype;
  if (desc->user_tag == 0) desc->user_tag = call.user_tag;
  desc->flags |= format::kFlagHasApi;
  if (call.graph_captured != 0) desc->flags |= format::kFlagGraphCaptured;
}

}  // namespace detail

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartApi(void* context, const ApiStart& api) {
  CommRecorder* comm = detail::ResolveContext(context);
  if (comm == nullptr) return nullptr;
  ApiCall call;
  call.t_api_ns = CommRecorder::NowNs();
  call.user_tag = api.user_tag;
  call.stream = api.stream;
  call.graph_captured = api.graph_captured ? 1 : 0;
  call.datatype = api.datatype;
  const uint64_t token = comm->NoteApiCall(call);
  if (token == 0) return nullptr;
  const uint64_t payload = (token & kApiTokenMask) | (api.graph_captured ? kApiGraphBit : 0);
  return HandleToPtr(RekindHandle(HandleBits(context), HandleKind::kApi, payload));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartOp(void* context, void* parent, const OpStart& op) {
  CommRecorder* comm = detail::ResolveContext(context);
  if (comm == nullptr) return nullptr;
  const uint64_t ctx = HandleBits(context);
  OpDesc desc = op.desc;
  if (op.parent_is_api && parent != nullptr) detail::AttachApiCall(comm, ctx, parent, &desc);
  // v7: RAS may have taken KernelCh out of NCCL's mask (see g_live_mask).
  const int* live = detail::g_live_mask.load(std::memory_order_relaxed);
  if (live != nullptr && FLIGHTREC_UNLIKELY((__atomic_load_n(live, __ATOMIC_RELAXED) &
                                             nccl_abi::kProfileKernelCh) == 0)) {
    desc.flags |= detail::NoteLostCompletion(comm);
  }
  if (op.bind_identity &&
      FLIGHTREC_UNLIKELY(detail::g_bound[HandleRegion(ctx)].load(std::memory_order_relaxed) !=
                         HandleGeneration(ctx) + 1)) {  // see g_bound
    detail::BindSlow(comm, ctx, op.comm_hash, op.comm_name, op.rank);
  }
  const uint64_t seq = comm->BeginOp(desc);
  if (seq == kNoSlot) return nullptr;
  return HandleToPtr(RekindHandle(ctx, HandleKind::kOp, seq));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartGroup(void* context) {
  return detail::ResolveContext(context) != nullptr ? context : nullptr;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void StartKernelCh(void** handle, void* parent, uint64_t gpu_start_ns,
                                        bool timed) {
  if (parent == nullptr) return;  // the op itself was not recorded
  const uint64_t h = HandleBits(parent);
  CommRecorder* comm = detail::ResolveAs(h, HandleKind::kOp);
  if (comm == nullptr) return;
  // Same owner and payload (the op's slot sequence), another kind.
  *handle = HandleToPtr(WithKind(h, timed ? HandleKind::kKernelTimed : HandleKind::kKernelUntimed));
  comm->KernelStart(HandlePayload(h), timed ? gpu_start_ns : 0);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartKernelPhase(void* parent, uint8_t phase_id) {
  if (parent == nullptr) return nullptr;  // the KernelCh (or its op) was not recorded
  const uint64_t h = HandleBits(parent);
  CommRecorder* comm = detail::ResolveAs(h, HandleKind::kKernelTimed);
  if (comm == nullptr) return nullptr;
  comm->KernelPhaseBegin(HandlePayload(h), phase_id);
  return HandleToPtr(WithKind(h, HandleKind::kKernelPhase));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartProxyOp(void* context, void* parent, int32_t pid) {
  // PXN: another process's op carries its context and parent, meaningless
  // here (and possibly decodable as one of ours). The pid decides first.
  if (FLIGHTREC_UNLIKELY(pid != CachedPid())) {
    detail::CountPxnForeign();  // the other process's op, not a loss
    return nullptr;
  }
  (void)context;  // the parent op names the comm
  if (parent == nullptr) return nullptr;
  const uint64_t h = HandleBits(parent);
  CommRecorder* comm = detail::ResolveAs(h, HandleKind::kOp);
  if (comm == nullptr) return nullptr;
  comm->ProxyOpStart(HandlePayload(h));
  return HandleToPtr(WithKind(h, HandleKind::kProxyOp));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void* StartProxyStep(void* parent) {
  if (parent == nullptr) return nullptr;  // ProxyOp declined (foreign, or none)
  const uint64_t h = HandleBits(parent);
  if (FLIGHTREC_UNLIKELY(!HasKind(h, HandleKind::kProxyOp))) {
    detail::CountForeign();
    return nullptr;
  }
  return HandleToPtr(WithKind(h, HandleKind::kProxyStep));
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void StopEvent(void* handle) {
  if (handle == nullptr) return;
  const uint64_t h = HandleBits(handle);
  // Most stops of a collective change nothing (8 KernelCh v4+, the
  // ProxySteps): return before the switch below, whose calls make the entry
  // point save registers.
  constexpr uint64_t kNothingToStop = (uint64_t{1} << static_cast<int>(HandleKind::kContext)) |
                                      (uint64_t{1} << static_cast<int>(HandleKind::kApi)) |
                                      (uint64_t{1} << static_cast<int>(HandleKind::kKernelTimed)) |
                                      (uint64_t{1} << static_cast<int>(HandleKind::kProxyStep)) |
                                      (uint64_t{1} << static_cast<int>(HandleKind::kKernelPhase));
  if (((kNothingToStop >> (h >> kKindShift)) & 1) != 0) return;  // kind: 4 bits
  CommRecorder* comm = nullptr;
  switch (HandleKindOf(h)) {
    case HandleKind::kOp:
      if ((comm = detail::LiveComm(h)) != nullptr) comm->OpEnqueued(HandlePayload(h));
      return;
    case HandleKind::kKernelUntimed:  // v3: the stop itself, no timer
      if ((comm = detail::LiveComm(h)) != nullptr) comm->KernelStop(HandlePayload(h), 0);
      return;
    case HandleKind::kProxyOp:
      if ((comm = detail::LiveComm(h)) != nullptr) comm->ProxyOpStop(HandlePayload(h));
      return;
    case HandleKind::kCeColl:  // copies queued: the CUDA stop event follows them
      if ((comm = detail::LiveComm(h)) != nullptr) {
        comm->OpEnqueued(HandlePayload(h));
        rec::CeStop(HandleRegion(h), HandlePayload(h));
      }
      return;
    case HandleKind::kInvalid:
      detail::CountForeign();
      return;
    default:  // API, KernelCh v4+ (stopped by KernelChStop), KernelPhase, ProxyStep, context
      return;
  }
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
template <typename ValueOf>
FLIGHTREC_HOT_INLINE void RecordStateOf(void* handle, nccl_abi::EventState state,
                                        ValueOf value_of) {
  if (handle == nullptr) return;
  const uint64_t h = HandleBits(handle);
  CommRecorder* comm = nullptr;
  // The recorded (state, kind) pairs first: a handle of the wanted kind is
  // valid, so the kInvalid test below only runs for everything else.
  switch (state) {
    case nccl_abi::kKernelChStop:
      if (HasKind(h, HandleKind::kKernelTimed)) {
        if ((comm = detail::LiveComm(h)) != nullptr)
          comm->KernelStop(HandlePayload(h), value_of(nccl_abi::kKernelChStop));
        return;
      }
      break;
    case nccl_abi::kKernelPhaseStop:  // nothing to record (StartKernelPhase)
      if (HasKind(h, HandleKind::kKernelPhase)) return;
      break;
    case nccl_abi::kProxyStepSendWait:
    case nccl_abi::kProxyStepRecvFlushWait:
      if (HasKind(h, HandleKind::kProxyStep)) {
        if ((comm = detail::LiveComm(h)) != nullptr)
          comm->ProxyProgress(HandlePayload(h), value_of(state));
        return;
      }
      break;
    default:  // progress states we do not record
      break;
  }
  if (FLIGHTREC_UNLIKELY(HandleKindOf(h) == HandleKind::kInvalid)) detail::CountForeign();
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
FLIGHTREC_HOT_INLINE void RecordState(void* handle, nccl_abi::EventState state, uint64_t value) {
  RecordStateOf(handle, state, [value](nccl_abi::EventState) { return value; });
}

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_EVENT_MODEL_INL_H_

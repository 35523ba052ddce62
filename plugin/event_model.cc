#include "plugin/event_model.h"

#include <stdio.h>

#include <atomic>

#include "flightrec/record_format.h"
#include "plugin/handle.h"
#include "plugin/process_setup.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace plugin {
namespace {

namespace abi = nccl_abi;

// v1-v3: generation_low8 + 1 of the comm whose identity is bound, per
// region (0 = none). Relaxed: BindCommIdentity is idempotent, so a race
// only costs a second, ignored, bind call.
std::atomic<uint32_t> g_bound[format::kMaxRegions];

std::atomic<bool> g_mask_warned{false};

void* Encode(HandleKind kind, const DecodedHandle& owner, uint64_t payload) {
  return HandleToPtr(EncodeHandle(kind, owner.generation_low8, owner.region, payload));
}

// The live comm a decoded handle names, or nullptr after counting it stale
// (finalized, or the region was reused by a newer comm).
CommRecorder* LiveComm(const DecodedHandle& d) {
  CommRecorder* comm = rec::LookupComm(d.region, d.generation_low8);  // inline CommByRegion
  if (comm == nullptr) CountProcessDrop(format::kDropStaleHandle);
  return comm;
}

// Resolves a non-NULL handle that must be of kind `want`. Anything else is
// not ours (a PXN pointer from another process, garbage) and is counted.
CommRecorder* ResolveAs(const void* handle, HandleKind want, DecodedHandle* d) {
  *d = DecodeHandle(handle);
  if (d->kind != want) {
    CountProcessDrop(format::kDropForeignHandle);
    return nullptr;
  }
  return LiveComm(*d);
}

// A context: NULL means NCCL kept calling for a comm we declined.
CommRecorder* ResolveContext(const void* context, DecodedHandle* d) {
  if (context == nullptr) {
    CountProcessDrop(format::kDropNullContext);
    return nullptr;
  }
  return ResolveAs(context, HandleKind::kContext, d);
}

__attribute__((noinline, cold)) void BindSlow(CommRecorder* comm, const DecodedHandle& d,
                                              const OpStart& op) {
  BindCommIdentity(comm, op.comm_hash, op.comm_name, op.rank);
  g_bound[d.region].store(d.generation_low8 + 1, std::memory_order_relaxed);  // see g_bound
}

// Copies the parked CollApi/P2pApi data into the op. A parent that is not an
// API handle of this comm is counted foreign and ignored; the op is kept.
void AttachApiCall(CommRecorder* comm, const DecodedHandle& ctx, const void* parent, OpDesc* desc) {
  const DecodedHandle p = DecodeHandle(parent);
  if (p.kind != HandleKind::kApi || p.region != ctx.region ||
      p.generation_low8 != ctx.generation_low8) {
    comm->CountDrop(format::kDropForeignHandle);
    return;
  }
  ApiCall call;
  if (!comm->LookupApiCall(p.payload, &call)) return;  // counted kDropNoApiSlot
  desc->t_api_ns = call.t_api_ns;
  desc->stream = call.stream;
  if (desc->user_tag == 0) desc->user_tag = call.user_tag;
  desc->flags |= format::kFlagHasApi;
  if (call.graph_captured != 0) desc->flags |= format::kFlagGraphCaptured;
}

__attribute__((noinline, cold)) void WarnBadMaskOnce(nccl_abi::DebugLogger log) {
  if (g_mask_warned.exchange(true, std::memory_order_relaxed)) return;  // once per process
  const char* msg =
      "flightrec: NCCL_FLIGHTREC_EVENT_MASK is not an integer in [0, 2^31); "
      "using the default mask";
  if (log != nullptr) {
    log(abi::kLogWarn, ~0UL, __FILE__, __LINE__, "%s", msg);
  } else {
    fprintf(stderr, "%s\n", msg);
  }
}

}  // namespace

void* InitContext(const InitRequest& req, int* event_mask) {
  EnsureProcessSetup();
  NoteApiVersion(req.api_version);
  CommIdentity id;
  id.comm_id = req.comm_id;
  id.name = req.comm_name;
  id.rank = req.rank;
  id.nranks = req.nranks;
  id.nnodes = req.nnodes;
  id.from_init = req.has_identity;
  id.api_version = req.api_version;
  // Every op reports completion only when KernelCh exists (v3+) and is asked
  // for; then the watchdog may judge an op stuck from its first op on.
  id.completion_tracked =
      req.api_version >= 3 && (MaskToWrite(0) & nccl_abi::kProfileKernelCh) != 0;
  CommRecorder* comm = OpenComm(id, req.log);
  if (comm == nullptr) return nullptr;  // OpenComm logged why
  if (EventMaskEnvInvalid()) WarnBadMaskOnce(req.log);
  // The mask is process-global and NCCL snapshots it per API call: writing
  // it at every init keeps our bits even if someone else wrote it since.
  if (event_mask != nullptr) *event_mask = MaskToWrite(*event_mask);
  DecodedHandle owner;
  owner.region = comm->region_index();
  owner.generation_low8 = comm->generation_low8();
  return Encode(HandleKind::kContext, owner, 0);
}

void FinalizeContext(void* context) {
  if (context == nullptr) return;  // NCCL <= 2.27 finalizes declined comms too
  DecodedHandle d;
  CommRecorder* comm = ResolveAs(context, HandleKind::kContext, &d);
  if (comm != nullptr) CloseComm(comm);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartApi(void* context, const ApiStart& api) {
  DecodedHandle d;
  CommRecorder* comm = ResolveContext(context, &d);
  if (comm == nullptr) return nullptr;
  ApiCall call;
  call.t_api_ns = CommRecorder::NowNs();
  call.user_tag = api.user_tag;
  call.stream = api.stream;
  call.graph_captured = api.graph_captured ? 1 : 0;
  const uint64_t token = comm->NoteApiCall(call);
  if (token == 0) return nullptr;
  return Encode(HandleKind::kApi, d, token);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartOp(void* context, void* parent, const OpStart& op) {
  DecodedHandle d;
  CommRecorder* comm = ResolveContext(context, &d);
  if (comm == nullptr) return nullptr;
  OpDesc desc = op.desc;
  if (op.parent_is_api && parent != nullptr) AttachApiCall(comm, d, parent, &desc);
  if (op.bind_identity &&
      g_bound[d.region].load(std::memory_order_relaxed) != d.generation_low8 + 1) {
    BindSlow(comm, d, op);
  }
  const uint64_t seq = comm->BeginOp(desc);
  if (seq == kNoSlot) return nullptr;
  return Encode(HandleKind::kOp, d, seq);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartGroup(void* context) {
  DecodedHandle d;
  return ResolveContext(context, &d) != nullptr ? context : nullptr;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartKernelCh(void* parent, uint64_t gpu_start_ns, bool timed) {
  if (parent == nullptr) return nullptr;  // the op itself was not recorded
  DecodedHandle d;
  CommRecorder* comm = ResolveAs(parent, HandleKind::kOp, &d);
  if (comm == nullptr) return nullptr;
  comm->KernelStart(d.payload, timed ? gpu_start_ns : 0);
  return Encode(timed ? HandleKind::kKernelTimed : HandleKind::kKernelUntimed, d, d.payload);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartProxyOp(void* context, void* parent, int32_t pid) {
  // PXN: another process's op carries its context and parent, meaningless
  // here (and possibly decodable as one of ours). The pid decides first.
  if (pid != CachedPid()) {
    CountProcessDrop(format::kDropForeignHandle);
    return nullptr;
  }
  (void)context;  // the parent op names the comm
  if (parent == nullptr) return nullptr;
  DecodedHandle d;
  CommRecorder* comm = ResolveAs(parent, HandleKind::kOp, &d);
  if (comm == nullptr) return nullptr;
  comm->ProxyOpStart(d.payload);
  return Encode(HandleKind::kProxyOp, d, d.payload);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void* StartProxyStep(void* parent) {
  if (parent == nullptr) return nullptr;  // ProxyOp declined (foreign, or none)
  const DecodedHandle d = DecodeHandle(parent);
  if (d.kind != HandleKind::kProxyOp) {
    CountProcessDrop(format::kDropForeignHandle);
    return nullptr;
  }
  return Encode(HandleKind::kProxyStep, d, d.payload);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void CountUnknownEvent(void* context) {
  const DecodedHandle d = DecodeHandle(context);
  CommRecorder* comm =
      d.kind == HandleKind::kContext ? rec::LookupComm(d.region, d.generation_low8) : nullptr;
  if (comm != nullptr) {
    comm->CountDrop(format::kDropUnknownEvent);
  } else {
    CountProcessDrop(format::kDropUnknownEvent);
  }
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void StopEvent(void* handle) {
  if (handle == nullptr) return;
  const DecodedHandle d = DecodeHandle(handle);
  CommRecorder* comm = nullptr;
  switch (d.kind) {
    case HandleKind::kOp:
      if ((comm = LiveComm(d)) != nullptr) comm->OpEnqueued(d.payload);
      return;
    case HandleKind::kKernelUntimed:  // v3: the stop itself, no timer
      if ((comm = LiveComm(d)) != nullptr) comm->KernelStop(d.payload, 0);
      return;
    case HandleKind::kProxyOp:
      if ((comm = LiveComm(d)) != nullptr) comm->ProxyOpStop(d.payload);
      return;
    case HandleKind::kInvalid:
      CountProcessDrop(format::kDropForeignHandle);
      return;
    default:  // API, KernelCh v4+ (stopped by KernelChStop), ProxyStep, context
      return;
  }
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void RecordState(void* handle, nccl_abi::EventState state, uint64_t value) {
  if (handle == nullptr) return;
  const DecodedHandle d = DecodeHandle(handle);
  if (d.kind == HandleKind::kInvalid) {
    CountProcessDrop(format::kDropForeignHandle);
    return;
  }
  CommRecorder* comm = nullptr;
  switch (state) {
    case abi::kKernelChStop:
      if (d.kind == HandleKind::kKernelTimed && (comm = LiveComm(d)) != nullptr) {
        comm->KernelStop(d.payload, value);
      }
      return;
    case abi::kProxyStepSendWait:
    case abi::kProxyStepRecvFlushWait:
      if (d.kind == HandleKind::kProxyStep && (comm = LiveComm(d)) != nullptr) {
        comm->ProxyProgress(d.payload, value);
      }
      return;
    default:  // progress states we do not record
      return;
  }
}

}  // namespace plugin
}  // namespace flightrec

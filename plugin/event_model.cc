#include "plugin/event_model.h"

#include <stdio.h>

#include <atomic>

#include "flightrec/record_format.h"
#include "plugin/enum_map.h"
#include "plugin/handle.h"
#include "plugin/process_setup.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace plugin {
namespace {

namespace abi = nccl_abi;

std::atomic<bool> g_mask_warned{false};

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

namespace detail {

std::atomic<uint32_t> g_bound[format::kMaxRegions];

__attribute__((noinline, cold)) void BindSlow(CommRecorder* comm, uint64_t handle,
                                              uint64_t comm_hash, const char* comm_name,
                                              int32_t rank) {
  BindCommIdentity(comm, comm_hash, comm_name, rank);
  g_bound[HandleRegion(handle)].store(HandleGeneration(handle) + 1,
                                      std::memory_order_relaxed);  // see g_bound
}

__attribute__((noinline, cold)) void CountForeign() {
  CountProcessDrop(format::kDropForeignHandle);
}
__attribute__((noinline, cold)) void CountPxnForeign() {
  CountProcessDrop(format::kDropPxnForeign);
}
__attribute__((noinline, cold)) void CountStale() { CountProcessDrop(format::kDropStaleHandle); }
__attribute__((noinline, cold)) void CountNullContext() {
  CountProcessDrop(format::kDropNullContext);
}

}  // namespace detail

void* InitContext(const InitRequest& req, int* event_mask) {
  EnsureProcessSetup();
  NoteApiVersion(req.api_version);
  // NCCL's logger is in NCCL's own object, beside its static name strings
  // (looked up once, at the first init that passes one).
  static std::atomic<bool> trusted{false};
  if (req.log != nullptr && !trusted.exchange(true, std::memory_order_relaxed)) {
    TrustNamesOfObjectAt(reinterpret_cast<const void*>(req.log));
  }
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
  // NCCL passes one process-global int to every init, and inits of several
  // comms run concurrently (grouped or nonblocking init): our accesses to it
  // are relaxed atomics (nothing is published through it).
  const int mask = MaskToWrite(
      event_mask != nullptr ? __atomic_load_n(event_mask, __ATOMIC_RELAXED) : 0, req.api_version);
  id.completion_tracked = req.api_version >= 3 && (mask & nccl_abi::kProfileKernelCh) != 0;
  id.event_mask = static_cast<uint32_t>(mask);  // RegionDesc::event_mask
  CommRecorder* comm = OpenComm(id, req.log);
  if (comm == nullptr) return nullptr;  // OpenComm logged why
  // v6+: copy-engine collectives complete through CUDA events; the pool is
  // made here, on the thread that has NCCL's CUDA context current.
  if (req.api_version >= 6) rec::CeCompletionInit(req.log);
  if (EventMaskEnvInvalid()) WarnBadMaskOnce(req.log);
  // The mask is process-global and NCCL snapshots it per API call: writing
  // it at every init keeps our bits even if someone else wrote it since.
  if (event_mask != nullptr) __atomic_store_n(event_mask, mask, __ATOMIC_RELAXED);
  NoteLiveMask(event_mask, req.api_version);
  return HandleToPtr(
      EncodeHandle(HandleKind::kContext, comm->generation_low8(), comm->region_index(), 0));
}

void FinalizeContext(void* context) {
  if (context == nullptr) return;  // NCCL <= 2.27 finalizes declined comms too
  CommRecorder* comm = detail::ResolveAs(HandleBits(context), HandleKind::kContext);
  if (comm == nullptr) return;
  // Copy-engine ops whose CUDA events completed since the watchdog's last
  // poll: marked done before the comm closes (recorder/ce_completion.h).
  rec::CePoll(CommRecorder::NowNs());
  CloseComm(comm);
}

__attribute__((noinline, cold)) uint8_t detail::NoteLostCompletion(CommRecorder* comm) {
  if ((WrittenMask() & abi::kProfileKernelCh) == 0) return 0;  // never asked for: not lost
  comm->NoteMaskOverridden();
  return format::kFlagNoCompletion;
}

// Rare: only events the written mask did not ask for come here.
__attribute__((noinline, cold)) void NoteUnaskedEvent(void* context, uint64_t type) {
  if ((static_cast<uint64_t>(static_cast<uint32_t>(WrittenMask())) & type) != 0) return;
  const DecodedHandle d = DecodeHandle(context);
  CommRecorder* comm =
      d.kind == HandleKind::kContext ? rec::LookupComm(d.region, d.generation_low8) : nullptr;
  if (comm != nullptr) comm->NoteMaskOverridden();
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

}  // namespace plugin
}  // namespace flightrec

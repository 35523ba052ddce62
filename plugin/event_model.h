// The one event model every ncclProfiler_vN adapter translates into.
//
// Adapters read their version's descriptor, map strings/codes to format::
// enums, and call these functions; everything about handles, drops and the
// recorder lives here. Contexts and handles are tagged integers (handle.h),
// resolved through rec::LookupComm() (CommByRegion inline) and never
// dereferenced.
#ifndef FLIGHTREC_PLUGIN_EVENT_MODEL_H_
#define FLIGHTREC_PLUGIN_EVENT_MODEL_H_

#include <stdint.h>

#include "plugin/nccl/profiler_abi.h"
#include "recorder/comm_recorder.h"

namespace flightrec {
namespace plugin {

// What init knows. v1-v3 carry no identity (bound at the first Coll/P2p).
struct InitRequest {
  int api_version = 0;
  bool has_identity = false;
  uint64_t comm_id = 0;
  const char* comm_name = nullptr;
  int nnodes = 0;
  int nranks = 0;
  int rank = -1;
  nccl_abi::DebugLogger log = nullptr;
};

// CollApi/P2pApi start.
struct ApiStart {
  uint64_t user_tag = 0;
  uint64_t stream = 0;
  bool graph_captured = false;
  uint8_t datatype = format::kTypeUnknown;  // the user's datatype (format::DataType)
};

// Coll/P2p start. `desc` has the op's own fields; the model adds the API
// call's data (time, stream, tag, datatype, flags) when the parent names one.
struct OpStart {
  OpDesc desc;
  bool parent_is_api = false;  // v5+: parentObj is the CollApi/P2pApi handle
  bool bind_identity = false;  // v1-v3: bind comm identity from these:
  uint64_t comm_hash = 0;
  const char* comm_name = nullptr;
  int32_t rank = -1;
};

// Slow path (may lock, allocate, log). Never fails towards NCCL: returns
// the context to store in *context, or nullptr to decline the comm. Writes
// the activation mask only when the comm is accepted.
void* InitContext(const InitRequest& req, int* event_mask);
// Slow path. Tolerates nullptr and contexts that are not ours.
void FinalizeContext(void* context);

// Hot path (each): no lock, no allocation, no syscall, no exception,
// bounded work. Each returns the handle for *eHandle, or nullptr to decline.
// Inline (event_model_inl.h): the adapter's entry point, the handle decode,
// the comm lookup and the recorder's update then compile into one function
// per ABI call, with the decoded handle in registers.
inline void* StartApi(void* context, const ApiStart& api);
inline void* StartOp(void* context, void* parent, const OpStart& op);

// v1-v4 legacy Group event: NCCL 2.23-2.27 start Coll/P2p only when the Group
// handle is non-NULL (docs/design/nccl.md §Activation mask), so it must be accepted there. The
// handle is the (validated) context itself: stop/record on it are no-ops.
inline void* StartGroup(void* context);
// `timed`: v4+ (start timer given; stop timer arrives with KernelChStop);
// v3: no timers, stopEvent is the stop. Writes the handle to `*handle`
// (which the adapter has already set to nullptr) before it updates the
// record, so that no value has to survive a call (8 per collective: the
// entry point then needs no register saves).
inline void StartKernelCh(void** handle, void* parent, uint64_t gpu_start_ns, bool timed);
// v7 KernelPhase (symmetric kernels): `parent` is the channel's KernelCh
// handle; counts the channel into the op's phase counters and returns a
// kKernelPhase handle (its KernelPhaseStop and stopEvent change nothing:
// the KernelCh stop ends the channel).
inline void* StartKernelPhase(void* parent, uint8_t phase_id);
// An event type outside the activation mask this process wrote arrived (RAS's
// job-wide override, NCCL 2.31+): flags the region kRegionMaskOverridden.
// Out of line, once per region (a flag test after the first).
void NoteUnaskedEvent(void* context, uint64_t type);
// Checks `pid` against ours before looking at context or parent (PXN).
inline void* StartProxyOp(void* context, void* parent, int32_t pid);
inline void* StartProxyStep(void* parent);
// An event type the adapter does not know: counted kDropUnknownEvent.
void CountUnknownEvent(void* context);

// Hot path: tolerate NULL, repeated, stale and foreign handles.
inline void StopEvent(void* handle);
// `value`: KernelChStop -> GPU stop timer; SendWait/RecvFlushWait ->
// transSize; otherwise 0 (the adapter never reads args for other states).
inline void RecordState(void* handle, nccl_abi::EventState state, uint64_t value);
// The same, with the value computed only for the states that record one:
// `value_of(state)` (the adapter reads its state args there, and is then
// called with a constant state, so the args switch folds away).
template <typename ValueOf>
inline void RecordStateOf(void* handle, nccl_abi::EventState state, ValueOf value_of);

}  // namespace plugin
}  // namespace flightrec

#include "plugin/event_model_inl.h"  // IWYU pragma: export

#endif  // FLIGHTREC_PLUGIN_EVENT_MODEL_H_

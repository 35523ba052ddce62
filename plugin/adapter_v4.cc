// ncclProfiler_v4: NCCL 2.27 (identity at init, KernelCh GPU timers).
// Thin: reads the v4 descriptor and calls the event model.
#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {
namespace {

abi::Result InitV4(void** context, int* event_mask, const char* comm_name, uint64_t comm_hash,
                   int nnodes, int nranks, int rank, abi::DebugLogger log) {
  return InitWithIdentity(4, context, event_mask, comm_hash, comm_name, nnodes, nranks, rank, log);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result StartEventV4(void* context, void** handle, abi::EventDescrV4* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  switch (d->type) {
    case abi::kProfileGroup:  // NCCL <= 2.27 gates Coll/P2p on it
      *handle = StartGroup(context);
      break;
    case abi::kProfileColl: {
      OpStart op = CollFromStrings(d->coll, d->coll.nChannels);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromStrings(d->p2p, d->p2p.nChannels);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileKernelCh:  // stop timer arrives with KernelChStop
      StartKernelCh(handle, d->parentObj, d->kernelCh.pTimer, true);
      break;
    case abi::kProfileProxyOp:
      *handle = StartProxyOp(context, d->parentObj, d->proxyOp.pid);
      break;
    case abi::kProfileProxyStep:
      *handle = StartProxyStep(d->parentObj);
      break;
    default:
      if (!IsDeclinedType(d->type)) CountUnknownEvent(context);
      break;
  }
  return abi::kSuccess;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result RecordEventStateV4(void* handle, abi::EventState state, abi::StateArgsV4* args) {
  RecordState(handle, state, StateValueV4(state, args));
  return abi::kSuccess;
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV4 ncclProfiler_v4 = {
    flightrec::plugin::kPluginName,        flightrec::plugin::InitV4,
    flightrec::plugin::StartEventV4,       flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV4, flightrec::plugin::FinalizeAny};

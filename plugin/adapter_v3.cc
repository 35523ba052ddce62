// ncclProfiler_v3: NCCL 2.26 (adds KernelCh without timers).
// Thin: reads the v3 descriptor and calls the event model.
#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {
namespace {

abi::Result InitV3(void** context, int* event_mask) {
  InitRequest req;  // no identity: bound at the first Coll/P2p
  req.api_version = 3;
  return InitCommon(context, event_mask, req);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result StartEventV3(void* context, void** handle, abi::EventDescrV3* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  switch (d->type) {
    case abi::kProfileGroup:  // NCCL <= 2.27 gates Coll/P2p on it
      *handle = StartGroup(context);
      break;
    case abi::kProfileColl: {
      OpStart op = CollFromStrings(d->coll, d->coll.nMaxChannels);
      AddIdentity(d->coll, d->rank, &op);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromStrings(d->p2p, 0);
      AddIdentity(d->p2p, d->rank, &op);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileKernelCh:  // v3: no GPU timers; stopEvent is the stop
      StartKernelCh(handle, d->parentObj, 0, false);
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
abi::Result RecordEventStateV3(void* handle, abi::EventState state, abi::StateArgsV3* args) {
  RecordState(handle, state, StateValueV1(state, args));
  return abi::kSuccess;
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV3 ncclProfiler_v3 = {
    flightrec::plugin::kPluginName,        flightrec::plugin::InitV3,
    flightrec::plugin::StartEventV3,       flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV3, flightrec::plugin::FinalizeAny};

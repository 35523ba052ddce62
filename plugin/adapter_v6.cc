// ncclProfiler_v6: NCCL 2.29-2.30 (v5 plus copy-engine events, declined).
// Thin: reads the v6 descriptor and calls the event model.
#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {
namespace {

abi::Result InitV6(void** context, uint64_t comm_id, int* event_mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::DebugLogger log) {
  InitRequest req;
  req.api_version = 6;
  req.has_identity = true;
  req.comm_id = comm_id;
  req.comm_name = comm_name;
  req.nnodes = nnodes;
  req.nranks = nranks;
  req.rank = rank;
  req.log = log;
  return InitCommon(context, event_mask, req);
}

// Every start but KernelCh and the declined types: ops, API calls, network.
// Out of line: the op path's frame (descriptor, record image) stays out of
// the entry point that also serves the eight KernelCh starts of a collective.
__attribute__((noinline)) void* StartOtherV6(void* context, const abi::EventDescrV6* d) {
  switch (d->type) {
    case abi::kProfileColl: {
      OpStart op = CollFromStrings(d->coll, d->coll.nChannels);
      op.parent_is_api = true;
      return StartOp(context, d->parentObj, op);
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromStrings(d->p2p, d->p2p.nChannels);
      op.parent_is_api = true;
      return StartOp(context, d->parentObj, op);
    }
    case abi::kProfileCollApi: {
      ApiStart api = ApiFrom(d->collApi);
      return StartApi(context, api);
    }
    case abi::kProfileP2pApi: {
      ApiStart api = ApiFrom(d->p2pApi);
      return StartApi(context, api);
    }
    case abi::kProfileProxyOp:
      return StartProxyOp(context, d->parentObj, d->proxyOp.pid);
    case abi::kProfileProxyStep:
      return StartProxyStep(d->parentObj);
    default:
      CountUnknownEvent(context);
      return nullptr;
  }
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result StartEventV6(void* context, void** handle, abi::EventDescrV6* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  const uint64_t type = d->type;
  if (type == abi::kProfileKernelCh) {  // one per channel: the most frequent start
    // The stop timer arrives with KernelChStop.
    StartKernelCh(handle, d->parentObj, d->kernelCh.pTimer, true);
    return abi::kSuccess;
  }
  if (IsDeclinedType(type)) return abi::kSuccess;  // Group, GroupApi, KernelLaunch, ...
  *handle = StartOtherV6(context, d);
  return abi::kSuccess;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result RecordEventStateV6(void* handle, abi::EventState state, abi::StateArgsV6* args) {
  RecordState(handle, state, StateValueV4(state, args));
  return abi::kSuccess;
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV6 ncclProfiler_v6 = {
    flightrec::plugin::kPluginName,        flightrec::plugin::InitV6,
    flightrec::plugin::StartEventV6,       flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV6, flightrec::plugin::FinalizeAny};

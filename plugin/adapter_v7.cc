// ncclProfiler_v7: NCCL 2.31+ (per-call user tag, kernel phases declined).
// Thin: reads the v7 descriptor and calls the event model.
#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {
namespace {

abi::Result InitV7(void** context, uint64_t comm_id, int* event_mask, const char* comm_name,
                   int nnodes, int nranks, int rank, abi::DebugLogger log) {
  InitRequest req;
  req.api_version = 7;
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
abi::Result StartEventV7(void* context, void** handle, abi::EventDescrV7* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  switch (d->type) {
    case abi::kProfileColl: {
      OpStart op = CollFromStrings(d->coll, d->coll.nChannels);
      op.parent_is_api = true;
      op.desc.user_tag = d->coll.userTag;
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromStrings(d->p2p, d->p2p.nChannels);
      op.parent_is_api = true;
      op.desc.user_tag = d->p2p.userTag;
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileCollApi: {
      ApiStart api = ApiFrom(d->collApi);
      api.user_tag = d->collApi.userTag;
      *handle = StartApi(context, api);
      break;
    }
    case abi::kProfileP2pApi: {
      ApiStart api = ApiFrom(d->p2pApi);
      api.user_tag = d->p2pApi.userTag;
      *handle = StartApi(context, api);
      break;
    }
    case abi::kProfileKernelCh:  // stop timer arrives with KernelChStop
      *handle = StartKernelCh(d->parentObj, d->kernelCh.pTimer, true);
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
abi::Result RecordEventStateV7(void* handle, abi::EventState state, abi::StateArgsV7* args) {
  RecordState(handle, state, StateValueV4(state, args));
  return abi::kSuccess;
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV7 ncclProfiler_v7 = {
    flightrec::plugin::kPluginName,        flightrec::plugin::InitV7,
    flightrec::plugin::StartEventV7,       flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV7, flightrec::plugin::FinalizeAny};

// ncclProfiler_v1: NCCL 2.23 (uint8_t enum codes, identity in descriptors).
// Thin: reads the v1 descriptor and calls the event model.
#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {
namespace {

abi::Result InitV1(void** context, int* event_mask) {
  InitRequest req;  // no identity: bound at the first Coll/P2p
  req.api_version = 1;
  return InitCommon(context, event_mask, req);
}

OpStart CollFromCodes(const abi::CollV1& c) {
  OpStart op;
  op.desc.func = MapV1Func(c.func);
  op.desc.datatype = MapV1DataType(c.datatype);
  op.desc.algo = MapV1Algo(c.algo);
  op.desc.proto = MapV1Proto(c.proto);
  op.desc.n_channels = c.nMaxChannels;
  op.desc.n_warps = c.nWarps;
  op.desc.root_or_peer = c.root;
  op.desc.count = c.count;
  op.desc.nccl_seq = c.seqNumber;
  return op;
}

OpStart P2pFromCodes(const abi::P2pV1& p) {
  OpStart op;
  op.desc.func = MapV1Func(p.func);
  op.desc.datatype = MapV1DataType(p.datatype);
  op.desc.flags = format::kFlagP2p;
  op.desc.root_or_peer = p.peer;
  op.desc.count = p.count;
  op.desc.nccl_seq = UINT64_MAX;
  return op;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
abi::Result StartEventV1(void* context, void** handle, abi::EventDescrV1* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  switch (d->type) {
    case abi::kProfileGroup:  // NCCL <= 2.27 gates Coll/P2p on it
      *handle = StartGroup(context);
      break;
    case abi::kProfileColl: {
      OpStart op = CollFromCodes(d->coll);
      AddIdentity(d->coll, d->rank, &op);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
    case abi::kProfileP2p: {
      OpStart op = P2pFromCodes(d->p2p);
      AddIdentity(d->p2p, d->rank, &op);
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, op);
      break;
    }
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
abi::Result RecordEventStateV1(void* handle, abi::EventState state, abi::StateArgsV1* args) {
  RecordState(handle, state, StateValueV1(state, args));
  return abi::kSuccess;
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV1 ncclProfiler_v1 = {
    flightrec::plugin::kPluginName,        flightrec::plugin::InitV1,
    flightrec::plugin::StartEventV1,       flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV1, flightrec::plugin::FinalizeAny};

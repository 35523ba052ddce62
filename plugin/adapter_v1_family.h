// The entry points of ncclProfiler_v1 .. _v4, written once. The four
// descriptors share the legacy shape: a Group event parents Coll/P2p, the
// v1-v3 descriptors carry the communicator's identity (v4 gets it at init),
// v1 carries enum codes where v2+ carry strings, KernelCh exists from v3 (GPU
// timers from v4). docs/design/nccl.md §Profiler ABI. plugin/adapters.cc
// instantiates these for each version and exports the tables.
#ifndef FLIGHTREC_PLUGIN_ADAPTER_V1_FAMILY_H_
#define FLIGHTREC_PLUGIN_ADAPTER_V1_FAMILY_H_

#include <stdint.h>

#include <type_traits>

#include "plugin/adapter_common.h"

namespace flightrec {
namespace plugin {

// v1-v3: no comm identity at init; it is bound at the first Coll/P2p.
template <int kApiVersion>
abi::Result InitV1Family(void** context, int* event_mask) {
  InitRequest req;
  req.api_version = kApiVersion;
  return InitCommon(context, event_mask, req);
}

// v4: the identity arrives with init.
inline abi::Result InitV4(void** context, int* event_mask, const char* comm_name,
                          uint64_t comm_hash, int nnodes, int nranks, int rank,
                          abi::DebugLogger log) {
  return InitWithIdentity(4, context, event_mask, comm_hash, comm_name, nnodes, nranks, rank, log);
}

// v1: NCCL's enum codes instead of strings.
inline OpStart CollFromCodes(const abi::CollV1& c) {
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

inline OpStart P2pFromCodes(const abi::P2pV1& p) {
  OpStart op;
  op.desc.func = MapV1Func(p.func);
  op.desc.datatype = MapV1DataType(p.datatype);
  op.desc.flags = format::kFlagP2p;
  op.desc.root_or_peer = p.peer;
  op.desc.count = p.count;
  op.desc.nccl_seq = UINT64_MAX;
  return op;
}

template <int kApiVersion, typename Descr>
inline OpStart CollV1Family(const Descr& d) {
  if constexpr (kApiVersion >= 4) {
    return CollFromStrings(d.coll, d.coll.nChannels);
  } else {
    OpStart op;
    if constexpr (kApiVersion == 1) {
      op = CollFromCodes(d.coll);
    } else {
      op = CollFromStrings(d.coll, d.coll.nMaxChannels);
    }
    AddIdentity(d.coll, d.rank, &op);
    return op;
  }
}

template <int kApiVersion, typename Descr>
inline OpStart P2pV1Family(const Descr& d) {
  if constexpr (kApiVersion >= 4) {
    return P2pFromStrings(d.p2p, d.p2p.nChannels);
  } else {
    OpStart op;
    if constexpr (kApiVersion == 1) {
      op = P2pFromCodes(d.p2p);
    } else {
      op = P2pFromStrings(d.p2p, 0);
    }
    AddIdentity(d.p2p, d.rank, &op);
    return op;
  }
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
template <int kApiVersion, typename Descr>
abi::Result StartEventV1Family(void* context, void** handle, Descr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;  // always written: NCCL reuses the slot otherwise
  if (d == nullptr) return abi::kSuccess;
  switch (d->type) {
    case abi::kProfileGroup:  // NCCL <= 2.27 gates Coll/P2p on it
      *handle = StartGroup(context);
      break;
    case abi::kProfileColl:
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, CollV1Family<kApiVersion>(*d));
      break;
    case abi::kProfileP2p:
      // parentObj is the legacy Group handle (accepted: see StartGroup).
      *handle = StartOp(context, d->parentObj, P2pV1Family<kApiVersion>(*d));
      break;
    case abi::kProfileProxyOp:
      *handle = StartProxyOp(context, d->parentObj, d->proxyOp.pid);
      break;
    case abi::kProfileProxyStep:
      *handle = StartProxyStep(d->parentObj);
      break;
    case abi::kProfileKernelCh:
      if constexpr (kApiVersion >= 4) {  // stop timer arrives with KernelChStop
        StartKernelCh(handle, d->parentObj, d->kernelCh.pTimer, true);
        break;
      } else if constexpr (kApiVersion == 3) {  // no GPU timers; stopEvent is the stop
        StartKernelCh(handle, d->parentObj, 0, false);
        break;
      }
      [[fallthrough]];  // v1, v2: not an event type of theirs
    default:
      if (!IsDeclinedType(d->type)) CountUnknownEvent(context);
      break;
  }
  return abi::kSuccess;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
// (StateArgsV2/V3 are StateArgsV1.)
template <typename StateArgs>
abi::Result RecordEventStateV1Family(void* handle, abi::EventState state, StateArgs* args) {
  if constexpr (std::is_same_v<StateArgs, abi::StateArgsV1>) {
    RecordStateOf(handle, state,
                  [args](abi::EventState recorded) { return StateValueV1(recorded, args); });
  } else {
    RecordStateOf(handle, state,
                  [args](abi::EventState recorded) { return StateValueV4(recorded, args); });
  }
  return abi::kSuccess;
}

// The table ncclProfiler_vN (N = 1..4) of these entry points.
template <typename Table, int kApiVersion>
constexpr Table V1FamilyTable() {
  auto* start = StartEventV1Family<kApiVersion, DescrOf<Table>>;
  auto* record = RecordEventStateV1Family<StateArgsOf<Table>>;
  if constexpr (kApiVersion >= 4) {
    return {kPluginName, InitV4, start, StopEventAny, record, FinalizeAny};
  } else {
    return {kPluginName, InitV1Family<kApiVersion>, start, StopEventAny, record, FinalizeAny};
  }
}

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_ADAPTER_V1_FAMILY_H_

#include "support/profiler_shim.h"

#include <cstring>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace emu {

namespace abi = ::flightrec::nccl_abi;
namespace fmt = ::flightrec::format;

namespace {

uint64_t TypeBit(Ev t) {
  switch (t) {
    case Ev::kGroupApi:
      return abi::kProfileGroupApi;
    case Ev::kCollApi:
      return abi::kProfileCollApi;
    case Ev::kP2pApi:
      return abi::kProfileP2pApi;
    case Ev::kKernelLaunch:
      return abi::kProfileKernelLaunch;
    case Ev::kGroup:
      return abi::kProfileGroup;
    case Ev::kColl:
      return abi::kProfileColl;
    case Ev::kP2p:
      return abi::kProfileP2p;
    case Ev::kProxyOp:
      return abi::kProfileProxyOp;
    case Ev::kProxyStep:
      return abi::kProfileProxyStep;
    case Ev::kKernelCh:
      return abi::kProfileKernelCh;
    case Ev::kProxyCtrl:
      return abi::kProfileProxyCtrl;
  }
  return 0;
}

// NCCL's strings (nccl.md §Call rules); ncclUint8 is reported as "Unknown".
const char* FuncStr(uint8_t f) { return fmt::FuncName(f); }
const char* TypeStr(uint8_t t) { return t == fmt::kTypeUint8 ? "Unknown" : fmt::DataTypeName(t); }
const char* AlgoStr(uint8_t a) { return fmt::AlgoName(a); }
const char* ProtoStr(uint8_t p) { return fmt::ProtoName(p); }

// v1 enum codes (ncclFunc_t, ncclDataType_t, NCCL_ALGO_*, NCCL_PROTO_*).
uint8_t FuncV1(uint8_t f) {
  switch (f) {
    case fmt::kFuncBroadcast:
      return abi::v1::kFuncBroadcast;
    case fmt::kFuncReduce:
      return abi::v1::kFuncReduce;
    case fmt::kFuncAllGather:
      return abi::v1::kFuncAllGather;
    case fmt::kFuncReduceScatter:
      return abi::v1::kFuncReduceScatter;
    case fmt::kFuncAllReduce:
      return abi::v1::kFuncAllReduce;
    case fmt::kFuncSend:
      return abi::v1::kFuncSend;
    case fmt::kFuncRecv:
      return abi::v1::kFuncRecv;
    default:
      return abi::v1::kFuncSendRecv;
  }
}
uint8_t TypeV1(uint8_t t) { return t >= fmt::kTypeInt8 ? static_cast<uint8_t>(t - 1) : 0; }
uint8_t AlgoV1(uint8_t a) { return a >= fmt::kAlgoTree ? static_cast<uint8_t>(a - 1) : 0; }
uint8_t ProtoV1(uint8_t p) { return p >= fmt::kProtoLL ? static_cast<uint8_t>(p - 1) : 0; }

template <typename D>
void Header(D* out, const EventDesc& d, void* parent) {
  std::memset(static_cast<void*>(out), 0, sizeof(D));
  out->type = static_cast<decltype(out->type)>(TypeBit(d.type));
  out->parentObj = parent;
  out->rank = d.rank;
}

// Fields common to ProxyOp/ProxyStep (identical in every version).
template <typename D>
bool FillProxy(D* out, const EventDesc& d) {
  if (d.type == Ev::kProxyOp) {
    out->proxyOp.pid = d.pid;
    out->proxyOp.channelId = d.channel_id;
    out->proxyOp.peer = d.peer;
    out->proxyOp.nSteps = d.n_steps;
    out->proxyOp.chunkSize = d.chunk_size;
    out->proxyOp.isSend = d.is_send;
    return true;
  }
  if (d.type == Ev::kProxyStep) {
    out->proxyStep.step = d.step;
    return true;
  }
  return d.type == Ev::kProxyCtrl || d.type == Ev::kGroup;
}

// Coll fields shared by v4..v7 (same names and order).
template <typename C>
void FillCollV4Plus(C* c, const EventDesc& d) {
  c->seqNumber = d.seq;
  c->func = FuncStr(d.func);
  c->sendBuff = d.send_buff;
  c->recvBuff = d.recv_buff;
  c->count = d.count;
  c->root = d.root;
  c->datatype = TypeStr(d.datatype);
  c->nChannels = d.n_channels;
  c->nWarps = d.n_warps;
  c->algo = AlgoStr(d.algo);
  c->proto = ProtoStr(d.proto);
}

template <typename P>
void FillP2pV4Plus(P* p, const EventDesc& d) {
  p->func = FuncStr(d.func);
  p->buff = d.recv_buff;
  p->datatype = TypeStr(d.datatype);
  p->count = d.count;
  p->peer = d.peer;
  p->nChannels = d.n_channels;
}

// API-level events (v5+).
template <typename D>
void FillApi(D* out, const EventDesc& d) {
  switch (d.type) {
    case Ev::kGroupApi:
      out->groupApi.graphCaptured = d.graph_captured;
      out->groupApi.groupDepth = d.group_depth;
      break;
    case Ev::kCollApi:
      out->collApi.func = FuncStr(d.func);
      out->collApi.count = d.count;
      out->collApi.datatype = TypeStr(d.datatype);
      out->collApi.root = d.root;
      out->collApi.stream = d.stream;
      out->collApi.graphCaptured = d.graph_captured;
      break;
    case Ev::kP2pApi:
      out->p2pApi.func = FuncStr(d.func);
      out->p2pApi.count = d.count;
      out->p2pApi.datatype = TypeStr(d.datatype);
      out->p2pApi.stream = d.stream;
      out->p2pApi.graphCaptured = d.graph_captured;
      break;
    case Ev::kKernelLaunch:
      out->kernelLaunch.stream = d.stream;
      break;
    default:
      break;
  }
}

}  // namespace

ProfilerShim::ProfilerShim(const void* table, int plugin_api, int native_api)
    : table_(table), api_(plugin_api), native_(native_api) {}

const char* ProfilerShim::name() const {
  // `name` is the first member of every table version.
  return static_cast<const abi::ProfilerV1*>(table_)->name;
}

bool ProfilerShim::Delivers(Ev type) const {
  switch (type) {
    case Ev::kGroupApi:
    case Ev::kCollApi:
    case Ev::kP2pApi:
    case Ev::kKernelLaunch:
      return api_ >= 5 && native_ >= 5;
    case Ev::kKernelCh:
      return api_ >= 3 && native_ >= 3;
    default:
      return true;
  }
}

bool ProfilerShim::ForwardsState(int s) const {
  if (s >= abi::kGroupStartApiStop && s <= abi::kGroupEndApiStart) return api_ >= 5 && native_ >= 5;
  if (api_ <= 3) {  // nccl.md §Shims: only ProxyCtrl states and ProxyStep states 8-12
    return (s >= abi::kProxyStepSendGPUWait && s <= abi::kProxyCtrlAppendEnd);
  }
  return true;
}

int ProfilerShim::Init(void** context, uint64_t comm_hash, int* mask, const char* comm_name,
                       int nnodes, int nranks, int rank, abi::DebugLogger log) const {
  switch (api_) {
    case 1:
    case 2:
    case 3:
      return static_cast<const abi::ProfilerV1*>(table_)->init(context, mask);
    case 4:
      return static_cast<const abi::ProfilerV4*>(table_)->init(context, mask, comm_name, comm_hash,
                                                               nnodes, nranks, rank, log);
    default:  // v5..v7 share the init signature
      return static_cast<const abi::ProfilerV5*>(table_)->init(context, comm_hash, mask, comm_name,
                                                               nnodes, nranks, rank, log);
  }
}

void ProfilerShim::Start(void* context, void** handle, const EventDesc& d) const {
  *handle = nullptr;
  if (!Delivers(d.type)) return;  // nccl.md §Shims: the shim returns without calling the plugin
  // nccl.md §Shims, §Call sequences v5: tables before v5 get the Group handle as the Coll/P2p
  // parent.
  bool task = d.type == Ev::kColl || d.type == Ev::kP2p;
  void* parent = (task && api_ <= 4) ? d.parent_group : d.parent;
  // nccl.md §Shims: v1-v3 on NCCL >= 2.27 get no comm name/hash in Coll/P2p.
  const char* name = native_ >= 4 ? nullptr : d.comm_name;
  uint64_t hash = native_ >= 4 ? 0 : d.comm_hash;
  uint64_t ptimer = native_ >= 4 ? d.ptimer : 0;
  switch (api_) {
    case 1: {
      abi::EventDescrV1 e;
      Header(&e, d, parent);
      if (d.type == Ev::kColl) {
        e.coll = {name,
                  hash,
                  d.seq,
                  FuncV1(d.func),
                  d.send_buff,
                  d.recv_buff,
                  d.count,
                  d.root,
                  TypeV1(d.datatype),
                  0,
                  d.count * fmt::DataTypeSize(d.datatype),
                  d.n_channels,
                  d.n_warps,
                  AlgoV1(d.algo),
                  ProtoV1(d.proto),
                  0,
                  0};
      } else if (d.type == Ev::kP2p) {
        e.p2p = {name, hash, FuncV1(d.func), d.recv_buff, TypeV1(d.datatype), d.count, d.peer};
      } else if (!FillProxy(&e, d)) {
        return;  // KernelCh/NetPlugin do not exist in v1
      }
      static_cast<const abi::ProfilerV1*>(table_)->startEvent(context, handle, &e);
      return;
    }
    case 2: {
      abi::EventDescrV2 e;
      Header(&e, d, parent);
      if (d.type == Ev::kColl) {
        e.coll = {name,
                  hash,
                  d.seq,
                  FuncStr(d.func),
                  d.send_buff,
                  d.recv_buff,
                  d.count,
                  d.root,
                  TypeStr(d.datatype),
                  d.count * fmt::DataTypeSize(d.datatype),
                  d.n_channels,
                  d.n_warps,
                  AlgoStr(d.algo),
                  ProtoStr(d.proto)};
      } else if (d.type == Ev::kP2p) {
        e.p2p = {name, hash, FuncStr(d.func), d.recv_buff, TypeStr(d.datatype), d.count, d.peer};
      } else if (!FillProxy(&e, d)) {
        return;
      }
      static_cast<const abi::ProfilerV2*>(table_)->startEvent(context, handle, &e);
      return;
    }
    case 3: {
      abi::EventDescrV3 e;
      Header(&e, d, parent);
      if (d.type == Ev::kColl) {
        e.coll = {name,
                  hash,
                  d.seq,
                  FuncStr(d.func),
                  d.send_buff,
                  d.recv_buff,
                  d.count,
                  d.root,
                  TypeStr(d.datatype),
                  d.n_channels,
                  d.n_warps,
                  AlgoStr(d.algo),
                  ProtoStr(d.proto)};
      } else if (d.type == Ev::kP2p) {
        e.p2p = {name, hash, FuncStr(d.func), d.recv_buff, TypeStr(d.datatype), d.count, d.peer};
      } else if (d.type == Ev::kKernelCh) {
        e.kernelCh.channelId = d.channel_id;
      } else if (!FillProxy(&e, d)) {
        return;
      }
      static_cast<const abi::ProfilerV3*>(table_)->startEvent(context, handle, &e);
      return;
    }
    case 4: {
      abi::EventDescrV4 e;
      Header(&e, d, parent);
      if (d.type == Ev::kColl) {
        FillCollV4Plus(&e.coll, d);
      } else if (d.type == Ev::kP2p) {
        FillP2pV4Plus(&e.p2p, d);
      } else if (d.type == Ev::kKernelCh) {
        e.kernelCh.channelId = d.channel_id;
        e.kernelCh.pTimer = ptimer;
      } else if (!FillProxy(&e, d)) {
        return;
      }
      static_cast<const abi::ProfilerV4*>(table_)->startEvent(context, handle, &e);
      return;
    }
    case 5:
    case 6: {
      // v6's descriptor is v5's plus CE members the emulator never emits.
      abi::EventDescrV6 e;
      Header(&e, d, parent);
      if (d.type == Ev::kColl) {
        FillCollV4Plus(&e.coll, d);
        e.coll.parentGroup = d.parent_group;
      } else if (d.type == Ev::kP2p) {
        FillP2pV4Plus(&e.p2p, d);
        e.p2p.parentGroup = d.parent_group;
      } else if (d.type == Ev::kKernelCh) {
        e.kernelCh.channelId = d.channel_id;
        e.kernelCh.pTimer = ptimer;
      } else if (!FillProxy(&e, d)) {
        FillApi(&e, d);
      }
      static_cast<const abi::ProfilerV6*>(table_)->startEvent(context, handle, &e);
      return;
    }
    default: {
      abi::EventDescrV7 e;
      Header(&e, d, parent);
      uint64_t tag = native_ >= 7 ? d.user_tag : 0;
      if (d.type == Ev::kColl) {
        FillCollV4Plus(&e.coll, d);
        e.coll.parentGroup = d.parent_group;
        e.coll.kernelVariant = "Default";
        e.coll.userTag = tag;
      } else if (d.type == Ev::kP2p) {
        FillP2pV4Plus(&e.p2p, d);
        e.p2p.parentGroup = d.parent_group;
        e.p2p.userTag = tag;
      } else if (d.type == Ev::kKernelCh) {
        e.kernelCh.channelId = d.channel_id;
        e.kernelCh.pTimer = ptimer;
      } else if (!FillProxy(&e, d)) {
        FillApi(&e, d);
        if (d.type == Ev::kCollApi) e.collApi.userTag = tag;
        if (d.type == Ev::kP2pApi) e.p2pApi.userTag = tag;
      }
      static_cast<const abi::ProfilerV7*>(table_)->startEvent(context, handle, &e);
      return;
    }
  }
}

void ProfilerShim::Stop(void* handle) const {
  // stopEvent has the same shape in every version.
  static_cast<const abi::ProfilerV1*>(table_)->stopEvent(handle);
}

void ProfilerShim::Record(void* handle, int state, const StateArgs& a) const {
  if (!ForwardsState(state)) return;
  abi::EventState s = static_cast<abi::EventState>(state);
  if (api_ <= 3) {
    abi::StateArgsV1 args;
    std::memset(&args, 0, sizeof(args));
    // nccl.md §Shims: NCCL >= 2.27 forwards zeroed args to v1-v3; 2.26 and older carry
    // the transfer size and the appended-op count.
    if (native_ <= 3) {
      if (state == abi::kProxyCtrlAppendEnd) {
        args.proxyCtrl.appendedProxyOps = a.appended_proxy_ops;
      } else {
        args.proxyOp.transSize = a.trans_size;
      }
    }
    static_cast<const abi::ProfilerV1*>(table_)->recordEventState(handle, s, &args);
    return;
  }
  abi::StateArgsV4 args;
  std::memset(&args, 0, sizeof(args));
  if (state == abi::kKernelChStop) {
    args.kernelCh.pTimer = a.ptimer;
  } else if (state == abi::kProxyCtrlAppendEnd) {
    args.proxyCtrl.appendedProxyOps = a.appended_proxy_ops;
  } else {
    args.proxyStep.transSize = a.trans_size;
  }
  abi::StateArgsV4* p = &args;
  if (a.null_args) {
    // nccl.md §Shims: NCCL calls with NULL; a v5/v6 table behind master's shim gets a
    // pointer to an uninitialized local instead (garbage, never to be read).
    p = nullptr;
    if (native_ > api_) {
      std::memset(&args, 0xA5, sizeof(args));
      p = &args;
    }
  }
  static_cast<const abi::ProfilerV4*>(table_)->recordEventState(handle, s, p);
}

void ProfilerShim::Finalize(void* context) const {
  static_cast<const abi::ProfilerV1*>(table_)->finalize(context);
}

}  // namespace emu
}  // namespace flightrec

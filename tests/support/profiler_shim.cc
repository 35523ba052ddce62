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
    case Ev::kCeColl:
      return abi::kProfileCeColl;
    case Ev::kCeSync:
      return abi::kProfileCeSync;
    case Ev::kCeBatch:
      return abi::kProfileCeBatch;
    case Ev::kKernelPhase:
      return abi::kProfileKernelPhase;
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

// What this release puts in the descriptor beside the event's own fields.
struct Release {
  const char* comm_name;  // v1-v3 Coll/P2p
  uint64_t comm_hash;
  uint64_t ptimer;  // KernelCh start
  uint64_t user_tag;
};

// Coll, every version: v1 carries enum codes, v2+ NCCL's strings; v1-v3 name
// the comm; v5+ carry the legacy Group handle; v7 adds the kernel variant
// and the user tag.
template <int V, typename C>
void FillColl(C* c, const EventDesc& d, const Release& r) {
  c->seqNumber = d.seq;
  c->sendBuff = d.send_buff;
  c->recvBuff = d.recv_buff;
  c->count = d.count;
  c->root = d.root;
  c->nWarps = d.n_warps;
  if constexpr (V == 1) {
    c->func = FuncV1(d.func);
    c->datatype = TypeV1(d.datatype);
    c->algo = AlgoV1(d.algo);
    c->proto = ProtoV1(d.proto);
  } else {
    c->func = FuncStr(d.func);
    c->datatype = TypeStr(d.datatype);
    c->algo = AlgoStr(d.algo);
    c->proto = ProtoStr(d.proto);
  }
  if constexpr (V <= 2) c->trafficBytes = d.count * fmt::DataTypeSize(d.datatype);
  if constexpr (V <= 3) {
    c->name = r.comm_name;
    c->commHash = r.comm_hash;
    c->nMaxChannels = d.n_channels;
  } else {
    c->nChannels = d.n_channels;
  }
  if constexpr (V >= 5) c->parentGroup = d.parent_group;
  if constexpr (V >= 7) {
    c->kernelVariant = "Default";
    c->userTag = r.user_tag;
    if (d.is_sym) {  // src/plugin/profiler.cc, ncclProfilerStartTaskEvents
      static const char kEmpty[] = "";
      const char* u = d.kernel_variant != nullptr ? strchr(d.kernel_variant, '_') : nullptr;
      c->isSymColl = 1;
      c->kernelVariant = d.kernel_variant;
      c->algo = u != nullptr ? u + 1 : d.kernel_variant;
      c->proto = kEmpty;
    }
  }
}

template <int V, typename P>
void FillP2p(P* p, const EventDesc& d, const Release& r) {
  p->buff = d.recv_buff;
  p->count = d.count;
  p->peer = d.peer;
  if constexpr (V == 1) {
    p->func = FuncV1(d.func);
    p->datatype = TypeV1(d.datatype);
  } else {
    p->func = FuncStr(d.func);
    p->datatype = TypeStr(d.datatype);
  }
  if constexpr (V <= 3) {
    p->name = r.comm_name;
    p->commHash = r.comm_hash;
  } else {
    p->nChannels = d.n_channels;
  }
  if constexpr (V >= 5) p->parentGroup = d.parent_group;
  if constexpr (V >= 7) p->userTag = r.user_tag;
}

// API-level events (v5+); v7 adds the user tag.
template <int V, typename D>
void FillApi(D* out, const EventDesc& d, const Release& r) {
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
      if constexpr (V >= 7) out->collApi.userTag = r.user_tag;
      break;
    case Ev::kP2pApi:
      out->p2pApi.func = FuncStr(d.func);
      out->p2pApi.count = d.count;
      out->p2pApi.datatype = TypeStr(d.datatype);
      out->p2pApi.stream = d.stream;
      out->p2pApi.graphCaptured = d.graph_captured;
      if constexpr (V >= 7) out->p2pApi.userTag = r.user_tag;
      break;
    case Ev::kKernelLaunch:
      out->kernelLaunch.stream = d.stream;
      break;
    default:
      break;
  }
}

// CE events (v6+; v7 adds ceColl.userTag), as ncclLaunchCeColl fills them.
template <int V, typename D>
void FillCe(D* out, const EventDesc& d, const Release& r) {
  switch (d.type) {
    case Ev::kCeColl:
      out->ceColl.seqNumber = d.seq;
      out->ceColl.func = FuncStr(d.func);
      out->ceColl.sendBuff = d.send_buff;
      out->ceColl.recvBuff = d.recv_buff;
      out->ceColl.count = d.count;
      out->ceColl.root = d.root;
      out->ceColl.datatype = TypeStr(d.datatype);
      out->ceColl.syncStrategy = d.sync_strategy;
      out->ceColl.intraBatchSync = false;
      out->ceColl.batchSize = 0;
      out->ceColl.numBatches = d.num_batches;
      out->ceColl.ceSeqNum = d.ce_seq;
      out->ceColl.stream = d.stream;
      if constexpr (V >= 7) out->ceColl.userTag = r.user_tag;
      break;
    case Ev::kCeSync:
      out->ceCollSync.isComplete = d.is_complete;
      out->ceCollSync.nRanks = d.n_ranks;
      break;
    default:
      out->ceCollBatch.numOps = d.num_ops;
      out->ceCollBatch.totalBytes = d.total_bytes;
      out->ceCollBatch.useIntraSync = false;
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
    case Ev::kCeColl:  // the v5 shim drops CE events (nccl.md §Copy-engine collectives)
    case Ev::kCeSync:
    case Ev::kCeBatch:
      return api_ >= 6 && native_ >= 6;
    case Ev::kKernelPhase:  // NCCL's v5/v6 shims drop phases
      return api_ >= 7 && native_ >= 7;
    default:
      return true;
  }
}

bool ProfilerShim::ForwardsState(int s) const {
  if (s == abi::kKernelPhaseStop) return api_ >= 7 && native_ >= 7;  // v5/v6 shims drop it
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

template <int V>
bool ProfilerShim::Describe(const EventDesc& d, typename Api<V>::Descr* out) const {
  if (!Delivers(d.type))
    return false;  // nccl.md §Shims: the shim returns without calling the plugin
  // nccl.md §Shims, §Call sequences v5: tables before v5 get the Group handle as the Coll/P2p
  // parent.
  bool task = d.type == Ev::kColl || d.type == Ev::kP2p;
  Header(out, d, (task && V <= 4) ? d.parent_group : d.parent);
  // nccl.md §Shims: v1-v3 on NCCL >= 2.27 get no comm name/hash in Coll/P2p.
  Release r;
  r.comm_name = native_ >= 4 ? nullptr : d.comm_name;
  r.comm_hash = native_ >= 4 ? 0 : d.comm_hash;
  r.ptimer = native_ >= 4 ? d.ptimer : 0;
  r.user_tag = native_ >= 7 ? d.user_tag : 0;
  if (d.type == Ev::kCeColl || d.type == Ev::kCeSync || d.type == Ev::kCeBatch) {
    if constexpr (V < 6) {
      return false;
    } else {
      FillCe<V>(out, d, r);
    }
  } else if (d.type == Ev::kKernelPhase) {
    if constexpr (V < 7) {
      return false;
    } else {
      static const char* const kPhaseNames[] = {"initial_sync", "compute", "final_sync"};
      out->kernelPhase.channelId = d.channel_id;
      out->kernelPhase.phaseId = d.phase_id;
      out->kernelPhase.phaseName = kPhaseNames[d.phase_id < 3 ? d.phase_id : 0];
      out->kernelPhase.pTimer = d.ptimer;
    }
  } else if (d.type == Ev::kColl) {
    FillColl<V>(&out->coll, d, r);
  } else if (d.type == Ev::kP2p) {
    FillP2p<V>(&out->p2p, d, r);
  } else if (d.type == Ev::kKernelCh) {
    if constexpr (V >= 3) out->kernelCh.channelId = d.channel_id;
    if constexpr (V >= 4) out->kernelCh.pTimer = r.ptimer;
  } else if (!FillProxy(out, d)) {
    if constexpr (V < 5) {
      return false;  // API events do not exist before v5
    } else {
      FillApi<V>(out, d, r);
    }
  }
  return true;
}

#define FLIGHTREC_SHIM_DESCRIBE(N) \
  template bool ProfilerShim::Describe<N>(const EventDesc&, Api<N>::Descr*) const;
FLIGHTREC_SHIM_DESCRIBE(1)
FLIGHTREC_SHIM_DESCRIBE(2)
FLIGHTREC_SHIM_DESCRIBE(3)
FLIGHTREC_SHIM_DESCRIBE(4)
FLIGHTREC_SHIM_DESCRIBE(5)
FLIGHTREC_SHIM_DESCRIBE(6)
FLIGHTREC_SHIM_DESCRIBE(7)
#undef FLIGHTREC_SHIM_DESCRIBE

template <int V>
void ProfilerShim::StartAs(void* context, void** handle, const EventDesc& d) const {
  typename Api<V>::Descr e;
  if (Describe<V>(d, &e))
    static_cast<const typename Api<V>::Table*>(table_)->startEvent(context, handle, &e);
}

void ProfilerShim::Start(void* context, void** handle, const EventDesc& d) const {
  *handle = nullptr;
  switch (api_) {
    case 1:
      return StartAs<1>(context, handle, d);
    case 2:
      return StartAs<2>(context, handle, d);
    case 3:
      return StartAs<3>(context, handle, d);
    case 4:
      return StartAs<4>(context, handle, d);
    case 5:
      return StartAs<5>(context, handle, d);
    case 6:
      return StartAs<6>(context, handle, d);
    default:  // a newer table of v7's shape gets v7's descriptor
      return StartAs<7>(context, handle, d);
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
  if (state == abi::kKernelChStop || state == abi::kKernelPhaseStop) {
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

#include "emulator/src/schedule.h"

#include <algorithm>
#include <tuple>

#include "flightrec/record_names.h"

namespace flightrec {
namespace emu {

namespace fmt = ::flightrec::format;

uint64_t Call::TaskCount() const {
  if (func == fmt::kFuncAllGather || func == fmt::kFuncBroadcast) {
    return count * fmt::DataTypeSize(datatype);
  }
  return count;
}

uint8_t Call::TaskDatatype() const {
  if (func == fmt::kFuncAllGather || func == fmt::kFuncBroadcast) return fmt::kTypeInt8;
  return datatype;
}

namespace {

// Channel layout, algo and proto of the call number `k` of op `i`.
void FillLaunchParams(uint64_t seed, int64_t i, int k, Call* c) {
  uint64_t h = Mix64(seed * 0x9E3779B97F4A7C15ULL ^ Mix64(static_cast<uint64_t>(i) * 31 + k));
  int n = 2 + static_cast<int>(h % 7);        // 2..8 channels
  int base = static_cast<int>((h >> 8) % 4);  // may not start at 0
  int stride = 1 + static_cast<int>((h >> 16) % 3);
  for (int ch = 0; ch < n; ++ch) c->channels.push_back(static_cast<uint8_t>(base + ch * stride));
  static const uint8_t kAlgos[] = {fmt::kAlgoRing, fmt::kAlgoTree, fmt::kAlgoRing, fmt::kAlgoPat};
  static const uint8_t kProtos[] = {fmt::kProtoSimple, fmt::kProtoLL, fmt::kProtoLL128};
  c->algo = kAlgos[(h >> 24) % 4];
  c->proto = kProtos[(h >> 32) % 3];
  c->n_warps = ((h >> 40) & 1) ? 16 : 8;
  if (c->is_p2p()) c->algo = fmt::kAlgoUnknown, c->proto = fmt::kProtoSimple;
}

Call MakeColl(uint8_t func, uint8_t dtype, uint64_t count, int root = 0) {
  Call c;
  c.func = func;
  c.datatype = dtype;
  c.count = count;
  c.root = root;
  return c;
}

}  // namespace

Op ScheduleOp(uint64_t seed, int64_t i, const Topology& topo, int rank) {
  Op op;
  op.index = i;
  op.comm = OpComm(i);
  uint64_t h = Mix64(seed ^ Mix64(static_cast<uint64_t>(i)));
  int tp = topo.tp();
  int tp_rank = rank % tp;
  switch (i % kPeriod) {
    case 0:
      op.calls.push_back(MakeColl(fmt::kFuncAllReduce, fmt::kTypeFloat32, 1024ULL << (h % 4)));
      break;
    case 1:
      op.calls.push_back(MakeColl(fmt::kFuncAllGather, fmt::kTypeBfloat16, 512ULL << (h % 3)));
      break;
    case 2:
      op.calls.push_back(MakeColl(fmt::kFuncReduceScatter, fmt::kTypeFloat32, 256ULL << (h % 3)));
      break;
    case 3:
      op.calls.push_back(MakeColl(fmt::kFuncAllReduce, fmt::kTypeFloat16, 4096ULL << (h % 2)));
      break;
    case 4:
      op.calls.push_back(MakeColl(fmt::kFuncBroadcast, fmt::kTypeFloat32, 2048,
                                  static_cast<int>((i / kPeriod) % tp)));
      break;
    case 5:
      op.grouped = true;
      op.calls.push_back(MakeColl(fmt::kFuncReduceScatter, fmt::kTypeBfloat16, 64));
      op.calls.push_back(MakeColl(fmt::kFuncAllReduce, fmt::kTypeFloat32, 8192ULL << (h % 2)));
      break;
    case 6: {
      op.grouped = true;
      Call send = MakeColl(fmt::kFuncSend, fmt::kTypeFloat32, 1024);
      send.peer = (tp_rank + 1) % tp;
      Call recv = MakeColl(fmt::kFuncRecv, fmt::kTypeFloat32, 1024);
      recv.peer = (tp_rank + tp - 1) % tp;
      op.calls.push_back(send);
      op.calls.push_back(recv);
      break;
    }
    default:
      op.calls.push_back(MakeColl(fmt::kFuncAllReduce, fmt::kTypeBfloat16, 512ULL << (h % 2)));
      break;
  }
  for (size_t k = 0; k < op.calls.size(); ++k) {
    FillLaunchParams(seed, i, static_cast<int>(k), &op.calls[k]);
  }
  return op;
}

void ApplyMismatch(MismatchField field, Op* op) {
  if (op->calls.empty()) return;
  Call& c = op->calls[0];
  switch (field) {
    case MismatchField::kCount:
      c.count += 1;
      break;
    case MismatchField::kDatatype:
      c.datatype = c.datatype == fmt::kTypeFloat64 ? fmt::kTypeFloat32 : fmt::kTypeFloat64;
      break;
    case MismatchField::kDatatypeSameBytes: {
      // A type of twice or half the size with the count scaled to match;
      // an odd count of a 1- or 2-byte type keeps the size (int8 <-> uint8,
      // float16 <-> bfloat16). The bytes stay count * size either way.
      const uint8_t size = fmt::DataTypeSize(c.datatype);
      const bool even = c.count % 2 == 0;
      if (size >= 4) {
        c.datatype = size == 4 ? fmt::kTypeFloat16 : fmt::kTypeFloat32;
        c.count *= 2;
      } else if (even) {
        c.datatype = size == 2 ? fmt::kTypeFloat32 : fmt::kTypeFloat16;
        c.count /= 2;
      } else {
        c.datatype =
            size == 2 ? (c.datatype == fmt::kTypeFloat16 ? fmt::kTypeBfloat16 : fmt::kTypeFloat16)
                      : (c.datatype == fmt::kTypeInt8 ? fmt::kTypeUint8 : fmt::kTypeInt8);
      }
      break;
    }
    case MismatchField::kFunc:
      if (!c.is_p2p()) {
        c.func = c.func == fmt::kFuncAllReduce ? fmt::kFuncReduceScatter : fmt::kFuncAllReduce;
        c.root = 0;
      }
      break;
    case MismatchField::kNone:
      break;
  }
}

std::vector<int> LaunchOrder(const Op& op) {
  std::vector<int> colls, p2ps;
  for (int k = 0; k < static_cast<int>(op.calls.size()); ++k) {
    (op.calls[k].is_p2p() ? p2ps : colls).push_back(k);
  }
  auto bytes = [&](int k) { return op.calls[k].count * fmt::DataTypeSize(op.calls[k].datatype); };
  auto cls = [&](int k) { return std::make_tuple(op.calls[k].func, op.calls[k].datatype); };
  std::vector<int> by_size = colls;
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](int a, int b) { return bytes(a) > bytes(b); });
  std::vector<int> order;
  std::vector<bool> taken(op.calls.size(), false);
  for (int lead : by_size) {
    if (taken[lead]) continue;
    std::vector<int> members;
    for (int k : colls) {
      if (cls(k) == cls(lead)) members.push_back(k);
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](int a, int b) { return bytes(a) < bytes(b); });
    for (int k : members) {
      taken[k] = true;
      order.push_back(k);
    }
  }
  order.insert(order.end(), p2ps.begin(), p2ps.end());
  return order;
}

int SeqCounters::Slot(uint8_t func) {
  switch (func) {
    case fmt::kFuncBroadcast:
      return 0;
    case fmt::kFuncReduce:
      return 1;
    case fmt::kFuncAllGather:
      return 2;
    case fmt::kFuncReduceScatter:
      return 3;
    case fmt::kFuncAllReduce:
      return 4;
    default:
      return -1;
  }
}

uint64_t SeqCounters::Peek(uint8_t func) const {
  int s = Slot(func);
  return s < 0 ? UINT64_MAX : next_[s];
}

void SeqCounters::Advance(uint8_t func) {
  int s = Slot(func);
  if (s >= 0) ++next_[s];
}

Op GraphOp(uint64_t seed, int64_t i, const Topology& topo, int rank) {
  Op op = ScheduleOp(seed, i % kPeriod, topo, rank);
  op.index = i;
  return op;
}

Op OpAt(uint64_t seed, int64_t ops, int64_t i, const Topology& topo, int rank) {
  return i < ops ? ScheduleOp(seed, i, topo, rank) : GraphOp(seed, i, topo, rank);
}

std::map<std::string, std::vector<ExpectedRecord>> ExpectedRecords(uint64_t seed, int64_t ops,
                                                                   const Topology& topo, int rank,
                                                                   int graph_replays) {
  std::map<std::string, std::vector<ExpectedRecord>> out;
  std::map<std::string, SeqCounters> seqs;
  std::map<std::string, uint64_t> coll_index;
  std::map<std::tuple<std::string, int, uint8_t>, uint64_t> p2p_index;
  for (int64_t i = 0; i < TotalOps(ops, graph_replays); ++i) {
    Op op = OpAt(seed, ops, i, topo, rank);
    CommInfo comm = topo.CommOf(op.comm, rank);
    for (int k : LaunchOrder(op)) {
      const Call& c = op.calls[k];
      // nccl.md §Call sequences v5: collectives on one-rank comms produce no events at all.
      if (!c.is_p2p() && comm.nranks == 1) continue;
      ExpectedRecord e;
      e.func = c.func;
      e.count = c.TaskCount();
      e.datatype = c.TaskDatatype();
      e.api_datatype = c.datatype;
      e.n_channels = static_cast<int>(c.channels.size());
      if (c.is_p2p()) {
        e.root_or_peer = c.peer;
        e.op_index = p2p_index[{comm.name, c.peer, c.func}]++;
      } else {
        e.root_or_peer = c.root;
        e.nccl_seq = seqs[comm.name].Peek(c.func);
        seqs[comm.name].Advance(c.func);
        e.op_index = coll_index[comm.name]++;
      }
      out[comm.name].push_back(e);
    }
  }
  return out;
}

}  // namespace emu
}  // namespace flightrec

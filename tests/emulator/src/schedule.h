// The deterministic schedule: a rank's op number i maps to one kernel launch
// on one communicator, made of one or more NCCL calls. The pattern repeats
// every kPeriod ops (documented in tests/emulator/README.md):
//
//   i % 8 | comm  | calls
//   ------+-------+------------------------------------------------------------
//     0   | tp    | AllReduce float32
//     1   | tp    | AllGather bfloat16 (Coll: count in bytes, "ncclInt8")
//     2   | dp    | ReduceScatter float32
//     3   | world | AllReduce float16
//     4   | tp    | Broadcast float32, root = (i / 8) % tp (Coll: bytes, "ncclInt8")
//     5   | tp    | group{ ReduceScatter bfloat16 (small), AllReduce float32 (large) }
//         |       |   -> NCCL's scheduling order puts AllReduce first (nccl.md §Call sequences v5)
//     6   | tp    | group{ Send to (r+1)%tp, Recv from (r-1)%tp } float32 ring
//     7   | dp    | AllReduce bfloat16
//
// Counts, channel counts (2..8, non-dense ids), algo and proto depend only on
// (seed, i), so every member of a communicator agrees.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_SCHEDULE_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_SCHEDULE_H_

#include <stdint.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#include "emulator/src/options.h"
#include "emulator/src/topology.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace emu {

constexpr int kPeriod = 8;
constexpr int kMaxChannels = 64;

struct Call {
  uint8_t func = format::kFuncUnknown;      // format::Func
  uint8_t datatype = format::kTypeUnknown;  // user datatype (API level)
  uint64_t count = 0;                       // user count (API level)
  int root = 0;                             // comm rank; colls only
  int peer = -1;                            // comm rank; p2p only
  uint8_t algo = format::kAlgoRing;
  uint8_t proto = format::kProtoSimple;
  uint8_t n_warps = 8;
  std::vector<uint8_t> channels;  // channel ids (size = nChannels)

  bool is_p2p() const { return func == format::kFuncSend || func == format::kFuncRecv; }
  // What the Coll/P2p event carries (nccl.md §Call sequences v5: AllGather/Broadcast in bytes as
  // int8).
  uint64_t TaskCount() const;
  uint8_t TaskDatatype() const;
};

struct Op {
  int64_t index = 0;
  CommKind comm = CommKind::kWorld;
  bool grouped = false;     // inside ncclGroupStart/End (groupDepth 2)
  std::vector<Call> calls;  // API call order
};

// Op number i is the grouped Send/Recv ring (i % kPeriod == 6): no collective.
inline bool IsP2pOp(int64_t i) { return i % kPeriod == 6; }
// Op number i is the group of two collectives (i % kPeriod == 5).
inline bool IsGroupedCollOp(int64_t i) { return i % kPeriod == 5; }

// The comm kind op number i runs on (the table above): the op.comm of
// ScheduleOp and GraphOp, and what a comm= fault keys on before the op is
// built.
inline CommKind OpComm(int64_t i) {
  const int64_t k = i % kPeriod;
  return k == 2 || k == 7 ? CommKind::kDp : k == 3 ? CommKind::kWorld : CommKind::kTp;
}

// The op `rank` runs as its op number `i` (before faults).
Op ScheduleOp(uint64_t seed, int64_t i, const Topology& topo, int rank);
// --graph-replays: op numbers from opts.ops on are replays of one pattern
// period captured in a CUDA graph, so op i runs the calls of op i % kPeriod
// (the first period's counts, channels and root), numbered i.
Op GraphOp(uint64_t seed, int64_t i, const Topology& topo, int rank);
// What op number i runs: the schedule, or a replayed graph op from `ops` on.
Op OpAt(uint64_t seed, int64_t ops, int64_t i, const Topology& topo, int rank);
// Eager ops plus replayed ones.
inline int64_t TotalOps(int64_t ops, int graph_replays) {
  return ops + int64_t{kPeriod} * graph_replays;
}
// Applies a mismatch fault to the op's first call.
void ApplyMismatch(MismatchField field, Op* op);
// Indices into op.calls in NCCL's launch order: collectives by class of
// (func, op, datatype) in order of first appearance in a size-descending
// sort, ascending size inside a class; then p2p tasks in call order (nccl.md §Call sequences v5).
std::vector<int> LaunchOrder(const Op& op);

// Per-comm, per-function seqNumber counters (d): 0-based, advanced after
// the Coll start. NCCL has 5 slots (Broadcast..AllReduce).
class SeqCounters {
 public:
  // Returns the value the Coll event carries; does not advance.
  uint64_t Peek(uint8_t func) const;
  void Advance(uint8_t func);

 private:
  static int Slot(uint8_t func);
  std::array<uint64_t, 5> next_{};
};

// What a correct recorder must hold for one rank after an ideal run of
// `ops` ops then `graph_replays` replays (no faults), per communicator name,
// in record (launch) order. Replays record like eager ops: with KernelCh in
// the mask NCCL counts every replay in seqNumber (d), and flightrec always
// asks for KernelCh.
struct ExpectedRecord {
  uint64_t op_index = 0;  // per-comm coll index, or per (peer, dir) p2p index
  uint64_t nccl_seq = UINT64_MAX;
  uint8_t func = 0;
  uint64_t count = 0;        // Coll/P2p event count
  uint8_t datatype = 0;      // Coll/P2p event datatype
  uint8_t api_datatype = 0;  // the call's datatype (CollApi/P2pApi event, v5+)
  int root_or_peer = 0;
  int n_channels = 0;
};
std::map<std::string, std::vector<ExpectedRecord>> ExpectedRecords(uint64_t seed, int64_t ops,
                                                                   const Topology& topo, int rank,
                                                                   int graph_replays = 0);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_SCHEDULE_H_

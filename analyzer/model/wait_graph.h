// The wait-for graph of a (possibly) hung job.
//
// Nodes are processes and "blocked ops" (one per distinct op some process is
// blocked at). A process points at the op it is blocked at; an op points at
// every member that is not in it yet (never enqueued it, or is still inside
// an earlier op, or is dead, or has no file). A live member whose record of the
// op runs on its GPU (a KernelCh started; not just its ProxyOps, posted at
// launch) is in it, even when the op the process is blocked at is
// another comm's: with a stream per comm (PyTorch's process groups) a
// process's GPU is inside several ops at once, and a member counted behind
// an op it is running would close a false cycle. Collapsing through op nodes
// keeps the edge count at most the sum of comm sizes, never ranks^2.
//
// A collective node is (comm, op index). Send/Recv are different: the GPU
// runs a process's grouped Send/Recv as one kernel, so a process blocked in
// one waits for every peer of that group. Processes blocked in Send/Recv of
// one comm whose pending records pair up (my Send #k to b is b's Recv #k
// from me, and b is inside it too) form one exchange node; its laggards are
// the peers it still waits for.
//
// Root causes are the sinks reachable from stuck processes: processes that
// are outside NCCL, dead, or skipped an op the others wait in, and ranks with
// no file. Cycles are deadlocks.
//
// A member that never enqueued op X but is blocked at a later op Y is a
// skipper, not a victim, when the other members that hold both X and Y all
// enqueued X first: it went on without X, and X cannot complete whatever
// happens to Y. Its edge to Y is cut (it is a root cause), which also
// breaks the cycle the skip creates.
#ifndef FLIGHTREC_ANALYZER_MODEL_WAIT_GRAPH_H_
#define FLIGHTREC_ANALYZER_MODEL_WAIT_GRAPH_H_

#include <stdint.h>

#include <vector>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"

namespace flightrec {
namespace analysis {

struct BlockedOp {
  int32_t group = -1;
  OpRef op;             // as the first blocked process saw it
  int32_t sender = -1;  // p2p: comm ranks of that first pair
  int32_t receiver = -1;
  std::vector<int32_t> waiting;    // comm ranks blocked in this op (or running it)
  std::vector<RankNote> laggards;  // members not in it yet
  bool stuck = false;              // some waiting process is stuck
  uint64_t since_wall_ns = 0;      // earliest enqueue among the waiting
  bool in_cycle = false;           // part of a deadlock
  bool exchange = false;           // a Send/Recv exchange (p2p)
  int32_t members = 0;             // ranks the op needs (comm, or exchange)
  // Every member of the op is inside it and none finished: a GPU/network
  // hang, not a laggard (only meaningful when stuck and not in a cycle).
  bool all_in() const {
    return members > 0 && laggards.empty() && static_cast<int32_t>(waiting.size()) == members;
  }
};

struct WaitGraph {
  std::vector<BlockedOp> ops;
  std::vector<int32_t> op_of_process;        // -1: not blocked (or dead)
  std::vector<char> skipper;                 // per process: a root cause by skipping
  std::vector<std::vector<int32_t>> cycles;  // processes per deadlock cycle
  std::vector<Culprit> culprits;             // sinks reached from stuck processes
};

// `skippers` (per process, may be empty): processes already known to have
// left ops out (their records are the others' shifted); they are sinks.
WaitGraph BuildWaitGraph(const JobIndex& index, const JobProgress& progress,
                         const std::vector<char>& skippers = {});

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_WAIT_GRAPH_H_

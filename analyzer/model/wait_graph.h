// The wait-for graph of a (possibly) hung job.
//
// Nodes are processes and "blocked ops" (one per distinct op some process is
// blocked at). A process points at the op it is blocked at; an op points at
// every member that is not in it yet (never enqueued it, or is still inside
// an earlier op, or is dead, or has no file). Collapsing through op nodes
// keeps the edge count at most the sum of comm sizes, never ranks^2.
//
// Root causes are the sinks reachable from stuck processes: processes that
// are outside NCCL or dead, and ranks with no file. Cycles are deadlocks.
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
  int32_t sender = -1;  // p2p: comm ranks of the pair
  int32_t receiver = -1;
  std::vector<int32_t> waiting;    // comm ranks blocked in this op
  std::vector<RankNote> laggards;  // members not in it yet
  bool stuck = false;              // some waiting process is stuck
  uint64_t since_wall_ns = 0;      // earliest enqueue among the waiting
  bool in_cycle = false;           // part of a deadlock
};

struct WaitGraph {
  std::vector<BlockedOp> ops;
  std::vector<int32_t> op_of_process;        // -1: not blocked (or dead)
  std::vector<std::vector<int32_t>> cycles;  // processes per deadlock cycle
  std::vector<Culprit> culprits;             // sinks reached from stuck processes
};

WaitGraph BuildWaitGraph(const JobIndex& index, const JobProgress& progress);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_WAIT_GRAPH_H_

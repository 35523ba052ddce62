#include "analyzer/model/wait_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "analyzer/model/describe.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

struct OpKey {
  int32_t group;
  uint8_t p2p;
  int32_t sender;
  int32_t receiver;
  uint64_t index;
  bool operator<(const OpKey& o) const {
    return std::tie(group, p2p, sender, receiver, index) <
           std::tie(o.group, o.p2p, o.sender, o.receiver, o.index);
  }
};

// Send #k from a to b and Recv #k at b from a are the same node.
OpKey KeyOf(int32_t group, int32_t rank, const OpRecord& r) {
  if (!r.is_p2p()) return {group, 0, -1, -1, r.op_index};
  const bool send = r.func == format::kFuncSend;
  return {group, 1, send ? rank : r.root_or_peer, send ? r.root_or_peer : rank, r.op_index};
}

bool Tracked(const CommSnapshot& c) { return (c.flags & format::kRegionCompletionTracked) != 0; }

class Builder {
 public:
  Builder(const JobIndex& index, const JobProgress& progress)
      : index_(index), progress_(progress) {}

  WaitGraph Build() {
    CreateNodes();
    for (size_t i = 0; i < graph_.ops.size(); ++i) Evaluate(static_cast<int32_t>(i));
    FindCycles();
    FindCulprits();
    return std::move(graph_);
  }

 private:
  const OpRecord& BlockedRecord(int32_t process) const {
    const ProcessProgress& pp = progress_.processes[process];
    return index_.processes()[process].comms[pp.blocked_comm].records[pp.blocked_record];
  }

  void CreateNodes() {
    const size_t n = index_.processes().size();
    graph_.op_of_process.assign(n, -1);
    std::map<OpKey, int32_t> nodes;
    for (size_t p = 0; p < n; ++p) {
      const ProcessProgress& pp = progress_.processes[p];
      // A dead process is a laggard wherever it is, never a waiter: its
      // peers wait for it, not the other way round.
      if (!pp.blocked() || pp.dead) continue;
      const int32_t proc = static_cast<int32_t>(p);
      const int32_t group = index_.GroupOf(proc, pp.blocked_comm);
      if (group < 0) continue;
      const int32_t rank = index_.processes()[p].comms[pp.blocked_comm].rank;
      const OpRecord& r = BlockedRecord(proc);
      auto [it, inserted] = nodes.emplace(KeyOf(group, rank, r), 0);
      if (inserted) {
        it->second = static_cast<int32_t>(graph_.ops.size());
        BlockedOp op;
        op.group = group;
        op.op = OpOf(r);
        op.sender = it->first.sender;
        op.receiver = it->first.receiver;
        graph_.ops.push_back(op);
      }
      graph_.op_of_process[p] = it->second;
    }
  }

  RankNote Laggard(int32_t rank, int32_t process, int64_t behind) const {
    RankNote note;
    note.rank = rank;
    note.process = process;
    note.behind = behind;
    if (process < 0) {
      note.where = Whereabouts::kMissing;
      return note;
    }
    const ProcessProgress& pp = progress_.processes[process];
    if (pp.dead) {
      note.where = Whereabouts::kDead;
    } else if (pp.blocked()) {
      note.where = Whereabouts::kInsideNccl;
      note.blocked_group = index_.GroupOf(process, pp.blocked_comm);
      note.blocked_op = OpOf(BlockedRecord(process));
    }
    return note;
  }

  // Where member `rank` stands relative to op node `id`.
  void Classify(int32_t id, int32_t rank, const OpRecord* rec, bool enqueued, int64_t behind) {
    BlockedOp& op = graph_.ops[id];
    const MemberRef& m = index_.groups()[op.group].members[rank];
    if (!m.present()) {
      op.laggards.push_back(Laggard(rank, -1, 0));
      return;
    }
    if (graph_.op_of_process[m.process] == id) {
      op.waiting.push_back(rank);
      const ProcessProgress& pp = progress_.processes[m.process];
      op.stuck = op.stuck || pp.stuck;
      const uint64_t t = BlockedRecord(m.process).t_enqueue_ns;
      if (op.since_wall_ns == 0 || (t != 0 && t < op.since_wall_ns)) op.since_wall_ns = t;
      return;
    }
    if (rec != nullptr) {
      // Done, or its completion is not tracked so we cannot tell: passed.
      if (rec->state >= format::kOpDone || !Tracked(index_.Comm(m))) return;
      op.laggards.push_back(Laggard(rank, m.process, 0));  // GPU not there yet
      return;
    }
    // No record: either lost to wrap (then it is old and done) or never
    // enqueued.
    if (enqueued) return;
    op.laggards.push_back(Laggard(rank, m.process, behind));
  }

  void Evaluate(int32_t id) {
    const BlockedOp op = graph_.ops[id];  // copy: Classify appends to it
    const CommGroup& g = index_.groups()[op.group];
    const uint64_t i = op.op.index;
    if (!op.op.p2p) {
      for (int32_t q = 0; q < static_cast<int32_t>(g.members.size()); ++q) {
        const OpRecord* rec = index_.FindColl(op.group, q, i);
        uint64_t count = g.members[q].present() ? index_.Comm(g.members[q]).coll_count : 0;
        const bool enqueued = count > i;
        Classify(id, q, rec, enqueued, enqueued ? 0 : static_cast<int64_t>(i + 1 - count));
      }
      return;
    }
    for (int side = 0; side < 2; ++side) {
      const int32_t q = side == 0 ? op.sender : op.receiver;
      const int32_t peer = side == 0 ? op.receiver : op.sender;
      if (q < 0 || q >= static_cast<int32_t>(g.members.size())) continue;
      const bool send = side == 0;
      const OpRecord* rec = index_.FindP2p(op.group, q, peer, send, i);
      const int64_t last = index_.LastP2pIndex(op.group, q, peer, send);
      const bool enqueued = last >= static_cast<int64_t>(i);
      Classify(id, q, rec, enqueued, enqueued ? 0 : static_cast<int64_t>(i) - last);
    }
  }

  // Node ids: processes [0, P), op nodes [P, P + O).
  void BuildAdjacency(std::vector<int32_t>* start, std::vector<int32_t>* adj) const {
    const int32_t np = static_cast<int32_t>(index_.processes().size());
    const int32_t n = np + static_cast<int32_t>(graph_.ops.size());
    start->assign(static_cast<size_t>(n) + 1, 0);
    for (int32_t v = 0; v < n; ++v) {
      (*start)[v] = static_cast<int32_t>(adj->size());
      if (v < np) {
        if (graph_.op_of_process[v] >= 0) adj->push_back(np + graph_.op_of_process[v]);
        continue;
      }
      for (const RankNote& l : graph_.ops[v - np].laggards) {
        if (l.process >= 0) adj->push_back(l.process);
      }
    }
    (*start)[n] = static_cast<int32_t>(adj->size());
  }

  // Tarjan's strongly connected components, iterative (deep chains at 16k
  // ranks would overflow a recursive version).
  void FindCycles() {
    std::vector<int32_t> start, adj;
    BuildAdjacency(&start, &adj);
    const int32_t np = static_cast<int32_t>(index_.processes().size());
    const int32_t n = static_cast<int32_t>(start.size()) - 1;
    std::vector<int32_t> idx(n, -1), low(n, 0), stack;
    std::vector<char> on_stack(n, 0);
    std::vector<std::pair<int32_t, int32_t>> call;  // (node, next edge)
    int32_t counter = 0;
    auto visit = [&](int32_t v) {
      idx[v] = low[v] = counter++;
      stack.push_back(v);
      on_stack[v] = 1;
      call.emplace_back(v, start[v]);
    };
    for (int32_t s = 0; s < n; ++s) {
      if (idx[s] != -1) continue;
      visit(s);
      while (!call.empty()) {
        const int32_t v = call.back().first;
        if (call.back().second < start[v + 1]) {
          const int32_t w = adj[call.back().second++];
          if (idx[w] == -1) {
            visit(w);
          } else if (on_stack[w]) {
            low[v] = std::min(low[v], idx[w]);
          }
          continue;
        }
        if (low[v] == idx[v]) PopComponent(v, np, &stack, &on_stack);
        call.pop_back();
        if (!call.empty()) low[call.back().first] = std::min(low[call.back().first], low[v]);
      }
    }
  }

  void PopComponent(int32_t root, int32_t np, std::vector<int32_t>* stack,
                    std::vector<char>* on_stack) {
    std::vector<int32_t> members;
    int32_t w;
    do {
      w = stack->back();
      stack->pop_back();
      (*on_stack)[w] = 0;
      members.push_back(w);
    } while (w != root);
    if (members.size() < 2) return;
    std::vector<int32_t> procs;
    for (int32_t m : members) {
      if (m < np) {
        procs.push_back(m);
      } else {
        graph_.ops[m - np].in_cycle = true;
      }
    }
    std::sort(procs.begin(), procs.end());
    graph_.cycles.push_back(std::move(procs));
  }

  // Sinks reachable from every stuck process.
  void FindCulprits() {
    const size_t np = index_.processes().size();
    std::vector<char> seen_proc(np, 0), seen_op(graph_.ops.size(), 0);
    std::set<std::pair<int32_t, int32_t>> missing;
    std::vector<int32_t> queue;
    for (size_t p = 0; p < np; ++p) {
      const ProcessProgress& pp = progress_.processes[p];
      if (graph_.op_of_process[p] >= 0 && pp.stuck) {
        seen_proc[p] = 1;
        queue.push_back(static_cast<int32_t>(p));
      }
    }
    std::vector<int32_t> sinks;
    for (size_t head = 0; head < queue.size(); ++head) {
      const int32_t p = queue[head];
      const int32_t op = graph_.op_of_process[p];
      if (op < 0) {  // outside NCCL, or dead: the chain ends here
        sinks.push_back(p);
        continue;
      }
      if (seen_op[op]) continue;
      seen_op[op] = 1;
      for (const RankNote& l : graph_.ops[op].laggards) {
        if (l.process < 0) {
          missing.emplace(graph_.ops[op].group, l.rank);
        } else if (!seen_proc[l.process]) {
          seen_proc[l.process] = 1;
          queue.push_back(l.process);
        }
      }
    }
    std::sort(sinks.begin(), sinks.end());
    for (int32_t p : sinks) graph_.culprits.push_back({p, -1, -1});
    for (const auto& gr : missing) graph_.culprits.push_back({-1, gr.first, gr.second});
  }

  const JobIndex& index_;
  const JobProgress& progress_;
  WaitGraph graph_;
};

}  // namespace

WaitGraph BuildWaitGraph(const JobIndex& index, const JobProgress& progress) {
  return Builder(index, progress).Build();
}

}  // namespace analysis
}  // namespace flightrec

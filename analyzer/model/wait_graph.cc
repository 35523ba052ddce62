#include "analyzer/model/wait_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "analyzer/model/describe.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// Pending Send/Recv records of one launch that were not started on the GPU
// belong together when enqueued this close to the first one (NCCL starts a
// group's tasks in one loop; the next group needs new API calls).
constexpr uint64_t kSameLaunchNs = 200000;

bool Tracked(const CommSnapshot& c) { return (c.flags & format::kRegionCompletionTracked) != 0; }

// The op runs on the GPU: a KernelCh of it started, or (copy engine) its
// CUDA start event completed. Its ProxyOps alone do not say so: NCCL posts
// them at launch, and they make the op `running` before the stream reaches
// its kernel.
bool OnGpu(const OpRecord& r) {
  return r.gpu_start_ns != 0 || r.channels_started > 0 ||
         (r.is_copy_engine() && r.state >= format::kOpRunning);
}

// One pending Send/Recv of a process blocked in an exchange, in comm ranks.
struct P2pElem {
  int32_t sender;
  int32_t receiver;
  uint64_t index;
  bool send;  // the process's own side
  const OpRecord* rec;
  bool operator<(const P2pElem& o) const {
    return std::tie(sender, receiver, index, send) <
           std::tie(o.sender, o.receiver, o.index, o.send);
  }
};

// The op a laggard went on to, in a form other members can be asked about.
struct LaterOp {
  int32_t group = -1;
  bool p2p = false;
  int32_t sender = -1, receiver = -1;  // p2p
  uint64_t index = 0;
};

class Builder {
 public:
  Builder(const JobIndex& index, const JobProgress& progress, const std::vector<char>& skippers)
      : index_(index), progress_(progress) {
    graph_.skipper.assign(index_.processes().size(), 0);
    for (size_t p = 0; p < skippers.size() && p < graph_.skipper.size(); ++p) {
      graph_.skipper[p] = skippers[p];
    }
  }

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

  // The process's rank in the comm of the op it is blocked at.
  int32_t BlockedRank(int32_t process) const {
    const ProcessProgress& pp = progress_.processes[process];
    return index_.processes()[process].comms[pp.blocked_comm].rank;
  }

  // The pending Send/Recv records that run in the same kernel as the one the
  // process is blocked at: its blocked record and the pending p2p records
  // started right after it (same GPU start state; close enqueue when not
  // started), in slot order.
  std::vector<P2pElem> ExchangeOf(int32_t process, int32_t rank) const {
    const ProcessProgress& pp = progress_.processes[process];
    const std::vector<OpRecord>& recs = index_.processes()[process].comms[pp.blocked_comm].records;
    const OpRecord& first = recs[pp.blocked_record];
    const bool started = first.gpu_start_ns != 0;
    std::vector<P2pElem> out;
    for (size_t i = static_cast<size_t>(pp.blocked_record); i < recs.size(); ++i) {
      const OpRecord& r = recs[i];
      if (!r.is_p2p()) break;
      if (r.state >= format::kOpDone) continue;
      if (&r != &first) {
        if ((r.gpu_start_ns != 0) != started) break;
        if (!started && (r.t_enqueue_ns < first.t_enqueue_ns ||
                         r.t_enqueue_ns - first.t_enqueue_ns > kSameLaunchNs)) {
          break;
        }
      }
      const bool send = r.func == format::kFuncSend;
      out.push_back(
          {send ? rank : r.root_or_peer, send ? r.root_or_peer : rank, r.op_index, send, &r});
    }
    return out;
  }

  void CreateNodes() {
    const size_t n = index_.processes().size();
    graph_.op_of_process.assign(n, -1);
    exchange_of_process_.assign(n, {});
    std::map<std::pair<int32_t, uint64_t>, int32_t> coll_nodes;
    // Send/Recv: the processes of each comm blocked in an exchange, joined
    // when a pending record of one pairs with a pending record of the other.
    std::map<int32_t, std::vector<int32_t>> p2p_by_group;
    for (size_t p = 0; p < n; ++p) {
      const ProcessProgress& pp = progress_.processes[p];
      // A dead process is a laggard wherever it is, never a waiter: its
      // peers wait for it, not the other way round.
      if (!pp.blocked() || pp.dead) continue;
      const int32_t proc = static_cast<int32_t>(p);
      const int32_t group = index_.GroupOf(proc, pp.blocked_comm);
      if (group < 0) continue;
      const OpRecord& r = BlockedRecord(proc);
      if (r.is_p2p()) {
        exchange_of_process_[p] = ExchangeOf(proc, BlockedRank(proc));
        p2p_by_group[group].push_back(proc);
        continue;
      }
      auto [it, inserted] = coll_nodes.emplace(std::make_pair(group, r.op_index), 0);
      if (inserted) {
        it->second = static_cast<int32_t>(graph_.ops.size());
        BlockedOp op;
        op.group = group;
        op.op = OpOf(r);
        graph_.ops.push_back(op);
      }
      graph_.op_of_process[p] = it->second;
    }
    for (const auto& [group, procs] : p2p_by_group) CreateExchanges(group, procs);
  }

  void CreateExchanges(int32_t group, const std::vector<int32_t>& procs) {
    // (sender, receiver, index, side) -> position in procs.
    std::map<P2pElem, size_t> holder;
    for (size_t k = 0; k < procs.size(); ++k) {
      for (const P2pElem& e : exchange_of_process_[procs[k]]) holder.emplace(e, k);
    }
    std::vector<size_t> parent(procs.size());
    std::iota(parent.begin(), parent.end(), size_t{0});
    auto find = [&parent](size_t x) {
      while (parent[x] != x) x = parent[x] = parent[parent[x]];
      return x;
    };
    for (size_t k = 0; k < procs.size(); ++k) {
      for (const P2pElem& e : exchange_of_process_[procs[k]]) {
        P2pElem other = e;
        other.send = !e.send;
        auto it = holder.find(other);
        if (it != holder.end()) parent[find(k)] = find(it->second);
      }
    }
    // One node per component, in the order of its lowest comm rank.
    std::map<size_t, std::vector<int32_t>> components;
    for (size_t k = 0; k < procs.size(); ++k) components[find(k)].push_back(procs[k]);
    std::vector<std::vector<int32_t>> ordered;
    for (auto& [root, members] : components) {
      std::sort(members.begin(), members.end(),
                [this](int32_t a, int32_t b) { return BlockedRank(a) < BlockedRank(b); });
      ordered.push_back(members);
    }
    std::sort(ordered.begin(), ordered.end(), [this](const auto& a, const auto& b) {
      return BlockedRank(a.front()) < BlockedRank(b.front());
    });
    for (const std::vector<int32_t>& members : ordered) {
      BlockedOp op;
      op.group = group;
      op.exchange = true;
      const OpRecord& r = BlockedRecord(members.front());
      op.op = OpOf(r);
      const int32_t rank = BlockedRank(members.front());
      const bool send = r.func == format::kFuncSend;
      op.sender = send ? rank : r.root_or_peer;
      op.receiver = send ? r.root_or_peer : rank;
      const int32_t id = static_cast<int32_t>(graph_.ops.size());
      graph_.ops.push_back(op);
      for (int32_t p : members) graph_.op_of_process[p] = id;
      exchange_members_[id] = members;
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

  // `rec`: the process's record of the op (its blocked record if null).
  void AddWaiting(BlockedOp* op, int32_t rank, int32_t process, const OpRecord* rec = nullptr) {
    op->waiting.push_back(rank);
    op->stuck = op->stuck || progress_.processes[process].stuck;
    // Processes of different hosts: on the common time line.
    const uint64_t enqueue = (rec != nullptr ? *rec : BlockedRecord(process)).t_enqueue_ns;
    const uint64_t t = progress_.Common(static_cast<size_t>(process), enqueue);
    if (op->since_wall_ns == 0 || (t != 0 && t < op->since_wall_ns)) op->since_wall_ns = t;
  }

  // The later op process `q` is blocked at, as other processes can hold it.
  LaterOp LaterOpOf(int32_t q) const {
    LaterOp y;
    const ProcessProgress& pp = progress_.processes[q];
    if (!pp.blocked() || pp.dead) return y;
    y.group = index_.GroupOf(q, pp.blocked_comm);
    const OpRecord& r = BlockedRecord(q);
    y.index = r.op_index;
    y.p2p = r.is_p2p();
    if (y.p2p) {
      const int32_t rank = BlockedRank(q);
      const bool send = r.func == format::kFuncSend;
      y.sender = send ? rank : r.root_or_peer;
      y.receiver = send ? r.root_or_peer : rank;
    }
    return y;
  }

  // Process e's record of op y, nullptr when it holds none.
  const OpRecord* RecordOf(int32_t e, const LaterOp& y) const {
    if (y.group < 0) return nullptr;
    const int32_t rank = index_.RankOf(e, y.group);
    if (rank < 0) return nullptr;
    if (!y.p2p) return index_.FindColl(y.group, rank, y.index);
    if (rank == y.receiver) return index_.FindP2p(y.group, rank, y.sender, false, y.index);
    if (rank == y.sender) return index_.FindP2p(y.group, rank, y.receiver, true, y.index);
    return nullptr;
  }

  // Laggard q never enqueued op X, which the processes in `evidence` are
  // inside (their record of X given), and is blocked at a later op Y. It
  // skipped X when every one of them that holds Y enqueued X before Y (and
  // at least one does): in their order X comes first, and q went past it.
  bool SkippedPast(int32_t q, const std::vector<std::pair<int32_t, const OpRecord*>>& evidence) {
    const LaterOp y = LaterOpOf(q);
    if (y.group < 0) return false;
    int agree = 0;
    for (const auto& [e, x] : evidence) {
      if (e == q || x == nullptr || x->t_enqueue_ns == 0) continue;
      const OpRecord* later = RecordOf(e, y);
      if (later == nullptr || later->t_enqueue_ns == 0) continue;
      if (later->t_enqueue_ns <= x->t_enqueue_ns) return false;
      ++agree;
    }
    return agree > 0;
  }

  void EvaluateColl(int32_t id) {
    BlockedOp& op = graph_.ops[id];
    const CommGroup& g = index_.groups()[op.group];
    const uint64_t i = op.op.index;
    std::vector<std::pair<int32_t, const OpRecord*>> evidence;
    std::vector<int32_t> never;  // members that never enqueued it and are blocked elsewhere
    for (int32_t q = 0; q < static_cast<int32_t>(g.members.size()); ++q) {
      const MemberRef& m = g.members[q];
      if (!m.present()) {
        op.laggards.push_back(Laggard(q, -1, 0));
        continue;
      }
      const OpRecord* rec = index_.FindColl(op.group, q, i);
      if (graph_.op_of_process[m.process] == id) {
        AddWaiting(&op, q, m.process);
        evidence.emplace_back(m.process, rec);
        continue;
      }
      if (rec != nullptr) {
        // Done, or its completion is not tracked so we cannot tell: passed.
        if (rec->state >= format::kOpDone || !Tracked(index_.Comm(m))) continue;
        // On the GPU: its GPU is inside this op too, on the stream of this
        // comm, while the op the process is blocked at runs on another
        // (a stream per comm, as PyTorch runs process groups): it waits
        // here like the others, and nobody waits for it. Not when it is
        // dead: a dead process is a laggard wherever it is, never a waiter.
        if (InOpOnItsGpu(*rec, m.process)) {
          AddWaiting(&op, q, m.process, rec);
          evidence.emplace_back(m.process, rec);
          continue;
        }
        op.laggards.push_back(Laggard(q, m.process, 0));  // GPU not there yet
        continue;
      }
      // No record: either lost to wrap (then it is old and done) or never
      // enqueued.
      const uint64_t count = index_.Comm(m).coll_count;
      if (count > i) continue;
      op.laggards.push_back(Laggard(q, m.process, static_cast<int64_t>(i + 1 - count)));
      never.push_back(static_cast<int32_t>(op.laggards.size()) - 1);
    }
    for (int32_t k : never) MarkSkipper(&op.laggards[k], evidence);
    op.members = static_cast<int32_t>(g.members.size());
  }

  // The live process `process` is inside the op `rec` records, on its GPU:
  // a waiter, not a laggard. A dead process is never one.
  bool InOpOnItsGpu(const OpRecord& rec, int32_t process) const {
    return OnGpu(rec) && !progress_.processes[process].dead;
  }

  void MarkSkipper(RankNote* n, const std::vector<std::pair<int32_t, const OpRecord*>>& evidence) {
    if (n->where != Whereabouts::kInsideNccl || n->process < 0) return;
    if (!SkippedPast(n->process, evidence)) return;
    n->skipped = true;
    graph_.skipper[n->process] = 1;
  }

  void EvaluateExchange(int32_t id) {
    BlockedOp& op = graph_.ops[id];
    const CommGroup& g = index_.groups()[op.group];
    std::set<int32_t> inside;
    for (int32_t p : exchange_members_[id]) {
      const int32_t rank = BlockedRank(p);
      inside.insert(rank);
      AddWaiting(&op, rank, p);
    }
    std::sort(op.waiting.begin(), op.waiting.end());
    // Per laggard: the note, and the members waiting for it (evidence).
    std::map<int32_t, RankNote> lag;
    std::map<int32_t, std::vector<std::pair<int32_t, const OpRecord*>>> waiters;
    for (int32_t rank : op.waiting) {
      const int32_t p = g.members[rank].process;
      for (const P2pElem& e : exchange_of_process_[p]) {
        const int32_t q = e.send ? e.receiver : e.sender;
        if (q < 0 || q >= static_cast<int32_t>(g.members.size()) || inside.count(q)) continue;
        const MemberRef& m = g.members[q];
        RankNote note;
        bool never = false;
        if (!m.present()) {
          note = Laggard(q, -1, 0);
          note.owed = OwedOp(e, q);
        } else {
          const OpRecord* rec = index_.FindP2p(op.group, q, rank, !e.send, e.index);
          if (rec != nullptr) {
            // Passed, untracked, or its GPU is in it (on this comm's stream,
            // while the live process is blocked at another comm's op):
            // nobody waits for it. A dead process stays a laggard.
            if (rec->state >= format::kOpDone || !Tracked(index_.Comm(m)) ||
                InOpOnItsGpu(*rec, m.process)) {
              continue;
            }
            note = Laggard(q, m.process, 0);
          } else {
            const int64_t last = index_.LastP2pIndex(op.group, q, rank, !e.send);
            if (last >= static_cast<int64_t>(e.index)) continue;  // lost to wrap
            note = Laggard(q, m.process, static_cast<int64_t>(e.index) - last);
            never = true;
          }
          note.owed = OwedOp(e, q);
        }
        auto [it, inserted] = lag.emplace(q, note);
        if (!inserted) it->second.behind = std::max(it->second.behind, note.behind);
        if (never) waiters[q].emplace_back(p, e.rec);
      }
    }
    for (auto& [q, note] : lag) {
      auto w = waiters.find(q);
      if (w != waiters.end()) MarkSkipper(&note, w->second);
      op.laggards.push_back(note);
    }
    op.members = static_cast<int32_t>(op.waiting.size() + op.laggards.size());
  }

  // The Send/Recv peer q has not posted for element e of a waiting member.
  static OpRef OwedOp(const P2pElem& e, int32_t q) {
    OpRef op;
    op.valid = true;
    op.p2p = true;
    op.index = e.index;
    // e is the waiter's side; q owes the other one.
    op.func = e.send ? format::kFuncRecv : format::kFuncSend;
    op.peer = q == e.receiver ? e.sender : e.receiver;
    return op;
  }

  void Evaluate(int32_t id) {
    if (graph_.ops[id].exchange) {
      EvaluateExchange(id);
    } else {
      EvaluateColl(id);
    }
  }

  // A process with an outgoing edge: blocked, and not a root cause itself.
  int32_t OutOp(int32_t p) const { return graph_.skipper[p] ? -1 : graph_.op_of_process[p]; }

  // Node ids: processes [0, P), op nodes [P, P + O).
  void BuildAdjacency(std::vector<int32_t>* start, std::vector<int32_t>* adj) const {
    const int32_t np = static_cast<int32_t>(index_.processes().size());
    const int32_t n = np + static_cast<int32_t>(graph_.ops.size());
    start->assign(static_cast<size_t>(n) + 1, 0);
    for (int32_t v = 0; v < n; ++v) {
      (*start)[v] = static_cast<int32_t>(adj->size());
      if (v < np) {
        if (OutOp(v) >= 0) adj->push_back(np + OutOp(v));
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
      const int32_t op = OutOp(p);
      if (op < 0) {  // outside NCCL, dead, or skipped: the chain ends here
        sinks.push_back(p);
        continue;
      }
      if (seen_op[op]) continue;
      seen_op[op] = 1;
      for (const RankNote& l : graph_.ops[op].laggards) {
        if (l.process < 0) {
          missing.insert(index_.MissingIdentity(graph_.ops[op].group, l.rank));
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
  std::vector<std::vector<P2pElem>> exchange_of_process_;     // per process
  std::map<int32_t, std::vector<int32_t>> exchange_members_;  // exchange node -> processes
};

}  // namespace

WaitGraph BuildWaitGraph(const JobIndex& index, const JobProgress& progress,
                         const std::vector<char>& skippers) {
  return Builder(index, progress, skippers).Build();
}

}  // namespace analysis
}  // namespace flightrec

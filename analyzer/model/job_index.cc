#include "analyzer/model/job_index.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <tuple>

#include "analyzer/model/parallel.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {

// The largest communicator the analyzer believes in (NCCL's nranks is an
// int; the largest jobs today have ~1e5 ranks).
constexpr int32_t kMaxPlausibleRanks = 1 << 20;

bool JobIndex::P2pKey::operator<(const P2pKey& o) const {
  return std::tie(peer, send, index) < std::tie(o.peer, o.send, o.index);
}

JobIndex::JobIndex(const std::vector<ProcessSnapshot>& processes) : processes_(processes) {
  size_t flat = 0;
  comm_base_.reserve(processes_.size());
  for (const ProcessSnapshot& p : processes_) {
    comm_base_.push_back(flat);
    flat += p.comms.size();
  }
  group_of_comm_.assign(flat, -1);
  ops_.resize(flat);
  BuildGroups();
  BuildOps();
  BuildMissingOwners();
}

void JobIndex::BuildGroups() {
  struct Entry {
    uint64_t comm_id;
    int32_t process;
    int32_t comm;
  };
  std::vector<Entry> entries;
  entries.reserve(group_of_comm_.size());
  for (size_t p = 0; p < processes_.size(); ++p) {
    for (size_t c = 0; c < processes_[p].comms.size(); ++c) {
      entries.push_back(
          {processes_[p].comms[c].comm_id, static_cast<int32_t>(p), static_cast<int32_t>(c)});
    }
  }
  // Stable: within one comm, members keep the (deterministic) file order.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const Entry& a, const Entry& b) { return a.comm_id < b.comm_id; });
  char buf[256];
  for (size_t lo = 0; lo < entries.size();) {
    size_t hi = lo;
    CommGroup g;
    g.comm_id = entries[lo].comm_id;
    int32_t max_rank = -1;
    for (; hi < entries.size() && entries[hi].comm_id == g.comm_id; ++hi) {
      const CommSnapshot& c = processes_[entries[hi].process].comms[entries[hi].comm];
      if (g.name.empty()) g.name = c.name;
      if (c.nranks > 0 && c.nranks != g.nranks) {
        if (g.nranks != 0) {
          std::snprintf(buf, sizeof(buf),
                        "comm 0x%016" PRIx64
                        ": members disagree on nranks (%d vs %d); using the larger",
                        g.comm_id, g.nranks, c.nranks);
          warnings_.push_back(buf);
        }
        g.nranks = std::max(g.nranks, c.nranks);
      }
      max_rank = std::max(max_rank, c.rank);
    }
    if (g.nranks == 0) g.nranks = max_rank + 1;  // API v1-v3 do not say
    // nranks comes from untrusted files and sizes a dense table: beyond any
    // real job it is corruption, and must not become a multi-GB allocation.
    if (g.nranks > kMaxPlausibleRanks) {
      std::snprintf(
          buf, sizeof(buf), "comm 0x%016" PRIx64 ": nranks %d is implausible (limit %d); using %d",
          g.comm_id, g.nranks, kMaxPlausibleRanks, std::min(max_rank + 1, kMaxPlausibleRanks));
      warnings_.push_back(buf);
      g.nranks = std::min(max_rank + 1, kMaxPlausibleRanks);
    }
    g.members.assign(static_cast<size_t>(std::max(g.nranks, 0)), MemberRef{});
    const int32_t group_index = static_cast<int32_t>(groups_.size());
    for (size_t i = lo; i < hi; ++i) {
      const Entry& e = entries[i];
      const CommSnapshot& c = processes_[e.process].comms[e.comm];
      if (c.rank < 0 || c.rank >= g.nranks) {
        std::snprintf(buf, sizeof(buf),
                      "%s: comm 0x%016" PRIx64 " rank %d outside [0, %d); ignored",
                      processes_[e.process].path.c_str(), g.comm_id, c.rank, g.nranks);
        warnings_.push_back(buf);
        continue;
      }
      MemberRef& slot = g.members[static_cast<size_t>(c.rank)];
      if (slot.present()) {
        std::snprintf(buf, sizeof(buf),
                      "%s: comm 0x%016" PRIx64 " rank %d also claimed by %s; ignored",
                      processes_[e.process].path.c_str(), g.comm_id, c.rank,
                      processes_[slot.process].path.c_str());
        warnings_.push_back(buf);
        continue;
      }
      slot = MemberRef{e.process, e.comm};
      ++g.present;
      group_of_comm_[comm_base_[e.process] + static_cast<size_t>(e.comm)] = group_index;
    }
    groups_.push_back(std::move(g));
    lo = hi;
  }
}

void JobIndex::BuildOps() {
  // Per process: each writes only its own comms' ops_ entries.
  ParallelFor(processes_.size(), [this](size_t p) {
    for (size_t c = 0; c < processes_[p].comms.size(); ++c) {
      const std::vector<OpRecord>& recs = processes_[p].comms[c].records;
      MemberOps& ops = ops_[comm_base_[p] + c];
      size_t n_p2p = 0;
      for (const OpRecord& r : recs) n_p2p += r.is_p2p() ? 1 : 0;
      ops.coll.reserve(recs.size() - n_p2p);
      ops.p2p.reserve(n_p2p);
      for (size_t i = 0; i < recs.size(); ++i) {
        const OpRecord& r = recs[i];
        if (r.is_p2p()) {
          ops.p2p.push_back({r.root_or_peer, static_cast<uint8_t>(r.func == format::kFuncSend),
                             r.op_index, static_cast<uint32_t>(i)});
        } else {
          ops.coll.push_back(static_cast<uint32_t>(i));
        }
      }
      // Records come in slot order, so collective indices ascend already;
      // sort anyway (stable) so a damaged file cannot break the search.
      auto by_index = [&recs](uint32_t a, uint32_t b) {
        return recs[a].op_index < recs[b].op_index;
      };
      if (!std::is_sorted(ops.coll.begin(), ops.coll.end(), by_index)) {
        std::stable_sort(ops.coll.begin(), ops.coll.end(), by_index);
      }
      std::sort(ops.p2p.begin(), ops.p2p.end());
      MarkDense(recs, &ops);
    }
  });
}

void JobIndex::MarkDense(const std::vector<OpRecord>& recs, MemberOps* ops) {
  if (ops->coll.empty()) return;
  const uint64_t first = recs[ops->coll.front()].op_index;
  for (size_t k = 0; k < ops->coll.size(); ++k) {
    if (recs[ops->coll[k]].op_index != first + k) return;
  }
  ops->coll_dense = true;
  ops->coll_first = first;
}

int32_t JobIndex::GroupOf(int32_t process, int32_t comm) const {
  if (process < 0 || static_cast<size_t>(process) >= processes_.size()) return -1;
  if (comm < 0 || static_cast<size_t>(comm) >= processes_[process].comms.size()) return -1;
  return group_of_comm_[comm_base_[process] + static_cast<size_t>(comm)];
}

int32_t JobIndex::RankOf(int32_t process, int32_t group) const {
  if (process < 0 || static_cast<size_t>(process) >= processes_.size()) return -1;
  const std::vector<CommSnapshot>& comms = processes_[process].comms;
  for (size_t c = 0; c < comms.size(); ++c) {
    if (GroupOf(process, static_cast<int32_t>(c)) == group) return comms[c].rank;
  }
  return -1;
}

const JobIndex::MemberOps* JobIndex::Ops(int32_t group, int32_t rank) const {
  if (group < 0 || static_cast<size_t>(group) >= groups_.size()) return nullptr;
  const CommGroup& g = groups_[group];
  if (rank < 0 || rank >= static_cast<int32_t>(g.members.size())) return nullptr;
  const MemberRef& m = g.members[rank];
  if (!m.present()) return nullptr;
  return &ops_[comm_base_[m.process] + static_cast<size_t>(m.comm)];
}

const OpRecord* JobIndex::FindColl(int32_t group, int32_t rank, uint64_t index) const {
  const MemberOps* ops = Ops(group, rank);
  if (ops == nullptr) return nullptr;
  const std::vector<OpRecord>& recs = Comm(groups_[group].members[rank]).records;
  if (ops->coll_dense) {
    if (index < ops->coll_first || index - ops->coll_first >= ops->coll.size()) return nullptr;
    return &recs[ops->coll[index - ops->coll_first]];
  }
  auto it = std::lower_bound(ops->coll.begin(), ops->coll.end(), index,
                             [&recs](uint32_t pos, uint64_t v) { return recs[pos].op_index < v; });
  if (it == ops->coll.end() || recs[*it].op_index != index) return nullptr;
  return &recs[*it];
}

const OpRecord* JobIndex::FindP2p(int32_t group, int32_t rank, int32_t peer, bool send,
                                  uint64_t index) const {
  const MemberOps* ops = Ops(group, rank);
  if (ops == nullptr) return nullptr;
  P2pKey key{peer, static_cast<uint8_t>(send), index, 0};
  auto it = std::lower_bound(ops->p2p.begin(), ops->p2p.end(), key);
  if (it == ops->p2p.end() || it->peer != peer || it->send != key.send || it->index != index) {
    return nullptr;
  }
  return &Comm(groups_[group].members[rank]).records[it->pos];
}

int64_t JobIndex::LastP2pIndex(int32_t group, int32_t rank, int32_t peer, bool send) const {
  const MemberOps* ops = Ops(group, rank);
  if (ops == nullptr) return -1;
  P2pKey key{peer, static_cast<uint8_t>(send), UINT64_MAX, 0};
  auto it = std::upper_bound(ops->p2p.begin(), ops->p2p.end(), key);
  if (it == ops->p2p.begin()) return -1;
  --it;
  if (it->peer != peer || it->send != key.send) return -1;
  return static_cast<int64_t>(it->index);
}

uint64_t JobIndex::FirstCollIndex(int32_t group, int32_t rank) const {
  const MemberOps* ops = Ops(group, rank);
  if (ops == nullptr) return UINT64_MAX;
  const CommSnapshot& c = Comm(groups_[group].members[rank]);
  uint64_t first = ops->coll.empty() ? UINT64_MAX : c.records[ops->coll.front()].op_index;
  const size_t k = c.history.FirstHeld();
  if (k < c.history.size()) return std::min(first, c.history_first + k);
  return first;
}

bool JobIndex::FindCollSig(int32_t group, int32_t rank, uint64_t index, CollSig* out) const {
  if (const OpRecord* r = FindColl(group, rank, index)) {
    *out = SigOf(*r);
    return true;
  }
  if (Ops(group, rank) == nullptr) return false;
  const CommSnapshot& c = Comm(groups_[group].members[rank]);
  if (index < c.history_first || index - c.history_first >= c.history.size()) return false;
  *out = c.history[static_cast<size_t>(index - c.history_first)];
  return out->held();
}

bool JobIndex::FetchColl(int32_t group, int32_t rank, uint64_t index, OpRecord* out) const {
  if (const OpRecord* r = FindColl(group, rank, index)) {
    *out = *r;
    return true;
  }
  CollSig sig;
  if (!source_ || !FindCollSig(group, rank, index, &sig)) return false;
  const MemberRef& m = groups_[group].members[rank];
  // A live ring may have moved on since it was read: only the same op
  // (same signature) is taken.
  return source_(processes_[m.process], Comm(m), index, out) && out->op_index == index &&
         SigOf(*out).sig == sig.sig;
}

void JobIndex::BuildMissingOwners() {
  const size_t ng = groups_.size();
  missing_owner_.resize(ng);
  std::vector<int32_t> holed;
  for (size_t g = 0; g < ng; ++g) {
    missing_owner_[g] = static_cast<int32_t>(g);
    if (groups_[g].present < groups_[g].nranks) holed.push_back(static_cast<int32_t>(g));
  }
  if (holed.size() < 2) return;
  // Widest first: the first covering candidate found is the widest.
  std::stable_sort(holed.begin(), holed.end(),
                   [this](int32_t a, int32_t b) { return groups_[a].nranks > groups_[b].nranks; });
  std::vector<char> in_wide(processes_.size(), 0);
  for (size_t w = 0; w < holed.size(); ++w) {
    const CommGroup& wide = groups_[holed[w]];
    const int32_t wide_holes = wide.nranks - wide.present;
    for (const MemberRef& m : wide.members) {
      if (m.present()) in_wide[m.process] = 1;
    }
    for (size_t h = w + 1; h < holed.size(); ++h) {
      const int32_t g = holed[h];
      const CommGroup& narrow = groups_[g];
      // Sorted widest first, so narrow is no wider; a comm of the same size
      // with the same members (world == tp when there is one TP group) is
      // covered by the first of them.
      if (missing_owner_[g] != g || narrow.nranks - narrow.present > wide_holes) continue;
      bool covered = true;
      for (const MemberRef& m : narrow.members) {
        if (m.present() && !in_wide[m.process]) {
          covered = false;
          break;
        }
      }
      if (covered) missing_owner_[g] = holed[w];
    }
    for (const MemberRef& m : wide.members) {
      if (m.present()) in_wide[m.process] = 0;
    }
  }
}

int32_t JobIndex::MissingOwner(int32_t group) const {
  if (group < 0 || static_cast<size_t>(group) >= missing_owner_.size()) return group;
  return missing_owner_[group];
}

std::pair<int32_t, int32_t> JobIndex::MissingIdentity(int32_t group, int32_t rank) const {
  const int32_t owner = MissingOwner(group);
  if (owner == group) return {group, rank};
  const CommGroup& o = groups_[owner];
  if (o.nranks - o.present != 1) return {group, rank};
  for (int32_t r = 0; r < static_cast<int32_t>(o.members.size()); ++r) {
    if (!o.members[r].present()) return {owner, r};
  }
  return {group, rank};
}

std::vector<std::pair<int32_t, int32_t>> JobIndex::MissingMemberships(int32_t group,
                                                                      int32_t rank) const {
  std::vector<std::pair<int32_t, int32_t>> out{{group, rank}};
  const std::pair<int32_t, int32_t> self = MissingIdentity(group, rank);
  const CommGroup& o = groups_[self.first];
  if (o.nranks - o.present != 1) return out;
  if (self != std::make_pair(group, rank)) out.push_back(self);
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (static_cast<int32_t>(g) == group || static_cast<int32_t>(g) == self.first ||
        missing_owner_[g] != self.first) {
      continue;
    }
    const CommGroup& h = groups_[g];
    for (int32_t r = 0; r < static_cast<int32_t>(h.members.size()); ++r) {
      if (!h.members[r].present()) out.emplace_back(static_cast<int32_t>(g), r);
    }
  }
  return out;
}

}  // namespace analysis
}  // namespace flightrec

#include "emulator/src/topology.h"

#include <set>

namespace flightrec {
namespace emu {

uint64_t Mix64(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t HashString(const std::string& s) {  // FNV-1a, then mixed
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return Mix64(h);
}

Topology::Topology(int ranks, int tp, int ranks_per_node, const std::string& job_id)
    : ranks_(ranks), tp_(tp), ranks_per_node_(ranks_per_node), job_id_(job_id) {}

CommInfo Topology::Build(CommKind kind, int group) const {
  CommInfo c;
  c.kind = kind;
  c.group = group;
  int tp_groups = ranks_ / tp_;
  switch (kind) {
    case CommKind::kWorld:
      c.name = "world";
      c.global_index = 0;
      for (int r = 0; r < ranks_; ++r) c.members.push_back(r);
      break;
    case CommKind::kTp:
      c.name = "tp" + std::to_string(group);
      c.global_index = 1 + group;
      for (int i = 0; i < tp_; ++i) c.members.push_back(group * tp_ + i);
      break;
    case CommKind::kDp:
      c.name = "dp" + std::to_string(group);
      c.global_index = 1 + tp_groups + group;
      for (int i = 0; i < tp_groups; ++i) c.members.push_back(i * tp_ + group);
      break;
  }
  c.nranks = static_cast<int>(c.members.size());
  std::set<int> nodes;
  for (int r : c.members) nodes.insert(r / ranks_per_node_);
  c.nnodes = static_cast<int>(nodes.size());
  c.comm_hash = Mix64(HashString(job_id_) ^ Mix64(static_cast<uint64_t>(kind) * 0x10000ULL +
                                                  static_cast<uint64_t>(group)));
  return c;
}

CommInfo Topology::CommOf(CommKind kind, int rank) const {
  int group = kind == CommKind::kTp ? rank / tp_ : kind == CommKind::kDp ? rank % tp_ : 0;
  CommInfo c = Build(kind, group);
  for (int i = 0; i < c.nranks; ++i) {
    if (c.members[i] == rank) c.my_rank = i;
  }
  return c;
}

CommInfo Topology::CommAt(int global_index) const {
  int tp_groups = ranks_ / tp_;
  if (global_index == 0) return Build(CommKind::kWorld, 0);
  if (global_index <= tp_groups) return Build(CommKind::kTp, global_index - 1);
  return Build(CommKind::kDp, global_index - 1 - tp_groups);
}

}  // namespace emu
}  // namespace flightrec

// The communicators of an emulated job: world, TP groups of `tp`
// consecutive ranks, DP groups of ranks with equal rank % tp. Every member of
// a communicator derives the same commHash from (job id, kind, group index),
// like NCCL's hash of the shared ncclUniqueId (docs/design/nccl.md §Sequence numbers and identity).
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_TOPOLOGY_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_TOPOLOGY_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace flightrec {
namespace emu {

enum class CommKind : int { kWorld = 0, kTp = 1, kDp = 2 };
constexpr int kCommsPerRank = 3;  // one of each kind

struct CommInfo {
  CommKind kind = CommKind::kWorld;
  int group = 0;         // TP/DP group index (0 for world)
  int global_index = 0;  // index in the job-wide comm table (coordination)
  uint64_t comm_hash = 0;
  std::string name;  // "world", "tp<g>", "dp<g>"
  int nranks = 0;
  int nnodes = 0;
  int my_rank = -1;          // this process's rank in the comm
  std::vector<int> members;  // global ranks, index = comm rank
};

class Topology {
 public:
  Topology(int ranks, int tp, int ranks_per_node, const std::string& job_id);

  int ranks() const { return ranks_; }
  int tp() const { return tp_; }
  int num_comms() const { return 1 + ranks_ / tp_ + tp_; }
  // The communicator of `kind` that global rank `rank` belongs to.
  CommInfo CommOf(CommKind kind, int rank) const;
  // Comm by global index (0 = world, 1.. = tp groups, then dp groups), with
  // my_rank = -1.
  CommInfo CommAt(int global_index) const;

 private:
  CommInfo Build(CommKind kind, int group) const;

  int ranks_;
  int tp_;
  int ranks_per_node_;
  std::string job_id_;
};

uint64_t Mix64(uint64_t x);
uint64_t HashString(const std::string& s);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_TOPOLOGY_H_

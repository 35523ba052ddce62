// The job seen by communicator: every comm id becomes a group whose members
// are indexed by comm rank, and each member's records are indexed by op so
// that any (comm, rank, op) lookup is a binary search, never a scan.
//
// Memory: two vectors per member (collective positions and p2p keys), sized
// once; no allocation per record. Building is O(records log records); a
// collective lookup is O(1) when a member's indices are contiguous (always,
// unless records were torn), else a binary search.
#ifndef FLIGHTREC_ANALYZER_MODEL_JOB_INDEX_H_
#define FLIGHTREC_ANALYZER_MODEL_JOB_INDEX_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/coll_signature.h"
#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace analysis {

// One member of a communicator: which file and which region in it.
struct MemberRef {
  int32_t process = -1;  // index into the snapshots; -1: no file
  int32_t comm = -1;     // index into that snapshot's comms
  bool present() const { return process >= 0; }
};

struct CommGroup {
  uint64_t comm_id = 0;
  std::string name;
  int32_t nranks = 0;              // from the headers (max rank + 1 if 0)
  std::vector<MemberRef> members;  // index = comm rank
  int32_t present = 0;             // members with a file
};

// Re-reads collective `op_index` of region `comm` (same region_index and
// comm_id) of `process` from its file, for ops a windowed load kept only as
// signatures. Returns false when the file no longer holds it. Called from
// several threads at once (the detectors run per comm group in parallel).
using RecordSource = std::function<bool(const ProcessSnapshot& process, const CommSnapshot& comm,
                                        uint64_t op_index, OpRecord* out)>;

class JobIndex {
 public:
  explicit JobIndex(const std::vector<ProcessSnapshot>& processes);

  const std::vector<ProcessSnapshot>& processes() const { return processes_; }
  const std::vector<CommGroup>& groups() const { return groups_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  const CommSnapshot& Comm(const MemberRef& m) const { return processes_[m.process].comms[m.comm]; }
  // Group of region `comm` of process `process`, -1 if it was not indexed.
  int32_t GroupOf(int32_t process, int32_t comm) const;
  // Comm rank of a process in a group, -1 when not a member.
  int32_t RankOf(int32_t process, int32_t group) const;

  // The record of collective `index` of a member, nullptr when the member
  // has no file, never enqueued it, or the record was overwritten or torn.
  const OpRecord* FindColl(int32_t group, int32_t rank, uint64_t index) const;
  // The p2p record `index` of member `rank` towards/from `peer`.
  const OpRecord* FindP2p(int32_t group, int32_t rank, int32_t peer, bool send,
                          uint64_t index) const;
  // Highest p2p index seen from `rank` towards/from `peer`, -1 when none.
  int64_t LastP2pIndex(int32_t group, int32_t rank, int32_t peer, bool send) const;
  // Oldest collective index still held by a member (records not
  // overwritten), as a full record or as a windowed load's signature.
  uint64_t FirstCollIndex(int32_t group, int32_t rank) const;
  // The signature of a member's collective `index`, full record or not.
  bool FindCollSig(int32_t group, int32_t rank, uint64_t index, CollSig* out) const;
  // The full record of a member's collective `index`: the one FindColl
  // returns, else re-read through the record source (windowed loads).
  bool FetchColl(int32_t group, int32_t rank, uint64_t index, OpRecord* out) const;
  void set_record_source(RecordSource source) { source_ = std::move(source); }

  // Members with no file, named once. A process with no file leaves a hole
  // in every comm it belongs to; a comm whose present members all belong to
  // a wider comm (or an earlier one of the same size) that has at least as
  // many holes is "covered": its holes are among that comm's (the widest
  // such comm is the one that reports them). When that comm has a single
  // hole, every covered hole is that process.
  // The widest comm that reports group's holes (group itself when none).
  int32_t MissingOwner(int32_t group) const;
  // (group, rank) of a hole as its owner names it (itself when ambiguous).
  std::pair<int32_t, int32_t> MissingIdentity(int32_t group, int32_t rank) const;
  // Every (group, rank) hole known to be the same process as this one
  // (itself first).
  std::vector<std::pair<int32_t, int32_t>> MissingMemberships(int32_t group, int32_t rank) const;
  // Calls fn(const OpRecord&) for the member's collectives in ascending op
  // index, once per index (the record FindColl returns). Sequential access:
  // for passes over every op of every member.
  template <typename Fn>
  void ForEachColl(int32_t group, int32_t rank, Fn&& fn) const {
    const MemberOps* ops = Ops(group, rank);
    if (ops == nullptr) return;
    const std::vector<OpRecord>& recs = Comm(groups_[group].members[rank]).records;
    const OpRecord* prev = nullptr;
    for (uint32_t pos : ops->coll) {
      if (prev != nullptr && recs[pos].op_index == prev->op_index) continue;
      prev = &recs[pos];
      fn(*prev);
    }
  }
  // Calls fn(uint64_t index, CollSig) for every collective a member holds,
  // once per index: signatures a windowed load kept, then full records.
  template <typename Fn>
  void ForEachCollSig(int32_t group, int32_t rank, Fn&& fn) const {
    if (Ops(group, rank) == nullptr) return;
    const CommSnapshot& c = Comm(groups_[group].members[rank]);
    c.history.ForEach([&fn, &c](size_t k, CollSig sig) { fn(c.history_first + k, sig); });
    ForEachColl(group, rank, [&fn](const OpRecord& r) { fn(r.op_index, SigOf(r)); });
  }

 private:
  struct P2pKey {
    int32_t peer;
    uint8_t send;
    uint64_t index;
    uint32_t pos;
    bool operator<(const P2pKey& o) const;
  };
  struct MemberOps {
    std::vector<uint32_t> coll;  // positions of collective records
    std::vector<P2pKey> p2p;     // sorted
    // coll[k] holds op index coll_first + k (the normal case: one record per
    // index, none torn), so a lookup is a subtraction, not a search.
    bool coll_dense = false;
    uint64_t coll_first = 0;
  };
  const MemberOps* Ops(int32_t group, int32_t rank) const;
  void BuildGroups();
  void BuildOps();
  void BuildMissingOwners();
  static void MarkDense(const std::vector<OpRecord>& recs, MemberOps* ops);

  const std::vector<ProcessSnapshot>& processes_;
  std::vector<CommGroup> groups_;
  std::vector<size_t> comm_base_;       // flat index of process p's comm 0
  std::vector<int32_t> group_of_comm_;  // flat comm -> group
  std::vector<MemberOps> ops_;          // flat comm -> ops
  std::vector<int32_t> missing_owner_;  // group -> widest group reporting its holes
  std::vector<std::string> warnings_;
  RecordSource source_;
};

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_JOB_INDEX_H_

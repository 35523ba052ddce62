// What the analysis concludes: findings, the verdict and the culprits.
//
// These are plain values that refer back into the job by index (process
// index into the analyzed snapshots, group index into JobIndex::groups()),
// so the reports can print hosts, pids and every rank of a process without
// the analysis copying them. docs/report-schema.md is the JSON form.
#ifndef FLIGHTREC_ANALYZER_MODEL_FINDING_H_
#define FLIGHTREC_ANALYZER_MODEL_FINDING_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace flightrec {
namespace analysis {

enum class FindingKind : uint8_t {
  kMismatch,
  kDeadlock,
  kDeadRank,
  kMissingRank,
  kLaggingRank,
  kAllStuck,
  kStraggler,
  kCommAborted,  // ended with ops in flight (lifecycle.h)
};
const char* FindingKindName(FindingKind kind);

enum class Verdict : uint8_t { kHealthy, kSlow, kHang, kDesync, kIncomplete };
const char* VerdictName(Verdict verdict);

// Where a lagging member is (docs/analyzer.md "lagging_rank").
enum class Whereabouts : uint8_t {
  kOutsideNccl,  // its ops are all done, nothing in flight
  kInsideNccl,   // blocked at an earlier op (possibly in another comm)
  kDead,         // heartbeat went quiet (see dead_rank)
  kMissing,      // no file
};
const char* WhereaboutsName(Whereabouts where);

// The op a finding is about. index is our per-communicator op index
// (collectives) or the per-(peer, direction) index (p2p).
struct OpRef {
  bool valid = false;
  uint8_t func = 0;           // format::Func
  uint64_t seq = UINT64_MAX;  // NCCL seqNumber, UINT64_MAX for p2p/unknown
  uint64_t index = 0;
  bool p2p = false;
  int32_t peer = -1;  // p2p only
  // NCCL's per-call user profiler tag (API v7, docs/plugin.md), where
  // frameworks put their training step; 0 when untagged or unknown.
  uint64_t user_tag = 0;
  // A copy-engine collective (kFlagCopyEngine) and its algo (format::Algo:
  // kAlgoCeMulticast / kAlgoCeUnicast): shown as "AllGather (CE, MC)".
  bool copy_engine = false;
  uint8_t algo = 0;
  // A symmetric kernel (kFlagSymmetric, NCCL 2.31+) and its variant
  // (format::KernelVariant): shown as "AllReduce (symmetric AGxLL_R)".
  bool symmetric = false;
  uint8_t kernel_variant = 0;
};

// One rank named by a finding, with what we know about it.
struct RankNote {
  int32_t rank = -1;     // comm rank
  int32_t process = -1;  // index into the snapshots, -1 when no file
  Whereabouts where = Whereabouts::kOutsideNccl;
  int64_t behind = 0;          // collectives behind the op (lagging_rank)
  int32_t blocked_group = -1;  // kInsideNccl: the comm group it is in
  OpRef blocked_op;            // kInsideNccl: the op it is in
  double late_ns = 0;          // straggler: typical lateness
  double caused_wait_ns = 0;   // straggler: time the others waited for it
  // lagging_rank: it left the op out and went on (a root cause whatever it
  // is blocked in now), rather than not having got there yet.
  bool skipped = false;
  // lagging_rank in a Send/Recv exchange: the Send or Recv it has not posted.
  OpRef owed;
};

struct Finding {
  FindingKind kind = FindingKind::kLaggingRank;
  int32_t group = -1;           // JobIndex group index
  std::vector<RankNote> ranks;  // most significant first
  // Processes named beyond `ranks` (deadlock cycles cross comms).
  std::vector<int32_t> extra_processes;
  OpRef op;
  std::string summary;  // the evidence, one sentence
  double confidence = 1.0;
  bool root_cause = false;          // names a culprit (vs. a consequence)
  std::vector<std::string> fields;  // mismatch: "func", "count", ...
  bool contested = false;           // mismatch with no majority: nobody blamed
  // mismatch whose comm had no majority but evidence from outside it named
  // the odd side: "siblings" (comms of the same size running the same ops),
  // "other_comms" (the named rank is the odd one on another comm too); ""
  // when the comm's own majority decided or nothing did (contested).
  std::string tie_break;
  // lagging_rank seen in the member's own records (its ops are the others'
  // shifted), the most direct evidence of a skip.
  bool from_records = false;
  // Drawn from silence alone (dead_rank whose process could not be seen
  // gone): weaker than a rank seen outside NCCL in its own records.
  bool inferred = false;
  int32_t waiting = 0;  // members blocked in `op`
  // all_stuck: how many members (the first of `ranks`) never started `op` on
  // their GPU while the others did; 0 when the records single out nobody.
  int32_t never_started = 0;
  // all_stuck in a symmetric kernel with phase counters (NCCL 2.31+,
  // KernelPhase): kSymPeersInFinalSync when some members have every channel
  // in the final sync and the others (counted in never_started, first in
  // `ranks`) never arrived there; kSymAllComputing when no member's channel
  // reached the final sync; kSymAllInFinalSync when every member waits there.
  enum SymPhase : uint8_t {
    kSymUnknown = 0,
    kSymPeersInFinalSync = 1,
    kSymAllComputing = 2,
    kSymAllInFinalSync = 3,
    kSymAllInInitialSync = 4
  };
  uint8_t sym_phase = kSymUnknown;
  uint64_t waiting_since_wall_ns = 0;
  // comm_aborted: ops not done when its members finalized it, when the last
  // of them did, the group that took over (ncclCommShrink, inferred from
  // members and times; -1 when none), and whether that one went on.
  uint64_t open_at_end = 0;
  int32_t ended_by = 0;  // members that ended it: the last ones of `ranks`
  uint64_t ended_wall_ns = 0;
  int32_t successor = -1;
  bool recovered = false;
};

// A root cause. process == -1 means a rank with no file: then group/rank
// say which member it is.
struct Culprit {
  int32_t process = -1;
  int32_t group = -1;
  int32_t rank = -1;
};

struct Analysis {
  Verdict verdict = Verdict::kHealthy;
  std::vector<Finding> findings;  // root causes first, then by kind
  std::vector<Culprit> culprits;
  std::vector<std::string> notes;  // caveats (clock skew, lost data, ...)
};

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_FINDING_H_

// Command-line options of `flightrec-emu run` and the faults it can inject.
// The launcher passes the same argument list to every rank process, so
// parsing is the single source of a job's configuration.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_OPTIONS_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_OPTIONS_H_

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "emulator/src/nccl_version.h"
#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {

// kSlow, kGpuSlow, kSlowLink hold from op `op` on (every op when op=N is not
// given); the others act at op `op` only.
enum class FaultKind {
  kStuck,
  kSkip,
  kKill,
  kMismatch,
  kGpuHang,
  kSlow,
  kPause,
  kGpuSlow,
  kSlowLink,
  kSymCompute  // symmetric.h: a symmetric kernel never leaves its compute phase
};
// kDatatypeSameBytes: another datatype with the count scaled so the call's
// byte size stays the same (ApplyMismatch).
enum class MismatchField { kNone, kCount, kDatatype, kFunc, kDatatypeSameBytes };

struct Fault {
  FaultKind kind = FaultKind::kStuck;
  int rank = -1;    // kSlowLink: -1 (every rank)
  int64_t op = -1;  // op number (kSlow, kGpuSlow, kSlowLink: the first op it holds for; -1: 0)
  MismatchField field = MismatchField::kNone;
  // kSlow: host delay before every op; kGpuSlow: delay of the GPU stream
  // before it starts each launch; kSlowLink: extra transfer time of every
  // launch on every rank; kPause: the one pause before op `op`.
  int64_t us = 0;
  // kSkip: -1 leaves the whole op out; K >= 0 leaves out only call K (API call
  // order) of a grouped collective op, the rest of the group is launched.
  int call = -1;
  // kSlow, kGpuSlow, kSlowLink (`comm=world|tp|dp`): only ops of that comm
  // kind (a CommKind value); -1: every op.
  int comm = -1;
};

// How a rank's launches map to emulated GPU streams: kRank, one in-order
// stream for every comm of the rank; kComm, one per comm (as PyTorch runs
// each process group on a stream of its own), so ops of different comms
// overlap on the GPU.
enum class StreamMode { kRank, kComm };

struct Options {
  int ranks = 8;
  int64_t ops = 100;
  int tp = 1;
  int ranks_per_node = 8;
  int api = 0;  // 0: newest the NCCL version knows
  NcclVersion nccl_version;
  bool grouped_init = false;
  // PXN (docs/design/nccl.md §PXN): the network sends of odd channels go through
  // the local partner rank's proxy (rank ^ 1 on the same node).
  bool pxn = false;
  int graph_replays = 0;
  uint64_t seed = 1;
  std::string job_dir;   // default: a new directory under $TMPDIR
  std::string job_id;    // default: "emu-<launcher pid>-<seed>"
  std::string dump_dir;  // default: $NCCL_FLIGHTREC_DIR, else <job-dir>/flightrec
  int64_t step_us = 200;
  StreamMode streams = StreamMode::kRank;
  std::vector<Fault> faults;
  double hang_timeout_s = 60;
  int until_dumps = 0;
  int64_t mark_op = -1;  // record when each rank enqueues this op
  std::string summary_file;
  std::string log_file;
  // Ends the job (exit 7) --linger-s seconds after this text first appears
  // in --log-file (summary: until_log_wall_ns, when the launcher saw it).
  std::string until_log;
  double linger_s = 0;
  // SIGCHLD in rank processes, as hosts set it: "" (default), "ignore"
  // (SIG_IGN: children are reaped by the kernel), "reap" (a handler that
  // reaps every child, taking their statuses).
  std::string sigchld;
  // Environment variables set in one rank only (--rank-env R:NAME=VALUE).
  std::vector<std::pair<int, std::string>> rank_env;
  // Communicator lifecycle (lifecycle.h). What each rank's framework does
  // once an op has been in flight --watchdog-s without progress, as
  // PyTorch's watchdog after its collective timeout: "" nothing, "abort"
  // (ncclCommAbort of every comm, then exit), "revoke" (ncclCommRevoke, then
  // ncclCommDestroy, then exit), "shrink" (ncclCommShrink of world without
  // the faulted ranks with NCCL_SHRINK_ABORT, destroy of the old comms, then
  // --shrink-ops AllReduces on the new comm).
  std::string on_hang;
  double watchdog_s = 2;
  int64_t shrink_ops = 20;
  // ncclConfig_t.blocking = 0: each comm's init runs on a thread of its
  // own while the user thread polls ncclCommGetAsyncError.
  bool nonblocking_init = false;
  // --ce: the TP AllGather (op % 8 == 1) runs on the copy engines where
  // NCCL would (2.29+, single-node TP comm): ce_coll.h. --no-cuda: without
  // the fake CUDA driver (the plugin's fallback, kFlagNoCompletion).
  bool ce = false;
  bool no_cuda = false;
  // --sym: the TP AllReduce (op % 8 == 0, single-node TP comm) runs as a
  // symmetric kernel (symmetric.h): invisible up to NCCL 2.30, Coll with
  // isSymColl + KernelCh + KernelPhase from a profiler thread from 2.31.
  bool sym = false;
  // --ras-mask N:MASK: before op N, RAS overrides NCCL's activation mask
  // job-wide with MASK (ncclProfilerSetRasOverride, NCCL 2.31+).
  int64_t ras_mask_op = -1;
  int ras_mask = 0;
  // Set only in rank processes (the launcher adds them).
  int rank = -1;
  std::string coord_path;

  int tp_groups() const { return ranks / tp; }
  // The fault of `kind` in effect for rank r's op `op_number`, among those
  // without comm=.
  const Fault* FindFault(FaultKind kind, int r, int64_t op_number) const;
  // kSlow, kGpuSlow: the fault in effect for rank r's op `op_number` on a
  // comm of kind `comm`, honouring `comm=`.
  const Fault* FindFaultOn(FaultKind kind, int r, int64_t op_number, CommKind comm) const;
  // The kSlowLink fault in effect at op `op_number` (it has no rank): among
  // those without comm=, or on a comm of kind `comm`.
  const Fault* FindLinkFault(int64_t op_number) const;
  const Fault* FindLinkFaultOn(int64_t op_number, CommKind comm) const;
  // kSkip faults of rank r's op `op_number`: of one call of a group
  // (`one_call`) or of the whole op (!`one_call`).
  const Fault* FindSkipFault(int r, int64_t op_number, bool one_call) const;
};

// Parses `args` (everything after the sub-command). Returns false and sets
// `error` to a message naming the bad option on failure.
bool ParseOptions(const std::vector<std::string>& args, Options* out, std::string* error);
bool ParseFault(const std::string& spec, Fault* out, std::string* error);

// Help text for `flightrec-emu --help`.
const char* UsageText();

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_OPTIONS_H_

// PyTorch Flight Recorder dumps of a job flightrec recorded: reads the
// job's rings and dumps with the analyzer's own loader (analysis::LoadInputs:
// the newest state of each process) and writes, per global rank, the pickle
// PyTorch's FR would have written at the same moment
// (docs/design/pytorch-fr.md, "The format this reader relies on"), so that
// FR-only fixtures come from a job that ran, not from a shape made to fit
// the analyzer.
//
// What FR sees of each record:
//   - process groups: one per communicator, named in one global order
//     ("0" = the widest, desc "default_pg"; then "1".. by communicator name,
//     desc = that name), `ranks` = the members' global ranks (their rank in
//     the widest communicator), listed only in the members' files;
//   - entries: every record of every communicator, in enqueue order
//     (record_id), collectives with collective_seq_id = op index + 1, p2p
//     with the pg's p2p_seq_id counted from 1 and "nccl:send a->b" /
//     "nccl:recv a<-b" in group ranks; sizes in the user's elements and
//     type; state scheduled / started (only with `timing`, as
//     TORCH_NCCL_ENABLE_TIMING) / completed; time_created_ns = the API
//     time, discovery times = the host's observations;
//   - frames: a Python stack per (function, communicator) (the collective's
//     torch.distributed call, c10d's logger wrapper, the caller, train_step,
//     main), the same on every rank: FR's frames say where a rank called,
//     not who is at fault;
//   - the newest `buffer` entries only (FR's ring, 2,000 by default).
#ifndef FLIGHTREC_TESTS_SUPPORT_FR_FROM_JOB_H_
#define FLIGHTREC_TESTS_SUPPORT_FR_FROM_JOB_H_

#include <stddef.h>

#include <set>
#include <string>
#include <vector>

namespace flightrec {
namespace test_support {

struct FrFromJobOptions {
  // TORCH_NCCL_ENABLE_TIMING: entries the GPU started say "started" and
  // completed ones carry duration_ms; without it they stay "scheduled".
  bool timing = true;
  // Global ranks that wrote no FR dump (a killed process never dumps).
  std::set<int> omit;
  // FR's ring: the newest `buffer` entries of each rank (TORCH_FR_BUFFER_SIZE).
  size_t buffer = 2000;
};

struct FrFromJobResult {
  bool ok = false;
  std::string error;
  std::vector<int> written;  // global ranks, ascending
  std::vector<std::string> paths;
};

// Writes <out_dir>/comm_lib_trace_rank_<global rank> for each process of
// the flightrec files under `flightrec_dir` (not in options.omit).
FrFromJobResult WriteFrDumpsOfJob(const std::string& flightrec_dir, const std::string& out_dir,
                                  const FrFromJobOptions& options = {});

}  // namespace test_support
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_FR_FROM_JOB_H_

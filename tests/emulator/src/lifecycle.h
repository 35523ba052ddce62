// Communicator lifecycle of an emulated rank (docs/design/nccl.md
// §Communicator lifecycle): the RankRuntime members defined in lifecycle.cc
// and the helpers they share.
//
//   --nonblocking-init  ncclCommInitRankConfig with blocking=0: each comm's
//                       init (the profiler's init) runs on a thread of its
//                       own; the user thread polls ncclCommGetAsyncError
//                       until none is ncclInProgress.
//   --on-hang MODE      a framework watchdog thread per rank (PyTorch's,
//                       after its collective timeout --watchdog-s): once an
//                       op has been in flight that long without progress
//     abort             ncclCommAbort of every comm from the watchdog thread
//                       (commReclaim: the proxy thread is joined, then the
//                       profiler's finalize with the ops' handles open, no
//                       stopEvent), then the rank stops (state "aborted");
//     revoke            ncclCommRevoke (abort flags: kernels exit; the comm
//                       refuses new ops) then ncclCommDestroy, the same
//                       profiler view;
//     shrink            the watchdog surfaces the error; the user thread
//                       calls ncclCommShrink(world, faulted ranks,
//                       NCCL_SHRINK_ABORT): abort flags set, stream synced,
//                       flags cleared, the child comm's own init (name
//                       "world-shrink", nranks - excluded), then destroys the
//                       old comms (finalize with handles open) and runs
//                       --shrink-ops AllReduces on the child.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_LIFECYCLE_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_LIFECYCLE_H_

#include <vector>

#include "emulator/src/options.h"
#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {

// The ranks ncclCommShrink excludes: those a stuck, kill or gpu-hang fault
// names (the framework's view of the dead ranks).
std::vector<int> ExcludedRanks(const Options& opts);

// The child of world without `excluded`, for global rank `rank` (my_rank -1
// when excluded); global_index is the extra coordination slot `slot`.
CommInfo ShrunkWorld(const CommInfo& world, const std::vector<int>& excluded, int rank, int slot);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_LIFECYCLE_H_

// Symmetric kernels (--sym) and NCCL 2.31's profiler thread and RAS mask
// override (--ras-mask), as NCCL's source has them (docs/design/nccl.md
// §Symmetric kernels, §NCCL 2.31):
//   <= 2.30  a symmetric plan's tasks are freed before the plan's queue is
//            filled: no Coll, no KernelCh, and comm->seqNumber does not
//            advance. The kernel still runs and still pairs with its peers.
//   2.31+    Coll with isSymColl = 1 and kernelVariant ("AllReduce_AGxLL_R";
//            algo is the variant's tail, proto ""), nChannels = the plan's
//            channels on the head task; KernelCh per channel and, when
//            KernelPhase is asked for, KernelPhase per channel in the order
//            initial_sync, compute, final_sync (stop time in
//            kernelCh.pTimer), all from a profiler thread of the
//            communicator's own, not the proxy thread (a symmetric plan has
//            no proxy ops).
// The symmetric op is the TP AllReduce (op % 8 == 0) on a single-node TP
// comm of two or more ranks.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_SYMMETRIC_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_SYMMETRIC_H_

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "emulator/src/nccl_version.h"
#include "emulator/src/runtime_types.h"

namespace flightrec {
namespace emu {

// The kernel name NCCL reports (ncclSymkKernelIdToString) for the AllReduce.
constexpr const char* kSymAllReduceVariant = "AllReduce_AGxLL_R";

// Phases the GPU stream thread moves a symmetric task through (Task::sym_phase).
constexpr int kSymInitialSync = 0;
constexpr int kSymCompute = 1;
constexpr int kSymFinalSync = 2;
constexpr int kSymDone = 3;

// NCCL 2.31+ emits profiler events for symmetric kernels.
inline bool SymmetricVisible(const NcclVersion& v) { return v.AtLeast(2, 31); }

// One communicator's profiler thread (NCCL 2.31+): the symmetric tasks it
// reports KernelCh/KernelPhase for. Written by the user thread (post) and
// the GPU stream thread (notify), under `mu`.
struct SymProfiler {
  std::thread thread;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Task>> posted;
  bool dirty = false;
  bool stop = false;
};

// What libnccl's ncclGetVersion returns in this process (the emulated
// version), set before the first init.
void SetEmulatedNcclVersion(const NcclVersion& v);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_SYMMETRIC_H_

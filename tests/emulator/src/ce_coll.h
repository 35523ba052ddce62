// Copy-engine (CE) collectives (--ce): NCCL 2.29+ runs an AllGather of a
// single-node communicator on the copy engines, and emits GroupApi, CollApi,
// then CeColl with CeSync / CeBatch / CeSync under it, all on the user
// thread, numbered by the comm's ceSeqNum (+2 per CE op), with no
// KernelLaunch, Group, Coll, KernelCh or proxy event (docs/design/nccl.md
// §Copy-engine collectives). RankRuntime::RunCeOp (ce_coll.cc) replays that
// sequence; the copies run on the comm's emulated GPU stream like a kernel.
//
// The fake CUDA driver (tests/emulator/fake_cuda) is loaded before the
// plugin's first init unless --no-cuda: its events complete when the
// emulated stream reaches them, so the plugin's CE completion path runs as
// on a GPU; without it the plugin records CE ops with kFlagNoCompletion.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_CE_COLL_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_CE_COLL_H_

#include <stdint.h>

#include "emulator/src/options.h"
#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {

// The stream pointer NCCL would pass: stable and distinct per rank and
// stream (`index`: the rank's stream, 0 with --streams rank).
inline void* RankStream(int rank, int index = 0) {
  return reinterpret_cast<void*>(0x7f0000001000ULL + rank * 0x100ULL + index * 0x10ULL);
}

// Op number i runs as a CE collective: --ce, NCCL 2.29+, the schedule's TP
// AllGather (i % kPeriod == 1), on a TP comm of one node with 2+ ranks.
bool IsCeOp(const Options& opts, int64_t i, const CommInfo& comm);

// Loads the fake driver (no-op with --no-cuda, or when it is not built).
void LoadFakeCuda(const Options& opts);
// The emulated stream's progress, for the fake driver's events.
void FakeCudaEnqueued(void* stream);
void FakeCudaCompleted(void* stream);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_CE_COLL_H_

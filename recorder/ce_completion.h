// Completion of copy-engine (CE) collectives through CUDA events.
//
// NCCL starts and stops CeColl on the host while the copies are only being
// queued, and never calls recordEventState for it (docs/design/nccl.md
// §Copy-engine collectives): the only completion signal is the stream
// itself. This module records a CUDA event on the op's stream when CeColl
// starts (the stream reaches it: the op runs) and one when it stops (the
// stream passed every copy and sync of it: the op is done); the watchdog
// thread polls them (CePoll) and moves the record to kOpRunning / kOpDone.
//
// CUDA is never a link dependency: the driver (libcuda.so.1) is used only
// when the process already has it loaded (dlopen RTLD_NOLOAD), as every NCCL
// process does. Without it, or when the pool is exhausted, the plugin marks
// the op kFlagNoCompletion and the analyzer infers completion from stream
// order (docs/design/recorder.md §Copy-engine completion).
//
// Threads: CeArm/CeBind/CeAbandon/CeStop run on NCCL's user thread inside
// ncclLaunchCeColl (hot path: no lock, no allocation, no syscall, no
// exception, bounded work; cuEventRecord is asynchronous). CePoll runs on
// the watchdog thread only. Each pool entry has one owner at a time, handed
// over through its `state` word (see ce_completion.cc).
#ifndef FLIGHTREC_RECORDER_CE_COMPLETION_H_
#define FLIGHTREC_RECORDER_CE_COMPLETION_H_

#include <stdint.h>

namespace flightrec {
namespace rec {

constexpr int kCeNoEntry = -1;
// Pool size: CE collectives whose stop event has not been seen yet, across
// the process. More in flight get kFlagNoCompletion.
constexpr uint32_t kCePoolSize = 64;

// Slow path (comm init, on the thread that has NCCL's CUDA context current):
// finds the driver and creates the event pool, once per process. True when
// CE completion is available. `log` as recorder.h's LogFn (may be nullptr).
using CeLogFn = void (*)(int level, unsigned long flags, const char* file, int line,
                         const char* fmt, ...);
bool CeCompletionInit(CeLogFn log);
// True once CeCompletionInit succeeded (relaxed).
bool CeCompletionAvailable();

// Hot path. Claims a pool entry and records its start event on `stream`.
// kCeNoEntry when CUDA is not reachable, the pool is exhausted or the
// record failed: the op is then kFlagNoCompletion.
int CeArm(uint64_t stream);
// Hot path. The op recorded for the armed entry: (region, generation low 8
// bits, slot sequence). From here on the watchdog may see its start event.
void CeBind(int entry, uint32_t region, uint32_t generation_low8, uint64_t seq);
// Hot path. The op was not recorded (BeginOp declined): frees the entry.
void CeAbandon(int entry);
// Hot path. CeColl stop for the op of (region, seq): records the stop
// event on the entry's stream. The entry is found through the region's open
// CE op (NCCL starts and stops a comm's CeColl on one thread, never nested).
void CeStop(uint32_t region, uint64_t seq);

// Watchdog thread, and a comm's finalize (its CE ops that completed since
// the last poll are marked before it closes; not the hot path): queries the started entries' events
// and reports them to their communicators (CommRecorder::CeReached). `now` is the host time the
// completion is dated with.
void CePoll(uint64_t now);

// Test hooks: entries in use, and a reset of the process-wide state (the
// driver is looked up again at the next init).
uint32_t CeEntriesInUse();
void CeResetForTest();

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_CE_COMPLETION_H_

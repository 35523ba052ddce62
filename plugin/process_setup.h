// Process-wide plugin settings, set up once on the first init (slow path):
// the activation mask we ask NCCL for, and our pid cached for the PXN check.
#ifndef FLIGHTREC_PLUGIN_PROCESS_SETUP_H_
#define FLIGHTREC_PLUGIN_PROCESS_SETUP_H_

#include <stdint.h>

#include <atomic>

namespace flightrec {
namespace plugin {

// Events flightrec needs by default: ops (Coll, P2p), their API calls (user
// tag, stream, API time), completion (KernelCh: GPU timers; ProxyOp:
// network), and from API v7 (NCCL 2.31+) KernelPhase: where inside a
// symmetric kernel each channel is. See docs/plugin.md ("The activation
// mask, and why") for why each bit is in or out per NCCL version.
int DefaultEventMask(bool net_steps, int api_version);

// Parses NCCL_FLIGHTREC_EVENT_MASK / NCCL_FLIGHTREC_NET_STEPS once and
// caches our pid (refreshed in fork children). Idempotent, thread-safe.
void EnsureProcessSetup();

// The mask to write through init's eActivationMask: the override when
// NCCL_FLIGHTREC_EVENT_MASK is set (replaces the whole mask), else
// NCCL's current value OR our default bits for `api_version`. Remembers the
// result (WrittenMask). Slow path.
int MaskToWrite(int current_mask, int api_version);

// Slow path (init): remembers `event_mask` as g_live_mask when it is NCCL's
// global (see there).
void NoteLiveMask(const int* event_mask, int api_version);

// True when NCCL_FLIGHTREC_EVENT_MASK was set but is not an integer in
// [0, INT_MAX]; the default mask is used instead.
bool EventMaskEnvInvalid();

namespace detail {
// The activation mask the last accepted init wrote (MaskToWrite). Relaxed:
// a flag test against it (NoteUnaskedEvent) needs no other data.
extern std::atomic<int> g_written_mask;
// Our pid, written by EnsureProcessSetup (under pthread_once) and the atfork
// child handler; defined in process_setup.cc.
extern std::atomic<int32_t> g_pid;
// NCCL's own activation mask (init's eActivationMask, libnccl's
// ncclProfilerEventMask) when it is known to outlive every event: set at an
// API v7+ init in a process where libnccl is loaded (ncclGetVersion
// resolves), else nullptr. NCCL 2.31's RAS override rewrites that int
// job-wide; a Coll/P2p start reads it (relaxed, as NCCL writes it) to see
// whether KernelCh, the op's completion signal, is still asked for.
extern std::atomic<const int*> g_live_mask;
}  // namespace detail

// Hot path: one relaxed load (see g_written_mask).
inline int WrittenMask() { return detail::g_written_mask.load(std::memory_order_relaxed); }

// Hot path: no lock, no allocation, no syscall, no exception, bounded work
// (one relaxed load; getpid() is never called here). Relaxed: no other data
// hangs on the pid.
inline int32_t CachedPid() { return detail::g_pid.load(std::memory_order_relaxed); }

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_PROCESS_SETUP_H_

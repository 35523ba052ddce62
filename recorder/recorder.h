// The recorder's interface to the plugin: one process-wide ring file, one
// region per communicator, a watchdog that heartbeats and seals dumps.
//
// Layering: plugin/ (NCCL ABI adapters + event model) calls only what is
// declared here and in comm_recorder.h. The recorder knows nothing about NCCL
// descriptors; the plugin knows nothing about files, mmap or zstd.
//
// Threading: OpenComm/CloseComm are the slow path (may lock, allocate, make
// syscalls) and may run concurrently for different communicators. Everything
// in comm_recorder.h is the hot path (no lock, no allocation, no syscall, no
// exception, bounded work).
//
// Failure policy: nothing here aborts, exits or throws. Any failure is logged
// once through the LogFn and turns recording off for the communicator (or the
// process); callers get nullptr and carry on.
#ifndef FLIGHTREC_RECORDER_RECORDER_H_
#define FLIGHTREC_RECORDER_RECORDER_H_

#include <stdint.h>

#include "flightrec/record_format.h"

namespace flightrec {

// Same shape as NCCL's ncclDebugLogger_t; level values follow NCCL's
// ncclDebugLogLevel (0 none, 1 version, 2 warn, 3 info, 4 abort, 5 trace).
using LogFn = void (*)(int level, unsigned long flags, const char* file, int line, const char* fmt,
                       ...);

constexpr int kLogWarn = 2;
constexpr int kLogInfo = 3;
// NCCL's NCCL_INIT | NCCL_ENV subsystem flags would do; we log under "ALL".
constexpr unsigned long kLogFlags = ~0UL;

// Identity of one communicator, as NCCL's init (v4+) or, for v1-v3, the
// first Coll/P2p descriptor gives it.
struct CommIdentity {
  uint64_t comm_id = 0;        // commHash
  const char* name = nullptr;  // copied; may be nullptr
  int32_t rank = -1;
  int32_t nranks = 0;  // 0 = unknown (v1-v3)
  int32_t nnodes = 0;
  bool from_init = false;  // false: v1-v3, identity bound lazily
  int api_version = 0;     // 1..7, the ncclProfiler_vN NCCL chose
  // The plugin asked NCCL for KernelCh/ProxyOp events, so every op reports
  // its completion and the watchdog may judge it stuck. (The recorder also
  // sets this on the region at the first KernelCh/ProxyOp event.)
  bool completion_tracked = false;
  // The activation mask the plugin writes for this comm (NCCL's ncclProfile*
  // bits): RegionDesc::event_mask.
  uint32_t event_mask = 0;
};

class CommRecorder;  // defined in comm_recorder.h

// Opens (on first use, creating the ring file and starting the watchdog) the
// process recorder and claims a region for one communicator. Returns nullptr
// when recording is disabled or impossible; the reason has been logged once
// through `log` (which may be nullptr: then stderr is used, once).
CommRecorder* OpenComm(const CommIdentity& id, LogFn log);

// v1-v3: NCCL's init carries no identity; the plugin binds it at the first
// Coll/P2p event that names commHash/rank. Slow path, idempotent (only the
// first call takes effect).
void BindCommIdentity(CommRecorder* comm, uint64_t comm_id, const char* name, int32_t rank);

// Marks the region finalized (its data stays). The last CloseComm stops and
// joins the watchdog and optionally seals an exit dump, so nothing of ours
// runs after NCCL dlcloses the plugin; the ring mapping and the comm objects
// stay until the library is unloaded (lifetime rule: ring_slab.h), so an
// event racing the finalize writes into memory that is still ours. Safe on
// nullptr.
void CloseComm(CommRecorder* comm);

// Finds the live communicator recorder that owns region `region_index` with
// generation `generation_low8` (low 8 bits). Hot path: an array load and a
// compare. Returns nullptr for anything not ours (foreign PXN pointers
// decoded into garbage, finalized or reused regions).
CommRecorder* CommByRegion(uint32_t region_index, uint32_t generation_low8);

// Counts an event dropped before any communicator could be identified.
void CountProcessDrop(format::DropCause cause);

// Asks the watchdog to seal a dump soon (never blocks; the dump happens on the
// watchdog thread). Used by the optional signal handler and by tests.
void RequestDump(format::DumpReason reason, const char* detail);

// Records the profiler API version NCCL chose (first caller wins).
void NoteApiVersion(int api_version);

}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_RECORDER_H_

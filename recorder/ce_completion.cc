#include "recorder/ce_completion.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

#include "flightrec/record_format.h"
#include "recorder/atomics.h"
#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace rec {
namespace {

// The CUDA driver API as far as used here (cuda.h): CUresult is an int,
// CUevent and CUstream are opaque pointers.
using CuResult = int;
constexpr CuResult kCudaSuccess = 0;
constexpr CuResult kCudaNotReady = 600;        // CUDA_ERROR_NOT_READY
constexpr unsigned kEventDisableTiming = 0x2;  // CU_EVENT_DISABLE_TIMING
using EventCreateFn = CuResult (*)(void** event, unsigned flags);
using EventRecordFn = CuResult (*)(void* event, void* stream);
using EventQueryFn = CuResult (*)(void* event);

// One pool entry's owner, handed over through `state`:
//   kFree     nobody; CeArm claims it (compare-exchange)
//   kArmed    the user thread (start event recorded, op not yet known)
//   kBound    user thread may record the stop event; the watchdog queries
//             the start event
//   kStopped  the watchdog (queries start, then stop; frees it when done)
enum EntryState : uint32_t { kFree = 0, kArmed = 1, kBound = 2, kStopped = 3 };

struct Entry {
  uint32_t state;       // EntryState; release on hand-over, acquire to take
  uint32_t region;      // written by the user thread before kBound
  uint32_t generation;  // low 8 bits
  uint32_t running;     // watchdog's own: start event seen
  uint64_t seq;         // slot sequence of the op
  uint64_t stream;      // CUstream the events are recorded on
  void* start_event;    // created at init, never destroyed (process lifetime)
  void* stop_event;
};

Entry g_pool[kCePoolSize];
// Region -> entry + 1 of its CE op between CeColl start and stop (0: none).
// Written and read by the thread that launches the comm's CE ops.
uint32_t g_open[format::kMaxRegions];
uint32_t g_next = 0;       // relaxed: where CeArm starts looking
uint32_t g_available = 0;  // relaxed: 1 once the pool exists
EventRecordFn g_record = nullptr;
EventQueryFn g_query = nullptr;
pthread_mutex_t g_init_mu = PTHREAD_MUTEX_INITIALIZER;
// CePoll's callers (the watchdog, a finalizing comm): one at a time, so an
// entry is freed once.
pthread_mutex_t g_poll_mu = PTHREAD_MUTEX_INITIALIZER;
bool g_init_tried = false;  // under g_init_mu

void* FindDriverSymbol(void* lib, const char* name) {
  return lib != nullptr ? dlsym(lib, name) : nullptr;
}

}  // namespace

bool CeCompletionInit(CeLogFn log) {
  pthread_mutex_lock(&g_init_mu);
  if (g_init_tried) {
    pthread_mutex_unlock(&g_init_mu);
    return LoadRelaxed(&g_available) != 0;
  }
  g_init_tried = true;
  // Only a driver the process already has (NCCL loaded it): never load CUDA
  // into a process, never link it. The handle keeps a reference, so the
  // functions stay valid for the process lifetime.
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  auto create = reinterpret_cast<EventCreateFn>(FindDriverSymbol(lib, "cuEventCreate"));
  auto record = reinterpret_cast<EventRecordFn>(FindDriverSymbol(lib, "cuEventRecord"));
  auto query = reinterpret_cast<EventQueryFn>(FindDriverSymbol(lib, "cuEventQuery"));
  bool ok = create != nullptr && record != nullptr && query != nullptr;
  uint32_t made = 0;
  for (; ok && made < kCePoolSize; ++made) {
    Entry& e = g_pool[made];
    if (create(&e.start_event, kEventDisableTiming) != kCudaSuccess ||
        create(&e.stop_event, kEventDisableTiming) != kCudaSuccess) {
      ok = false;
    }
  }
  // Events already made stay allocated (a handful): destroying them would
  // need one more driver symbol for a path that only runs when CUDA fails.
  if (ok) {
    g_record = record;
    g_query = query;
    // Pairs with the acquire loads in CeArm / CeCompletionAvailable.
    __atomic_store_n(&g_available, 1u, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_init_mu);
  if (log != nullptr) {
    if (ok) {
      log(kLogInfo, kLogFlags, __FILE__, __LINE__,
          "flightrec: copy-engine collectives timed with CUDA events (%u in flight)", kCePoolSize);
    } else {
      log(kLogInfo, kLogFlags, __FILE__, __LINE__,
          "flightrec: no CUDA driver in the process (%s): copy-engine collectives are recorded "
          "without completion (kFlagNoCompletion)",
          lib == nullptr ? "libcuda.so.1 not loaded" : "event functions unusable");
    }
  }
  return ok;
}

bool CeCompletionAvailable() {
  // Pairs with the release store in CeCompletionInit.
  return __atomic_load_n(&g_available, __ATOMIC_ACQUIRE) != 0;
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
int CeArm(uint64_t stream) {
  // Pairs with the release store in CeCompletionInit: g_record and the
  // events are set once it reads 1.
  if (__atomic_load_n(&g_available, __ATOMIC_ACQUIRE) == 0) return kCeNoEntry;
  const uint32_t first = LoadRelaxed(&g_next);
  for (uint32_t k = 0; k < kCePoolSize; ++k) {
    const uint32_t i = (first + k) % kCePoolSize;
    Entry& e = g_pool[i];
    uint32_t expect = kFree;
    // Pairs with the release stores of kFree (CePoll, CeAbandon): the last
    // use of the entry happened before it was freed.
    if (!__atomic_compare_exchange_n(&e.state, &expect, uint32_t{kArmed}, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED)) {
      continue;
    }
    StoreRelaxed(&g_next, (i + 1) % kCePoolSize);
    e.stream = stream;
    if (g_record(e.start_event, reinterpret_cast<void*>(static_cast<uintptr_t>(stream))) !=
        kCudaSuccess) {
      // Pairs with the acquire exchange above (the next CeArm).
      __atomic_store_n(&e.state, uint32_t{kFree}, __ATOMIC_RELEASE);
      return kCeNoEntry;
    }
    return static_cast<int>(i);
  }
  return kCeNoEntry;  // every entry in flight
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void CeBind(int entry, uint32_t region, uint32_t generation_low8, uint64_t seq) {
  if (entry < 0 || static_cast<uint32_t>(entry) >= kCePoolSize) return;
  Entry& e = g_pool[entry];
  e.region = region;
  e.generation = generation_low8 & 0xffu;
  e.seq = seq;
  e.running = 0;
  if (region < format::kMaxRegions) StoreRelaxed(&g_open[region], static_cast<uint32_t>(entry) + 1);
  // Pairs with the acquire load in CePoll: the fields above are visible.
  __atomic_store_n(&e.state, uint32_t{kBound}, __ATOMIC_RELEASE);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void CeAbandon(int entry) {
  if (entry < 0 || static_cast<uint32_t>(entry) >= kCePoolSize) return;
  // Pairs with the acquire exchange in CeArm.
  __atomic_store_n(&g_pool[entry].state, uint32_t{kFree}, __ATOMIC_RELEASE);
}

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
void CeStop(uint32_t region, uint64_t seq) {
  if (region >= format::kMaxRegions) return;
  const uint32_t open = LoadRelaxed(&g_open[region]);
  if (open == 0) return;  // recorded without completion
  StoreRelaxed(&g_open[region], 0u);
  Entry& e = g_pool[open - 1];
  // The entry is still this op's while it is kBound (only the user thread
  // moves it on from there). Pairs with the release store in CeBind.
  if (__atomic_load_n(&e.state, __ATOMIC_ACQUIRE) != kBound || e.seq != seq) return;
  if (g_record(e.stop_event, reinterpret_cast<void*>(static_cast<uintptr_t>(e.stream))) !=
      kCudaSuccess) {
    return;  // stays kBound: the start event still reports the op running
  }
  // Pairs with the acquire load in CePoll: the stop event is recorded.
  __atomic_store_n(&e.state, uint32_t{kStopped}, __ATOMIC_RELEASE);
}

void CePoll(uint64_t now) {
  if (!CeCompletionAvailable()) return;
  pthread_mutex_lock(&g_poll_mu);
  for (uint32_t i = 0; i < kCePoolSize; ++i) {
    Entry& e = g_pool[i];
    // Pairs with the release stores in CeBind / CeStop.
    const uint32_t state = __atomic_load_n(&e.state, __ATOMIC_ACQUIRE);
    if (state != kBound && state != kStopped) continue;
    CommRecorder* comm = LookupComm(e.region, e.generation);
    if (comm == nullptr) {  // the comm was finalized (or aborted) with the op open
      // A late CeStop of it finds the entry re-armed for another op (state
      // or seq differ) and leaves it alone. Pairs with the acquire exchange
      // in CeArm.
      __atomic_store_n(&e.state, uint32_t{kFree}, __ATOMIC_RELEASE);
      continue;
    }
    if (e.running == 0) {
      const CuResult rc = g_query(e.start_event);
      if (rc == kCudaNotReady) continue;
      e.running = 1;
      if (rc == kCudaSuccess) comm->CeReached(e.seq, format::kOpRunning, now);
    }
    if (state != kStopped) continue;
    const CuResult rc = g_query(e.stop_event);
    if (rc == kCudaNotReady) continue;
    if (rc == kCudaSuccess) comm->CeReached(e.seq, format::kOpDone, now);
    // Pairs with the acquire exchange in CeArm.
    __atomic_store_n(&e.state, uint32_t{kFree}, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&g_poll_mu);
}

uint32_t CeEntriesInUse() {
  uint32_t n = 0;
  // Pairs with the release stores of state (test hook: a count only).
  for (const Entry& e : g_pool) n += __atomic_load_n(&e.state, __ATOMIC_ACQUIRE) != kFree ? 1 : 0;
  return n;
}

void CeResetForTest() {
  pthread_mutex_lock(&g_init_mu);
  g_init_tried = false;
  // Pairs with the acquire loads of g_available and state (test hook).
  __atomic_store_n(&g_available, 0u, __ATOMIC_RELEASE);
  for (Entry& e : g_pool) __atomic_store_n(&e.state, uint32_t{kFree}, __ATOMIC_RELEASE);
  for (uint32_t& o : g_open) StoreRelaxed(&o, 0u);
  pthread_mutex_unlock(&g_init_mu);
}

}  // namespace rec
}  // namespace flightrec

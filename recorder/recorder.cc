// The public entry points of recorder.h: process-recorder lifetime (first
// OpenComm creates it, last CloseComm tears it down), the exit and fork
// hooks, and the O(1) handle lookup.
#include "recorder/recorder.h"

#include <pthread.h>
#include <stdlib.h>

#include "recorder/atomics.h"
#include "recorder/comm_recorder.h"
#include "recorder/log.h"
#include "recorder/process_recorder.h"
#include "recorder/ring_slab.h"
#include "recorder/watchdog.h"

extern "C" int __cxa_atexit(void (*fn)(void*), void* arg, void* dso);
extern "C" void* __dso_handle __attribute__((visibility("hidden")));

namespace flightrec {

namespace rec {
uint32_t g_hot_enabled = 1;
}  // namespace rec

namespace {

// Guards g_process and every ProcessRecorder method. Never taken on the hot
// path nor by the watchdog thread.
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
ProcessRecorder* g_process = nullptr;
bool g_start_failed = false;  // sticky: the reason was logged once
bool g_forked_child = false;
bool g_child_logged = false;
int g_api_version = 0;
pthread_once_t g_hooks_once = PTHREAD_ONCE_INIT;

// Registered with __cxa_atexit and our own __dso_handle (what glibc's atexit
// does for a shared object): glibc runs it at exit or at our dlclose,
// whichever comes first, so it never runs after our code is gone. Calling
// atexit() directly is not enough under TSan, whose atexit interceptor drops
// the handle and calls into the unloaded plugin at exit.
void OnExit(void*) {
  pthread_mutex_lock(&g_mutex);
  if (g_process != nullptr && !g_forked_child) g_process->ExitHandler();
  pthread_mutex_unlock(&g_mutex);
}

// The library's destructor (dlclose, or exit after the exit handlers): frees
// the parked ring slabs, but only when no communicator is open (the lifetime
// rule in ring_slab.h says why that is when no event can reach them).
__attribute__((destructor)) void OnUnload() {
  pthread_mutex_lock(&g_mutex);
  if (g_process == nullptr) rec::FreeParkedSlabs();
  pthread_mutex_unlock(&g_mutex);
}

// Holding the mutex across fork() keeps the child's copy consistent.
void BeforeFork() { pthread_mutex_lock(&g_mutex); }
void AfterForkParent() { pthread_mutex_unlock(&g_mutex); }
void AfterForkChild() {
  g_forked_child = true;
  rec::StoreRelaxed(&rec::g_hot_enabled, 0u);
  // The child records nothing: no handle resolves any more (LookupComm finds
  // an empty table instead of testing g_hot_enabled on every event). The
  // child's only thread runs this before anything else, so relaxed stores do.
  for (uint32_t r = 0; r < format::kMaxRegions; ++r) {
    rec::StoreRelaxed(&rec::g_comm_table[r], static_cast<CommRecorder*>(nullptr));
  }
  if (g_process != nullptr) g_process->ForkChild();
  pthread_mutex_unlock(&g_mutex);
}

void InstallHooks() {
  __cxa_atexit(&OnExit, nullptr, &__dso_handle);
  pthread_atfork(&BeforeFork, &AfterForkParent, &AfterForkChild);
}

}  // namespace

CommRecorder* OpenComm(const CommIdentity& id, LogFn log) {
  pthread_once(&g_hooks_once, &InstallHooks);
  pthread_mutex_lock(&g_mutex);
  CommRecorder* c = nullptr;
  if (g_forked_child) {
    if (!g_child_logged) rec::Logf(log, kLogInfo, "not recording in a forked child process");
    g_child_logged = true;
  } else {
    if (g_process == nullptr && !g_start_failed) {
      if (id.api_version > 0 && g_api_version == 0) g_api_version = id.api_version;
      g_process = ProcessRecorder::Start(log, g_api_version);
      g_start_failed = g_process == nullptr;
    }
    if (g_process != nullptr) c = g_process->OpenComm(id, log);
  }
  pthread_mutex_unlock(&g_mutex);
  return c;
}

void BindCommIdentity(CommRecorder* comm, uint64_t comm_id, const char* name, int32_t rank) {
  if (comm == nullptr) return;
  pthread_mutex_lock(&g_mutex);
  if (g_process != nullptr && g_process->Owns(comm)) {
    g_process->BindIdentity(comm, comm_id, name, rank);
  }
  pthread_mutex_unlock(&g_mutex);
}

void CloseComm(CommRecorder* comm) {
  if (comm == nullptr) return;
  pthread_mutex_lock(&g_mutex);
  if (g_process != nullptr && g_process->Owns(comm) && g_process->CloseComm(comm)) {
    g_process->Shutdown();
    g_process = nullptr;
  }
  pthread_mutex_unlock(&g_mutex);
}

CommRecorder* CommByRegion(uint32_t region_index, uint32_t generation_low8) {
  return rec::LookupComm(region_index, generation_low8);  // inline for the plugin's hot path
}

void CountProcessDrop(format::DropCause cause) {
  // Hot path (any event thread): no lock. Drops seen while no ring exists
  // are kept and added to the next ring's header when it is created.
  const uint32_t c = static_cast<uint32_t>(cause);
  if (c >= format::kNumDropCauses) return;
  // Pairs with the release stores of g_live_header in ProcessRecorder.
  format::FileHeader* h = __atomic_load_n(&rec::g_live_header, __ATOMIC_ACQUIRE);
  rec::AddRelaxed(h != nullptr ? &h->drops[c] : &rec::g_pending_drops[c], uint64_t{1});
}

void RequestDump(format::DumpReason reason, const char* detail) {
  rec::PostDumpRequest(reason, detail);
}

void NoteApiVersion(int api_version) {
  if (api_version <= 0) return;
  pthread_mutex_lock(&g_mutex);
  if (g_api_version == 0) g_api_version = api_version;
  if (g_process != nullptr) g_process->SetApiVersion(g_api_version);
  pthread_mutex_unlock(&g_mutex);
}

}  // namespace flightrec

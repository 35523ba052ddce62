// A stand-in for the CUDA driver (libcuda.so.1) in emulated rank processes:
// the four event functions flightrec's copy-engine completion uses
// (recorder/ce_completion.cc), with events that complete when the emulated
// GPU stream they were recorded on (tests/emulator/src/rank_runtime.cc, a
// stream thread; one per comm with --streams comm, each its own key here)
// has finished every launch enqueued on it before the event was recorded,
// as cudaEventRecord/cuEventQuery behave on a real stream.
//
// Built as libcuda.so.1 (DT_SONAME libcuda.so.1), dlopened by the rank
// process before the plugin's first init, as NCCL loads the driver: the
// plugin's dlopen("libcuda.so.1", RTLD_NOLOAD) then finds it. The emulator
// reports its stream's progress through flightrec_fake_cuda_enqueued /
// _completed (tests/emulator/src/ce_coll.cc).
#include <stdint.h>

#include <atomic>

namespace {

constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;  // CUDA_ERROR_INVALID_VALUE
constexpr int kOutOfMemory = 2;   // CUDA_ERROR_OUT_OF_MEMORY
constexpr int kNotReady = 600;    // CUDA_ERROR_NOT_READY
constexpr int kMaxStreams = 16;

struct Stream {
  std::atomic<void*> key{nullptr};
  std::atomic<uint64_t> enqueued{0};
  std::atomic<uint64_t> completed{0};
};

struct Event {
  std::atomic<Stream*> stream{nullptr};  // nullptr: never recorded (complete)
  std::atomic<uint64_t> target{0};       // launches that must complete first
};

Stream g_streams[kMaxStreams];
// Events live in static storage (no heap: nothing for a leak checker to
// report when the plugin that made them is unloaded).
constexpr uint32_t kMaxEvents = 4096;
Event g_events[kMaxEvents];
std::atomic<uint32_t> g_events_made{0};

// The counters of `s`, made on first use.
Stream* Find(void* s) {
  for (Stream& st : g_streams) {
    void* k = st.key.load(std::memory_order_acquire);
    if (k == s) return &st;
    if (k == nullptr) {
      void* expect = nullptr;
      if (st.key.compare_exchange_strong(expect, s, std::memory_order_acq_rel) || expect == s) {
        return &st;
      }
    }
  }
  return nullptr;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int cuEventCreate(void** event, unsigned /*flags*/) {
  if (event == nullptr) return kInvalidValue;
  const uint32_t i = g_events_made.fetch_add(1, std::memory_order_relaxed);
  if (i >= kMaxEvents) return kOutOfMemory;
  *event = &g_events[i];
  return kSuccess;
}

__attribute__((visibility("default"))) int cuEventRecord(void* event, void* stream) {
  Event* e = static_cast<Event*>(event);
  Stream* s = Find(stream);
  if (e == nullptr || s == nullptr) return kInvalidValue;
  e->target.store(s->enqueued.load(std::memory_order_acquire), std::memory_order_relaxed);
  e->stream.store(s, std::memory_order_release);
  return kSuccess;
}

__attribute__((visibility("default"))) int cuEventQuery(void* event) {
  Event* e = static_cast<Event*>(event);
  if (e == nullptr) return kInvalidValue;
  Stream* s = e->stream.load(std::memory_order_acquire);
  if (s == nullptr) return kSuccess;
  return s->completed.load(std::memory_order_acquire) >= e->target.load(std::memory_order_relaxed)
             ? kSuccess
             : kNotReady;
}

__attribute__((visibility("default"))) int cuEventDestroy_v2(void* event) {
  // Static storage: an event is never reused, so a late query stays valid.
  return event != nullptr ? kSuccess : kInvalidValue;
}

__attribute__((visibility("default"))) int cuEventDestroy(void* event) {
  return cuEventDestroy_v2(event);
}

// The emulator's side: a launch was enqueued on / completed by `stream`.
__attribute__((visibility("default"))) void flightrec_fake_cuda_enqueued(void* stream) {
  if (Stream* s = Find(stream)) s->enqueued.fetch_add(1, std::memory_order_acq_rel);
}

__attribute__((visibility("default"))) void flightrec_fake_cuda_completed(void* stream) {
  if (Stream* s = Find(stream)) s->completed.fetch_add(1, std::memory_order_acq_rel);
}

}  // extern "C"

// A tiny profiler plugin for the emulator's loader and shim tests. Built
// twice: EMU_TEST_PLUGIN_V3 exports only ncclProfiler_v3; EMU_TEST_PLUGIN_MULTI
// exports v1, v3, v5 and v7. Each table's name says which one NCCL picked.
// It counts calls per event type in `emu_test_plugin_counts` (exported) and
// keeps the last Coll descriptor's seqNumber, so tests can look inside.
#include <stdint.h>

#include "plugin/nccl/profiler_abi.h"

namespace abi = flightrec::nccl_abi;

#define EXPORT extern "C" __attribute__((visibility("default")))

struct EmuTestCounts {
  int64_t inits;
  int64_t finalizes;
  int64_t starts[16];  // by event-type bit index
  int64_t records;
  int64_t stops;
  uint64_t last_coll_seq;
  uint64_t last_comm_hash;  // v5+/v4: from init
  int32_t api;
};

extern "C" {
__attribute__((visibility("default"))) EmuTestCounts emu_test_plugin_counts;
}

namespace {

int g_context_token = 0;
int g_fail_init = 0;  // EMU_TEST_FAIL_INIT=1 makes init return an error

int BitIndex(uint64_t type) {
  for (int i = 0; i < 16; ++i) {
    if (type == (1ULL << i)) return i;
  }
  return 15;
}

abi::Result Common(void** context, int* mask, int api) {
  __atomic_fetch_add(&emu_test_plugin_counts.inits, 1, __ATOMIC_RELAXED);
  emu_test_plugin_counts.api = api;
  *mask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh | abi::kProfileProxyOp;
  *context = &g_context_token;
  return g_fail_init ? abi::kInternalError : abi::kSuccess;
}

template <typename D>
abi::Result Start(void* context, void** handle, D* d) {
  __atomic_fetch_add(&emu_test_plugin_counts.starts[BitIndex(d->type)], 1, __ATOMIC_RELAXED);
  *handle = context == nullptr ? nullptr : reinterpret_cast<void*>(0x1000 + BitIndex(d->type));
  return abi::kSuccess;
}

template <typename D>
abi::Result StartColl(void* context, void** handle, D* d) {
  if (d->type == abi::kProfileColl) emu_test_plugin_counts.last_coll_seq = d->coll.seqNumber;
  return Start(context, handle, d);
}

abi::Result Stop(void*) {
  __atomic_fetch_add(&emu_test_plugin_counts.stops, 1, __ATOMIC_RELAXED);
  return abi::kSuccess;
}

template <typename A>
abi::Result Record(void*, abi::EventState, A*) {
  __atomic_fetch_add(&emu_test_plugin_counts.records, 1, __ATOMIC_RELAXED);
  return abi::kSuccess;
}

abi::Result Finalize(void*) {
  __atomic_fetch_add(&emu_test_plugin_counts.finalizes, 1, __ATOMIC_RELAXED);
  return abi::kSuccess;
}

[[maybe_unused]] abi::Result InitV1(void** c, int* m) { return Common(c, m, 1); }
abi::Result InitV3(void** c, int* m) { return Common(c, m, 3); }
[[maybe_unused]] abi::Result InitV5(void** c, uint64_t id, int* m, const char*, int, int, int,
                                    abi::DebugLogger) {
  emu_test_plugin_counts.last_comm_hash = id;
  return Common(c, m, 5);
}
[[maybe_unused]] abi::Result InitV7(void** c, uint64_t id, int* m, const char*, int, int, int,
                                    abi::DebugLogger) {
  emu_test_plugin_counts.last_comm_hash = id;
  return Common(c, m, 7);
}

}  // namespace

EXPORT void emu_test_plugin_fail_init(int fail) { g_fail_init = fail; }

#if defined(EMU_TEST_PLUGIN_V3) || defined(EMU_TEST_PLUGIN_MULTI)
EXPORT const abi::ProfilerV3 ncclProfiler_v3 = {
    "emutest-v3", InitV3, StartColl<abi::EventDescrV3>, Stop, Record<abi::StateArgsV3>, Finalize};
#endif
#if defined(EMU_TEST_PLUGIN_MULTI)
EXPORT const abi::ProfilerV1 ncclProfiler_v1 = {
    "emutest-v1", InitV1, StartColl<abi::EventDescrV1>, Stop, Record<abi::StateArgsV1>, Finalize};
EXPORT const abi::ProfilerV5 ncclProfiler_v5 = {
    "emutest-v5", InitV5, StartColl<abi::EventDescrV5>, Stop, Record<abi::StateArgsV5>, Finalize};
EXPORT const abi::ProfilerV7 ncclProfiler_v7 = {
    "emutest-v7", InitV7, StartColl<abi::EventDescrV7>, Stop, Record<abi::StateArgsV7>, Finalize};
#endif

// The do-nothing profiler plugin the hot-path benchmarks subtract: it exports
// ncclProfiler_v5 like flightrec does, and each entry point only writes the
// handle NCCL would store and returns ncclSuccess. What remains above it is
// the cost of recording.
#include "plugin/nccl/profiler_abi.h"

namespace {

namespace abi = flightrec::nccl_abi;

abi::Result NoopInit(void** context, uint64_t, int*, const char*, int, int, int, abi::DebugLogger) {
  static int dummy;
  *context = &dummy;
  return abi::kSuccess;
}

abi::Result NoopStart(void* context, void** handle, abi::EventDescrV5*) {
  *handle = context;
  return abi::kSuccess;
}

abi::Result NoopStop(void*) { return abi::kSuccess; }

abi::Result NoopRecord(void*, abi::EventState, abi::StateArgsV5*) { return abi::kSuccess; }

abi::Result NoopFinalize(void*) { return abi::kSuccess; }

}  // namespace

extern "C" __attribute__((visibility("default"))) const abi::ProfilerV5 ncclProfiler_v5 = {
    "noop", NoopInit, NoopStart, NoopStop, NoopRecord, NoopFinalize};

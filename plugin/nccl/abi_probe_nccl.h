// For abi_probe.cc built with -DFLIGHTREC_PROBE_NCCL: our type names as
// aliases of NCCL's own (from NCCL's ext-profiler/example/nccl/profiler.h,
// which declares every version), so the probe measures NCCL's layout.
// Pins of a version NCCL's checkout does not declare fail to compile: drop
// their lines from the probe's copy of the table, or use a newer checkout.
#ifndef FLIGHTREC_PLUGIN_NCCL_ABI_PROBE_NCCL_H_
#define FLIGHTREC_PLUGIN_NCCL_ABI_PROBE_NCCL_H_

#include <sys/types.h>

#include "profiler.h"  // NOLINT(build/include_subdir): NCCL's, from -I

using Result = ncclResult_t;
using EventState = ncclProfilerEventState_t;
#define FR_PROBE_NCCL_VERSION(n)                             \
  using EventDescrV##n = ncclProfilerEventDescr_v##n##_t;    \
  using StateArgsV##n = ncclProfilerEventStateArgs_v##n##_t; \
  using ProfilerV##n = ncclProfiler_v##n##_t;
FR_PROBE_NCCL_VERSION(1)
FR_PROBE_NCCL_VERSION(2)
FR_PROBE_NCCL_VERSION(3)
FR_PROBE_NCCL_VERSION(4)
FR_PROBE_NCCL_VERSION(5)
FR_PROBE_NCCL_VERSION(6)
FR_PROBE_NCCL_VERSION(7)
#undef FR_PROBE_NCCL_VERSION

#endif  // FLIGHTREC_PLUGIN_NCCL_ABI_PROBE_NCCL_H_

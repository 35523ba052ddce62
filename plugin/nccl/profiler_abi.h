// NCCL's profiler plugin ABI, every version v1..v7: the newest version's
// header, which includes each older one. What the plugin, the emulator and
// the tests include. docs/design/nccl.md §Profiler ABI.
#ifndef FLIGHTREC_PLUGIN_NCCL_PROFILER_ABI_H_
#define FLIGHTREC_PLUGIN_NCCL_PROFILER_ABI_H_

#include "plugin/nccl/profiler_v7.h"

#endif  // FLIGHTREC_PLUGIN_NCCL_PROFILER_ABI_H_

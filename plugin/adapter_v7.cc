// ncclProfiler_v7: NCCL 2.31+ (per-call user tag, kernel phases declined).
// The entry points are adapter_v5_family.h's, instantiated for v7.
#include "plugin/adapter_v5_family.h"

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV7 ncclProfiler_v7 = {
    flightrec::plugin::kPluginName,
    flightrec::plugin::InitV5Family<7>,
    flightrec::plugin::StartEventV5Family<flightrec::nccl_abi::EventDescrV7>,
    flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV5Family,
    flightrec::plugin::FinalizeAny};

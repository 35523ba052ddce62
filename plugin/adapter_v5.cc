// ncclProfiler_v5: NCCL 2.28 (API-level events: Coll parent is CollApi).
// The entry points are adapter_v5_family.h's, instantiated for v5.
#include "plugin/adapter_v5_family.h"

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV5 ncclProfiler_v5 = {
    flightrec::plugin::kPluginName,
    flightrec::plugin::InitV5Family<5>,
    flightrec::plugin::StartEventV5Family<flightrec::nccl_abi::EventDescrV5>,
    flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV5Family,
    flightrec::plugin::FinalizeAny};

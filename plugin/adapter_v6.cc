// ncclProfiler_v6: NCCL 2.29-2.30 (v5 plus copy-engine events, declined).
// The entry points are adapter_v5_family.h's, instantiated for v6.
#include "plugin/adapter_v5_family.h"

FLIGHTREC_EXPORT const flightrec::nccl_abi::ProfilerV6 ncclProfiler_v6 = {
    flightrec::plugin::kPluginName,
    flightrec::plugin::InitV5Family<6>,
    flightrec::plugin::StartEventV5Family<flightrec::nccl_abi::EventDescrV6>,
    flightrec::plugin::StopEventAny,
    flightrec::plugin::RecordEventStateV5Family,
    flightrec::plugin::FinalizeAny};

// The exported tables ncclProfiler_v1 .. _v7, one line each: the entry points
// of adapter_v1_family.h (v1-v4: Group-parented ops, identity in v1-v3
// descriptors) and adapter_v5_family.h (v5+: API-parented ops), instantiated
// for each version's table. What each version is: docs/design/nccl.md
// §Profiler ABI.
#include "plugin/adapter_v1_family.h"
#include "plugin/adapter_v5_family.h"

namespace abi = flightrec::nccl_abi;
namespace fp = flightrec::plugin;

// clang-format off
FLIGHTREC_EXPORT const abi::ProfilerV1 ncclProfiler_v1 = fp::V1FamilyTable<abi::ProfilerV1, 1>();
FLIGHTREC_EXPORT const abi::ProfilerV2 ncclProfiler_v2 = fp::V1FamilyTable<abi::ProfilerV2, 2>();
FLIGHTREC_EXPORT const abi::ProfilerV3 ncclProfiler_v3 = fp::V1FamilyTable<abi::ProfilerV3, 3>();
FLIGHTREC_EXPORT const abi::ProfilerV4 ncclProfiler_v4 = fp::V1FamilyTable<abi::ProfilerV4, 4>();
FLIGHTREC_EXPORT const abi::ProfilerV5 ncclProfiler_v5 = fp::V5FamilyTable<abi::ProfilerV5, 5>();
FLIGHTREC_EXPORT const abi::ProfilerV6 ncclProfiler_v6 = fp::V5FamilyTable<abi::ProfilerV6, 6>();
FLIGHTREC_EXPORT const abi::ProfilerV7 ncclProfiler_v7 = fp::V5FamilyTable<abi::ProfilerV7, 7>();
// clang-format on

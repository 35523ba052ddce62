// Names of the enumerations in record_format.h, and the mapping from NCCL's
// descriptor strings ("AllReduce", "ncclFloat32", "RING", "SIMPLE") to them.
// Shared by the plugin (slow path of string interning), the readers and the
// emulator. Every table is asserted to have one entry per enumerator.
#ifndef FLIGHTREC_RECORD_NAMES_H_
#define FLIGHTREC_RECORD_NAMES_H_

#include <stdint.h>

#include "flightrec/record_format.h"

namespace flightrec {
namespace format {

// Our display names, also the strings NCCL uses for the same thing.
constexpr const char* kFuncNames[] = {
    "Unknown", "Broadcast", "Reduce", "AllGather", "ReduceScatter", "AllReduce", "Send",
    "Recv",    "AlltoAll",  "Gather", "Scatter",   "SendRecv",      "AllGatherV"};
static_assert(sizeof(kFuncNames) / sizeof(kFuncNames[0]) == kNumFuncs, "one name per Func");

// NCCL's datatype strings; NCCL reports ncclUint8 as "Unknown" (a quirk we
// map back to kTypeUint8 only when told by the v1 enum).
constexpr const char* kDataTypeNames[] = {
    "Unknown",      "ncclInt8",       "ncclUint8",     "ncclInt32",   "ncclUint32",
    "ncclInt64",    "ncclUint64",     "ncclFloat16",   "ncclFloat32", "ncclFloat64",
    "ncclBfloat16", "ncclFloat8e4m3", "ncclFloat8e5m2"};
static_assert(sizeof(kDataTypeNames) / sizeof(kDataTypeNames[0]) == kNumDataTypes,
              "one name per DataType");

constexpr uint8_t kDataTypeSizes[] = {0, 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
static_assert(sizeof(kDataTypeSizes) == kNumDataTypes, "one size per DataType");

constexpr const char* kAlgoNames[] = {"Unknown",       "TREE",  "RING",      "COLLNET_DIRECT",
                                      "COLLNET_CHAIN", "NVLS",  "NVLS_TREE", "PAT",
                                      "CE_MC",         "CE_UC", "SYMK"};
static_assert(sizeof(kAlgoNames) / sizeof(kAlgoNames[0]) == kNumAlgos, "one name per Algo");

constexpr const char* kProtoNames[] = {"Unknown", "LL", "LL128", "SIMPLE"};
static_assert(sizeof(kProtoNames) / sizeof(kProtoNames[0]) == kNumProtos, "one name per Proto");

// KernelVariant display names: NCCL's ncclSymkKernelId without the function
// (the record's func says which; AllGather's and ReduceScatter's "LL" differ
// only by it).
constexpr const char* kKernelVariantNames[] = {
    "",   "other", "AGxLL_R", "AGxLLMC_R", "RSxLD_AGxST", "RSxLDMC_AGxSTMC", "RSxTmaLD_AGxTmaST",
    "LL", "LLMC",  "ST",      "STMC",      "TmaST",       "TmaSTMC",         "LL",
    "LD", "LDMC"};
static_assert(sizeof(kKernelVariantNames) / sizeof(kKernelVariantNames[0]) == kNumKernelVariants,
              "one name per KernelVariant");

// KernelPhase names, as NCCL's `phaseName` spells them.
constexpr const char* kKernelPhaseNames[] = {"initial_sync", "compute", "final_sync"};
static_assert(sizeof(kKernelPhaseNames) / sizeof(kKernelPhaseNames[0]) == kNumKernelPhases,
              "one name per KernelPhase");

constexpr const char* kOpStateNames[] = {"none", "enqueued", "running", "done"};
static_assert(sizeof(kOpStateNames) / sizeof(kOpStateNames[0]) == kNumOpStates,
              "one name per OpState");

constexpr const char* kDropCauseNames[] = {
    "no_region",     "null_context",   "foreign_handle", "stale_handle",
    "unknown_event", "bad_descriptor", "after_finalize", "disabled",
    "no_api_slot",   "pxn_foreign",    "reserved10",     "reserved11",
    "reserved12",    "reserved13",     "reserved14",     "reserved15"};
static_assert(sizeof(kDropCauseNames) / sizeof(kDropCauseNames[0]) == kNumDropCauses,
              "one name per DropCause slot");

// DumpReason names (`flightrec show`, the analyzer's evidence notes, the
// plugin's log lines); a value this version does not know reads "unknown".
constexpr const char* kDumpReasonNames[] = {"none", "timeout", "trigger", "exit", "request"};
static_assert(sizeof(kDumpReasonNames) / sizeof(kDumpReasonNames[0]) == kDumpRequest + 1,
              "one name per DumpReason");

namespace detail {
inline bool StrEq(const char* a, const char* b) {
  if (a == nullptr || b == nullptr) return false;
  while (*a != '\0' && *a == *b) {
    ++a;
    ++b;
  }
  return *a == *b;
}
template <typename E, unsigned N>
inline E Lookup(const char* const (&names)[N], const char* s) {
  for (unsigned i = 1; i < N; ++i) {
    if (StrEq(names[i], s)) return static_cast<E>(i);
  }
  return static_cast<E>(0);
}
}  // namespace detail

// Slow-path string -> enum lookups (the plugin caches results by pointer).
inline Func FuncFromName(const char* s) { return detail::Lookup<Func>(kFuncNames, s); }
inline DataType DataTypeFromName(const char* s) {
  return detail::Lookup<DataType>(kDataTypeNames, s);
}
inline Algo AlgoFromName(const char* s) { return detail::Lookup<Algo>(kAlgoNames, s); }
inline Proto ProtoFromName(const char* s) { return detail::Lookup<Proto>(kProtoNames, s); }

template <typename E, unsigned N>
inline const char* NameOf(const char* const (&names)[N], E value) {
  unsigned i = static_cast<unsigned>(value);
  return i < N ? names[i] : names[0];
}

inline const char* FuncName(uint8_t f) { return NameOf(kFuncNames, f); }
inline const char* DataTypeName(uint8_t t) { return NameOf(kDataTypeNames, t); }
inline const char* AlgoName(uint8_t a) { return NameOf(kAlgoNames, a); }
inline const char* ProtoName(uint8_t p) { return NameOf(kProtoNames, p); }
inline const char* OpStateName(uint8_t s) { return NameOf(kOpStateNames, s); }
inline const char* DumpReasonName(uint32_t r) {
  return r < sizeof(kDumpReasonNames) / sizeof(kDumpReasonNames[0]) ? kDumpReasonNames[r]
                                                                    : "unknown";
}
inline uint8_t DataTypeSize(uint8_t t) { return t < kNumDataTypes ? kDataTypeSizes[t] : 0; }

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_RECORD_NAMES_H_

#include "plugin/enum_map.h"

#include <atomic>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace plugin {
namespace {

// Each slot packs (pointer << 8) | enum value into one word, so a reader
// sees either an empty slot or a complete entry: relaxed ordering is enough
// because nothing else is published through the slot.
constexpr int kNameCacheSlots = 16;
constexpr uint64_t kPtrLimit = uint64_t{1} << 56;

std::atomic<uint64_t> g_cache[static_cast<int>(NameKind::kCount)][kNameCacheSlots];

uint8_t LookupSlow(NameKind kind, const char* name) {
  switch (kind) {
    case NameKind::kFunc:
      return format::FuncFromName(name);
    case NameKind::kDataType:
      return format::DataTypeFromName(name);
    case NameKind::kAlgo:
      return format::AlgoFromName(name);
    default:
      return format::ProtoFromName(name);
  }
}

// Slow path: strcmp against the name tables, then remember the pointer in
// the first free slot (a full cache just stays full; lookups still work).
const char* CanonicalName(NameKind kind, uint8_t value) {
  switch (kind) {
    case NameKind::kFunc:
      return format::FuncName(value);
    case NameKind::kDataType:
      return format::DataTypeName(value);
    case NameKind::kAlgo:
      return format::AlgoName(value);
    default:
      return format::ProtoName(value);
  }
}

__attribute__((noinline, cold)) uint8_t MapNameSlow(NameKind kind, const char* name) {
  const uint8_t value = LookupSlow(kind, name);
  const uint64_t ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  if (ptr >= kPtrLimit) return value;
  const uint64_t entry = (ptr << 8) | value;
  std::atomic<uint64_t>* slots = g_cache[static_cast<int>(kind)];
  for (int i = 0; i < kNameCacheSlots; ++i) {
    uint64_t expected = 0;
    // Relaxed: the entry is self-contained (see g_cache).
    if (slots[i].compare_exchange_strong(expected, entry, std::memory_order_relaxed)) break;
    if (expected == entry) break;  // another thread cached the same pointer
  }
  return value;
}

}  // namespace

// Hot path: no lock, no allocation, no syscall, no exception, bounded work.
uint8_t MapName(NameKind kind, const char* name) {
  if (name == nullptr) return 0;
  const uint64_t ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  const std::atomic<uint64_t>* slots = g_cache[static_cast<int>(kind)];
  for (int i = 0; i < kNameCacheSlots; ++i) {
    const uint64_t entry = slots[i].load(std::memory_order_relaxed);  // self-contained entry
    if (entry == 0) break;
    if ((entry >> 8) == ptr) {
      const uint8_t value = static_cast<uint8_t>(entry & 0xff);
      // One byte of insurance against a pointer that was freed and reused for
      // another string (NCCL passes static strings; a host might not).
      if (value == 0 || name[0] == CanonicalName(kind, value)[0]) return value;
      return LookupSlow(kind, name);
    }
  }
  return MapNameSlow(kind, name);
}

uint8_t MapV1Func(uint8_t code) {
  // ncclFunc_t: Broadcast, Reduce, AllGather, ReduceScatter, AllReduce,
  // SendRecv, Send, Recv.
  static constexpr uint8_t kMap[] = {format::kFuncBroadcast, format::kFuncReduce,
                                     format::kFuncAllGather, format::kFuncReduceScatter,
                                     format::kFuncAllReduce, format::kFuncSendRecv,
                                     format::kFuncSend,      format::kFuncRecv};
  return code < sizeof(kMap) ? kMap[code] : uint8_t{0};  // 0 = unknown
}

uint8_t MapV1DataType(uint8_t code) {
  // ncclDataType_t: Int8, Uint8, Int32, Uint32, Int64, Uint64, Float16,
  // Float32, Float64, Bfloat16, Float8e4m3, Float8e5m2.
  static constexpr uint8_t kMap[] = {
      format::kTypeInt8,     format::kTypeUint8,      format::kTypeInt32,
      format::kTypeUint32,   format::kTypeInt64,      format::kTypeUint64,
      format::kTypeFloat16,  format::kTypeFloat32,    format::kTypeFloat64,
      format::kTypeBfloat16, format::kTypeFloat8e4m3, format::kTypeFloat8e5m2};
  return code < sizeof(kMap) ? kMap[code] : uint8_t{0};  // 0 = unknown
}

uint8_t MapV1Algo(uint8_t code) {
  // NCCL_ALGO_*: TREE, RING, COLLNET_DIRECT, COLLNET_CHAIN, NVLS, NVLS_TREE, PAT.
  static constexpr uint8_t kMap[] = {
      format::kAlgoTree,         format::kAlgoRing, format::kAlgoCollnetDirect,
      format::kAlgoCollnetChain, format::kAlgoNvls, format::kAlgoNvlsTree,
      format::kAlgoPat};
  return code < sizeof(kMap) ? kMap[code] : uint8_t{0};  // 0 = unknown
}

uint8_t MapV1Proto(uint8_t code) {
  // NCCL_PROTO_*: LL, LL128, SIMPLE.
  static constexpr uint8_t kMap[] = {format::kProtoLL, format::kProtoLL128, format::kProtoSimple};
  return code < sizeof(kMap) ? kMap[code] : uint8_t{0};  // 0 = unknown
}

}  // namespace plugin
}  // namespace flightrec

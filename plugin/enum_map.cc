#include "plugin/enum_map.h"

#include <link.h>
#include <string.h>

#include <atomic>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace plugin {
namespace detail {

std::atomic<uint64_t> g_name_cache[static_cast<int>(NameKind::kCount)][kNameCacheSlots];
std::atomic<uint64_t> g_static_names{0};

}  // namespace detail

namespace {

constexpr uint64_t kPtrLimit = uint64_t{1} << (64 - detail::kNameEntryShift);

uint8_t LookupSlow(NameKind kind, const char* name) {
  switch (kind) {
    case NameKind::kFunc:
      return format::FuncFromName(name);
    case NameKind::kDataType:
      return format::DataTypeFromName(name);
    case NameKind::kAlgo:
      return format::AlgoFromName(name);
    case NameKind::kVariant:
      return VariantFromName(name);
    default:
      return format::ProtoFromName(name);
  }
}

}  // namespace

// Slow path: strcmp against the name tables, then remember the pointer in
// the first free slot of its probe sequence, or refresh the slot that holds
// the same pointer with another NameKey (the pointer now names another
// string). A full table just stays full; lookups still work.
__attribute__((noinline, cold)) uint8_t detail::MapNameSlow(NameKind kind, const char* name) {
  const uint8_t value = LookupSlow(kind, name);
  const uint64_t ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  if (ptr >= kPtrLimit) return value;
  static_assert(format::kNumFuncs <= 16 && format::kNumDataTypes <= 16 && format::kNumAlgos <= 16 &&
                    format::kNumProtos <= 16 && format::kNumKernelVariants <= 16,
                "every value fits kNameValueMask");
  const uint64_t entry =
      (ptr << kNameEntryShift) | (uint64_t{NameKey(name)} << kNameKeyShift) | value;
  std::atomic<uint64_t>* slots = g_name_cache[static_cast<int>(kind)];
  uint32_t i = NameHome(ptr);
  for (uint32_t n = 0; n < kNameCacheSlots; ++n) {
    uint64_t expected = 0;
    // Relaxed: the entry is self-contained (see g_name_cache).
    if (slots[i].compare_exchange_strong(expected, entry, std::memory_order_relaxed)) break;
    if (expected == entry) break;  // another thread cached the same pointer
    if ((expected >> kNameEntryShift) == ptr) {
      // Same pointer, another string: replace the entry in place (the slot
      // stays non-empty, so no probe sequence is cut). Losing a race to
      // another thread's refresh is harmless.
      slots[i].compare_exchange_strong(expected, entry, std::memory_order_relaxed);
      break;
    }
    i = (i + 1) & (kNameCacheSlots - 1);
  }
  return value;
}

namespace {

struct StaticImage {
  uintptr_t anchor = 0;
  uint64_t packed = 0;  // g_static_names' encoding, 0 = not found
};

// dl_iterate_phdr callback: the object whose PT_LOAD segments contain the
// anchor gives the span of its read-only segments, shrunk to whole pages.
int FindStaticImage(struct dl_phdr_info* info, size_t, void* data) {
  StaticImage* img = static_cast<StaticImage*>(data);
  bool holds_anchor = false;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    const uintptr_t end = begin + ph.p_memsz;
    if (img->anchor >= begin && img->anchor < end) holds_anchor = true;
    if ((ph.p_flags & PF_W) == 0) {
      if (begin < lo) lo = begin;
      if (end > hi) hi = end;
    }
  }
  if (!holds_anchor) return 0;                  // next object
  for (int i = 0; i < info->dlpi_phnum; ++i) {  // a writable segment inside: trust nothing
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && (ph.p_flags & PF_W) != 0 && begin < hi && begin + ph.p_memsz > lo) {
      return 1;
    }
  }
  constexpr uintptr_t kPage = uintptr_t{1} << detail::kStaticPageShift;
  const uint64_t first = (lo + kPage - 1) >> detail::kStaticPageShift;
  const uint64_t last = hi >> detail::kStaticPageShift;  // exclusive
  if (lo < hi && first < last && last - first <= detail::kStaticPagesMask &&
      first < (uint64_t{1} << (64 - detail::kStaticPagesBits))) {
    img->packed = (first << detail::kStaticPagesBits) | (last - first);
  }
  return 1;
}

}  // namespace

void TrustNamesOfObjectAt(const void* anchor) {
  if (anchor == nullptr) return;
  StaticImage img;
  img.anchor = reinterpret_cast<uintptr_t>(anchor);
  dl_iterate_phdr(FindStaticImage, &img);
  if (img.packed != 0) detail::g_static_names.store(img.packed, std::memory_order_relaxed);
}

uint8_t VariantFromName(const char* name) {
  if (name == nullptr || name[0] == '\0') return format::kVariantNone;
  // "<Func>_<variant>": the function picks the group (AllGather's and
  // ReduceScatter's "LL" are different kernels), the rest the variant.
  struct Entry {
    format::Func func;
    const char* variant;
    format::KernelVariant code;
  };
  static constexpr Entry kEntries[] = {
      {format::kFuncAllReduce, "AGxLL_R", format::kVariantAGxLL_R},
      {format::kFuncAllReduce, "AGxLLMC_R", format::kVariantAGxLLMC_R},
      {format::kFuncAllReduce, "RSxLD_AGxST", format::kVariantRSxLD_AGxST},
      {format::kFuncAllReduce, "RSxLDMC_AGxSTMC", format::kVariantRSxLDMC_AGxSTMC},
      {format::kFuncAllReduce, "RSxTmaLD_AGxTmaST", format::kVariantRSxTmaLD_AGxTmaST},
      {format::kFuncAllGather, "LL", format::kVariantAllGatherLL},
      {format::kFuncAllGather, "LLMC", format::kVariantAllGatherLLMC},
      {format::kFuncAllGather, "ST", format::kVariantAllGatherST},
      {format::kFuncAllGather, "STMC", format::kVariantAllGatherSTMC},
      {format::kFuncAllGather, "TmaST", format::kVariantAllGatherTmaST},
      {format::kFuncAllGather, "TmaSTMC", format::kVariantAllGatherTmaSTMC},
      {format::kFuncReduceScatter, "LL", format::kVariantReduceScatterLL},
      {format::kFuncReduceScatter, "LD", format::kVariantReduceScatterLD},
      {format::kFuncReduceScatter, "LDMC", format::kVariantReduceScatterLDMC},
  };
  const char* sep = strchr(name, '_');
  if (sep == nullptr) return format::kVariantOther;
  char func[24];
  const size_t n = static_cast<size_t>(sep - name);
  if (n >= sizeof(func)) return format::kVariantOther;
  memcpy(func, name, n);
  func[n] = '\0';
  const format::Func f = format::FuncFromName(func);
  for (const Entry& e : kEntries) {
    if (e.func == f && strcmp(e.variant, sep + 1) == 0) return e.code;
  }
  return format::kVariantOther;
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

// NCCL descriptor values -> format:: enums.
//
// v2+ descriptors name func/datatype/algo/proto with strings that point into
// libnccl's static tables, so the same few pointers repeat forever. Each
// category keeps a tiny lock-free hash table keyed by the pointer value (the
// lookup is inline: a Coll start maps four names); a miss takes the strcmp
// slow path (out of line) once per distinct pointer. v1 descriptors carry
// NCCL's own uint8_t codes, mapped through fixed tables.
#ifndef FLIGHTREC_PLUGIN_ENUM_MAP_H_
#define FLIGHTREC_PLUGIN_ENUM_MAP_H_

#include <stdint.h>
#include <string.h>

#include <atomic>

namespace flightrec {
namespace plugin {

// kVariant: API v7 `coll.kernelVariant` ("AllReduce_AGxLL_R") -> format::KernelVariant.
enum class NameKind : uint8_t {
  kFunc = 0,
  kDataType = 1,
  kAlgo = 2,
  kProto = 3,
  kVariant = 4,
  kCount = 5
};

namespace detail {

// Open addressing, linear probing, no deletion: an entry sits at or after
// its home slot (NameHome) with no empty slot in between, so a probe stops
// at the first empty slot. Each slot packs
//   (pointer << 16) | (NameKey << 4) | enum value
// into one word (pointers of NCCL's static strings are below 2^48, every
// enum has at most 16 values), so a reader sees either an empty slot or a
// complete entry: relaxed ordering is enough because nothing else is
// published through the slot.
constexpr uint32_t kNameCacheSlots = 16;  // power of two
constexpr int kNameEntryShift = 16;
constexpr int kNameKeyShift = 4;
constexpr uint64_t kNameValueMask = (uint64_t{1} << kNameKeyShift) - 1;
constexpr uint32_t kNameKeyScan = 32;  // bytes NameKey looks at, at most
extern std::atomic<uint64_t> g_name_cache[static_cast<int>(NameKind::kCount)][kNameCacheSlots];

inline uint32_t NameHome(uint64_t ptr) {
  return static_cast<uint32_t>((ptr ^ (ptr >> 4) ^ (ptr >> 9)) & (kNameCacheSlots - 1));
}

// What a cache entry remembers of its string besides the pointer, 12 bits:
// the length (mod 16) and the last character. Within each kind every name
// NCCL uses (record_names.h) has a key of its own, checked by
// EnumMapTest.EveryNameOfAKindHasItsOwnKey, so a cached pointer that now
// holds another of those names is looked up again. Bounded: at most
// kNameKeyScan bytes, read up to the first NUL.
inline uint32_t NameKey(const char* name) {
  const uint32_t n = static_cast<uint32_t>(strnlen(name, kNameKeyScan));  // libc: vectorized
  const uint32_t last = n > 0 ? static_cast<unsigned char>(name[n - 1]) : 0u;
  return ((n & 0xfu) << 8) | last;
}

// Not cached (or the cached pointer now holds another string): strcmp
// against the name tables, then cache the pointer. Out of line, cold.
uint8_t MapNameSlow(NameKind kind, const char* name);

// NCCL's read-only image (TrustNamesOfObjectAt): the pages of the object that
// holds NCCL's code, where its static name strings live. Packed in one word,
// (first page << kStaticPagesBits) | page count, 4 KiB pages; 0 = none. A
// string there cannot change while NCCL is loaded, so a cached pointer into
// it needs no NameKey check. Relaxed: the word is self-contained.
constexpr int kStaticPageShift = 12;
constexpr int kStaticPagesBits = 28;
constexpr uint64_t kStaticPagesMask = (uint64_t{1} << kStaticPagesBits) - 1;
extern std::atomic<uint64_t> g_static_names;

inline bool InStaticNames(uint64_t ptr) {
  const uint64_t r = g_static_names.load(std::memory_order_relaxed);
  return (ptr >> kStaticPageShift) - (r >> kStaticPagesBits) < (r & kStaticPagesMask);
}

}  // namespace detail

// Slow path (init): trusts the read-only pages of the loaded object that
// contains `anchor` (NCCL's logger, which lives in NCCL's own object: libnccl
// or the library that links it statically). Only whole pages of PT_LOAD
// segments without write permission, and only when no writable segment lies
// between them. Does nothing when `anchor` is in no object.
void TrustNamesOfObjectAt(const void* anchor);

// Hot path: no lock, no allocation, no syscall, no exception, bounded work
// (at most kNameCacheSlots relaxed loads and kNameKeyScan bytes; a miss runs the bounded strcmp
// slow path once per distinct pointer). Returns 0 (the format's "unknown")
// for NULL or unrecognised strings.
inline uint8_t MapName(NameKind kind, const char* name) {
  if (name == nullptr) return 0;
  const uint64_t ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(name));
  const std::atomic<uint64_t>* slots = detail::g_name_cache[static_cast<int>(kind)];
  uint32_t i = detail::NameHome(ptr);
  for (uint32_t n = 0; n < detail::kNameCacheSlots; ++n) {
    const uint64_t entry = slots[i].load(std::memory_order_relaxed);  // self-contained entry
    if (entry == 0) break;
    if ((entry >> detail::kNameEntryShift) == ptr) {
      // Insurance against a pointer that was freed and reused for another
      // string (NCCL passes static strings; a host might not), except in
      // NCCL's read-only image, where no string changes.
      const uint64_t key = (entry & 0xffffu) >> detail::kNameKeyShift;
      if (detail::InStaticNames(ptr) || key == detail::NameKey(name)) {
        return static_cast<uint8_t>(entry & detail::kNameValueMask);
      }
      break;
    }
    i = (i + 1) & (detail::kNameCacheSlots - 1);
  }
  return detail::MapNameSlow(kind, name);
}

// NCCL's symmetric kernel name (ncclSymkKernelIdToString: "<Func>_<variant>",
// e.g. "AllReduce_AGxLL_R", "AllGather_LL") -> format::KernelVariant:
// kVariantNone for NULL or "", kVariantOther for a name the format does not
// know. The slow path behind MapName(NameKind::kVariant, ...). Variant names
// do not all have keys of their own (NameKey: "AllGather_LLMC" and
// "AllGather_STMC"); the key is insurance against a reused pointer, and
// NCCL's names are static strings.
uint8_t VariantFromName(const char* name);

// v1 codes (nccl_abi::v1) -> format enums; out-of-range codes give 0.
uint8_t MapV1Func(uint8_t code);
uint8_t MapV1DataType(uint8_t code);
uint8_t MapV1Algo(uint8_t code);
uint8_t MapV1Proto(uint8_t code);

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_ENUM_MAP_H_

// Event handles and contexts as tagged integers, never pointers.
//
// NCCL stores whatever we write to *context / *eHandle and hands it back
// later, sometimes after the op it named is long gone (graph replays, stale
// thread-local CollApi handles) and sometimes from another process (PXN: a
// foreign context and parent). A pointer would have to be dereferenced to be
// validated; an integer can be checked first:
//
//   63   60 59          52 51          40 39                              0
//   +------+--------------+--------------+--------------------------------+
//   | kind | generation&ff |   region     |            payload             |
//   +------+--------------+--------------+--------------------------------+
//
// kind != 0, so a handle is never NULL and never a canonical user-space
// pointer (those have the top 17 bits clear). region + generation resolve
// through CommByRegion(), which returns nullptr for anything not live.
#ifndef FLIGHTREC_PLUGIN_HANDLE_H_
#define FLIGHTREC_PLUGIN_HANDLE_H_

#include <stdint.h>

namespace flightrec {
namespace plugin {

enum class HandleKind : uint8_t {
  kInvalid = 0,        // not ours (NULL, a foreign pointer, garbage)
  kContext = 1,        // init's *context: payload unused
  kApi = 2,            // CollApi/P2pApi: payload = ApiCall token
  kOp = 3,             // Coll/P2p: payload = slot sequence
  kKernelTimed = 4,    // KernelCh, API v4+: stop time comes in KernelChStop
  kKernelUntimed = 5,  // KernelCh, API v3: stopEvent is the stop, no timer
  kProxyOp = 6,        // payload = slot sequence of the parent op
  kProxyStep = 7,      // payload = slot sequence of the grandparent op
  kKernelPhase = 8,    // KernelPhase (v7): payload = slot sequence of the op
  kCeColl = 9,         // CeColl (v6+): payload = slot sequence (plugin/ce_events.h)
  kMaxKind = 9,
};

constexpr int kKindShift = 60;
constexpr int kGenShift = 52;
constexpr int kRegionShift = 40;
constexpr uint64_t kGenMask = 0xff;
constexpr uint64_t kRegionMask = 0xfff;
constexpr uint64_t kPayloadMask = (uint64_t{1} << kRegionShift) - 1;

struct DecodedHandle {
  HandleKind kind = HandleKind::kInvalid;
  uint32_t generation_low8 = 0;
  uint32_t region = 0;
  uint64_t payload = 0;
};

// Payloads wider than 40 bits are truncated; a truncated slot sequence then
// fails the recorder's commit check and is counted stale, never misapplied
// (2^40 ops per communicator is ~35 years at 1000 ops/s).
inline uint64_t EncodeHandle(HandleKind kind, uint32_t generation_low8, uint32_t region,
                             uint64_t payload) {
  return (static_cast<uint64_t>(kind) << kKindShift) | ((generation_low8 & kGenMask) << kGenShift) |
         ((region & kRegionMask) << kRegionShift) | (payload & kPayloadMask);
}

inline void* HandleToPtr(uint64_t h) { return reinterpret_cast<void*>(static_cast<uintptr_t>(h)); }

inline DecodedHandle DecodeHandle(const void* p) {
  const uint64_t h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
  DecodedHandle d;
  const uint64_t kind = h >> kKindShift;
  if (kind == 0 || kind > static_cast<uint64_t>(HandleKind::kMaxKind)) return d;
  d.kind = static_cast<HandleKind>(kind);
  d.generation_low8 = static_cast<uint32_t>((h >> kGenShift) & kGenMask);
  d.region = static_cast<uint32_t>((h >> kRegionShift) & kRegionMask);
  d.payload = h & kPayloadMask;
  return d;
}

// Raw accessors for the hot path (plugin/event_model_inl.h): the same fields
// as DecodeHandle, without building a DecodedHandle.
constexpr uint64_t kKindBits = uint64_t{0xf} << kKindShift;
// generation + region: the bits that name the owning communicator.
constexpr uint64_t kOwnerBits = (kGenMask << kGenShift) | (kRegionMask << kRegionShift);

inline uint64_t HandleBits(const void* p) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p));
}
// kInvalid for a kind nibble of 0 or above kMaxKind, as DecodeHandle.
inline HandleKind HandleKindOf(uint64_t h) {
  const uint64_t kind = h >> kKindShift;
  return kind <= static_cast<uint64_t>(HandleKind::kMaxKind) ? static_cast<HandleKind>(kind)
                                                             : HandleKind::kInvalid;
}
// True when `h` is a handle of kind `want` (never true for kInvalid, which
// is only ever a result, never a wanted kind).
inline bool HasKind(uint64_t h, HandleKind want) {
  return (h >> kKindShift) == static_cast<uint64_t>(want);
}
inline uint32_t HandleGeneration(uint64_t h) {
  return static_cast<uint32_t>((h >> kGenShift) & kGenMask);
}
inline uint32_t HandleRegion(uint64_t h) {
  return static_cast<uint32_t>((h >> kRegionShift) & kRegionMask);
}
inline uint64_t HandlePayload(uint64_t h) { return h & kPayloadMask; }
// Both handles name the same (region, generation).
inline bool SameOwner(uint64_t a, uint64_t b) { return ((a ^ b) & kOwnerBits) == 0; }
// A handle of `kind` for the owner of `owner` with `payload`: equal to
// EncodeHandle(kind, owner's generation, owner's region, payload).
inline uint64_t RekindHandle(uint64_t owner, HandleKind kind, uint64_t payload) {
  return (static_cast<uint64_t>(kind) << kKindShift) | (owner & kOwnerBits) |
         (payload & kPayloadMask);
}
// An API handle's payload: the ApiCall token in the low 39 bits, and this
// bit when NCCL said the call was graph-captured. A replay can come long
// after newer API calls recycled the token's entry (docs/design/nccl.md §CUDA graphs);
// the bit still marks its op graph-captured. A token of 2^39 or more loses
// its top bits and then fails the lookup, never matches another call.
constexpr uint64_t kApiGraphBit = uint64_t{1} << 39;
constexpr uint64_t kApiTokenMask = kApiGraphBit - 1;

// `h` with its kind replaced (same owner, same payload).
inline uint64_t WithKind(uint64_t h, HandleKind kind) {
  return (h & ~kKindBits) | (static_cast<uint64_t>(kind) << kKindShift);
}

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_HANDLE_H_

// The emulated NCCL release and every rule that depends on it (loading,
// symbol lookup, init-failure handling, seqNumber counting). Pure functions
// so the rules can be unit-tested without loading anything.
// Source of every rule: docs/design/nccl.md §Versions, §Loading, §Sequence
// numbers and identity.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_VERSION_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_VERSION_H_

#include <string>
#include <vector>

namespace flightrec {
namespace emu {

struct NcclVersion {
  int major = 2;
  int minor = 28;
  int patch = 9;

  int Code() const { return major * 10000 + minor * 100 + patch; }
  bool AtLeast(int mj, int mn, int pt = 0) const { return Code() >= mj * 10000 + mn * 100 + pt; }
  std::string ToString() const;
};

// Parses "X.Y.Z", "X.Y" (patch 0) or "master" (= 2.31.0, the first release
// with v7). Returns false with a message for anything else.
bool ParseNcclVersion(const std::string& text, NcclVersion* out, std::string* error);

// The newest profiler API any release the emulator knows looks up.
constexpr int kNewestProfilerApi = 7;

// Newest ncclProfiler_vN symbol this release looks up (nccl.md §Versions): 2.23 -> 1,
// 2.24/2.25 -> 2, 2.26 -> 3, 2.27 -> 4, 2.28 -> 5, 2.29/2.30 -> 6, 2.31+ -> 7.
// It is also the release's native API (events it can produce).
int MaxProfilerApi(const NcclVersion& v);

// Symbol versions in lookup order: newest first, or only `forced_api` when
// it is 1..kNewestProfilerApi (the emulator's --api override).
std::vector<int> SymbolLookupOrder(const NcclVersion& v, int forced_api);

// One dlopen attempt. `use_null` means dlopen(NULL) (the STATIC_PLUGIN quirk).
struct LibCandidate {
  std::string name;
  bool use_null = false;
};

// nccl.md §Loading: what NCCL dlopens, in order, for NCCL_PROFILER_PLUGIN (`env` nullptr
// when unset). `*disabled` is set when the value is "none" (2.28.3+).
std::vector<LibCandidate> LibraryCandidates(const char* env, const NcclVersion& v, bool* disabled);

// nccl.md §Loading: what NCCL does when the plugin's init returns non-zero.
enum class InitFailurePolicy {
  kDisableGlobally,    // 2.23-2.27: table pointer cleared for every comm
  kContinue,           // 2.28-2.30.2: log and keep calling with *context
  kContinueAndUnload,  // 2.30.3+: also drops one load reference
};
InitFailurePolicy InitFailurePolicyFor(const NcclVersion& v);

// nccl.md §Loading: 2.28+ skips finalize when the comm's context is NULL.
inline bool SkipsFinalizeForNullContext(const NcclVersion& v) { return v.AtLeast(2, 28); }
// d: 2.26+ advances seqNumber even when the plugin declined the Coll event.
inline bool SeqAdvancesWithoutPlugin(const NcclVersion& v) { return v.AtLeast(2, 26); }
// nccl.md §Activation mask: before 2.28 Coll/P2p start only when the Group event was accepted.
inline bool CollNeedsGroupHandle(const NcclVersion& v) { return !v.AtLeast(2, 28); }

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_VERSION_H_

// The one driver of the NCCL profiler ABI in tests/: calls one plugin table
// (ncclProfiler_v1..v7) the way a given NCCL release does: builds the
// version's descriptor from a version-neutral event, applies NCCL's
// compatibility shims for older tables (docs/design/nccl.md §Shims) and the
// per-release descriptor contents (§Profiler ABI, §Call rules). The emulator
// calls plugins through it; in-process tests use support/abi_driver.h on top
// of it. RawProfiler<V> is its raw-descriptor mode: a version's descriptor
// built once, then handed to startEvent as is (the plugin unit tests and the
// hot-path benchmark).
#ifndef FLIGHTREC_TESTS_SUPPORT_PROFILER_SHIM_H_
#define FLIGHTREC_TESTS_SUPPORT_PROFILER_SHIM_H_

#include <stdint.h>

#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace emu {

// ncclProfiler_vN's types: its table, event descriptor and state arguments.
template <int V>
struct Api;
#define FLIGHTREC_SHIM_API(N, ARGS)                             \
  template <>                                                   \
  struct Api<N> {                                               \
    using Table = nccl_abi::ProfilerV##N;                       \
    using Descr = nccl_abi::EventDescrV##N;                     \
    using Args = nccl_abi::StateArgs##ARGS;                     \
    static constexpr const char* kSymbol = "ncclProfiler_v" #N; \
  };
FLIGHTREC_SHIM_API(1, V1)
FLIGHTREC_SHIM_API(2, V1)
FLIGHTREC_SHIM_API(3, V1)
FLIGHTREC_SHIM_API(4, V4)
FLIGHTREC_SHIM_API(5, V4)
FLIGHTREC_SHIM_API(6, V4)
FLIGHTREC_SHIM_API(7, V4)
#undef FLIGHTREC_SHIM_API

enum class Ev {
  kGroupApi,
  kCollApi,
  kP2pApi,
  kKernelLaunch,
  kGroup,
  kColl,
  kP2p,
  kProxyOp,
  kProxyStep,
  kKernelCh,
  kProxyCtrl,
  kCeColl,  // v6+: copy-engine collectives (docs/design/nccl.md §Copy-engine collectives)
  kCeSync,
  kCeBatch,
  kKernelPhase,  // v7: a symmetric kernel's phase (docs/design/nccl.md §Symmetric kernels)
};

// Version-neutral event (the newest API's view). Enum-coded fields use
// flightrec::format codes and are turned into NCCL strings or v1 codes.
struct EventDesc {
  Ev type = Ev::kGroup;
  void* parent = nullptr;
  int rank = 0;
  bool graph_captured = false;  // GroupApi/CollApi/P2pApi
  int group_depth = 0;          // GroupApi
  uint8_t func = 0, datatype = 0, algo = 0, proto = 0;
  uint64_t count = 0;
  int root = 0;
  int peer = 0;
  void* stream = nullptr;
  uint64_t user_tag = 0;
  uint64_t seq = 0;
  uint8_t n_channels = 0, n_warps = 0;
  void* parent_group = nullptr;  // Coll/P2p: the legacy Group handle
  const void* send_buff = nullptr;
  void* recv_buff = nullptr;
  int pid = 0;             // ProxyOp
  uint8_t channel_id = 0;  // ProxyOp, KernelCh
  int n_steps = 0, chunk_size = 0, is_send = 0;
  int step = 0;         // ProxyStep
  uint64_t ptimer = 0;  // KernelCh start
  // CeColl (func, count, datatype, root, stream, user_tag above; `seq` is
  // ceColl.seqNumber), CeSync, CeBatch.
  const char* sync_strategy = nullptr;  // "MC" / "UC"
  uint32_t ce_seq = 0;                  // ceColl.ceSeqNum
  uint32_t num_batches = 0;
  bool is_complete = false;  // CeSync
  int n_ranks = 0;           // CeSync
  int num_ops = 0;           // CeBatch
  uint64_t total_bytes = 0;  // CeBatch
  // v7: a symmetric kernel's Coll (isSymColl, kernelVariant as NCCL names it,
  // e.g. "AllReduce_AGxLL_R"); KernelPhase's phaseId (channel_id, ptimer above).
  bool is_sym = false;
  const char* kernel_variant = nullptr;
  uint8_t phase_id = 0;
  // v1-v3 descriptors name the comm; NCCL >= 2.27 leaves these NULL/0.
  uint64_t comm_hash = 0;
  const char* comm_name = nullptr;
};

struct StateArgs {
  uint64_t trans_size = 0;
  uint64_t ptimer = 0;
  int appended_proxy_ops = 0;
  bool null_args = false;  // NCCL passes NULL (Group*Api states)
};

class ProfilerShim {
 public:
  // `native_api`: the newest profiler API the NCCL release calls
  // (emulator/src/nccl_version.h MaxProfilerApi).
  ProfilerShim(const void* table, int plugin_api, int native_api);

  int plugin_api() const { return api_; }
  int native_api() const { return native_; }
  const char* name() const;

  // The release's init call for this table (nccl.md §Profiler ABI). Returns NCCL's result code.
  int Init(void** context, uint64_t comm_hash, int* mask, const char* comm_name, int nnodes,
           int nranks, int rank, nccl_abi::DebugLogger log) const;
  // Always writes *handle (NULL when the shim swallows the event).
  void Start(void* context, void** handle, const EventDesc& d) const;
  void Stop(void* handle) const;
  void Record(void* handle, int state, const StateArgs& args) const;
  void Finalize(void* context) const;

  // Whether this plugin version is called for `type` at all.
  bool Delivers(Ev type) const;

  // Version V's descriptor of `d` as this release fills it (what Start hands
  // the plugin); false when the release does not call version V for `d`.
  // V must be plugin_api(). Defined for V = 1..7.
  template <int V>
  bool Describe(const EventDesc& d, typename Api<V>::Descr* out) const;

  const void* table() const { return table_; }

 private:
  bool ForwardsState(int state) const;
  template <int V>
  void StartAs(void* context, void** handle, const EventDesc& d) const;

  const void* table_;
  int api_;
  int native_;
};

// What raw-mode starts preset *handle to: a plugin must overwrite it on every
// startEvent, NULL when it declines (NCCL keeps whatever is there).
inline void* UnwrittenHandle() { return reinterpret_cast<void*>(uintptr_t{0xdeadbeef}); }

// The raw-descriptor mode of a shim whose plugin_api() is V: the caller builds
// V's descriptor once (Describe, or by hand for what NCCL would not send),
// changes its per-call fields in place and hands it to startEvent as is, and
// passes state args as is. Every call goes straight to the table, inline and
// branch-free, so a benchmark pays the same per-call cost for every plugin.
template <int V>
class RawProfiler {
 public:
  using Table = typename Api<V>::Table;
  using Descr = typename Api<V>::Descr;
  using Args = typename Api<V>::Args;

  RawProfiler() = default;  // unbound: assign a bound one before any call
  explicit RawProfiler(const ProfilerShim& shim)
      : shim_(&shim), t_(static_cast<const Table*>(shim.table())) {}

  const ProfilerShim& shim() const { return *shim_; }
  bool Describe(const EventDesc& d, Descr* out) const { return shim_->Describe<V>(d, out); }
  // The handle the plugin wrote, UnwrittenHandle() when it wrote none.
  void* Start(void* context, Descr* d) const {
    void* h = UnwrittenHandle();
    t_->startEvent(context, &h, d);
    return h;
  }
  void Stop(void* handle) const { t_->stopEvent(handle); }
  void Record(void* handle, nccl_abi::EventState state, Args* args) const {
    t_->recordEventState(handle, state, args);
  }

 private:
  const ProfilerShim* shim_ = nullptr;
  const Table* t_ = nullptr;
};

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_PROFILER_SHIM_H_

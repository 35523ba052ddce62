#include "plugin/process_setup.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic>

#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace plugin {
namespace detail {
// Written by SetupOnce (under pthread_once, which orders it before every
// later caller of EnsureProcessSetup) and by the atfork child handler (the
// only thread in the child). Relaxed everywhere: no other data hangs on it.
std::atomic<int32_t> g_pid{0};
std::atomic<int> g_written_mask{0};
std::atomic<const int*> g_live_mask{nullptr};
}  // namespace detail

namespace {

using detail::g_pid;

namespace abi = nccl_abi;

pthread_once_t g_once = PTHREAD_ONCE_INIT;
bool g_mask_override = false;
bool g_mask_env_invalid = false;
bool g_net_steps = false;
int g_mask = 0;  // the override (g_mask_override), else unused

void RefreshPidInChild() { g_pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed); }

bool EnvFlag(const char* name) {
  const char* v = getenv(name);
  return v != nullptr && strcmp(v, "1") == 0;
}

void SetupOnce() {
  g_pid.store(static_cast<int32_t>(getpid()), std::memory_order_relaxed);
  // glibc unregisters handlers of a dlclose'd library, so this cannot call
  // into unmapped code after NCCL unloads us.
  pthread_atfork(nullptr, nullptr, RefreshPidInChild);
  const char* override_mask = getenv("NCCL_FLIGHTREC_EVENT_MASK");
  if (override_mask != nullptr && *override_mask != '\0') {
    char* end = nullptr;
    const long v = strtol(override_mask, &end, 0);  // decimal or 0x hex
    if (end != nullptr && *end == '\0' && v >= 0 && v <= 0x7fffffffL) {
      g_mask_override = true;
      g_mask = static_cast<int>(v);
      return;
    }
    g_mask_env_invalid = true;  // fall back to the default, warn at init
  }
  g_net_steps = EnvFlag("NCCL_FLIGHTREC_NET_STEPS");
}

}  // namespace

int DefaultEventMask(bool net_steps, int api_version) {
  // KernelCh in every version: it is the only completion signal of an
  // intra-node op, and without completion no op can be judged stuck. Its cost
  // on NCCL 2.31.2 (NVIDIA/nccl#2355) is documented in docs/plugin.md with
  // the variable that drops it.
  int mask = abi::kProfileColl | abi::kProfileP2p | abi::kProfileKernelCh | abi::kProfileCollApi |
             abi::kProfileP2pApi | abi::kProfileProxyOp;
  if (net_steps) mask |= abi::kProfileProxyStep;
  // v7 (NCCL 2.31+): only symmetric kernels emit phases (two more events per
  // channel of a symmetric kernel); they tell "a peer never arrived" (every
  // channel in the final sync) from "stuck computing".
  if (api_version >= 7) mask |= abi::kProfileKernelPhase;
  // v6+ (NCCL 2.29+): copy-engine collectives are collectives of their comm
  // (docs/design/nccl.md §Copy-engine collectives); CeColl starts for any of
  // the three bits, CeSync/CeBatch only for their own.
  if (api_version >= 6) mask |= abi::kProfileCeColl | abi::kProfileCeSync | abi::kProfileCeBatch;
  return mask;
}

void EnsureProcessSetup() { pthread_once(&g_once, SetupOnce); }

int MaskToWrite(int current_mask, int api_version) {
  EnsureProcessSetup();
  const int mask =
      g_mask_override ? g_mask : (current_mask | DefaultEventMask(g_net_steps, api_version));
  detail::g_written_mask.store(mask, std::memory_order_relaxed);  // see g_written_mask
  return mask;
}

void NoteLiveMask(const int* event_mask, int api_version) {
  // Only NCCL's global outlives the events for sure (a host that passes a
  // local may return before its last event): libnccl must be in the process.
  // v7 (NCCL 2.31+) is where RAS can rewrite it.
  if (event_mask == nullptr || api_version < 7) return;
  if (dlsym(RTLD_DEFAULT, "ncclGetVersion") == nullptr) return;
  detail::g_live_mask.store(event_mask, std::memory_order_relaxed);  // see g_live_mask
}

bool EventMaskEnvInvalid() {
  EnsureProcessSetup();
  return g_mask_env_invalid;
}

}  // namespace plugin
}  // namespace flightrec

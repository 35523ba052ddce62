// An in-process NCCL stand-in for tests: dlopens the real plugin
// (libnccl-profiler-flightrec.so), takes ncclProfiler_v7 and calls it through
// the emulator's ProfilerShim exactly as NCCL 2.31 does (descriptor layout,
// call order: CollApi, Coll start/stop on the user thread; KernelCh and
// ProxyOp events on a proxy thread). Used where a whole emulated job would
// hide what is being tested (threads, fork, exit, dlclose, comm churn).
#ifndef FLIGHTREC_TESTS_SUPPORT_ABI_DRIVER_H_
#define FLIGHTREC_TESTS_SUPPORT_ABI_DRIVER_H_

#include <stdint.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "support/profiler_shim.h"

namespace flightrec {
namespace rel {

// Every line the plugin logged through the NCCL logger we pass to init,
// process-wide (the plugin may log from any thread).
std::vector<std::string> LoggedLines();
void ClearLoggedLines();
int CountLogged(const std::string& needle);

// The work of one op that the proxy thread completes later.
struct PendingOp {
  void* context = nullptr;
  void* handle = nullptr;  // the Coll/P2p handle (parent of KernelCh/ProxyOp)
  uint8_t channels = 0;
  uint64_t gpu_start = 0;  // %globaltimer values the "GPU" reports
  uint64_t gpu_end = 0;
};

class AbiDriver {
 public:
  // dlopens `so_path` (RTLD_NOW | RTLD_LOCAL, as NCCL). ok() tells.
  explicit AbiDriver(const std::string& so_path);
  ~AbiDriver();  // dlcloses
  AbiDriver(const AbiDriver&) = delete;
  AbiDriver& operator=(const AbiDriver&) = delete;

  bool ok() const { return shim_ != nullptr; }
  const std::string& error() const { return error_; }

  // Profiler init for one communicator; returns NCCL's result code.
  int Init(void** context, uint64_t comm_hash, const char* name, int nranks, int rank);
  void Finalize(void* context);
  int mask() const { return mask_; }

  // User thread: CollApi start/stop, Coll start (returned in *op), Coll stop.
  // `index` drives every field (func, count, seq) so tests can recompute them.
  void LaunchColl(void* context, int rank, uint64_t index, uint64_t seq, PendingOp* op);
  // Proxy thread: KernelCh start (with op.gpu_start) for every channel,
  // ProxyOp start, KernelChStop + stop (with op.gpu_end), ProxyOp stop.
  void CompleteOp(const PendingOp& op);
  // Proxy thread: only the starts (the op stays running, e.g. to look stuck).
  void StartKernels(const PendingOp& op);
  // NCCL 2.31 splits CompleteOp over two threads (docs/design/nccl.md
  // §NCCL 2.31): the profiler thread's KernelCh start, KernelChStop and stop
  // for every channel, and the proxy thread's ProxyOp start and stop.
  void CompleteKernels(const PendingOp& op);
  void CompleteProxyOps(const PendingOp& op);

 private:
  void* lib_ = nullptr;
  std::unique_ptr<emu::ProfilerShim> shim_;
  std::string error_;
  int mask_ = 0;  // one process-global mask, as NCCL (nccl.md §Activation mask)
};

}  // namespace rel
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_ABI_DRIVER_H_

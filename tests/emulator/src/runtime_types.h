// Objects shared by one rank's threads: the tasks of a kernel launch (filled
// by the user thread, timed by the GPU stream thread, reported by the proxy
// thread) and the per-communicator state.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_RUNTIME_TYPES_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_RUNTIME_TYPES_H_

#include <stdint.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "emulator/src/schedule.h"
#include "emulator/src/topology.h"
#include "support/profiler_shim.h"

namespace flightrec {
namespace emu {

// One Coll or P2p task. The user thread writes everything but the GPU
// timers before posting it to the proxy (under the proxy mutex); the GPU
// stream thread writes only the timers.
struct Task {
  Call call;
  int mask = 0;            // activation mask snapshot of the API call (nccl.md §Activation mask)
  void* handle = nullptr;  // Coll/P2p handle: parent of KernelCh/ProxyOp
  bool network = false;    // comm spans nodes: ProxyOp/ProxyStep events
  int send_peer = 0, recv_peer = 0;
  std::atomic<uint64_t> gpu_start{0};  // %globaltimer at kernel start
  std::atomic<uint64_t> gpu_end{0};
  // Proxy thread's own progress.
  bool appended = false;
  bool in_progress = false;
  bool kernel_started = false;
  std::vector<void*> kernel_handles;
  std::vector<void*> proxy_ops;    // 2 per channel: send, recv
  std::vector<void*> proxy_steps;  // per proxy op, kStepsPerOp each
  // --pxn: per proxy op, 1 when the partner's proxy reports it (nccl.md §PXN); this
  // process's plugin then sees nothing of that op.
  std::vector<char> pxn;
  // --sym (symmetric.h): a symmetric kernel. The GPU stream thread moves
  // sym_phase through the kernel's phases; the comm's profiler thread
  // reports them (sym_emitted, phase_handles: its own).
  bool sym = false;
  std::atomic<int> sym_phase{-1};
  int sym_emitted = -1;
  std::vector<void*> phase_handles;
};

constexpr int kStepsPerOp = 2;

// One NCCL plan captured in a CUDA graph (docs/design/nccl.md §CUDA graphs): what every
// replay reuses. Written by the user thread at capture, read-only after.
struct CapturedOp {
  Op op;                           // visible calls, API order (index: first replay's op)
  std::vector<int> order;          // launch order, indices into op.calls
  std::vector<void*> api_handles;  // capture-time CollApi/P2pApi handles, launch order
  int mask = 0;  // activation mask snapshot of the capture (nccl.md §Activation mask)
  bool host_callback = false;  // plan has proxy ops: its events fire on every replay
};

// One kernel launch (NCCL plan) on one communicator.
struct Launch {
  int comm_local = 0;   // CommKind index in the rank's comm table
  int comm_global = 0;  // index in the coordination file
  int my_member = 0;
  int members = 0;
  // What the kernel pairs on (coord.h): p2p, the launch's index among the
  // comm's Send/Recv launches + 1; collectives, the comm's collective tasks
  // up to and including this launch's.
  uint64_t pair_target = 0;
  bool p2p = false;        // only Send/Recv: pairs per peer (coord.h)
  std::vector<int> peers;  // p2p: comm ranks it sends to or receives from
  int64_t op = 0;
  bool gpu_hang = false;
  const CapturedOp* captured = nullptr;  // a graph replay's plan, else nullptr
  // A graph replay's launch starts once the rank completed this many
  // launches: every launch enqueued before its graph launch (docs/design/nccl.md
  // §CUDA graphs: one graph launch runs after the previous one finished, its
  // branches on the comms' streams in parallel).
  uint64_t after_completed = 0;
  std::vector<std::shared_ptr<Task>> tasks;
};

// One emulated GPU stream: a thread that executes its launches in enqueue
// order (RankRuntime::StreamLoop). --streams rank: one per rank, shared by
// its comms; --streams comm: one per comm.
struct GpuStream {
  void* id = nullptr;  // the cudaStream_t NCCL is given (fake CUDA's key)
  std::thread thread;
  std::deque<std::shared_ptr<Launch>> queue;  // under RankRuntime::stream_mu_
};

struct SymProfiler;  // symmetric.h

struct CommState {
  CommInfo info;
  const ProfilerShim* shim = nullptr;  // nullptr: no plugin for this comm
  GpuStream* stream = nullptr;         // where its launches run
  bool acquired = false;               // holds a loader reference
  void* ctx = nullptr;
  SeqCounters seq;
  uint64_t launches = 0;                      // every launch (coord enqueued counter)
  uint64_t coll_tasks = 0;                    // collective tasks launched: pair by order
  uint64_t p2p_launches = 0;                  // Send/Recv launches: pair per peer
  uint32_t ce_seq = 0;                        // comm->ceColl.ceSeqNum (+2 per CE op, ce_coll.h)
  bool ce_flag = false;                       // the CE complete-pointer flag, toggled per CE op
  std::shared_ptr<SymProfiler> sym_profiler;  // --sym, NCCL 2.31+ (symmetric.h)
  // Proxy thread ("NCCL Progress") of this comm.
  std::thread proxy;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<Task>> posted;
  bool dirty = false;
  bool stop = false;
};

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_RUNTIME_TYPES_H_

// One emulated rank (one process): loads the plugin through PluginLoader,
// inits its three communicators, and runs the threads NCCL would have:
//   user thread   API events (GroupApi/CollApi/P2pApi), launch events
//                 (KernelLaunch/Group/Coll/P2p), as in nccl.md §Call sequences v5
//   GPU streams   one per rank (--streams rank) or per comm (--streams comm),
//                 each executing its launches in enqueue order; blocks in a
//                 collective until every member's kernel arrived, in a
//                 Send/Recv until its peers' did (coord.h)
//   proxy threads one per comm: KernelCh (nccl.md §Call sequences v5), ProxyOp/ProxyStep (nccl.md
//   §Call sequences v5),
//                 ProxyCtrl (nccl.md §Call sequences v5)
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_RANK_RUNTIME_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_RANK_RUNTIME_H_

#include <stdint.h>

#include <array>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

#include "emulator/src/coord.h"
#include "emulator/src/options.h"
#include "emulator/src/plugin_loader.h"
#include "emulator/src/runtime_types.h"
#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {

// Ops a rank may have enqueued but not finished before its user thread
// blocks (a stream sync per step).
constexpr uint64_t kMaxInFlight = 4;

class RankRuntime {
 public:
  RankRuntime(const Options& opts, Coord* coord);
  ~RankRuntime();

  // Runs the whole rank; returns the process exit code.
  int Run();

  // GPU %globaltimer of this rank: CLOCK_REALTIME + a per-rank offset (e).
  uint64_t GpuNow() const;

 private:
  void InitComm(CommState* c);
  void DestroyComm(CommState* c);
  bool TableLive() const;
  void RunOp(int64_t i);
  // --ce: op i as a copy-engine collective (ce_coll.cc).
  void RunCeOp(const Op& op, CommState* c, int mask, int64_t i);
  void ApplyBeforeOpFaults(int64_t i);
  // --sym, --ras-mask (symmetric.cc).
  void SymSetup();
  void MarkSymmetric(Launch* l, const CommState& c, int64_t i) const;
  void StartSymProfilers();
  void StopSymProfilers();
  void PostSym(CommState* c, std::shared_ptr<Task> t);
  void NotifySym(CommState* c);
  bool SymReport(CommState* c, Task* t);
  void SymProfilerLoop(CommState* c);
  void ExecuteSymLaunch(const Launch& l);
  void ApplyRasOverride(int64_t i);
  // How a plan's Coll events advance seqNumber (docs/design/nccl.md §Sequence numbers and
  // identity).
  enum class SeqRule { kEager, kPersistent };

  void EmitApiEvents(const Op& op, CommState* c, int mask, std::vector<void*>* api_handles,
                     void** group_api, bool graph_captured);
  void EmitKernelLaunch(CommState* c, int mask, void* group_api);
  void Enqueue(std::shared_ptr<Launch> launch);
  // hostStreamPlanTask: Group, Coll/P2p starts in launch order, proxy posts
  // (when `post`), Coll/P2p stops, Group stop.
  void EmitPlanTask(const Op& op, CommState* c, int mask, const std::vector<void*>& api_handles,
                    Launch* launch, SeqRule rule, bool post);
  void EmitLaunch(const Op& op, CommState* c, int mask, const std::vector<void*>& api_handles,
                  void* group_api, std::shared_ptr<Launch> launch);
  Op Visible(const Op& op, const CommState& c) const;
  static std::vector<std::shared_ptr<Task>> MakeTasks(const Op& visible,
                                                      const std::vector<int>& order,
                                                      const CommInfo& info, int mask);
  std::shared_ptr<Launch> MakeLaunch(const Op& visible, const std::vector<int>& order, CommState* c,
                                     int mask, int64_t i, uint64_t* enqueued);
  // --graph-replays (docs/design/nccl.md §CUDA graphs).
  void CaptureGraph();
  void LaunchReplay(int64_t first);
  void ReplayHostCallback(Launch* l);
  void WaitInFlight(uint64_t limit);

  // GPU stream threads: the stream of the comm with local index `local`
  // (kCommsPerRank: the shrunk comm), its thread started.
  GpuStream* StartStream(int local);
  void StreamLoop(GpuStream* s);
  void ExecuteLaunch(const Launch& l);
  void ExecuteP2pLaunch(const Launch& l);
  void Transfer(const Launch& l) const;
  // Proxy thread of one comm (proxy_thread.cc).
  void ProxyLoop(CommState* c);
  bool ProxyPass(CommState* c, std::deque<std::shared_ptr<Task>>* tasks);
  void ProxyAppend(CommState* c, Task* t);
  void ProxyKernelStart(CommState* c, Task* t);
  void ProxyKernelEnd(CommState* c, Task* t);
  void ProxyCtrl(CommState* c, int state, int appended);
  // --pxn (docs/design/nccl.md §PXN): the rank whose proxy reports this rank's
  // odd-channel network sends (-1: none), and what this rank's proxy reports
  // for its partner.
  int PxnPartner() const;
  void PxnHandOff(CommState* c, Task* t);
  void PxnReportForeign(CommState* c);
  void Post(CommState* c, std::shared_ptr<Task> t);
  void Notify(CommState* c);

  // Communicator lifecycle (lifecycle.cc): --nonblocking-init, --on-hang.
  void InitCommsNonblocking();
  void StartFrameworkWatchdog();
  void FrameworkWatchdog();
  // ncclCommAbort (revoke: ncclCommRevoke, then ncclCommDestroy) of every
  // comm, on the calling thread while the user thread is parked.
  void EndComms(bool revoke);
  void EndComm(CommState* c);
  // Drains the GPU stream with the abort flag set (kernels exit at once).
  void AbortKernels();
  bool LifecycleEnded();
  // After the watchdog fired: shrink and go on, or stop.
  void AfterFrameworkWatchdog();
  void ShrinkWorld();
  void RunShrunkOp(int64_t i);
  // Teardown of what the lifecycle added (watchdog thread, shrunk comm).
  void FinishLifecycle();
  CommState* CommAt(int local);

  const Options& opts_;
  Coord* coord_;
  Topology topo_;
  PluginLoader loader_;
  int mask_ = 0;  // NCCL's process-global ncclProfilerEventMask (nccl.md §Activation mask)
  int64_t gpu_offset_ns_ = 0;
  std::array<CommState, kCommsPerRank> comms_;
  std::array<CapturedOp, kPeriod> captured_;
  volatile bool stop_ = false;  // set only to unblock joins on teardown

  // The rank's GPU streams (index: the comm's local index with --streams
  // comm, only [0] with --streams rank), all under one mutex and condition
  // variable; launched_/completed_ count over every stream (the user
  // thread's in-flight limit, the watchdog, the abort drain).
  std::array<GpuStream, kCommsPerRank + 1> streams_;
  std::mutex stream_mu_;
  std::condition_variable stream_cv_;  // new launch / launch finished
  uint64_t launched_ = 0;
  uint64_t completed_ = 0;
  bool stream_exit_ = false;
  // Lifecycle state, under stream_mu_ (lifecycle.cc).
  std::thread fw_watchdog_;
  bool fw_stop_ = false;
  bool user_waiting_ = false;          // the user thread is parked in WaitInFlight
  bool ending_ = false;                // the watchdog is ending the comms: stay parked
  int host_callbacks_ = 0;             // replay host callbacks running on the streams
  bool ended_ = false;                 // the framework gave up on the comms
  bool aborted_ = false;               // ended for good (abort/revoke): the rank stops
  std::unique_ptr<CommState> shrunk_;  // the comm ncclCommShrink made (local kCommsPerRank)
};

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_RANK_RUNTIME_H_

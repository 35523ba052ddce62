#include "emulator/src/rank_runtime.h"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "emulator/src/ce_coll.h"
#include "emulator/src/nccl_logger.h"
#include "emulator/src/symmetric.h"
#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace emu {

namespace abi = ::flightrec::nccl_abi;

namespace {

uint64_t WallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

// nccl.md §Activation mask: the bits that make NCCL start each event type.
constexpr int kDescendantsOfColl = abi::kProfileColl | abi::kProfileProxyOp |
                                   abi::kProfileProxyStep | abi::kProfileKernelCh |
                                   abi::kProfileNetPlugin;
constexpr int kDescendantsOfP2p = kDescendantsOfColl & ~abi::kProfileColl;
constexpr int kGateGroupApi = ~abi::kProfileProxyCtrl;
constexpr int kGateCollApi = abi::kProfileCollApi | kDescendantsOfColl;
constexpr int kGateP2pApi = abi::kProfileP2pApi | abi::kProfileP2p | kDescendantsOfP2p;
constexpr int kGateGroup = abi::kProfileGroup | abi::kProfileP2p | kDescendantsOfColl;
constexpr int kGateP2p = abi::kProfileP2p | kDescendantsOfP2p;

bool IsColl(const Call& c) { return !c.is_p2p(); }

}  // namespace

RankRuntime::RankRuntime(const Options& opts, Coord* coord)
    : opts_(opts),
      coord_(coord),
      topo_(opts.ranks, opts.tp, opts.ranks_per_node, coord->header().job_id),
      loader_(opts.nccl_version, opts.api) {
  uint64_t h = Mix64(opts.seed ^ Mix64(0xC10C0000ULL + opts.rank));
  gpu_offset_ns_ = static_cast<int64_t>(h % 4000000000ULL) - 2000000000LL;  // +-2 s
  static const CommKind kKinds[kCommsPerRank] = {CommKind::kWorld, CommKind::kTp, CommKind::kDp};
  for (int k = 0; k < kCommsPerRank; ++k) comms_[k].info = topo_.CommOf(kKinds[k], opts.rank);
}

RankRuntime::~RankRuntime() = default;

uint64_t RankRuntime::GpuNow() const {
  return static_cast<uint64_t>(static_cast<int64_t>(WallNs()) + gpu_offset_ns_);
}

bool RankRuntime::TableLive() const { return loader_.live(); }

void RankRuntime::InitComm(CommState* c) {
  const ProfilerShim* shim = loader_.Acquire();
  if (shim == nullptr) return;
  c->acquired = true;
  const CommInfo& i = c->info;
  int rc = shim->Init(&c->ctx, i.comm_hash, &mask_, i.name.c_str(), i.nnodes, i.nranks, i.my_rank,
                      &NcclDebugLog);
  if (rc != 0) {
    switch (InitFailurePolicyFor(opts_.nccl_version)) {
      case InitFailurePolicy::kDisableGlobally:
        EMU_WARN("Profiler init failed for comm %s (error %d): profiler disabled for the process",
                 i.name.c_str(), rc);
        loader_.DisableTable();
        return;
      case InitFailurePolicy::kContinue:
        EMU_INFO("Profiler init failed with error '%d'. Continue without profiler.", rc);
        break;
      case InitFailurePolicy::kContinueAndUnload:
        EMU_INFO("Profiler init failed with error '%d'. Continue without profiler.", rc);
        loader_.Release();  // 2.30.3+: the comm still releases again at destroy
        break;
    }
  }
  c->shim = shim;
  if (opts_.nccl_version.AtLeast(2, 28, 3)) {
    EMU_INFO("Profiler event mask 0x%x (comm %s)", __atomic_load_n(&mask_, __ATOMIC_RELAXED),
             i.name.c_str());
  }
}

void RankRuntime::DestroyComm(CommState* c) {
  if (c->shim != nullptr) {
    if (!TableLive()) {
      if (!opts_.nccl_version.AtLeast(2, 28)) {
        EMU_WARN("comm %s: NCCL %s would read the cleared profiler table here (latent crash)",
                 c->info.name.c_str(), opts_.nccl_version.ToString().c_str());
      } else {
        EMU_WARN("comm %s: profiler library was already unloaded (double unload), no finalize",
                 c->info.name.c_str());
      }
    } else if (!(c->ctx == nullptr && SkipsFinalizeForNullContext(opts_.nccl_version))) {
      c->shim->Finalize(c->ctx);
    }
  }
  if (c->acquired) loader_.Release();
  c->shim = nullptr;
}

void RankRuntime::ApplyBeforeOpFaults(int64_t i) {
  int r = opts_.rank;
  if (const Fault* f = opts_.FindFaultOn(FaultKind::kSlow, r, i, OpComm(i)))
    usleep(static_cast<useconds_t>(f->us));
  if (const Fault* f = opts_.FindFault(FaultKind::kPause, r, i)) {
    // A transient stall outside NCCL (a checkpoint, a slow data loader):
    // the rank's others wait in their ops, then it goes on.
    EMU_WARN("fault: rank %d pauses %lld us outside NCCL before op %lld", r,
             static_cast<long long>(f->us), static_cast<long long>(i));
    for (int64_t left = f->us; left > 0; left -= 500000) {
      usleep(static_cast<useconds_t>(left < 500000 ? left : 500000));
    }
  }
  if (opts_.FindFault(FaultKind::kKill, r, i) != nullptr) {
    EMU_WARN("fault: rank %d SIGKILLs itself at op %lld", r, static_cast<long long>(i));
    raise(SIGKILL);
  }
  if (opts_.FindFault(FaultKind::kStuck, r, i) != nullptr) {
    EMU_WARN("fault: rank %d stuck outside NCCL before op %lld", r, static_cast<long long>(i));
    __atomic_store_n(&coord_->rank(r)->state, kRankStuck, __ATOMIC_RELEASE);
    for (;;) pause();
  }
}

void RankRuntime::WaitInFlight(uint64_t limit) {
  std::unique_lock<std::mutex> lock(stream_mu_);
  user_waiting_ = true;
  // lifecycle.cc: parked while the framework's watchdog ends the comms.
  stream_cv_.wait(lock, [&] { return (launched_ - completed_ < limit && !ending_) || ended_; });
  user_waiting_ = false;
}

void RankRuntime::EmitApiEvents(const Op& op, CommState* c, int mask,
                                std::vector<void*>* api_handles, void** group_api,
                                bool graph_captured) {
  const ProfilerShim* s = c->shim;
  api_handles->assign(op.calls.size(), nullptr);
  *group_api = nullptr;
  if (s == nullptr || s->native_api() < 5 || !TableLive()) return;
  int r = c->info.my_rank;
  (void)r;
  // nccl.md §Call sequences v5: GroupApi starts lazily at the first task append; rank is 0 for
  // API-level events (nccl.md §Call rules).
  if (mask & kGateGroupApi) {
    EventDesc g;
    g.type = Ev::kGroupApi;
    g.group_depth = op.grouped ? 2 : 1;
    g.graph_captured = graph_captured;
    s->Start(c->ctx, group_api, g);
    StateArgs none;
    none.null_args = true;
    if (*group_api != nullptr) s->Record(*group_api, abi::kGroupStartApiStop, none);
  }
  for (size_t k = 0; k < op.calls.size(); ++k) {
    const Call& call = op.calls[k];
    bool coll = IsColl(call);
    if (!(mask & (coll ? kGateCollApi : kGateP2pApi))) continue;
    EventDesc d;
    d.type = coll ? Ev::kCollApi : Ev::kP2pApi;
    d.parent = *group_api;
    d.graph_captured = graph_captured;
    d.func = call.func;
    d.count = call.count;  // the user's count and type (nccl.md §Call sequences v5)
    d.datatype = call.datatype;
    d.root = call.root;
    d.stream = c->stream->id;
    d.user_tag = static_cast<uint64_t>(op.index / kPeriod) + 1;
    s->Start(c->ctx, &(*api_handles)[k], d);
    if ((*api_handles)[k] != nullptr) s->Stop((*api_handles)[k]);
  }
  if (*group_api != nullptr) {
    StateArgs none;
    none.null_args = true;
    s->Record(*group_api, abi::kGroupEndApiStart, none);
  }
}

void RankRuntime::EmitKernelLaunch(CommState* c, int mask, void* group_api) {
  const ProfilerShim* s = TableLive() ? c->shim : nullptr;
  if (s == nullptr || s->native_api() < 5 || !(mask & abi::kProfileKernelLaunch)) return;
  void* kl = nullptr;
  EventDesc d;
  d.type = Ev::kKernelLaunch;
  d.parent = group_api;
  d.stream = c->stream->id;
  s->Start(c->ctx, &kl, d);
  if (kl != nullptr) s->Stop(kl);
}

void RankRuntime::Enqueue(std::shared_ptr<Launch> launch) {
  GpuStream* stream = CommAt(launch->comm_local)->stream;
  FakeCudaEnqueued(stream->id);  // before the stream can finish it
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    ++launched_;
    stream->queue.push_back(std::move(launch));
  }
  stream_cv_.notify_all();
}

void RankRuntime::EmitPlanTask(const Op& op, CommState* c, int mask,
                               const std::vector<void*>& api_handles, Launch* launch, SeqRule rule,
                               bool post) {
  const ProfilerShim* s = TableLive() ? c->shim : nullptr;
  const CommInfo& info = c->info;
  void* group = nullptr;
  if (s != nullptr && (mask & kGateGroup)) {
    EventDesc g;
    g.type = Ev::kGroup;
    s->Start(c->ctx, &group, g);
  }
  RankSlot* slot = coord_->rank(opts_.rank);
  int kind = static_cast<int>(info.kind);
  for (size_t k = 0; k < launch->tasks.size(); ++k) {
    Task* t = launch->tasks[k].get();
    // symmetric.h: up to 2.30 a symmetric task emits nothing, seqNumber stays.
    if (t->sym && !SymmetricVisible(opts_.nccl_version)) continue;
    const Call& call = t->call;
    bool coll = IsColl(call);
    void* api = k < api_handles.size() ? api_handles[k] : nullptr;
    uint64_t seq = coll ? c->seq.Peek(call.func) : 0;
    bool gated = (mask & (coll ? kDescendantsOfColl : kGateP2p)) != 0;
    if (s != nullptr && gated &&
        (s->native_api() >= 5 || !CollNeedsGroupHandle(opts_.nccl_version) || group != nullptr)) {
      EventDesc d;
      d.type = coll ? Ev::kColl : Ev::kP2p;
      d.parent = api;  // nccl.md §CUDA graphs: at a replay, the CollApi handle of the capture
      d.parent_group = group;
      d.rank = info.my_rank;
      d.func = call.func;
      d.count = call.TaskCount();
      d.datatype = call.TaskDatatype();
      d.root = call.root;
      d.peer = call.peer;
      d.seq = seq;
      d.n_channels = static_cast<uint8_t>(call.channels.size());
      if (t->sym) {  // symmetric.h: the head task carries the plan's channels with KernelCh
        d.is_sym = true;
        d.kernel_variant = kSymAllReduceVariant;
        if ((t->mask & (abi::kProfileKernelCh | abi::kProfileKernelPhase)) == 0) d.n_channels = 0;
      }
      d.n_warps = call.n_warps;
      d.algo = call.algo;
      d.proto = call.proto;
      d.user_tag = static_cast<uint64_t>(op.index / kPeriod) + 1;
      d.send_buff = reinterpret_cast<const void*>(0x7e0000000000ULL);
      d.recv_buff = reinterpret_cast<void*>(0x7e0000100000ULL);
      d.comm_hash = info.comm_hash;
      d.comm_name = info.name.c_str();
      s->Start(c->ctx, &t->handle, d);
      if (t->handle != nullptr) {
        // Published after startEvent returned: the record is committed.
        __atomic_fetch_add(&slot->records_begun[kind], 1, __ATOMIC_RELEASE);
      }
    }
    // d: advanced after the Coll start; before 2.26 only when accepted. A
    // persistent (graph) plan counts only with a plugin, a Group or CollApi
    // handle and KernelCh in the task's mask, and then on every replay.
    bool advance = rule == SeqRule::kEager
                       ? t->handle != nullptr || SeqAdvancesWithoutPlugin(opts_.nccl_version)
                       : s != nullptr && (group != nullptr || api != nullptr) &&
                             (t->mask & abi::kProfileKernelCh) != 0;
    if (coll && advance) c->seq.Advance(call.func);
  }
  for (auto& t : launch->tasks) {
    if (s != nullptr && post && t->sym) {
      if (t->handle != nullptr) PostSym(c, t);  // symmetric.h: the profiler thread reports it
    } else if (s != nullptr && post) {
      Post(c, t);  // proxy ops posted before the task stops
    }
  }
  for (auto& t : launch->tasks) {
    if (s != nullptr && t->handle != nullptr) s->Stop(t->handle);
  }
  if (s != nullptr && group != nullptr) s->Stop(group);
}

void RankRuntime::EmitLaunch(const Op& op, CommState* c, int mask,
                             const std::vector<void*>& api_handles, void* group_api,
                             std::shared_ptr<Launch> launch) {
  // 7a: KernelLaunch around cuLaunchKernelEx; the GPU may start right away.
  EmitKernelLaunch(c, mask, group_api);
  Launch* l = launch.get();
  Enqueue(std::move(launch));
  // 7b: hostStreamPlanTask: Group, then Coll/P2p starts in launch order.
  EmitPlanTask(op, c, mask, api_handles, l, SeqRule::kEager, /*post=*/true);
  const ProfilerShim* s = TableLive() ? c->shim : nullptr;
  if (s != nullptr && group_api != nullptr) s->Stop(group_api);
}

Op RankRuntime::Visible(const Op& op, const CommState& c) const {
  // nccl.md §Call sequences v5: collectives on one-rank comms produce no events at all.
  if (c.info.nranks != 1) return op;
  Op visible = op;
  visible.calls.clear();
  for (const Call& call : op.calls) {
    if (call.is_p2p()) visible.calls.push_back(call);
  }
  return visible;
}

std::shared_ptr<Launch> RankRuntime::MakeLaunch(const Op& visible, const std::vector<int>& order,
                                                CommState* c, int mask, int64_t i,
                                                uint64_t* enqueued) {
  auto launch = std::make_shared<Launch>();
  launch->comm_local = static_cast<int>(visible.comm);
  launch->comm_global = c->info.global_index;
  launch->my_member = c->info.my_rank;
  launch->members = c->info.nranks;
  *enqueued = ++c->launches;
  launch->p2p =
      !visible.calls.empty() && std::all_of(visible.calls.begin(), visible.calls.end(),
                                            [](const Call& call) { return call.is_p2p(); });
  // nccl.md §Call sequences v5, groups: each collective of a plan moves its own data over the
  // comm's connections, so collectives pair task by task in launch order, not kernel by kernel.
  launch->pair_target = launch->p2p ? ++c->p2p_launches : (c->coll_tasks += visible.calls.size());
  if (launch->p2p) {
    for (const Call& call : visible.calls) {
      if (std::find(launch->peers.begin(), launch->peers.end(), call.peer) == launch->peers.end()) {
        launch->peers.push_back(call.peer);
      }
    }
  }
  launch->op = i;
  launch->gpu_hang = opts_.FindFault(FaultKind::kGpuHang, opts_.rank, i) != nullptr;
  launch->tasks = MakeTasks(visible, order, c->info, mask);
  MarkSymmetric(launch.get(), *c, i);
  return launch;
}

std::vector<std::shared_ptr<Task>> RankRuntime::MakeTasks(const Op& visible,
                                                          const std::vector<int>& order,
                                                          const CommInfo& info, int mask) {
  std::vector<std::shared_ptr<Task>> tasks;
  for (int k : order) {
    auto t = std::make_shared<Task>();
    t->call = visible.calls[k];
    t->mask = mask;
    t->network = info.nnodes > 1;
    t->send_peer = (info.my_rank + 1) % info.nranks;
    t->recv_peer = (info.my_rank + info.nranks - 1) % info.nranks;
    tasks.push_back(t);
  }
  return tasks;
}

void RankRuntime::RunOp(int64_t i) {
  ApplyBeforeOpFaults(i);
  if (opts_.FindSkipFault(opts_.rank, i, /*one_call=*/false) != nullptr) {
    EMU_WARN("fault: rank %d skips op %lld", opts_.rank, static_cast<long long>(i));
    return;
  }
  Op op = ScheduleOp(opts_.seed, i, topo_, opts_.rank);
  if (const Fault* f = opts_.FindSkipFault(opts_.rank, i, /*one_call=*/true)) {
    EMU_WARN("fault: rank %d leaves call %d out of the group of op %lld", opts_.rank, f->call,
             static_cast<long long>(i));
    op.calls.erase(op.calls.begin() + f->call);
  }
  if (const Fault* f = opts_.FindFault(FaultKind::kMismatch, opts_.rank, i)) {
    ApplyMismatch(f->field, &op);
  }
  CommState* c = &comms_[static_cast<int>(op.comm)];
  ApplyRasOverride(i);
  // nccl.md §Activation mask: the mask in effect when the API call is made applies to the task.
  int mask = __atomic_load_n(&mask_, __ATOMIC_RELAXED);
  if (IsCeOp(opts_, i, c->info)) {  // --ce: a copy-engine AllGather (ce_coll.h)
    RunCeOp(op, c, mask, i);
    return;
  }
  const Op visible = Visible(op, *c);
  std::vector<void*> api_handles;
  void* group_api = nullptr;
  EmitApiEvents(visible, c, mask, &api_handles, &group_api, /*graph_captured=*/false);
  const std::vector<int> order = LaunchOrder(visible);
  uint64_t enqueued = 0;
  std::shared_ptr<Launch> launch = MakeLaunch(visible, order, c, mask, i, &enqueued);
  std::vector<void*> ordered_api;
  for (int k : order) ordered_api.push_back(api_handles[k]);
  WaitInFlight(kMaxInFlight);
  if (LifecycleEnded()) return;  // the framework gave up on the comms meanwhile
  if (i == opts_.mark_op) coord_->rank(opts_.rank)->mark_wall_ns = WallNs();
  coord_->Publish(launch->comm_global, coord_->enqueued(launch->comm_global, launch->my_member),
                  enqueued);
  EmitLaunch(visible, c, mask, ordered_api, group_api, launch);
  __atomic_store_n(&coord_->rank(opts_.rank)->ops_enqueued, static_cast<uint64_t>(i + 1),
                   __ATOMIC_RELEASE);
}

// nccl.md §CUDA graphs, capture: the API events and KernelLaunch fire once, marked
// graphCaptured, on the capturing (user) thread; KernelLaunch then means
// "recorded". A plan with proxy ops (the comm spans nodes, or KernelCh is in
// the mask) defers Group/Coll/P2p and the proxy posts to a host callback that
// runs at every replay; one without runs them now, once, and nothing at
// replay.
void RankRuntime::CaptureGraph() {
  for (int k = 0; k < kPeriod; ++k) {
    const Op op = GraphOp(opts_.seed, opts_.ops + k, topo_, opts_.rank);
    CommState* c = &comms_[static_cast<int>(op.comm)];
    CapturedOp& cap = captured_[k];
    cap.op = Visible(op, *c);
    cap.mask = __atomic_load_n(&mask_, __ATOMIC_RELAXED);
    cap.order = LaunchOrder(cap.op);
    std::vector<void*> api_handles;
    void* group_api = nullptr;
    EmitApiEvents(cap.op, c, cap.mask, &api_handles, &group_api, /*graph_captured=*/true);
    for (int idx : cap.order) cap.api_handles.push_back(api_handles[idx]);
    EmitKernelLaunch(c, cap.mask, group_api);
    cap.host_callback = c->info.nnodes > 1 || (cap.mask & abi::kProfileKernelCh) != 0;
    if (!cap.host_callback) {
      Launch once;  // a capture launches nothing: no launch counter moves
      once.tasks = MakeTasks(cap.op, cap.order, c->info, cap.mask);
      EmitPlanTask(cap.op, c, cap.mask, cap.api_handles, &once, SeqRule::kPersistent,
                   /*post=*/false);
    }
    const ProfilerShim* s = TableLive() ? c->shim : nullptr;
    if (s != nullptr && group_api != nullptr) s->Stop(group_api);
  }
}

// One cudaGraphLaunch: the replay's kPeriod launches enqueued at once, each
// on its comm's stream (--streams comm: the graph's branches, as PyTorch
// captures each process group's ops on its own stream), no profiler event on
// this thread (the host callbacks fire on the streams). The replay starts
// after every launch enqueued before it completed.
void RankRuntime::LaunchReplay(int64_t first) {
  for (int k = 0; k < kPeriod; ++k) ApplyBeforeOpFaults(first + k);
  WaitInFlight(kMaxInFlight);
  uint64_t before = 0;
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    before = launched_;
  }
  for (int k = 0; k < kPeriod; ++k) {
    const int64_t i = first + k;
    const CapturedOp& cap = captured_[k];
    CommState* c = &comms_[static_cast<int>(cap.op.comm)];
    uint64_t enqueued = 0;
    std::shared_ptr<Launch> launch = MakeLaunch(cap.op, cap.order, c, cap.mask, i, &enqueued);
    launch->captured = &cap;
    launch->after_completed = before;
    if (i == opts_.mark_op) coord_->rank(opts_.rank)->mark_wall_ns = WallNs();
    coord_->Publish(launch->comm_global, coord_->enqueued(launch->comm_global, launch->my_member),
                    enqueued);
    Enqueue(std::move(launch));
    __atomic_store_n(&coord_->rank(opts_.rank)->ops_enqueued, static_cast<uint64_t>(i + 1),
                     __ATOMIC_RELEASE);
  }
}

// nccl.md §CUDA graphs, replay: hostStreamPlanTask as a CUDA host function, run when the
// stream reaches the launch, before its kernel: here on the thread of the
// stream the launch runs on (its comm's with --streams comm, so the comms'
// callbacks may run at the same time), never the user thread. Coll/P2p
// parents are the capture's API handles, long stopped.
void RankRuntime::ReplayHostCallback(Launch* l) {
  const CapturedOp& cap = *l->captured;
  EmitPlanTask(cap.op, &comms_[l->comm_local], cap.mask, cap.api_handles, l, SeqRule::kPersistent,
               /*post=*/true);
}

int RankRuntime::Run() {
  RankSlot* slot = coord_->rank(opts_.rank);
  __atomic_store_n(&slot->pid, static_cast<int64_t>(getpid()), __ATOMIC_RELEASE);
  LoadFakeCuda(opts_);  // as NCCL has the driver loaded before any comm init
  SymSetup();
  // nccl.md §Loading: init runs per comm, on the user thread or, grouped, on NCCL's
  // async-job threads concurrently; each comm's proxy starts after its init.
  if (opts_.nonblocking_init) {
    InitCommsNonblocking();
  } else if (opts_.grouped_init) {
    std::vector<std::thread> jobs;
    for (auto& c : comms_) jobs.emplace_back([this, &c] { InitComm(&c); });
    for (auto& j : jobs) j.join();
  } else {
    for (auto& c : comms_) InitComm(&c);
  }
  for (auto& c : comms_) c.proxy = std::thread([this, &c] { ProxyLoop(&c); });
  StartSymProfilers();
  for (int k = 0; k < kCommsPerRank; ++k) comms_[k].stream = StartStream(k);
  __atomic_store_n(&slot->state, kRankRunning, __ATOMIC_RELEASE);
  StartFrameworkWatchdog();

  for (int64_t i = 0; i < opts_.ops && !LifecycleEnded(); ++i) RunOp(i);
  if (LifecycleEnded()) AfterFrameworkWatchdog();
  if (opts_.graph_replays > 0 && !LifecycleEnded()) {
    CaptureGraph();
    for (int r = 0; r < opts_.graph_replays; ++r) LaunchReplay(opts_.ops + int64_t{kPeriod} * r);
  }

  WaitInFlight(1);  // the final stream sync
  {
    std::lock_guard<std::mutex> lock(stream_mu_);
    stream_exit_ = true;
  }
  stream_cv_.notify_all();
  for (GpuStream& s : streams_) {
    if (s.thread.joinable()) s.thread.join();
  }
  StopSymProfilers();
  for (auto& c : comms_) {
    {
      std::lock_guard<std::mutex> lock(c.mu);
      c.stop = true;
    }
    c.cv.notify_all();
    if (c.proxy.joinable()) c.proxy.join();  // not when the lifecycle ended it
  }
  // nccl.md §Loading: finalize at comm destroy, after the proxy thread joined; the
  // last one dlcloses the plugin.
  for (int k = kCommsPerRank - 1; k >= 0; --k) DestroyComm(&comms_[k]);
  FinishLifecycle();
  __atomic_store_n(&slot->state, LifecycleEnded() ? kRankAborted : kRankFinished, __ATOMIC_RELEASE);
  return 0;
}

// --- GPU stream ------------------------------------------------------------

// The kernel's share of the work once its peers are there: --step-us, plus
// a slow link's extra time (every rank's transfer takes it).
void RankRuntime::Transfer(const Launch& l) const {
  int64_t us = opts_.step_us;
  const CommState& c = l.comm_local == kCommsPerRank ? *shrunk_ : comms_[l.comm_local];
  if (const Fault* f = opts_.FindLinkFaultOn(l.op, c.info.kind)) us += f->us;
  if (us > 0) usleep(static_cast<useconds_t>(us));
}

GpuStream* RankRuntime::StartStream(int local) {
  const int index = opts_.streams == StreamMode::kComm ? local : 0;
  GpuStream* s = &streams_[index];
  if (!s->thread.joinable()) {
    s->id = RankStream(opts_.rank, index);
    s->thread = std::thread([this, s] { StreamLoop(s); });
  }
  return s;
}

void RankRuntime::StreamLoop(GpuStream* s) {
  for (;;) {
    std::shared_ptr<Launch> l;
    bool callback = false;
    {
      std::unique_lock<std::mutex> lock(stream_mu_);
      stream_cv_.wait(lock, [&] { return !s->queue.empty() || stream_exit_; });
      if (s->queue.empty()) return;
      // A graph replay's branch waits for the work launched before the graph
      // (its kernels exit at once on an abort).
      stream_cv_.wait(lock, [&] {
        return completed_ >= s->queue.front()->after_completed ||
               __atomic_load_n(&stop_, __ATOMIC_ACQUIRE);
      });
      l = s->queue.front();
      s->queue.pop_front();
      // No callback once the framework is ending the comms (lifecycle.cc
      // waits for the running ones before their finalize).
      callback = l->captured != nullptr && l->captured->host_callback && !ending_ && !ended_;
      if (callback) ++host_callbacks_;
    }
    if (callback) {
      ReplayHostCallback(l.get());
      {
        std::lock_guard<std::mutex> lock(stream_mu_);
        --host_callbacks_;
      }
      stream_cv_.notify_all();
    }
    ExecuteLaunch(*l);
    {
      std::lock_guard<std::mutex> lock(stream_mu_);
      ++completed_;
    }
    FakeCudaCompleted(s->id);
    stream_cv_.notify_all();
    RankSlot* slot = coord_->rank(opts_.rank);
    __atomic_fetch_add(&slot->ops_completed, 1, __ATOMIC_RELEASE);
    __atomic_store_n(&slot->progress_wall_ns, WallNs(), __ATOMIC_RELEASE);
  }
}

void RankRuntime::ExecuteLaunch(const Launch& l) {
  CommState* c = CommAt(l.comm_local);
  uint64_t target = l.pair_target;
  // A slow or throttled GPU: the work before the collective on this stream
  // takes longer, so the stream reaches the launch late (it was enqueued on
  // time).
  if (const Fault* f = opts_.FindFaultOn(FaultKind::kGpuSlow, opts_.rank, l.op, c->info.kind)) {
    usleep(static_cast<useconds_t>(f->us));
  }
  if (l.p2p) {
    ExecuteP2pLaunch(l);
    return;
  }
  if (!l.tasks.empty() && l.tasks[0]->sym) {
    ExecuteSymLaunch(l);
    return;
  }
  coord_->Publish(l.comm_global, coord_->reached(l.comm_global, l.my_member), target);
  uint64_t start = GpuNow();
  for (size_t k = 0; k < l.tasks.size(); ++k) l.tasks[k]->gpu_start.store(start + k * 40);
  Notify(c);
  // The kernel spins until every member's kernel arrived ...
  coord_->WaitAll(l.comm_global, 1, l.members, target, &stop_);
  if (l.gpu_hang) {
    EMU_WARN("fault: rank %d kernel of op %lld never finishes", opts_.rank,
             static_cast<long long>(l.op));
    for (;;) pause();
  }
  Transfer(l);
  // ... and finishes only once every member has done its share.
  coord_->Publish(l.comm_global, coord_->done(l.comm_global, l.my_member), target);
  coord_->WaitAll(l.comm_global, 2, l.members, target, &stop_);
  uint64_t end = GpuNow();
  for (size_t k = 0; k < l.tasks.size(); ++k) l.tasks[k]->gpu_end.store(end + k * 40);
  Notify(c);
}

// A Send/Recv launch moves data as soon as the peers it talks to have posted
// their matching launch (coord.h): it waits for them only, never for the rest
// of the comm, and a hung kernel never posts, so it holds just its peers.
void RankRuntime::ExecuteP2pLaunch(const Launch& l) {
  CommState* c = CommAt(l.comm_local);
  uint64_t target = l.pair_target;
  uint64_t start = GpuNow();
  for (size_t k = 0; k < l.tasks.size(); ++k) l.tasks[k]->gpu_start.store(start + k * 40);
  Notify(c);
  if (l.gpu_hang) {
    EMU_WARN("fault: rank %d kernel of op %lld never finishes", opts_.rank,
             static_cast<long long>(l.op));
    for (;;) pause();
  }
  coord_->Publish(l.comm_global, coord_->p2p(l.comm_global, l.my_member), target);
  coord_->WaitMembers(l.comm_global, 3, l.peers, target, &stop_);
  Transfer(l);
  uint64_t end = GpuNow();
  for (size_t k = 0; k < l.tasks.size(); ++k) l.tasks[k]->gpu_end.store(end + k * 40);
  Notify(c);
}

}  // namespace emu
}  // namespace flightrec

// The proxy progress thread of one communicator ("NCCL Progress"): reports
// kernel progress the GPU stream wrote (KernelCh, nccl.md §Call sequences v5), network progress for
// comms spanning nodes (ProxyOp/ProxyStep, nccl.md §Call sequences v5) and its own activity
// (ProxyCtrl, nccl.md §Call sequences v5). Like NCCL's it notices events on a later pass than they
// happen, and never delivers a KernelCh start and stop in the same pass.
#include <unistd.h>

#include <chrono>

#include "emulator/src/rank_runtime.h"
#include "flightrec/record_names.h"
#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace emu {

namespace abi = ::flightrec::nccl_abi;

namespace {
constexpr int kGateProxyOp = abi::kProfileProxyOp | abi::kProfileProxyStep | abi::kProfileNetPlugin;
constexpr int kGateProxyStep = abi::kProfileProxyStep | abi::kProfileNetPlugin;
constexpr int kChunkSize = 1 << 17;

// Bytes one ProxyStep moves: the task's payload over its proxy ops (local
// and handed to a PXN partner alike) and their steps.
uint64_t StepTransSize(const Task& t) {
  const uint64_t bytes = t.call.TaskCount() * format::DataTypeSize(t.call.TaskDatatype());
  return bytes / (t.proxy_ops.empty() ? 1 : t.proxy_ops.size()) / kStepsPerOp + 1;
}
}  // namespace

void RankRuntime::Post(CommState* c, std::shared_ptr<Task> t) {
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->posted.push_back(std::move(t));
    c->dirty = true;
  }
  c->cv.notify_one();
}

void RankRuntime::Notify(CommState* c) {
  {
    std::lock_guard<std::mutex> lock(c->mu);
    c->dirty = true;
  }
  c->cv.notify_one();
}

void RankRuntime::ProxyCtrl(CommState* c, int state, int appended) {
  // nccl.md §Call sequences v5: the live mask decides, parent NULL, rank 0.
  if (c->shim == nullptr || !TableLive()) return;
  if (!(__atomic_load_n(&mask_, __ATOMIC_RELAXED) & abi::kProfileProxyCtrl)) return;
  EventDesc d;
  d.type = Ev::kProxyCtrl;
  void* h = nullptr;
  c->shim->Start(c->ctx, &h, d);
  if (h == nullptr) return;
  StateArgs a;
  a.appended_proxy_ops = appended;
  c->shim->Record(h, state, a);
  c->shim->Stop(h);
}

int RankRuntime::PxnPartner() const {
  if (!opts_.pxn) return -1;
  const int partner = opts_.rank ^ 1;
  const bool same_node = partner / opts_.ranks_per_node == opts_.rank / opts_.ranks_per_node;
  return partner < opts_.ranks && same_node ? partner : -1;
}

void RankRuntime::ProxyAppend(CommState* c, Task* t) {
  t->appended = true;
  if (!t->network || !(t->mask & kGateProxyOp)) return;
  const ProfilerShim* s = c->shim;
  int n = static_cast<int>(t->call.channels.size());
  t->proxy_ops.assign(2 * n, nullptr);
  t->pxn.assign(2 * n, 0);
  const bool pxn = PxnPartner() >= 0;
  for (int ch = 0; ch < n; ++ch) {
    for (int dir = 0; dir < 2; ++dir) {
      // nccl.md §PXN: ncclLocalOpAppend puts the op in the partner's pool; only its
      // proxy, in its process, ever reports it.
      if (pxn && dir == 0 && ch % 2 == 1) {
        t->pxn[2 * ch + dir] = 1;
        continue;
      }
      EventDesc d;
      d.type = Ev::kProxyOp;
      d.parent = t->handle;
      d.rank = c->info.my_rank;
      d.pid = static_cast<int>(getpid());
      d.channel_id = t->call.channels[ch];
      d.is_send = dir == 0 ? 1 : 0;
      d.peer = dir == 0 ? t->send_peer : t->recv_peer;
      d.n_steps = kStepsPerOp;
      d.chunk_size = kChunkSize;
      s->Start(c->ctx, &t->proxy_ops[2 * ch + dir], d);
    }
  }
}

void RankRuntime::ProxyKernelStart(CommState* c, Task* t) {
  const ProfilerShim* s = c->shim;
  uint64_t start = t->gpu_start.load();
  if ((t->mask & abi::kProfileKernelCh) && s->Delivers(Ev::kKernelCh)) {
    t->kernel_handles.assign(t->call.channels.size(), nullptr);
    for (size_t ch = 0; ch < t->call.channels.size(); ++ch) {
      EventDesc d;  // nccl.md §Call rules: KernelCh rank is 0
      d.type = Ev::kKernelCh;
      d.parent = t->handle;
      d.channel_id = t->call.channels[ch];
      d.ptimer = start + ch * 8;
      s->Start(c->ctx, &t->kernel_handles[ch], d);
    }
  }
  if (!t->network || !(t->mask & kGateProxyStep)) return;
  // Network steps begin once the kernel produces data (nccl.md §Call sequences v5).
  t->proxy_steps.assign(t->proxy_ops.size() * kStepsPerOp, nullptr);
  for (size_t op = 0; op < t->proxy_ops.size(); ++op) {
    if (t->pxn[op]) continue;  // its steps run on the partner's proxy
    bool send = op % 2 == 0;
    for (int k = 0; k < kStepsPerOp; ++k) {
      EventDesc d;
      d.type = Ev::kProxyStep;
      d.parent = t->proxy_ops[op];
      d.rank = c->info.my_rank;
      d.step = k;
      void** h = &t->proxy_steps[op * kStepsPerOp + k];
      s->Start(c->ctx, h, d);
      // nccl.md §Call sequences v5: step records are skipped when the ProxyOp was declined.
      if (*h == nullptr || t->proxy_ops[op] == nullptr) continue;
      s->Record(*h, send ? abi::kProxyStepSendGPUWait : abi::kProxyStepRecvWait, StateArgs());
    }
  }
}

void RankRuntime::ProxyKernelEnd(CommState* c, Task* t) {
  const ProfilerShim* s = c->shim;
  uint64_t end = t->gpu_end.load();
  for (size_t ch = 0; ch < t->kernel_handles.size(); ++ch) {
    if (t->kernel_handles[ch] == nullptr) continue;
    StateArgs a;
    a.ptimer = end + ch * 8;
    s->Record(t->kernel_handles[ch], abi::kKernelChStop, a);  // immediately followed by stop
    s->Stop(t->kernel_handles[ch]);
  }
  StateArgs sized;
  sized.trans_size = StepTransSize(*t);
  for (size_t op = 0; op < t->proxy_ops.size(); ++op) {
    bool send = op % 2 == 0;
    for (int k = 0; k < kStepsPerOp && !t->proxy_steps.empty(); ++k) {
      void* h = t->proxy_steps[op * kStepsPerOp + k];
      if (h == nullptr) continue;
      if (t->proxy_ops[op] != nullptr) {
        if (send) {
          s->Record(h, abi::kProxyStepSendPeerWaitV4, StateArgs());
          s->Record(h, abi::kProxyStepSendWait, sized);
        } else {
          s->Record(h, abi::kProxyStepRecvFlushWait, sized);
          s->Record(h, abi::kProxyStepRecvGPUWait, sized);
        }
      }
      s->Stop(h);
    }
  }
  // nccl.md §Call sequences v5: all sub-ops of the args stop together.
  for (void* h : t->proxy_ops) {
    if (h != nullptr) s->Stop(h);
  }
  PxnHandOff(c, t);
}

void RankRuntime::PxnHandOff(CommState* c, Task* t) {
  const int partner = PxnPartner();
  if (partner < 0) return;
  const uint64_t trans_size = StepTransSize(*t);
  for (size_t op = 0; op < t->pxn.size(); ++op) {
    if (!t->pxn[op]) continue;
    PxnOp p;
    p.pid = static_cast<int64_t>(getpid());
    p.context = reinterpret_cast<uintptr_t>(c->ctx);
    p.parent = reinterpret_cast<uintptr_t>(t->handle);
    p.rank = c->info.my_rank;
    p.channel = t->call.channels[op / 2];
    p.peer = t->send_peer;
    p.n_steps = kStepsPerOp;
    p.trans_size = trans_size;
    // A full mailbox means the partner's proxy is gone (finished, killed,
    // stuck): NCCL's op would not progress either; nothing is reported.
    coord_->PxnPost(partner, p);
  }
}

// The partner's ops, reported to this process's plugin as NCCL's proxy does
// for PXN (nccl.md §PXN): the context and parent are the originator's, meaningless
// here (and, with handles that encode slot numbers, possibly decodable as one
// of ours); proxyOp.pid says so. The steps' parent is what start returned.
void RankRuntime::PxnReportForeign(CommState* c) {
  if (!opts_.pxn || c->shim == nullptr || !TableLive()) return;
  const ProfilerShim* s = c->shim;
  PxnOp p;
  while (coord_->PxnTake(opts_.rank, &p)) {
    if (!(__atomic_load_n(&mask_, __ATOMIC_RELAXED) & kGateProxyOp)) continue;
    void* ctx = reinterpret_cast<void*>(static_cast<uintptr_t>(p.context));
    EventDesc d;
    d.type = Ev::kProxyOp;
    d.parent = reinterpret_cast<void*>(static_cast<uintptr_t>(p.parent));
    d.rank = p.rank;
    d.pid = static_cast<int>(p.pid);
    d.channel_id = p.channel;
    d.is_send = 1;
    d.peer = p.peer;
    d.n_steps = p.n_steps;
    d.chunk_size = kChunkSize;
    void* op = nullptr;
    s->Start(ctx, &op, d);
    if (op != nullptr) s->Record(op, abi::kProxyOpInProgressV4, StateArgs());
    for (int k = 0; k < p.n_steps; ++k) {
      EventDesc sd;
      sd.type = Ev::kProxyStep;
      sd.parent = op;
      sd.rank = p.rank;
      sd.step = k;
      void* h = nullptr;
      s->Start(ctx, &h, sd);
      if (h == nullptr) continue;
      if (op != nullptr) {
        StateArgs sized;
        sized.trans_size = p.trans_size;
        s->Record(h, abi::kProxyStepSendGPUWait, StateArgs());
        s->Record(h, abi::kProxyStepSendWait, sized);
      }
      s->Stop(h);
    }
    if (op != nullptr) s->Stop(op);
  }
}

bool RankRuntime::ProxyPass(CommState* c, std::deque<std::shared_ptr<Task>>* tasks) {
  bool acted = false;
  bool live = TableLive();
  // One proxy per process serves PXN in NCCL; here the world comm's.
  if (c == &comms_[0]) PxnReportForeign(c);
  int appended = 0;
  for (auto& t : *tasks) appended += (!t->appended && t->network) ? 1 : 0;
  if (appended > 0) ProxyCtrl(c, abi::kProxyCtrlAppend, 0);
  for (auto& t : *tasks) {
    if (!t->appended) {
      if (live) ProxyAppend(c, t.get());
      t->appended = true;
      acted = true;
    }
  }
  if (appended > 0) ProxyCtrl(c, abi::kProxyCtrlAppendEnd, appended);
  for (auto it = tasks->begin(); it != tasks->end();) {
    Task* t = it->get();
    if (live && !t->in_progress) {
      for (void* h : t->proxy_ops) {
        if (h != nullptr) c->shim->Record(h, abi::kProxyOpInProgressV4, StateArgs());
      }
      t->in_progress = true;
    }
    if (!t->kernel_started) {
      if (t->gpu_start.load() != 0) {
        if (live) ProxyKernelStart(c, t);
        t->kernel_started = true;
        acted = true;
      }
      ++it;  // the stop is noticed on a later pass at the earliest
      continue;
    }
    if (t->gpu_end.load() != 0) {
      if (live) ProxyKernelEnd(c, t);
      it = tasks->erase(it);
      acted = true;
      continue;
    }
    ++it;
  }
  return acted;
}

void RankRuntime::ProxyLoop(CommState* c) {
  std::deque<std::shared_ptr<Task>> tasks;
  bool active = false;
  for (;;) {
    bool stopping = false;  // c->stop, read under c->mu (the user thread sets it)
    {
      std::unique_lock<std::mutex> lock(c->mu);
      if (!c->dirty && !c->stop) {
        if (active) ProxyCtrl(c, abi::kProxyCtrlIdle, 0);
        active = false;
        // nccl.md §Call sequences v5: Sleep ... Wakeup around the condition wait.
        bool sleep_event = tasks.empty();
        if (sleep_event) {
          lock.unlock();
          ProxyCtrl(c, abi::kProxyCtrlSleep, 0);
          lock.lock();
        }
        c->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return c->dirty || c->stop; });
        if (sleep_event) {
          lock.unlock();
          ProxyCtrl(c, abi::kProxyCtrlWakeup, 0);
          lock.lock();
        }
      }
      c->dirty = false;
      while (!c->posted.empty()) {
        tasks.push_back(std::move(c->posted.front()));
        c->posted.pop_front();
      }
      stopping = c->stop;
      if (stopping && tasks.empty()) return;
    }
    if (!active) ProxyCtrl(c, abi::kProxyCtrlActive, 0);
    active = true;
    // Passes continue while they make progress, then the thread sleeps.
    while (ProxyPass(c, &tasks)) {
    }
    if (stopping) {
      // Teardown after the stream drained: report what is left.
      while (!tasks.empty() && ProxyPass(c, &tasks)) {
      }
      std::lock_guard<std::mutex> lock(c->mu);
      if (c->posted.empty() && tasks.empty()) return;
      if (c->posted.empty()) return;  // never-finished tasks (teardown)
    }
  }
}

}  // namespace emu
}  // namespace flightrec

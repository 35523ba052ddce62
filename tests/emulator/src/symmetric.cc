// --sym and --ras-mask: symmetric kernels, NCCL 2.31's per-communicator
// profiler thread and RAS's job-wide mask override (symmetric.h).
#include "emulator/src/symmetric.h"

#include <unistd.h>

#include <atomic>
#include <chrono>

#include "emulator/src/nccl_logger.h"
#include "emulator/src/rank_runtime.h"
#include "plugin/nccl/profiler_abi.h"

namespace {
std::atomic<int> g_emu_nccl_code{0};
}  // namespace

// libnccl's version query, exported by flightrec-emu (ENABLE_EXPORTS) as
// libnccl exports it: the plugin finds it with dlsym(RTLD_DEFAULT).
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  const int code = g_emu_nccl_code.load(std::memory_order_relaxed);
  if (version == nullptr || code == 0) return 4;  // ncclInvalidArgument
  *version = code;
  return 0;
}

namespace flightrec {
namespace emu {

namespace abi = ::flightrec::nccl_abi;

void SetEmulatedNcclVersion(const NcclVersion& v) {
  g_emu_nccl_code.store(v.Code(), std::memory_order_relaxed);
}

void RankRuntime::SymSetup() { SetEmulatedNcclVersion(opts_.nccl_version); }

void RankRuntime::MarkSymmetric(Launch* l, const CommState& c, int64_t i) const {
  if (!opts_.sym || i % kPeriod != 0 || c.info.kind != CommKind::kTp || c.info.nnodes != 1 ||
      c.info.nranks < 2 || l->tasks.size() != 1 ||
      l->tasks[0]->call.func != format::kFuncAllReduce) {
    return;
  }
  l->tasks[0]->sym = true;
}

void RankRuntime::StartSymProfilers() {
  if (!opts_.sym || !SymmetricVisible(opts_.nccl_version)) return;
  for (auto& c : comms_) {
    c.sym_profiler = std::make_shared<SymProfiler>();
    CommState* cp = &c;
    c.sym_profiler->thread = std::thread([this, cp] { SymProfilerLoop(cp); });
  }
}

void RankRuntime::StopSymProfilers() {
  for (auto& c : comms_) {
    SymProfiler* p = c.sym_profiler.get();
    if (p == nullptr) continue;
    {
      std::lock_guard<std::mutex> lock(p->mu);
      p->stop = true;
    }
    p->cv.notify_all();
    p->thread.join();
  }
}

void RankRuntime::PostSym(CommState* c, std::shared_ptr<Task> t) {
  SymProfiler* p = c->sym_profiler.get();
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    p->posted.push_back(std::move(t));
    p->dirty = true;
  }
  p->cv.notify_one();
}

void RankRuntime::NotifySym(CommState* c) {
  SymProfiler* p = c->sym_profiler.get();
  if (p == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(p->mu);
    p->dirty = true;
  }
  p->cv.notify_one();
}

// Reports what the kernel did since the last pass, in order (a late pass
// catches up: every phase start and stop is delivered). True once the
// kernel finished and everything was reported.
bool RankRuntime::SymReport(CommState* c, Task* t) {
  const int phase = t->sym_phase.load();
  if (phase < 0 || t->sym_emitted >= kSymDone) return t->sym_emitted >= kSymDone;
  const ProfilerShim* s = TableLive() ? c->shim : nullptr;
  const size_t n = t->call.channels.size();
  // NCCL turns KernelCh on when KernelPhase is asked for.
  const bool kernel_ch = (t->mask & (abi::kProfileKernelCh | abi::kProfileKernelPhase)) != 0 &&
                         s != nullptr && s->Delivers(Ev::kKernelCh);
  const bool phases =
      kernel_ch && (t->mask & abi::kProfileKernelPhase) != 0 && s->Delivers(Ev::kKernelPhase);
  auto start_phase = [&](int ph) {
    for (size_t ch = 0; ch < n; ++ch) {
      if (t->kernel_handles[ch] == nullptr) continue;
      EventDesc d;
      d.type = Ev::kKernelPhase;
      d.parent = t->kernel_handles[ch];
      d.channel_id = t->call.channels[ch];
      d.phase_id = static_cast<uint8_t>(ph);
      d.ptimer = GpuNow() + ch * 8;
      s->Start(c->ctx, &t->phase_handles[ch], d);
    }
  };
  auto stop_phase = [&]() {
    for (size_t ch = 0; ch < n; ++ch) {
      void* h = t->phase_handles[ch];
      if (h == nullptr) continue;
      StateArgs a;
      a.ptimer = GpuNow() + ch * 8;
      s->Record(h, abi::kKernelPhaseStop, a);
      s->Stop(h);
      t->phase_handles[ch] = nullptr;
    }
  };
  if (t->sym_emitted < kSymInitialSync) {
    t->kernel_handles.assign(n, nullptr);
    t->phase_handles.assign(n, nullptr);
    if (kernel_ch) {
      const uint64_t start = t->gpu_start.load();
      for (size_t ch = 0; ch < n; ++ch) {
        EventDesc d;  // nccl.md §Call rules: KernelCh rank is 0
        d.type = Ev::kKernelCh;
        d.parent = t->handle;
        d.channel_id = t->call.channels[ch];
        d.ptimer = start + ch * 8;
        s->Start(c->ctx, &t->kernel_handles[ch], d);
      }
      if (phases) start_phase(kSymInitialSync);
    }
    t->sym_emitted = kSymInitialSync;
  }
  for (int ph = kSymCompute; ph <= kSymFinalSync; ++ph) {
    if (phase < ph || t->sym_emitted >= ph) continue;
    if (phases) {
      stop_phase();
      start_phase(ph);
    }
    t->sym_emitted = ph;
  }
  if (phase >= kSymDone) {
    if (phases) stop_phase();
    const uint64_t end = t->gpu_end.load();
    for (size_t ch = 0; ch < n; ++ch) {
      if (t->kernel_handles[ch] == nullptr) continue;
      StateArgs a;
      a.ptimer = end + ch * 8;
      s->Record(t->kernel_handles[ch], abi::kKernelChStop, a);
      s->Stop(t->kernel_handles[ch]);
    }
    t->sym_emitted = kSymDone;
    return true;
  }
  return false;
}

void RankRuntime::SymProfilerLoop(CommState* c) {
  SymProfiler* p = c->sym_profiler.get();
  std::deque<std::shared_ptr<Task>> tasks;
  for (;;) {
    bool stopping = false;
    {
      std::unique_lock<std::mutex> lock(p->mu);
      p->cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return p->dirty || p->stop; });
      p->dirty = false;
      while (!p->posted.empty()) {
        tasks.push_back(std::move(p->posted.front()));
        p->posted.pop_front();
      }
      stopping = p->stop;
    }
    for (auto it = tasks.begin(); it != tasks.end();) {
      it = SymReport(c, it->get()) ? tasks.erase(it) : it + 1;
    }
    if (stopping) return;  // teardown: what never finished stays unreported
  }
}

// The symmetric kernel on the GPU stream: an initial barrier with every
// member, its compute, a final barrier. A sym-compute fault keeps it in its
// compute phase for good; its peers then finish computing and wait in the
// final sync for it.
void RankRuntime::ExecuteSymLaunch(const Launch& l) {
  CommState* c = &comms_[l.comm_local];
  Task* t = l.tasks[0].get();
  const uint64_t target = l.pair_target;
  coord_->Publish(l.comm_global, coord_->reached(l.comm_global, l.my_member), target);
  t->gpu_start.store(GpuNow());
  t->sym_phase.store(kSymInitialSync);
  NotifySym(c);
  coord_->WaitAll(l.comm_global, 1, l.members, target, &stop_);
  t->sym_phase.store(kSymCompute);
  NotifySym(c);
  for (const Fault& f : opts_.faults) {
    if (f.kind != FaultKind::kSymCompute || f.op != l.op) continue;
    if (f.rank >= 0 && f.rank != opts_.rank) continue;
    EMU_WARN("fault: rank %d symmetric kernel of op %lld never leaves its compute phase",
             opts_.rank, static_cast<long long>(l.op));
    for (;;) pause();
  }
  Transfer(l);
  t->sym_phase.store(kSymFinalSync);
  NotifySym(c);
  coord_->Publish(l.comm_global, coord_->done(l.comm_global, l.my_member), target);
  coord_->WaitAll(l.comm_global, 2, l.members, target, &stop_);
  t->gpu_end.store(GpuNow());
  t->sym_phase.store(kSymDone);
  NotifySym(c);
}

void RankRuntime::ApplyRasOverride(int64_t i) {
  if (i != opts_.ras_mask_op) return;
  int mask = opts_.ras_mask;
  // ncclProfilerEnforceMaskDeps: KernelPhase needs KernelCh.
  if ((mask & abi::kProfileKernelPhase) != 0) mask |= abi::kProfileKernelCh;
  __atomic_store_n(&mask_, mask, __ATOMIC_RELAXED);
  EMU_INFO("Profiler event mask set out-of-band via RAS: 0x%x (before op %lld)", mask,
           static_cast<long long>(i));
}

}  // namespace emu
}  // namespace flightrec

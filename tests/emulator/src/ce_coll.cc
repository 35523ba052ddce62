#include "emulator/src/ce_coll.h"

#include <dlfcn.h>
#include <time.h>

#include <memory>
#include <vector>

#include "emulator/src/nccl_logger.h"
#include "emulator/src/rank_runtime.h"
#include "emulator/src/schedule.h"
#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace emu {

namespace abi = ::flightrec::nccl_abi;

namespace {

using StreamFn = void (*)(void*);
StreamFn g_enqueued = nullptr;  // set before any stream thread starts
StreamFn g_completed = nullptr;

uint64_t CeWallNs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
}

// The bits that make NCCL start CeColl (profiler.cc: any of the three).
constexpr int kCeBits = abi::kProfileCeColl | abi::kProfileCeSync | abi::kProfileCeBatch;

}  // namespace

bool IsCeOp(const Options& opts, int64_t i, const CommInfo& comm) {
  return opts.ce && i % kPeriod == 1 && comm.kind == CommKind::kTp && comm.nnodes == 1 &&
         comm.nranks > 1 && opts.nccl_version.AtLeast(2, 29);
}

void LoadFakeCuda(const Options& opts) {
  if (opts.no_cuda || !opts.ce) return;
#ifdef FLIGHTREC_FAKE_CUDA_PATH
  // Kept loaded for the process lifetime, as NCCL keeps the driver.
  void* lib = dlopen(FLIGHTREC_FAKE_CUDA_PATH, RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    EMU_WARN("cannot load the fake CUDA driver %s: %s", FLIGHTREC_FAKE_CUDA_PATH, dlerror());
    return;
  }
  g_enqueued = reinterpret_cast<StreamFn>(dlsym(lib, "flightrec_fake_cuda_enqueued"));
  g_completed = reinterpret_cast<StreamFn>(dlsym(lib, "flightrec_fake_cuda_completed"));
  EMU_INFO("CUDA driver (emulated) loaded: libcuda.so.1");
#endif
}

void FakeCudaEnqueued(void* stream) {
  if (g_enqueued != nullptr) g_enqueued(stream);
}

void FakeCudaCompleted(void* stream) {
  if (g_completed != nullptr) g_completed(stream);
}

// ceCollTaskAppend (API events), ncclGroupEndInternal, ncclLaunchCeColl.
void RankRuntime::RunCeOp(const Op& op, CommState* c, int mask, int64_t i) {
  const Op visible = Visible(op, *c);
  std::vector<void*> api_handles;
  void* group_api = nullptr;
  // GroupApi start, GroupStartApiStop, CollApi start/stop, GroupEndApiStart.
  EmitApiEvents(visible, c, mask, &api_handles, &group_api, /*graph_captured=*/false);
  const std::vector<int> order = LaunchOrder(visible);
  uint64_t enqueued = 0;
  std::shared_ptr<Launch> launch = MakeLaunch(visible, order, c, mask, i, &enqueued);
  WaitInFlight(kMaxInFlight);
  if (i == opts_.mark_op) coord_->rank(opts_.rank)->mark_wall_ns = CeWallNs();
  coord_->Publish(launch->comm_global, coord_->enqueued(launch->comm_global, launch->my_member),
                  enqueued);

  const ProfilerShim* s = TableLive() ? c->shim : nullptr;
  const CommInfo& info = c->info;
  void* stream = c->stream->id;
  const Call* call = visible.calls.empty() ? nullptr : &visible.calls[0];
  void* ce = nullptr;
  if (s != nullptr && call != nullptr && (mask & kCeBits) != 0) {
    EventDesc d;
    d.type = Ev::kCeColl;
    d.parent = api_handles.empty() ? nullptr : api_handles[0];  // the task keeps CollApi's
    d.rank = info.my_rank;
    d.func = call->func;
    d.count = call->TaskCount();  // AllGather: bytes as ncclInt8
    d.datatype = call->TaskDatatype();
    d.root = call->root;
    d.seq = c->ce_seq;
    d.ce_seq = c->ce_seq;
    // ncclProfilerStartCeCollEvent: comm->nvlsSupport ? "MC" : "UC", a
    // property of the comm (here: even TP groups have NVLS); numBatches 0.
    d.sync_strategy = info.group % 2 == 0 ? "MC" : "UC";
    d.num_batches = 0;
    d.stream = stream;
    d.user_tag = static_cast<uint64_t>(i / kPeriod) + 1;
    d.send_buff = reinterpret_cast<const void*>(0x7e0000000000ULL);
    d.recv_buff = reinterpret_cast<void*>(0x7e0000100000ULL);
    s->Start(c->ctx, &ce, d);
    if (ce != nullptr) {
      __atomic_fetch_add(&coord_->rank(opts_.rank)->records_begun[static_cast<int>(info.kind)], 1,
                         __ATOMIC_RELEASE);
    }
  }
  // ncclMemOpSync: CeSync (the toggling complete flag), ceSeqNum pre-incremented.
  auto sync = [&](bool complete) {
    void* h = nullptr;
    if (s != nullptr && ce != nullptr && (mask & abi::kProfileCeSync) != 0) {
      EventDesc d;
      d.type = Ev::kCeSync;
      d.parent = ce;
      d.rank = info.my_rank;
      d.is_complete = complete;
      d.n_ranks = info.nranks;
      s->Start(c->ctx, &h, d);
    }
    ++c->ce_seq;
    if (h != nullptr) s->Stop(h);
  };
  c->ce_flag = !c->ce_flag;
  sync(c->ce_flag);
  // The syncs' memops and the copies, in stream order: one launch.
  Enqueue(std::move(launch));
  if (s != nullptr && ce != nullptr && (mask & abi::kProfileCeBatch) != 0 && call != nullptr) {
    void* b = nullptr;
    EventDesc d;
    d.type = Ev::kCeBatch;
    d.parent = ce;
    d.rank = info.my_rank;
    d.num_ops = info.nranks - 1;
    d.total_bytes = call->TaskCount() * static_cast<uint64_t>(info.nranks - 1);
    s->Start(c->ctx, &b, d);
    if (b != nullptr) s->Stop(b);
  }
  sync(true);
  if (ce != nullptr) s->Stop(ce);
  if (s != nullptr && group_api != nullptr) s->Stop(group_api);
  __atomic_store_n(&coord_->rank(opts_.rank)->ops_enqueued, static_cast<uint64_t>(i + 1),
                   __ATOMIC_RELEASE);
}

}  // namespace emu
}  // namespace flightrec

#include "support/abi_driver.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "flightrec/record_format.h"
#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace rel {
namespace {

namespace abi = nccl_abi;

constexpr size_t kMaxLoggedLines = 4096;
std::mutex g_log_mu;
std::vector<std::string>* g_log_lines = new std::vector<std::string>();  // never freed: exit-safe

__attribute__((format(printf, 5, 6))) void Logger(int level, unsigned long flags, const char* file,
                                                  int line, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_log_mu);
  // Bounded, so that comm churn cannot make the test's own memory grow.
  if (g_log_lines->size() < kMaxLoggedLines) {
    g_log_lines->push_back(std::string(level == 2 ? "WARN " : "INFO ") + buf);
  }
}

// NCCL master (2.31) is the first release that looks up ncclProfiler_v7
// (emulator/src/nccl_version.cc MaxProfilerApi).
constexpr int kMasterApi = 7;

}  // namespace

std::vector<std::string> LoggedLines() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  return *g_log_lines;
}

void ClearLoggedLines() {
  std::lock_guard<std::mutex> lock(g_log_mu);
  g_log_lines->clear();
}

int CountLogged(const std::string& needle) {
  int n = 0;
  for (const std::string& l : LoggedLines()) n += l.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

AbiDriver::AbiDriver(const std::string& so_path) {
  lib_ = dlopen(so_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib_ == nullptr) {
    const char* e = dlerror();
    error_ = e != nullptr ? e : "dlopen failed";
    return;
  }
  const void* table = dlsym(lib_, "ncclProfiler_v7");
  if (table == nullptr) {
    error_ = so_path + ": no ncclProfiler_v7";
    return;
  }
  shim_.reset(new emu::ProfilerShim(table, 7, kMasterApi));
}

AbiDriver::~AbiDriver() {
  shim_.reset();
  if (lib_ != nullptr) dlclose(lib_);
}

int AbiDriver::Init(void** context, uint64_t comm_hash, const char* name, int nranks, int rank) {
  return shim_->Init(context, comm_hash, &mask_, name, 1, nranks, rank, &Logger);
}

void AbiDriver::Finalize(void* context) { shim_->Finalize(context); }

void AbiDriver::LaunchColl(void* context, int rank, uint64_t index, uint64_t seq, PendingOp* op) {
  emu::EventDesc api;
  api.type = emu::Ev::kCollApi;
  api.func = format::kFuncAllReduce;
  api.datatype = format::kTypeFloat32;
  api.count = 1000 + index;
  api.user_tag = index + 1;
  api.stream = reinterpret_cast<void*>(0x5000);
  void* api_handle = nullptr;
  shim_->Start(context, &api_handle, api);
  if (api_handle != nullptr) shim_->Stop(api_handle);

  emu::EventDesc d;
  d.type = emu::Ev::kColl;
  d.parent = api_handle;
  d.rank = rank;
  d.func = format::kFuncAllReduce;
  d.datatype = format::kTypeFloat32;
  d.count = 1000 + index;
  d.seq = seq;
  d.n_channels = 2;
  d.n_warps = 16;
  d.algo = format::kAlgoRing;
  d.proto = format::kProtoSimple;
  d.user_tag = index + 1;
  op->context = context;
  op->channels = 2;
  op->handle = nullptr;
  shim_->Start(context, &op->handle, d);
  if (op->handle != nullptr) shim_->Stop(op->handle);
}

namespace {

// The KernelCh start of channel `ch` of `op`, dated by its GPU start timer.
emu::EventDesc KernelChDesc(const PendingOp& op, uint8_t ch) {
  emu::EventDesc k;
  k.type = emu::Ev::kKernelCh;
  k.parent = op.handle;
  k.channel_id = ch;
  k.ptimer = op.gpu_start;
  return k;
}

}  // namespace

void AbiDriver::StartKernels(const PendingOp& op) {
  for (uint8_t ch = 0; ch < op.channels; ++ch) {
    void* h = nullptr;
    shim_->Start(op.context, &h, KernelChDesc(op, ch));
  }
}

void AbiDriver::CompleteOp(const PendingOp& op) {
  std::vector<void*> kernels(op.channels, nullptr), proxies(op.channels, nullptr);
  for (uint8_t ch = 0; ch < op.channels; ++ch) {
    shim_->Start(op.context, &kernels[ch], KernelChDesc(op, ch));
    emu::EventDesc p;
    p.type = emu::Ev::kProxyOp;
    p.parent = op.handle;
    p.pid = static_cast<int>(getpid());
    p.channel_id = ch;
    p.is_send = 1;
    p.n_steps = 4;
    p.chunk_size = 1 << 17;
    shim_->Start(op.context, &proxies[ch], p);
    if (proxies[ch] != nullptr) shim_->Record(proxies[ch], abi::kProxyOpInProgressV4, {});
  }
  for (uint8_t ch = 0; ch < op.channels; ++ch) {
    if (kernels[ch] != nullptr) {
      emu::StateArgs a;
      a.ptimer = op.gpu_end;
      shim_->Record(kernels[ch], abi::kKernelChStop, a);
      shim_->Stop(kernels[ch]);
    }
    if (proxies[ch] != nullptr) shim_->Stop(proxies[ch]);
  }
}

void AbiDriver::CompleteKernels(const PendingOp& op) {
  for (uint8_t ch = 0; ch < op.channels; ++ch) {
    void* k = nullptr;
    shim_->Start(op.context, &k, KernelChDesc(op, ch));
    if (k == nullptr) continue;
    emu::StateArgs a;
    a.ptimer = op.gpu_end;
    shim_->Record(k, abi::kKernelChStop, a);
    shim_->Stop(k);
  }
}

void AbiDriver::CompleteProxyOps(const PendingOp& op) {
  for (uint8_t ch = 0; ch < op.channels; ++ch) {
    emu::EventDesc p;
    p.type = emu::Ev::kProxyOp;
    p.parent = op.handle;
    p.pid = static_cast<int>(getpid());
    p.channel_id = ch;
    p.is_send = 1;
    p.n_steps = 4;
    p.chunk_size = 1 << 17;
    void* h = nullptr;
    shim_->Start(op.context, &h, p);
    if (h == nullptr) continue;
    shim_->Record(h, abi::kProxyOpInProgressV4, {});
    shim_->Stop(h);
  }
}

}  // namespace rel
}  // namespace flightrec

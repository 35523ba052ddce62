// Hot-path benchmarks: the plugin on NCCL's threads, driven through the real
// v5 ABI (dlopen + ncclProfiler_v5), against a do-nothing plugin in the same
// run. See docs/performance.md for the method and the figures.
//
//   BM_Collective/plugin:P/net:N   one thread does a whole collective:
//                                  the user-thread events, 8 KernelCh
//                                  channels and (net:1) 2 ProxyOps x 4 steps.
//   BM_Flat/plugin:P/prior:K       the same on a fresh communicator after K
//                                  untimed collectives (flatness).
//   BM_EightComms/plugin:P/net:N   8 communicators, 8 user threads + 8 proxy
//                                  threads; ops handed over through an SPSC
//                                  queue; CPU ns per collective per thread.
// P = 0: do-nothing plugin, 1: flightrec.
//
// `--marker-loop=N` instead runs N collectives (net events included) between
// two marker syscalls, for the strace check in steady_state_test.cc.
#include <benchmark/benchmark.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_plugin.h"

namespace flightrec {
namespace bench {
namespace {

constexpr int kNoop = 0;
constexpr int kFlightrec = 1;
constexpr int kThreadedComms = 8;
constexpr uint64_t kThreadedCollectives = 100000;  // per communicator
constexpr int64_t kFlatIterations = 200000;
constexpr uint64_t kBatch = 64;

Plugin g_plugins[2];
uint64_t g_next_comm_id = 0x1000;

// A communicator that lives until the process exits (so the flightrec
// recorder, created by the first init, is never torn down between runs).
Comm* PersistentComm(int plugin, int rank) {
  Comm* c = new Comm();
  if (!c->Init(g_plugins[plugin], g_next_comm_id++, rank, 8)) {
    fprintf(stderr, "bench: plugin %d declined a communicator (NCCL_FLIGHTREC_*?)\n", plugin);
    exit(2);
  }
  return c;
}

uint64_t ThreadCpuNs() {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

void BM_Collective(benchmark::State& state) {
  const int plugin = static_cast<int>(state.range(0));
  const bool net = state.range(1) != 0;
  static Comm* comms[2][2] = {};
  Comm*& comm = comms[plugin][net ? 1 : 0];
  if (comm == nullptr) comm = PersistentComm(plugin, 0);
  for (auto _ : state) comm->Collective(net);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_Collective)->ArgNames({"plugin", "net"})->ArgsProduct({{0, 1}, {0, 1}});

void BM_Flat(benchmark::State& state) {
  const int plugin = static_cast<int>(state.range(0));
  const int64_t prior = state.range(1);
  Comm comm;
  if (!comm.Init(g_plugins[plugin], g_next_comm_id++, 0, 8)) {
    state.SkipWithError("plugin declined the communicator");
    return;
  }
  for (int64_t i = 0; i < prior; ++i) comm.Collective(true);
  for (auto _ : state) comm.Collective(true);
  comm.Finalize();
}
BENCHMARK(BM_Flat)
    ->ArgNames({"plugin", "prior"})
    ->ArgsProduct({{0, 1}, {0, 1000000}})
    ->Iterations(kFlatIterations)
    ->Unit(benchmark::kNanosecond);

// Single-producer single-consumer queue of op handles (user -> proxy thread).
class SpscQueue {
 public:
  uint64_t Size() const {
    // Pairs with the release stores of head_ in Push (consumer side) and of
    // tail_ in Pop (producer side).
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }
  uint64_t Free() const { return kCapacity - Size(); }
  void Push(void* v) {
    const uint64_t h = head_.load(std::memory_order_relaxed);  // producer owns head_
    items_[h & (kCapacity - 1)] = v;
    head_.store(h + 1, std::memory_order_release);  // pairs with the acquire in Size()
  }
  void* Pop() {
    const uint64_t t = tail_.load(std::memory_order_relaxed);  // consumer owns tail_
    void* v = items_[t & (kCapacity - 1)];
    tail_.store(t + 1, std::memory_order_release);  // pairs with the acquire in Size()
    return v;
  }

 private:
  static constexpr uint64_t kCapacity = 1024;
  alignas(64) std::atomic<uint64_t> head_{0};
  alignas(64) std::atomic<uint64_t> tail_{0};
  alignas(64) void* items_[kCapacity] = {};
};

// Waits (untimed) until `ready()`, then returns.
template <typename F>
void WaitUntil(F ready) {
  while (!ready()) sched_yield();
}

struct ThreadTimes {
  uint64_t user_cpu_ns = 0;
  uint64_t proxy_cpu_ns = 0;
};

// User thread: UserSide() in batches of kBatch, CPU time of the batches only.
void UserLoop(Comm* comm, SpscQueue* q, uint64_t n, uint64_t* cpu_out) {
  uint64_t done = 0, cpu = 0;
  while (done < n) {
    const uint64_t batch = n - done < kBatch ? n - done : kBatch;
    WaitUntil([&] { return q->Free() >= batch; });
    const uint64_t t0 = ThreadCpuNs();
    for (uint64_t i = 0; i < batch; ++i) q->Push(comm->UserSide());
    cpu += ThreadCpuNs() - t0;
    done += batch;
  }
  *cpu_out = cpu;
}

// Proxy thread: KernelCh (and ProxyOp/Step) events of the ops handed over.
void ProxyLoop(Comm* comm, SpscQueue* q, uint64_t n, bool net, uint64_t* cpu_out) {
  uint64_t done = 0, cpu = 0;
  while (done < n) {
    const uint64_t batch = n - done < kBatch ? n - done : kBatch;
    WaitUntil([&] { return q->Size() >= batch; });
    const uint64_t t0 = ThreadCpuNs();
    for (uint64_t i = 0; i < batch; ++i) {
      void* coll = q->Pop();
      comm->KernelSide(coll);
      if (net) comm->NetSide(coll);
    }
    cpu += ThreadCpuNs() - t0;
    done += batch;
  }
  *cpu_out = cpu;
}

void BM_EightComms(benchmark::State& state) {
  const int plugin = static_cast<int>(state.range(0));
  const bool net = state.range(1) != 0;
  static std::vector<Comm*> comms[2];
  if (comms[plugin].empty()) {
    for (int i = 0; i < kThreadedComms; ++i) comms[plugin].push_back(PersistentComm(plugin, i));
  }
  double user_ns = 0, proxy_ns = 0;
  for (auto _ : state) {
    std::vector<SpscQueue> queues(kThreadedComms);
    std::vector<uint64_t> user_cpu(kThreadedComms), proxy_cpu(kThreadedComms);
    std::vector<std::thread> threads;
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < kThreadedComms; ++i) {
      threads.emplace_back(UserLoop, comms[plugin][i], &queues[i], kThreadedCollectives,
                           &user_cpu[i]);
      threads.emplace_back(ProxyLoop, comms[plugin][i], &queues[i], kThreadedCollectives, net,
                           &proxy_cpu[i]);
    }
    for (std::thread& t : threads) t.join();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    uint64_t u = 0, p = 0;
    for (int i = 0; i < kThreadedComms; ++i) {
      u += user_cpu[i];
      p += proxy_cpu[i];
    }
    const double per = static_cast<double>(kThreadedCollectives) * kThreadedComms;
    user_ns = static_cast<double>(u) / per;
    proxy_ns = static_cast<double>(p) / per;
  }
  state.counters["user_cpu_ns"] = user_ns;
  state.counters["proxy_cpu_ns"] = proxy_ns;
  state.counters["total_cpu_ns"] = user_ns + proxy_ns;
}
BENCHMARK(BM_EightComms)
    ->ArgNames({"plugin", "net"})
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// N collectives with every event between two marker syscalls that the strace
// check brackets (access() of paths that do not exist).
int MarkerLoop(uint64_t n) {
  Comm comm;
  if (!comm.Init(g_plugins[kFlightrec], g_next_comm_id++, 0, 8)) {
    fprintf(stderr, "bench: flightrec declined the communicator\n");
    return 2;
  }
  for (int i = 0; i < 10000; ++i) comm.Collective(true);  // warm-up
  (void)!access("/flightrec-steady-state-begin", F_OK);
  for (uint64_t i = 0; i < n; ++i) comm.Collective(true);
  (void)!access("/flightrec-steady-state-end", F_OK);
  comm.Finalize();
  printf("marker loop: %llu collectives\n", static_cast<unsigned long long>(n));
  return 0;
}

// Benchmarks must not leave exit dumps or mix their rings with a real job's.
void DefaultEnv() {
  if (getenv("NCCL_FLIGHTREC_DIR") == nullptr) {
    char dir[] = "/tmp/flightrec-bench-XXXXXX";
    if (mkdtemp(dir) != nullptr) setenv("NCCL_FLIGHTREC_DIR", dir, 1);
  }
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 0);
  setenv("NCCL_FLIGHTREC_JOB_ID", "bench", 0);
}

}  // namespace
}  // namespace bench
}  // namespace flightrec

int main(int argc, char** argv) {
  using namespace flightrec::bench;
  DefaultEnv();
  std::string err;
  // FLIGHTREC_BENCH_PLUGIN: another build of the plugin (A/B of two builds
  // against the same do-nothing plugin).
  const char* plugin_path = getenv("FLIGHTREC_BENCH_PLUGIN");
  if (plugin_path == nullptr || plugin_path[0] == '\0') plugin_path = FLIGHTREC_PLUGIN_PATH;
  if (!LoadPlugin(plugin_path, &g_plugins[kFlightrec], &err)) {
    fprintf(stderr, "bench: %s\n", err.c_str());
    return 2;
  }
  for (int i = 1; i < argc; ++i) {
    if (strncmp(argv[i], "--marker-loop=", 14) == 0) {
      return MarkerLoop(strtoull(argv[i] + 14, nullptr, 10));
    }
  }
  if (!LoadPlugin(FLIGHTREC_NOOP_PLUGIN_PATH, &g_plugins[kNoop], &err)) {
    fprintf(stderr, "bench: %s\n", err.c_str());
    return 2;
  }
  PersistentComm(kFlightrec, 0);  // anchor: keeps the recorder alive
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

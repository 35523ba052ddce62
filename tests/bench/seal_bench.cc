// Dump benchmark: the time to seal a full ring of 64k records (16
// communicators x 4096) with the recorder's own DumpWriter while a writer
// thread keeps recording, and that writer's per-collective latency (p50/p99)
// during the seals against the same writer without a seal.
//
//   BM_Seal/writers:0   seal of an idle, full ring
//   BM_Seal/writers:1   seal while one writer records flat out (2 cores: the
//                       writer and the sealer each have one)
//   BM_SealParts        the seal's phases on the same image: live copy, zstd
//                       level-1 compression (what Seal does before writing)
//
// The ring is the process recorder's real file (OpenComm); the seal maps the
// same file (MAP_SHARED, the same page-cache pages the writers store to) and
// runs rec::DumpWriter::Seal on it: the watchdog's code path, minus the poll.
#include <benchmark/benchmark.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "recorder/comm_recorder.h"
#include "recorder/config.h"
#include "recorder/dump_writer.h"
#include "recorder/recorder.h"
#include "recorder/ring_file.h"

namespace flightrec {
namespace bench {
namespace {

constexpr int kComms = 16;
constexpr uint64_t kRecords = 4096;
constexpr int kChannels = 8;
constexpr size_t kMaxSamples = 1 << 23;

void SilentLog(int, unsigned long, const char*, int, const char*, ...) {}

std::string g_dir;
CommRecorder* g_comms[kComms];
rec::RingMapping g_ring;
rec::Config g_cfg;
rec::DumpWriter g_writer;

// One collective as the plugin records it: Coll start/stop, 8 channels.
void RecordOne(CommRecorder* c, uint64_t i) {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.datatype = format::kTypeFloat32;
  op.algo = format::kAlgoRing;
  op.proto = format::kProtoSimple;
  op.n_channels = kChannels;
  op.count = 1 << 20;
  op.nccl_seq = i;
  const uint64_t seq = c->BeginOp(op);
  c->OpEnqueued(seq);
  for (int ch = 0; ch < kChannels; ++ch) c->KernelStart(seq, 1000 + i);
  for (int ch = 0; ch < kChannels; ++ch) c->KernelStop(seq, 2000 + i);
}

bool MapRingFile(const std::string& dir, rec::RingMapping* m) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return false;
  std::string path;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".ring") == 0) path = dir + "/" + name;
  }
  closedir(d);
  const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st;
  fstat(fd, &st);
  void* base =
      mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (base == MAP_FAILED) return false;
  m->base = static_cast<unsigned char*>(base);
  const format::FileHeader* h = m->header();
  m->layout.max_regions = h->max_regions;
  m->layout.region_capacity = h->region_capacity;
  m->layout.region_table_offset = h->region_table_offset;
  m->layout.records_offset = h->records_offset;
  m->layout.file_size = h->file_size;
  snprintf(m->path, sizeof(m->path), "%s", path.c_str());
  return static_cast<uint64_t>(st.st_size) == h->file_size;
}

// Removes the scratch directory: the ring file and the dumps directory.
void Cleanup() {
  for (const std::string& dir : {g_dir + "/dumps", g_dir}) {
    if (DIR* d = opendir(dir.c_str())) {
      while (dirent* e = readdir(d)) {
        if (e->d_name[0] != '.') unlink((dir + "/" + e->d_name).c_str());
      }
      closedir(d);
    }
    rmdir(dir.c_str());
  }
}

bool Setup() {
  char dir[] = "/tmp/flightrec-seal-XXXXXX";
  if (mkdtemp(dir) == nullptr) return false;
  g_dir = dir;
  const std::string dumps = g_dir + "/dumps";
  mkdir(dumps.c_str(), 0755);
  setenv("NCCL_FLIGHTREC_DIR", dir, 1);
  setenv("NCCL_FLIGHTREC_DUMP_DIR", dumps.c_str(), 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "4096", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "16", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "sealbench", 1);
  for (int i = 0; i < kComms; ++i) {
    CommIdentity id;
    id.comm_id = 0xC0 + static_cast<uint64_t>(i);
    id.name = "seal";
    id.rank = 0;
    id.nranks = 8;
    id.from_init = true;
    id.api_version = 5;
    g_comms[i] = OpenComm(id, SilentLog);
    if (g_comms[i] == nullptr) return false;
    for (uint64_t r = 0; r < kRecords; ++r) RecordOne(g_comms[i], r);  // a full ring
  }
  if (!MapRingFile(g_dir, &g_ring)) return false;
  snprintf(g_cfg.dump_dir, sizeof(g_cfg.dump_dir), "%s", dumps.c_str());
  snprintf(g_cfg.job_id, sizeof(g_cfg.job_id), "sealbench");
  g_cfg.max_dumps = 1000000;
  g_writer.Init(&g_ring, &g_cfg, "benchhost", SilentLog);
  return true;
}

// Records flat out over all communicators; while `*sample` is set, keeps the
// latency of each collective (TSC clock, the recorder's own).
class Writer {
 public:
  Writer() : samples_(kMaxSamples) {}
  void Start() {
    thread_ = std::thread([this] { Run(); });
  }
  void Stop() {
    stop_.store(true);
    thread_.join();
  }
  void Sample(bool on) { sample_.store(on, std::memory_order_relaxed); }
  std::vector<uint64_t> TakeSamples() {
    Sample(false);
    const size_t n = std::min(count_.load(), kMaxSamples);
    std::vector<uint64_t> out(samples_.begin(), samples_.begin() + static_cast<long>(n));
    count_.store(0);
    return out;
  }

 private:
  void Run() {
    uint64_t i = 0;
    while (!stop_.load(std::memory_order_relaxed)) {
      const uint64_t t0 = CommRecorder::NowNs();
      RecordOne(g_comms[i % kComms], i);
      const uint64_t t1 = CommRecorder::NowNs();
      if (sample_.load(std::memory_order_relaxed)) {
        const size_t k = count_.fetch_add(1, std::memory_order_relaxed);
        if (k < kMaxSamples) samples_[k] = t1 - t0;
      }
      ++i;
    }
  }
  std::vector<uint64_t> samples_;
  std::atomic<size_t> count_{0};
  std::atomic<bool> sample_{false};
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double Percentile(std::vector<uint64_t>* v, double p) {
  if (v->empty()) return 0;
  const size_t k = std::min(v->size() - 1, static_cast<size_t>(p * static_cast<double>(v->size())));
  std::nth_element(v->begin(), v->begin() + static_cast<long>(k), v->end());
  return static_cast<double>((*v)[k]);
}

bool SealOnce(char* path, size_t path_len) {
  return g_writer.Seal(format::kDumpRequest, "bench", path, path_len);
}

void BM_Seal(benchmark::State& state) {
  const bool writers = state.range(0) != 0;
  Writer writer;
  double idle_p50 = 0, idle_p99 = 0;
  if (writers) {
    writer.Start();
    writer.Sample(true);  // baseline: the writer without a seal
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<uint64_t> base = writer.TakeSamples();
    idle_p50 = Percentile(&base, 0.50);
    idle_p99 = Percentile(&base, 0.99);
  }
  char path[1024];
  uint64_t bytes = 0;
  for (auto _ : state) {
    writer.Sample(writers);
    const auto t0 = std::chrono::steady_clock::now();
    const bool ok = SealOnce(path, sizeof(path));
    const auto t1 = std::chrono::steady_clock::now();
    writer.Sample(false);
    if (!ok) {
      state.SkipWithError("seal failed");
      break;
    }
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
    struct stat st;
    if (stat(path, &st) == 0) bytes = static_cast<uint64_t>(st.st_size);
    unlink(path);
  }
  state.counters["records"] = static_cast<double>(kComms * kRecords);
  state.counters["image_bytes"] = static_cast<double>(g_ring.layout.file_size);
  state.counters["dump_bytes"] = static_cast<double>(bytes);
  if (writers) {
    std::vector<uint64_t> during = writer.TakeSamples();
    writer.Stop();
    state.counters["writer_p50_ns_idle"] = idle_p50;
    state.counters["writer_p99_ns_idle"] = idle_p99;
    state.counters["writer_p50_ns_seal"] = Percentile(&during, 0.50);
    state.counters["writer_p99_ns_seal"] = Percentile(&during, 0.99);
    state.counters["writer_samples_seal"] = static_cast<double>(during.size());
  }
}
BENCHMARK(BM_Seal)
    ->ArgNames({"writers"})
    ->Arg(0)
    ->Arg(1)
    ->Iterations(20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// The phases of a seal: where its time goes, per zstd level (Seal uses 1).
void BM_SealParts(benchmark::State& state) {
  const int level = static_cast<int>(state.range(0));
  const uint64_t size = g_ring.layout.file_size;
  std::vector<unsigned char> image(size), frame(ZSTD_compressBound(size));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  double copy_s = 0, zstd_s = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    rec::CopyRingImage(g_ring, image.data());
    const auto t1 = std::chrono::steady_clock::now();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    const size_t n = ZSTD_compress2(cctx, frame.data(), frame.size(), image.data(), size);
    const auto t2 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(n);
    state.counters["dump_bytes"] = static_cast<double>(n);
    copy_s += std::chrono::duration<double>(t1 - t0).count();
    zstd_s += std::chrono::duration<double>(t2 - t1).count();
    state.SetIterationTime(std::chrono::duration<double>(t2 - t0).count());
  }
  ZSTD_freeCCtx(cctx);
  const double it = static_cast<double>(state.iterations());
  state.counters["copy_ms"] = copy_s * 1e3 / it;
  state.counters["zstd_ms"] = zstd_s * 1e3 / it;
}
BENCHMARK(BM_SealParts)
    ->ArgNames({"zstd_level"})
    ->Arg(1)
    ->Arg(-1)
    ->Arg(-4)
    ->Iterations(20)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace bench
}  // namespace flightrec

int main(int argc, char** argv) {
  if (!flightrec::bench::Setup()) {
    fprintf(stderr, "seal bench: cannot set up the ring (see NCCL_FLIGHTREC_* above)\n");
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (flightrec::CommRecorder* c : flightrec::bench::g_comms) flightrec::CloseComm(c);
  flightrec::bench::Cleanup();
  return 0;
}

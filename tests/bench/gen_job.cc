// flightrec-genjob: writes a synthetic job's dumps THROUGH THE REAL RECORDER
// (OpenComm / BeginOp / KernelStart / KernelStop / CloseComm with
// NCCL_FLIGHTREC_DUMP_ON_EXIT=1), one forked child per rank so every rank
// has its own pid, for the analyzer benchmark.
//
//   flightrec-genjob --out DIR --ranks N [--records 4096] [--hung-rank H]
//                    [--parallel P] [--max-comms 4]
//   flightrec-genjob --decompress DIR [--threads T]
//
// Each rank has three communicators: world (N ranks), TP (groups of 8
// consecutive ranks) and DP (ranks with the same rank % 8). A step is
// TP, TP, DP, world AllReduce; every rank records `records` ops (steps of 4).
// In the last step every rank is inside the world collective (started on
// the GPU, not finished) except the hung rank, which never called it: it is
// one collective behind. N must be a multiple of 8.
//
// --decompress is the baseline the analyzer is compared with: it only reads
// and zstd-decompresses every *.frdump under DIR (T threads, reused buffers).
// Dumps go to DIR/ranks-NNNNN/ (1,024 ranks each; see RankDir).
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace genjob {
namespace {

constexpr int kChannels = 8;
constexpr int kTpSize = 8;
// Ranks per dump directory: fewer than pid_max / 2 forks apart (see RankDir).
constexpr int kRanksPerDir = 1024;

struct Options {
  std::string out;
  std::string decompress;
  int ranks = 0;
  int records = 4096;
  int hung_rank = -1;  // default: ranks / 2 + 3
  int parallel = 2;
  int max_comms = 4;
  int threads = 2;
};

void Usage() {
  fprintf(stderr,
          "usage: flightrec-genjob --out DIR --ranks N [--records R] [--hung-rank H]\n"
          "                        [--parallel P] [--max-comms C]\n"
          "       flightrec-genjob --decompress DIR [--threads T]\n");
}

bool ParseInt(const char* flag, const char* text, int min, int* out) {
  char* end = nullptr;
  const long v = strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > 1 << 30) {
    fprintf(stderr, "flightrec-genjob: %s expects an integer >= %d, got '%s'\n", flag, min, text);
    return false;
  }
  *out = static_cast<int>(v);
  return true;
}

bool Parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      fprintf(stderr, "flightrec-genjob: %s needs a value\n", a.c_str());
      return false;
    }
    const char* v = argv[++i];
    bool ok = true;
    if (a == "--out") {
      o->out = v;
    } else if (a == "--decompress") {
      o->decompress = v;
    } else if (a == "--ranks") {
      ok = ParseInt("--ranks", v, kTpSize, &o->ranks);
    } else if (a == "--records") {
      ok = ParseInt("--records", v, 4, &o->records);
    } else if (a == "--hung-rank") {
      ok = ParseInt("--hung-rank", v, 0, &o->hung_rank);
    } else if (a == "--parallel") {
      ok = ParseInt("--parallel", v, 1, &o->parallel);
    } else if (a == "--max-comms") {
      ok = ParseInt("--max-comms", v, 3, &o->max_comms);
    } else if (a == "--threads") {
      ok = ParseInt("--threads", v, 1, &o->threads);
    } else {
      fprintf(stderr, "flightrec-genjob: unknown option %s\n", a.c_str());
      return false;
    }
    if (!ok) return false;
  }
  if (!o->decompress.empty()) return true;
  if (o->out.empty() || o->ranks == 0 || o->ranks % kTpSize != 0) {
    fprintf(stderr, "flightrec-genjob: --out and --ranks (a multiple of %d) are required\n",
            kTpSize);
    return false;
  }
  if (o->hung_rank < 0) o->hung_rank = o->ranks / 2 + 3;
  if (o->hung_rank >= o->ranks) {
    fprintf(stderr, "flightrec-genjob: --hung-rank %d is not below --ranks %d\n", o->hung_rank,
            o->ranks);
    return false;
  }
  return true;
}

void QuietLog(int, unsigned long, const char*, int, const char*, ...) {}

CommRecorder* Open(uint64_t comm_id, const char* name, int rank, int nranks) {
  CommIdentity id;
  id.comm_id = comm_id;
  id.name = name;
  id.rank = rank;
  id.nranks = nranks;
  id.nnodes = nranks / kTpSize;
  id.from_init = true;
  id.api_version = 5;
  id.completion_tracked = true;
  return OpenComm(id, QuietLog);
}

// One AllReduce as the plugin records it. `finish` false: the kernel started
// on every channel but never finished (the rank waits in it).
void Record(CommRecorder* c, uint64_t nccl_seq, uint64_t count, bool finish) {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.datatype = format::kTypeBfloat16;
  op.algo = format::kAlgoRing;
  op.proto = format::kProtoSimple;
  op.n_channels = kChannels;
  op.n_warps = 16;
  op.count = count;
  op.nccl_seq = nccl_seq;
  op.t_api_ns = CommRecorder::NowNs();
  op.flags = format::kFlagHasApi;
  const uint64_t seq = c->BeginOp(op);
  c->OpEnqueued(seq);
  const uint64_t gpu = CommRecorder::NowNs() - 1000;
  for (int ch = 0; ch < kChannels; ++ch) c->KernelStart(seq, gpu + static_cast<uint64_t>(ch));
  if (!finish) return;
  for (int ch = 0; ch < kChannels; ++ch) c->KernelStop(seq, gpu + 500);
}

void RemoveOwnRing(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string suffix = "-" + std::to_string(getpid()) + ".ring";
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      unlink((dir + "/" + name).c_str());
    }
  }
  closedir(d);
}

// Every *.frdump under `dir` (recursively), sorted.
std::vector<std::string> DumpsUnder(const std::string& dir, std::string* error) {
  std::vector<std::string> files;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (it->path().extension() == ".frdump") files.push_back(it->path().string());
  }
  if (ec) *error = dir + ": " + ec.message();
  std::sort(files.begin(), files.end());
  return files;
}

// Where rank `rank` dumps: one directory per block of ranks, as one per host
// on a cluster. Dumps are named by host and pid; here every rank is on the
// same host and a 16k-rank job (two tids per rank: the rank and its
// watchdog) wraps pid_max, so one flat directory would let a later rank
// overwrite an earlier one's dump.
std::string RankDir(const Options& o, int rank) {
  char name[32];
  snprintf(name, sizeof(name), "/ranks-%05d", rank / kRanksPerDir * kRanksPerDir);
  return o.out + name;
}

// The child: one rank of the job. Returns the exit status.
int RunRank(const Options& o, int rank) {
  const std::string rings = o.out + "/rings";
  const std::string dumps = RankDir(o, rank);
  setenv("NCCL_FLIGHTREC_DIR", rings.c_str(), 1);
  setenv("NCCL_FLIGHTREC_DUMP_DIR", dumps.c_str(), 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "genjob", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
  setenv("NCCL_FLIGHTREC_TRIGGER", "0", 1);
  setenv("NCCL_FLIGHTREC_RECORDS", std::to_string(o.records).c_str(), 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", std::to_string(o.max_comms).c_str(), 1);
  CommRecorder* world = Open(0x3000000ULL, "world", rank, o.ranks);
  CommRecorder* tp =
      Open(0x7000000ULL + static_cast<uint64_t>(rank / kTpSize), "tp", rank % kTpSize, kTpSize);
  CommRecorder* dp = Open(0xD000000ULL + static_cast<uint64_t>(rank % kTpSize), "dp",
                          rank / kTpSize, o.ranks / kTpSize);
  if (world == nullptr || tp == nullptr || dp == nullptr) {
    fprintf(stderr, "flightrec-genjob: rank %d: the recorder declined a communicator\n", rank);
    return 1;
  }
  const int steps = o.records / 4;
  for (int s = 0; s < steps; ++s) {
    const uint64_t step = static_cast<uint64_t>(s);
    const bool last = s == steps - 1;
    Record(tp, 2 * step, 1 << 22, true);
    Record(tp, 2 * step + 1, 1 << 22, true);
    Record(dp, step, 1 << 24, true);
    if (last && rank == o.hung_rank) break;  // never calls the last world op
    Record(world, step, 1 << 20, !last);
  }
  CloseComm(dp);
  CloseComm(tp);
  CloseComm(world);  // the last one seals the exit dump
  RemoveOwnRing(rings);
  return 0;
}

int Generate(const Options& o) {
  mkdir(o.out.c_str(), 0755);
  const std::string rings = o.out + "/rings";
  if (mkdir(rings.c_str(), 0755) != 0 && errno != EEXIST) {
    fprintf(stderr, "flightrec-genjob: cannot create %s: %s\n", rings.c_str(), strerror(errno));
    return 1;
  }
  const auto t0 = std::chrono::steady_clock::now();
  int running = 0, failed = 0, next = 0;
  while (next < o.ranks || running > 0) {
    if (next < o.ranks && running < o.parallel) {
      mkdir(RankDir(o, next).c_str(), 0755);
      fflush(stdout);
      const pid_t pid = fork();
      if (pid == 0) _exit(RunRank(o, next));
      if (pid < 0) {
        fprintf(stderr, "flightrec-genjob: fork: %s\n", strerror(errno));
        return 1;
      }
      ++running;
      ++next;
      continue;
    }
    int status = 0;
    if (wait(&status) > 0) {
      --running;
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
  }
  rmdir(rings.c_str());
  // Every rank must have left exactly one dump: a lost one would make the
  // benchmark analyse a different job than it claims.
  std::string error;
  const size_t dumps = DumpsUnder(o.out, &error).size();
  if (dumps != static_cast<size_t>(o.ranks)) {
    fprintf(stderr, "flightrec-genjob: %zu dumps for %d ranks under %s %s\n", dumps, o.ranks,
            o.out.c_str(), error.c_str());
    ++failed;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf(
      "{\"ranks\": %d, \"records_per_rank\": %d, \"hung_rank\": %d, \"failed\": %d, "
      "\"seconds\": %.3f}\n",
      o.ranks, o.records, o.hung_rank, failed, s);
  return failed == 0 ? 0 : 1;
}

// Reads and decompresses every *.frdump in `dir`: the floor for analyze.
int Decompress(const Options& o) {
  std::string error;
  const std::vector<std::string> files = DumpsUnder(o.decompress, &error);
  if (!error.empty()) {
    fprintf(stderr, "flightrec-genjob: %s\n", error.c_str());
    return 1;
  }
  std::atomic<size_t> index{0};
  std::atomic<uint64_t> in_bytes{0}, out_bytes{0}, errors{0};
  const auto t0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    std::vector<char> in, out;
    ZSTD_DCtx* dctx = ZSTD_createDCtx();
    for (size_t i = index++; i < files.size(); i = index++) {
      std::ifstream f(files[i], std::ios::binary | std::ios::ate);
      const std::streamsize n = f.tellg();
      f.seekg(0);
      in.resize(static_cast<size_t>(n));
      f.read(in.data(), n);
      const unsigned long long size = ZSTD_getFrameContentSize(in.data(), in.size());
      if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) {
        fprintf(stderr, "flightrec-genjob: %s: not a zstd frame with a content size\n",
                files[i].c_str());
        ++errors;
        continue;
      }
      out.resize(size);
      const size_t got = ZSTD_decompressDCtx(dctx, out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(got)) {
        fprintf(stderr, "flightrec-genjob: %s: %s\n", files[i].c_str(), ZSTD_getErrorName(got));
        ++errors;
        continue;
      }
      in_bytes += static_cast<uint64_t>(n);
      out_bytes += got;
    }
    ZSTD_freeDCtx(dctx);
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < o.threads; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf(
      "{\"files\": %zu, \"compressed_bytes\": %llu, \"decompressed_bytes\": %llu, "
      "\"threads\": %d, \"errors\": %llu, \"seconds\": %.3f}\n",
      files.size(), static_cast<unsigned long long>(in_bytes.load()),
      static_cast<unsigned long long>(out_bytes.load()), o.threads,
      static_cast<unsigned long long>(errors.load()), s);
  return errors == 0 ? 0 : 1;
}

}  // namespace
}  // namespace genjob
}  // namespace flightrec

int main(int argc, char** argv) {
  flightrec::genjob::Options o;
  if (!flightrec::genjob::Parse(argc, argv, &o)) {
    flightrec::genjob::Usage();
    return 2;
  }
  return o.decompress.empty() ? flightrec::genjob::Generate(o) : flightrec::genjob::Decompress(o);
}

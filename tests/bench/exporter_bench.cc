// `flightrec exporter`'s scrape cost (docs/performance.md, "Exporter"):
// 8 ring files of 8 communicators each, every region full and lapped
// (head = 2 x capacity), built byte by byte (image_builder.h) in a temp dir;
// then scans (Collector::Scan + Render, what one scrape does) after k new
// records per communicator, k = 0, 16, 256, 4096. Wall and process CPU time
// (a scan with many new slots reads its rings on every core, so wall can be
// below CPU), best and median of `--reps`; one JSON object per line on
// stdout.
//
//   flightrec-bench-exporter [--capacity N] [--reps N] [--first-only | --only K]
//
// --first-only: only the first-scrape case, `--reps` times (a profile of the
// slot-reading path without the set-up of the other cases). --only K: only
// the case of K new records per communicator (and the one set-up scan), for
// a profile of that case (`--only 0`: a scrape with nothing new).
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/live/collector.h"
#include "unit/reader/image_builder.h"

namespace {

using flightrec::test_support::ImageBuilder;

constexpr uint32_t kProcesses = 8;
constexpr uint32_t kComms = 8;

double Now(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

flightrec::format::Record Op(uint64_t i) {
  flightrec::format::Record r = ImageBuilder::Coll(i, 1 << 20);
  r.state = flightrec::format::kOpDone;
  r.gpu_start_raw = r.t_enqueue_ns + 20000;
  r.gpu_end_raw = r.gpu_start_raw + 500000;
  return r;
}

void Write(const std::string& path, const ImageBuilder& b) {
  const std::vector<uint8_t> bytes = b.Bytes();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t capacity = 4096;
  int reps = 5;
  bool first_only = false;
  int only = -2;  // --only K; -2: every case
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (std::strcmp(argv[i], "--first-only") == 0) {
      first_only = true;
    } else if (has_value && std::strcmp(argv[i], "--capacity") == 0) {
      capacity = std::strtoull(argv[++i], nullptr, 10);
    } else if (has_value && std::strcmp(argv[i], "--only") == 0) {
      only = std::atoi(argv[++i]);
    } else if (has_value && std::strcmp(argv[i], "--reps") == 0) {
      reps = std::atoi(argv[++i]);
    }
  }
  char dir_template[] = "/tmp/flightrec-bench-exporter-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return 1;
  const std::string dir = dir_template;
  std::vector<std::unique_ptr<ImageBuilder>> rings;
  std::vector<std::string> paths;
  uint64_t next_op = 0;
  for (uint32_t p = 0; p < kProcesses; ++p) {
    rings.emplace_back(new ImageBuilder(kComms, capacity));
    ImageBuilder& b = *rings.back();
    b.header().pid = 1000 + p;
    b.header().gpu_offset_samples = 1;
    for (uint32_t c = 0; c < kComms; ++c) {
      b.Claim(c, 0x100 + c, static_cast<int32_t>(p), kProcesses, "comm").flags =
          flightrec::format::kRegionCompletionTracked;
      for (uint64_t i = 0; i < 2 * capacity; ++i) b.Append(c, Op(i));
    }
    next_op = 2 * capacity;
    paths.push_back(dir + "/flightrec-bench-node-" + std::to_string(1000 + p) + ".ring");
    Write(paths.back(), b);
  }
  const uint64_t now = flightrec::test_support::kCreatedWall + 60000000000ULL;
  flightrec::live::Collector steady({dir});  // has read everything once
  {
    std::vector<std::string> log;
    steady.Scan(now, &log);
  }
  for (const int k : {-1, 0, 16, 256, 4096}) {
    if (first_only && k >= 0) break;
    if (only != -2 && k != only) continue;
    std::vector<double> walls;
    std::vector<double> cpus;
    uint64_t slots = 0;
    size_t bytes = 0;
    for (int rep = 0; rep < reps; ++rep) {
      // k < 0: the first scrape of a fresh exporter (every ring's last lap).
      flightrec::live::Collector fresh({dir});
      flightrec::live::Collector& c = k < 0 ? fresh : steady;
      if (k > 0) {
        for (uint32_t p = 0; p < kProcesses; ++p) {
          for (uint32_t cm = 0; cm < kComms; ++cm) {
            for (int i = 0; i < k; ++i)
              rings[p]->Append(cm, Op(next_op + static_cast<uint64_t>(i)));
          }
          Write(paths[p], *rings[p]);
        }
        next_op += static_cast<uint64_t>(k);
      }
      std::vector<std::string> log;
      std::string text;
      const double w0 = Now(CLOCK_MONOTONIC);
      const double c0 = Now(CLOCK_PROCESS_CPUTIME_ID);
      flightrec::live::ScanStats stats = c.Scan(now, &log);
      c.Render(stats, &text);
      const double cpu = Now(CLOCK_PROCESS_CPUTIME_ID) - c0;
      const double wall = Now(CLOCK_MONOTONIC) - w0;
      walls.push_back(wall);
      cpus.push_back(cpu);
      slots = stats.slots_read;
      bytes = text.size();
    }
    std::sort(walls.begin(), walls.end());
    std::sort(cpus.begin(), cpus.end());
    const double best_wall = walls.empty() ? 0 : walls.front();
    const double best_cpu = cpus.empty() ? 0 : cpus.front();
    const double median_wall = walls.empty() ? 0 : walls[walls.size() / 2];
    const double median_cpu = cpus.empty() ? 0 : cpus[cpus.size() / 2];
    std::printf(
        "{\"processes\": %u, \"comms\": %u, \"capacity\": %llu, \"new_per_comm\": %s, "
        "\"slots_read\": %llu, \"exposition_bytes\": %zu, \"wall_ms\": %.3f, \"cpu_ms\": %.3f, "
        "\"wall_ms_median\": %.3f, \"cpu_ms_median\": %.3f, \"core_percent_at_15s\": %.4f}\n",
        kProcesses, kComms, static_cast<unsigned long long>(capacity),
        k < 0 ? "\"first scrape\"" : std::to_string(k).c_str(),
        static_cast<unsigned long long>(slots), bytes, best_wall * 1e3, best_cpu * 1e3,
        median_wall * 1e3, median_cpu * 1e3, best_cpu / 15.0 * 100.0);
  }
  std::string rm = "rm -rf '" + dir + "'";
  return std::system(rm.c_str()) == 0 ? 0 : 1;
}

// The rings `flightrec status` reads in scripts/bench.sh's `status` part
// (docs/performance.md, "Status"): a job of N ranks (tp groups of 8, dp
// across them, one world comm), one ring file per rank with 3 communicator
// regions of `--capacity` slots, built byte by byte (image_builder.h) as the
// plugin lays them out: the tp ring lapped (1.25 laps), dp half full, world
// a fifth, every op done but each region's newest two (in flight), rank 3
// enqueueing its tp ops 2 ms late (a straggler for status to name). The
// heartbeats are the generation instant and the watchdog polls every 60 s,
// so the job reads as alive and progressing for minutes; the hosts are not
// this machine's (`bench-node-<rank / 8>`), so no liveness probe touches a
// real process.
//
//   flightrec-bench-status --ranks N --dir DIR [--capacity N] [--reps R]
//                          [--slots N] [--gen 0]
//
// Writes the rings into DIR (created; not with --gen 0: DIR holds them
// already), then times ReadLiveStatus over DIR `--reps` times (0: none;
// StatusOptions::newest_slots = --slots, stalled only after an hour, so
// that rings generated a while ago still read as progressing) and prints
// one JSON object: the in-process minimum and median, and what status
// found (processes per state).
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "analyzer/model/live_status.h"
#include "unit/reader/image_builder.h"

namespace {

using flightrec::test_support::ImageBuilder;
namespace format = flightrec::format;

uint64_t Clock(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

constexpr uint32_t kTp = 8;
constexpr uint64_t kStepNs = 20000000;  // one tp op every 20 ms

struct CommPlan {
  uint64_t comm_id;
  int32_t rank;
  int32_t nranks;
  std::string name;
  uint64_t every;  // one op every `every` steps
  uint64_t ops;
};

}  // namespace

int main(int argc, char** argv) {
  uint32_t ranks = 64;
  uint64_t capacity = 4096;
  int reps = 15;
  uint64_t slots = flightrec::analysis::StatusOptions().newest_slots;
  bool gen = true;
  std::string dir;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--ranks") == 0) {
      ranks = static_cast<uint32_t>(std::strtoul(argv[i + 1], nullptr, 10));
    } else if (std::strcmp(argv[i], "--capacity") == 0) {
      capacity = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--reps") == 0) {
      reps = std::atoi(argv[i + 1]);
    } else if (std::strcmp(argv[i], "--slots") == 0) {
      slots = std::strtoull(argv[i + 1], nullptr, 10);
    } else if (std::strcmp(argv[i], "--gen") == 0) {
      gen = std::atoi(argv[i + 1]) != 0;
    } else if (std::strcmp(argv[i], "--dir") == 0) {
      dir = argv[i + 1];
    }
  }
  if (dir.empty() || ranks < kTp || ranks % kTp != 0) {
    std::fprintf(stderr,
                 "usage: %s --ranks N (a multiple of 8) --dir DIR [--capacity N] [--reps R]\n",
                 argv[0]);
    return 2;
  }
  mkdir(dir.c_str(), 0700);
  const uint64_t tp_ops = capacity + capacity / 4;
  const uint64_t now_wall = Clock(CLOCK_REALTIME);
  const uint64_t now_mono = Clock(CLOCK_MONOTONIC);
  const uint64_t span = (tp_ops + 2) * kStepNs;  // the ops end now
  const uint64_t first_mono = now_mono - span;
  for (uint32_t r = 0; gen && r < ranks; ++r) {
    ImageBuilder b(3, capacity);
    format::FileHeader& h = b.header();
    h.pid = 1000 + r;
    std::snprintf(h.host, sizeof(h.host), "bench-node-%u", r / kTp);
    std::snprintf(h.job_id, sizeof(h.job_id), "bench-status");
    h.created_mono_ns = first_mono - 10000000000ULL;
    h.created_wall_ns = now_wall - (now_mono - h.created_mono_ns);
    h.heartbeat_mono_ns = now_mono;
    h.heartbeat_wall_ns = now_wall;
    h.heartbeat_count = 1 + span / 60000000000ULL;
    h.watchdog_poll_ns = 60000000000ULL;
    h.watchdog_timeout_ns = 600000000000ULL;
    h.gpu_offset_samples = 1;
    h.gpu_to_mono_offset_ns = 0;
    const CommPlan plans[3] = {
        {0x1000, static_cast<int32_t>(r), static_cast<int32_t>(ranks), "world", 5, tp_ops / 5},
        {0x2000 + r / kTp, static_cast<int32_t>(r % kTp), kTp, "tp" + std::to_string(r / kTp), 1,
         tp_ops},
        {0x3000 + r % kTp, static_cast<int32_t>(r / kTp), static_cast<int32_t>(ranks / kTp),
         "dp" + std::to_string(r % kTp), 2, capacity / 2}};
    for (uint32_t c = 0; c < 3; ++c) {
      const CommPlan& p = plans[c];
      format::RegionDesc& d = b.Claim(c, p.comm_id, p.rank, p.nranks, p.name.c_str());
      d.flags = format::kRegionCompletionTracked;
      d.init_mono_ns = h.created_mono_ns + 1000;
      d.nnodes = static_cast<int32_t>(ranks / kTp);
      for (uint64_t i = 0; i < p.ops; ++i) {
        format::Record rec = ImageBuilder::Coll(i, 1 << 20);
        // The ops of every comm end now; tp rank 3 is 2 ms late on tp. One
        // host thread calls the comms of a step one after the other, 5 us
        // apart, in one program order (world, dp, tp): tp rank 3's pause
        // comes before its tp call, the last of its step.
        const uint64_t step = tp_ops - (p.ops - i) * p.every;
        const uint64_t order = c == 0 ? 0 : c == 2 ? 1 : 2;
        rec.t_api_ns = first_mono + step * kStepNs + order * 5000 + (r % 5) * 1000;
        rec.t_enqueue_ns = rec.t_api_ns + 2000 + (c == 1 && r % kTp == 3 ? 2000000 : 0);
        rec.t_enqueued_ns = rec.t_enqueue_ns + 3000;
        rec.n_channels = 8;
        if (i + 2 < p.ops) {
          rec.state = format::kOpDone;
          // tp rank 3's kernel starts 2 ms after the others', which wait.
          const uint64_t late = c == 1 && r % kTp == 3 ? 2000000 : 0;
          rec.gpu_start_raw = first_mono + step * kStepNs + 100000 + late;
          rec.gpu_end_raw = first_mono + step * kStepNs + 2600000;
          rec.t_last_progress_ns = rec.gpu_end_raw + 5000;
          rec.channels_started = 8;
          rec.channels_stopped = 8;
        }
        b.Append(c, rec);
      }
      d.last_enqueue_mono_ns = now_mono;
    }
    const std::string path = dir + "/flightrec-bench-status-bench-node-" + std::to_string(r / kTp) +
                             "-" + std::to_string(1000 + r) + ".ring";
    const std::vector<uint8_t> bytes = b.Bytes();
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) {
      std::fprintf(stderr, "cannot write %s\n", path.c_str());
      return 1;
    }
  }
  std::vector<double> runs;
  flightrec::analysis::LiveStatus last;
  for (int i = 0; i < reps; ++i) {
    const uint64_t t0 = Clock(CLOCK_MONOTONIC);
    flightrec::analysis::StatusOptions options;
    options.newest_slots = slots;
    options.stalled_after_ns = 3600000000000ULL;  // an older generation reads as progressing
    last = flightrec::analysis::ReadLiveStatus({dir}, options);
    runs.push_back(static_cast<double>(Clock(CLOCK_MONOTONIC) - t0) * 1e-6);
  }
  std::sort(runs.begin(), runs.end());
  std::map<std::string, int> states;
  for (const auto& job : last.jobs) {
    for (const auto& s : job.status) ++states[flightrec::analysis::LiveStateName(s.state)];
  }
  std::string counts;
  for (const auto& kv : states) {
    counts += (counts.empty() ? "\"" : ", \"") + kv.first + "\": " + std::to_string(kv.second);
  }
  size_t processes = 0;
  size_t stragglers = 0;
  for (const auto& job : last.jobs) {
    processes += job.processes.size();
    stragglers += job.stragglers.size();
  }
  std::printf(
      "{\"ranks\": %u, \"capacity\": %llu, \"slots\": %llu, \"reps\": %d, \"in_process_min_ms\": "
      "%.3f, "
      "\"in_process_median_ms\": %.3f, \"processes\": %zu, \"stragglers\": %zu, "
      "\"states\": {%s}}\n",
      ranks, static_cast<unsigned long long>(capacity), static_cast<unsigned long long>(slots),
      reps, runs.empty() ? 0.0 : runs.front(), runs.empty() ? 0.0 : runs[runs.size() / 2],
      processes, stragglers, counts.c_str());
  return 0;
}

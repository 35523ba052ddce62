// The reader side of the slot protocol under load (docs/reliability.md):
// dumps are sealed back to back by the real watchdog, and the live ring file
// is read with the analyzer's reader, while on a 64-slot ring two
// communicators' launch threads overwrite the oldest slots at full speed and
// their proxy threads complete each op. No record in any dump or ring read
// may mix two laps.
//
// Each op's lap has a signature derived from its slot sequence s: the launch
// thread sets count, user_tag and stream from s, and the proxy thread writes
// gpu_start_raw, gpu_end_raw and net_bytes from s. A launch thread keeps at
// most kInFlight ops ahead of its proxy thread, so in a snapshot whose head
// is H every op s with s + kInFlight < H had completed before H was read:
// the record of such an op, when returned at all, must be done with its
// whole signature. Any record's progress words must be either not yet
// written (0) or its own lap's values. A copy that took the old lap's
// commit and immutable words and the new lap's reset progress words shows
// a completed op as enqueued; one that paired words of two laps shows a
// foreign value.
//
// Bounded to ~2 s of load; runs under TSan (label reliability).
#include <gtest/gtest.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

constexpr int kComms = 2;
constexpr uint64_t kCapacity = 64;
constexpr uint64_t kInFlight = 4;
constexpr double kLoadSeconds = 2.0;

uint64_t CountOf(uint64_t s) { return s * 3 + 1; }
uint64_t TagOf(uint64_t s) { return s ^ 0xabcdef; }
uint64_t StreamOf(uint64_t s) { return 0x5000 + s; }
uint64_t GpuStartOf(uint64_t s) { return 1000000000ULL + s * 1000; }
uint64_t GpuEndOf(uint64_t s) { return GpuStartOf(s) + 500; }
uint64_t NetBytesOf(uint64_t s) { return 4096 + s; }

// One communicator's launch -> proxy hand-off (single producer, single
// consumer): `claimed` ops have been begun, `completed` finished.
struct Lane {
  CommRecorder* comm = nullptr;
  std::atomic<uint64_t> claimed{0};
  std::atomic<uint64_t> completed{0};
  std::atomic<bool> bad_seq{false};
};

void LaunchThread(Lane* lane, const std::atomic<bool>* stop) {
  for (uint64_t s = 0; !stop->load(std::memory_order_relaxed); ++s) {
    while (s - lane->completed.load(std::memory_order_acquire) >= kInFlight) {
      if (stop->load(std::memory_order_relaxed)) return;
      sched_yield();
    }
    OpDesc op;
    op.func = format::kFuncAllReduce;
    op.datatype = format::kTypeFloat32;
    op.n_channels = 1;
    op.count = CountOf(s);
    op.user_tag = TagOf(s);
    op.stream = StreamOf(s);
    if (lane->comm->BeginOp(op) != s) lane->bad_seq = true;
    lane->comm->OpEnqueued(s);
    lane->claimed.store(s + 1, std::memory_order_release);
  }
}

void ProxyThread(Lane* lane, const std::atomic<bool>* stop) {
  for (uint64_t s = 0;; ++s) {
    while (lane->claimed.load(std::memory_order_acquire) <= s) {
      if (stop->load(std::memory_order_relaxed)) return;
      sched_yield();
    }
    lane->comm->KernelStart(s, GpuStartOf(s));
    lane->comm->ProxyProgress(s, NetBytesOf(s));
    lane->comm->KernelStop(s, GpuEndOf(s));
    lane->completed.store(s + 1, std::memory_order_release);
  }
}

struct Verdict {
  uint64_t records = 0;   // records checked
  uint64_t complete = 0;  // of which known complete before the snapshot
  uint64_t mixed = 0;     // records mixing two laps (must stay 0)
  std::string first;      // the first mixed record, described
};

void Check(const ProcessSnapshot& snap, Verdict* v) {
  for (const CommSnapshot& c : snap.comms) {
    for (const OpRecord& r : c.records) {
      const uint64_t s = r.slot_seq;
      ++v->records;
      bool ok = r.count == CountOf(s) && r.user_tag == TagOf(s) && r.stream == StreamOf(s);
      ok = ok && (r.gpu_start_raw == 0 || r.gpu_start_raw == GpuStartOf(s));
      ok = ok && (r.gpu_end_raw == 0 || r.gpu_end_raw == GpuEndOf(s));
      ok = ok && (r.net_bytes == 0 || r.net_bytes == NetBytesOf(s));
      if (s + kInFlight < c.head) {
        ++v->complete;
        ok = ok && r.state == format::kOpDone && r.channels_started == 1 &&
             r.channels_stopped == 1 && r.gpu_start_raw == GpuStartOf(s) &&
             r.gpu_end_raw == GpuEndOf(s) && r.net_bytes == NetBytesOf(s);
      }
      if (ok) continue;
      if (v->mixed++ == 0) {
        v->first = snap.path + ": " + c.name + " seq " + std::to_string(s) + " head " +
                   std::to_string(c.head) + " state " + std::to_string(r.state) + " count " +
                   std::to_string(r.count) + " gpu_end " + std::to_string(r.gpu_end_raw) +
                   " net_bytes " + std::to_string(r.net_bytes);
      }
    }
  }
}

TEST(SeqlockStress, DumpsAndRingReadsNeverMixTwoLaps) {
  test::TempDir dir;
  EXPECT_EQ(
      test::RunInChild([&] {
        test::ResetEnv(dir.path());
        setenv("NCCL_FLIGHTREC_RECORDS", std::to_string(kCapacity).c_str(), 1);
        setenv("NCCL_FLIGHTREC_MAX_COMMS", std::to_string(kComms).c_str(), 1);
        setenv("NCCL_FLIGHTREC_MAX_DUMPS", "1000000", 1);
        setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
        Lane lanes[kComms];
        for (int i = 0; i < kComms; ++i) {
          CommIdentity id;
          id.comm_id = 0x100 + static_cast<uint64_t>(i);
          id.name = i == 0 ? "c0" : "c1";
          id.nranks = 2;
          id.from_init = true;
          id.completion_tracked = true;
          lanes[i].comm = OpenComm(id, &test::CaptureLog);
          CHILD_CHECK(lanes[i].comm != nullptr);
        }
        const std::string ring = test::RingPath(dir.path());
        std::atomic<bool> stop{false};
        std::vector<std::thread> threads;
        for (Lane& lane : lanes) {
          threads.emplace_back(LaunchThread, &lane, &stop);
          threads.emplace_back(ProxyThread, &lane, &stop);
        }
        Verdict v;
        uint64_t dumps = 0, ring_reads = 0, torn = 0, wrapped_snapshots = 0;
        const auto t0 = std::chrono::steady_clock::now();
        // A fixed stretch of load (not a speed check): seal, check, repeat.
        while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() <
               kLoadSeconds) {
          RequestDump(format::kDumpRequest, "stress");
          std::vector<std::string> names;
          for (int i = 0; i < 30000 && names.empty(); ++i) {  // liveness bound (30 s)
            names = test::ListDir(dir.path(), ".frdump");
            if (names.empty()) usleep(1000);
          }
          CHILD_CHECK(!names.empty());
          for (const std::string& name : names) {
            const std::string path = dir.path() + "/" + name;
            ReadResult d = ReadSnapshotFile(path);
            CHILD_CHECK(d.ok);
            Check(d.snapshot, &v);
            for (const CommSnapshot& c : d.snapshot.comms) {
              torn += c.torn;
              if (c.head > kCapacity) ++wrapped_snapshots;
            }
            unlink(path.c_str());
            ++dumps;
          }
          ReadResult live = ReadSnapshotFile(ring);
          CHILD_CHECK(live.ok);
          Check(live.snapshot, &v);
          for (const CommSnapshot& c : live.snapshot.comms) torn += c.torn;
          ++ring_reads;
        }
        stop = true;
        for (std::thread& t : threads) t.join();
        fprintf(stderr,
                "%llu dumps, %llu ring reads, %llu records checked (%llu complete), %llu torn, "
                "ops %llu + %llu\n",
                static_cast<unsigned long long>(dumps), static_cast<unsigned long long>(ring_reads),
                static_cast<unsigned long long>(v.records),
                static_cast<unsigned long long>(v.complete), static_cast<unsigned long long>(torn),
                static_cast<unsigned long long>(lanes[0].claimed.load()),
                static_cast<unsigned long long>(lanes[1].claimed.load()));
        if (v.mixed > 0)
          fprintf(stderr, "%llu mixed, first: %s\n", static_cast<unsigned long long>(v.mixed),
                  v.first.c_str());
        CHILD_CHECK(!lanes[0].bad_seq && !lanes[1].bad_seq);
        CHILD_CHECK(v.mixed == 0);
        // The load was real: snapshots were taken after the ring wrapped and
        // held records known complete.
        CHILD_CHECK(wrapped_snapshots > 0 && v.complete > 0);
        for (Lane& lane : lanes) CloseComm(lane.comm);
        return 0;
      }),
      0);
}

}  // namespace
}  // namespace flightrec

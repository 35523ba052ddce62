// ReadLiveStatus reads each region's newest slots (StatusOptions::
// newest_slots), further back while the oldest read op is still pending
// and until every region reaches back as far in time as the furthest:
// what status reports (states, the oldest pending op, pending counts, the
// last completed op, rates) against reading every region's whole lap
// (newest_slots 0).
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "analyzer/model/live_status.h"
#include "unit/reader/image_builder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

using analysis::LiveStatus;
using analysis::ProcessStatus;
using analysis::StatusOptions;
using test::TempDir;
using test_support::ImageBuilder;
using test_support::kCreatedMono;
using test_support::kCreatedWall;

constexpr uint64_t kCapacity = 4096;
constexpr uint64_t kOps = 3000;         // per region, one every kStepNs
constexpr uint64_t kStepNs = 1000000;   // 1 ms
constexpr uint64_t kStartNs = 1000000;  // the first op, after creation
constexpr uint64_t kPendingTail = 300;  // region 0: its newest ops not done (GPU behind)

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// One process, two tracked regions of kOps ops: region 0's newest
// kPendingTail ops pending, region 1's all done. Returns the mono time of
// the newest op.
uint64_t WriteRing(const std::string& dir) {
  ImageBuilder b(2, kCapacity);
  b.header().gpu_offset_samples = 1;
  b.header().heartbeat_mono_ns = kCreatedMono + kStartNs + kOps * kStepNs;
  b.header().heartbeat_wall_ns = kCreatedWall + kStartNs + kOps * kStepNs;
  b.header().watchdog_poll_ns = 60000000000ULL;
  b.header().watchdog_timeout_ns = 600000000000ULL;
  for (uint32_t c = 0; c < 2; ++c) {
    b.Claim(c, 0x10 + c, 0, 1, c == 0 ? "tp0" : "dp0").flags = format::kRegionCompletionTracked;
    for (uint64_t i = 0; i < kOps; ++i) {
      format::Record r = ImageBuilder::Coll(i, 256 + c);
      r.t_enqueue_ns = kCreatedMono + kStartNs + i * kStepNs;
      if (c == 1 || i + kPendingTail < kOps) {
        r.state = format::kOpDone;
        r.gpu_start_raw = r.t_enqueue_ns + 100000;
        r.gpu_end_raw = r.gpu_start_raw + 200000;
        r.t_last_progress_ns = r.gpu_end_raw + 1000;
      }
      b.Append(c, r);
    }
  }
  WriteFile(dir + "/flightrec-job-1-node-a-4242.ring", b.Bytes());
  return kCreatedMono + kStartNs + (kOps - 1) * kStepNs;
}

LiveStatus Read(const std::string& dir, uint64_t newest_slots) {
  StatusOptions options;
  options.newest_slots = newest_slots;
  options.stalled_after_ns = 3600000000000ULL;  // pending, not stalled
  options.window_ns = 10000000000ULL;
  options.now_wall_ns = kCreatedWall + kStartNs + kOps * kStepNs;
  return analysis::ReadLiveStatus({dir}, options);
}

TEST(LiveStatusNewestSlots, ReadsTheNewestSlotsAndBackToTheOldestPendingOp) {
  TempDir dir;
  WriteRing(dir.path());
  const LiveStatus whole = Read(dir.path(), 0);
  const LiveStatus newest = Read(dir.path(), 256);
  ASSERT_EQ(whole.jobs.size(), 1u);
  ASSERT_EQ(newest.jobs.size(), 1u);
  ASSERT_EQ(newest.jobs[0].processes.size(), 1u);
  const ProcessSnapshot& p = newest.jobs[0].processes[0];
  ASSERT_EQ(p.comms.size(), 2u);
  // The whole lap, against: of the region whose newest 300 are pending, 256
  // then 512 back (to a done op); of the region all done, its newest 256,
  // then 512 more: back as far in time as the other region reaches.
  EXPECT_EQ(whole.jobs[0].processes[0].comms[1].records.size(), kOps);
  ASSERT_EQ(p.comms[1].records.size(), 256u + 512u);
  EXPECT_EQ(p.comms[1].records.front().slot_seq, kOps - 768);
  EXPECT_EQ(p.comms[1].records.back().slot_seq, kOps - 1);
  ASSERT_EQ(p.comms[0].records.size(), 256u + 512u);
  EXPECT_EQ(p.comms[0].records.front().slot_seq, kOps - 768);
  for (size_t i = 1; i < p.comms[0].records.size(); ++i) {
    ASSERT_EQ(p.comms[0].records[i].slot_seq, p.comms[0].records[i - 1].slot_seq + 1);
  }

  const ProcessStatus& a = whole.jobs[0].status[0];
  const ProcessStatus& b = newest.jobs[0].status[0];
  EXPECT_EQ(b.state, analysis::LiveState::kProgressing);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(b.pending_ops, kPendingTail);
  EXPECT_EQ(a.pending_ops, b.pending_ops);
  // The oldest pending op, and the last completed op of each comm.
  ASSERT_TRUE(b.has_pending());
  const ProcessSnapshot& wp = whole.jobs[0].processes[0];
  EXPECT_EQ(p.comms[b.pending_comm].records[b.pending_record].op_index, kOps - kPendingTail);
  EXPECT_EQ(wp.comms[a.pending_comm].records[a.pending_record].op_index, kOps - kPendingTail);
  EXPECT_EQ(a.pending_age_ns, b.pending_age_ns);
  for (size_t c = 0; c < 2; ++c) {
    ASSERT_GE(b.comms[c].last_done, 0);
    EXPECT_EQ(p.comms[c].records[b.comms[c].last_done].op_index,
              wp.comms[c].records[a.comms[c].last_done].op_index);
    EXPECT_EQ(a.comms[c].last_done_ns, b.comms[c].last_done_ns);
    EXPECT_EQ(a.comms[c].pending, b.comms[c].pending);
  }
  // Rates: one op per ms either way; over the whole 3 s lap, or over the
  // span of the newest slots read.
  EXPECT_NEAR(a.comms[1].ops * 1e9 / static_cast<double>(a.comms[1].span_ns), 1000.0, 5.0);
  EXPECT_NEAR(b.comms[1].ops * 1e9 / static_cast<double>(b.comms[1].span_ns), 1000.0, 5.0);
}

}  // namespace
}  // namespace flightrec

// The exporter's metric model (analyzer/live): rings built byte by byte
// (image_builder.h) in a temp directory, scanned, changed, scanned again.
#include "analyzer/live/collector.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "analyzer/live/exposition.h"
#include "unit/reader/image_builder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace live {
namespace {

using test::TempDir;
using test_support::ImageBuilder;
using test_support::kCreatedMono;
using test_support::kCreatedWall;

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// The value of the sample whose line starts with `series` (name and labels
// exactly as rendered); -1 when absent.
double Value(const std::string& text, const std::string& series) {
  size_t pos = 0;
  while ((pos = text.find(series + " ", pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n') {
      return std::stod(text.substr(pos + series.size() + 1));
    }
    pos += series.size();
  }
  return -1;
}

const char* kComm =
    "job=\"job-1\",host=\"node-a\",pid=\"4242\",comm=\"tp0\",comm_id=\"0x00000000000000aa\","
    "rank=\"0\"";

std::string Series(const std::string& name, const std::string& extra = "") {
  return name + "{" + kComm + extra + "}";
}

// A completed collective with GPU times: enqueue at +1000*(i+1) ns mono,
// GPU start 2 ms later, 3 ms on the GPU (gpu_to_mono offset 0).
format::Record Done(uint64_t i, uint64_t count) {
  format::Record r = ImageBuilder::Coll(i, count);
  r.state = format::kOpDone;
  r.gpu_start_raw = r.t_enqueue_ns + 2000000;
  r.gpu_end_raw = r.gpu_start_raw + 3000000;
  r.flags |= format::kFlagGpuTimed;
  return r;
}

class CollectorTest : public ::testing::Test {
 protected:
  CollectorTest() : builder_(2, 8) {
    builder_.header().gpu_offset_samples = 1;  // offset 0 known: GPU times convert
    builder_.header().heartbeat_wall_ns = kCreatedWall + 5000000000ULL;
    builder_.Claim(0, 0xaa, 0, 2, "tp0").flags = format::kRegionCompletionTracked;
    path_ = dir_.path() + "/flightrec-job-1-node-a-4242.ring";
  }
  std::string ScanText(uint64_t now = kCreatedWall + 7000000000ULL) {
    WriteFile(path_, builder_.Bytes());
    log_.clear();
    last_ = collector_.Scan(now, &log_);
    std::string out;
    collector_.Render(last_, &out);
    return out;
  }

  TempDir dir_;
  ImageBuilder builder_;
  std::string path_;
  Collector collector_{{dir_.path()}};
  std::vector<std::string> log_;
  ScanStats last_;
};

TEST_F(CollectorTest, CountsByFuncBytesAndHistogramsAndReadsOnlyNewSlots) {
  for (uint64_t i = 0; i < 3; ++i) builder_.Append(0, Done(i, 256));
  std::string text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 3);
  EXPECT_EQ(Value(text, Series("flightrec_collective_bytes_total", ",func=\"AllReduce\"")),
            3 * 256 * 4);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 3);
  EXPECT_NEAR(Value(text, Series("flightrec_collective_duration_seconds_sum")), 0.009, 1e-9);
  // 3 ms falls in the 5 ms bucket, not in the 1 ms one.
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_bucket", ",le=\"0.001\"")),
            0);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_bucket", ",le=\"0.005\"")),
            3);
  EXPECT_NEAR(Value(text, Series("flightrec_collective_queueing_seconds_sum")), 0.006, 1e-9);
  EXPECT_EQ(Value(text, Series("flightrec_oldest_pending_op_seconds")), 0);
  EXPECT_EQ(last_.slots_read, 3u);
  EXPECT_EQ(
      Value(text, "flightrec_heartbeat_age_seconds{job=\"job-1\",host=\"node-a\",pid=\"4242\"}"),
      2);

  // Two more: only they are read, and the counters add up.
  builder_.Append(0, Done(3, 256));
  builder_.Append(0, Done(4, 256));
  text = ScanText();
  EXPECT_EQ(last_.slots_read, 2u);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 5);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 5);
  // Nothing new: nothing read, nothing counted twice.
  text = ScanText();
  EXPECT_EQ(last_.slots_read, 0u);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 5);
}

// The fail-slow counters (docs/monitoring.md, "Fail-slow"): completed
// collectives with their GPU time and queueing; the region's first 16 (its
// members' arrival from init, connection setup) are left out, and so are a
// Send (it pairs with one peer) and a collective whose enqueue time is
// unknown. process_info names the global rank (the rank in the widest comm).
TEST_F(CollectorTest, SyncCountersCoverTimedCollectivesOnlyAndProcessInfoNamesTheGlobalRank) {
  builder_.Claim(1, 0xbb, 5, 8, "world").flags = format::kRegionCompletionTracked;
  // 16 warm-up ops, read 8 at a time (the region holds 8).
  for (uint64_t i = 0; i < 16; ++i) {
    builder_.Append(0, Done(i, 256));
    if (i % 8 == 7) ScanText();
  }
  EXPECT_EQ(Value(ScanText(), Series("flightrec_sync_collectives_total")), 0);
  for (uint64_t i = 16; i < 19; ++i) builder_.Append(0, Done(i, 256));
  format::Record send = Done(19, 256);
  send.func = format::kFuncSend;
  send.flags |= format::kFlagP2p;
  builder_.Append(0, send);
  format::Record untimed = Done(20, 256);
  untimed.t_enqueue_ns = 0;
  builder_.Append(0, untimed);
  const std::string text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 21);
  EXPECT_EQ(Value(text, Series("flightrec_sync_collectives_total")), 3);
  EXPECT_NEAR(Value(text, Series("flightrec_sync_gpu_seconds_total")), 0.009, 1e-9);
  EXPECT_NEAR(Value(text, Series("flightrec_sync_queueing_seconds_total")), 0.006, 1e-9);
  EXPECT_NE(text.find("flightrec_process_info{job=\"job-1\",host=\"node-a\",pid=\"4242\","
                      "state=\"running\",global_rank=\"5\","),
            std::string::npos)
      << text.substr(0, 2000);
}

// --detail node: two processes of one node on the same comm. Per rank: the
// sync counters and the pending gauges; the operation counters and the
// histograms once per node and comm, summed.
TEST(CollectorNodeDetail, SumsOperationSeriesPerNodeAndKeepsWhatTheRulesCompare) {
  TempDir dir;
  for (int r = 0; r < 2; ++r) {
    ImageBuilder b(2, 32);
    b.header().gpu_offset_samples = 1;
    b.header().pid = 4242 + r;
    b.Claim(0, 0xaa, r, 2, "tp0").flags = format::kRegionCompletionTracked;
    for (uint64_t i = 0; i < 20; ++i) b.Append(0, Done(i, 256));
    WriteFile(dir.path() + "/flightrec-job-1-node-a-" + std::to_string(4242 + r) + ".ring",
              b.Bytes());
  }
  Collector collector({dir.path()}, Detail::kNode);
  std::vector<std::string> log;
  const ScanStats stats = collector.Scan(kCreatedWall + 7000000000ULL, &log);
  std::string text;
  collector.Render(stats, &text);
  const std::string node =
      "job=\"job-1\",host=\"node-a\",comm=\"tp0\",comm_id=\"0x00000000000000aa\"";
  EXPECT_EQ(Value(text, "flightrec_collectives_total{" + node + ",func=\"AllReduce\"}"), 40);
  EXPECT_EQ(Value(text, "flightrec_collective_duration_seconds_count{" + node + "}"), 40);
  EXPECT_EQ(
      text.find("flightrec_collective_duration_seconds_count{job=\"job-1\",host=\"node-a\",pid="),
      std::string::npos);
  for (int r = 0; r < 2; ++r) {
    const std::string rank = "{job=\"job-1\",host=\"node-a\",pid=\"" + std::to_string(4242 + r) +
                             "\",comm=\"tp0\",comm_id=\"0x00000000000000aa\",rank=\"" +
                             std::to_string(r) + "\"}";
    EXPECT_EQ(Value(text, "flightrec_sync_collectives_total" + rank), 4) << rank;
    EXPECT_EQ(Value(text, "flightrec_oldest_pending_op_seconds" + rank), 0) << rank;
  }
}

TEST_F(CollectorTest, APendingOpAgesUntilItCompletesAndIsThenObservedOnce) {
  builder_.Append(0, Done(0, 16));
  format::Record& pending = builder_.Append(0, ImageBuilder::Coll(1, 16));  // enqueued
  const uint64_t enqueue_wall = pending.t_enqueue_ns - kCreatedMono + kCreatedWall;
  std::string text = ScanText(enqueue_wall + 4000000000ULL);
  EXPECT_NEAR(Value(text, Series("flightrec_oldest_pending_op_seconds")), 4.0, 1e-6);
  EXPECT_EQ(Value(text, Series("flightrec_pending_ops")), 1);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 1);
  text = ScanText(enqueue_wall + 9000000000ULL);
  EXPECT_NEAR(Value(text, Series("flightrec_oldest_pending_op_seconds")), 9.0, 1e-6);
  EXPECT_EQ(last_.slots_read, 1u);  // the pending slot re-checked, nothing else
  // It completes: observed once, and nothing is pending any more.
  pending.state = format::kOpDone;
  pending.gpu_start_raw = pending.t_enqueue_ns + 1000;
  pending.gpu_end_raw = pending.gpu_start_raw + 1000;
  text = ScanText(enqueue_wall + 10000000000ULL);
  EXPECT_EQ(Value(text, Series("flightrec_oldest_pending_op_seconds")), 0);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 2);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 2);
  text = ScanText(enqueue_wall + 11000000000ULL);
  EXPECT_EQ(Value(text, Series("flightrec_collective_duration_seconds_count")), 2);
}

TEST_F(CollectorTest, SlotsOverwrittenBeforeAScanAreCountedAsUnknown) {
  builder_.Append(0, Done(0, 16));
  std::string text = ScanText();
  // 20 more ops into an 8-slot region: 12 of them are gone before the scan.
  for (uint64_t i = 1; i <= 20; ++i) builder_.Append(0, Done(i, 16));
  text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 9);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"unknown\"")), 12);
  EXPECT_EQ(Value(text, Series("flightrec_unread_records_total")), 12);
  EXPECT_EQ(last_.slots_read, 8u);  // the last lap only, never more than the ring holds
}

TEST_F(CollectorTest, TornSlotsInBetweenAreUnknownAndATrailingOneIsReadAgain) {
  builder_.Append(0, Done(0, 16));
  builder_.Append(0, Done(1, 16)).commit = 0;  // torn
  builder_.Append(0, Done(2, 16));
  builder_.Append(0, Done(3, 16)).commit = 0;  // claim in progress
  std::string text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 2);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"unknown\"")), 1);
  ImageBuilder::Seal(&builder_.Slot(0, 3), 3);  // published
  text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 3);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"unknown\"")), 1);
}

TEST_F(CollectorTest, BadFilesAreSkippedWithAReasonAndALogLineOnce) {
  builder_.Append(0, Done(0, 16));
  WriteFile(dir_.path() + "/foreign.ring", std::vector<uint8_t>(8192, 'x'));
  std::vector<uint8_t> truncated = builder_.Bytes();
  truncated.resize(truncated.size() / 2);
  WriteFile(dir_.path() + "/truncated.ring", truncated);
  WriteFile(dir_.path() + "/empty.ring", {});
  WriteFile(dir_.path() + "/garbage.frdump", std::vector<uint8_t>(100, 'y'));
  std::string text = ScanText();
  EXPECT_EQ(Value(text, "flightrec_exporter_skipped_files{reason=\"foreign\"}"), 2);
  EXPECT_EQ(Value(text, "flightrec_exporter_skipped_files{reason=\"truncated\"}"), 2);
  EXPECT_EQ(Value(text, "flightrec_exporter_rings"), 1);
  ASSERT_EQ(log_.size(), 4u);
  for (const std::string& line : log_) EXPECT_NE(line.find(dir_.path()), std::string::npos) << line;
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 1);
  // The same files again: no new log line, the same gauges.
  text = ScanText();
  EXPECT_TRUE(log_.empty());
  EXPECT_EQ(Value(text, "flightrec_exporter_file_skips_total{reason=\"foreign\"}"), 2);
  // The good ring is truncated under the exporter: skipped, its series gone.
  WriteFile(path_, truncated);
  log_.clear();
  last_ = collector_.Scan(kCreatedWall, &log_);
  text.clear();
  collector_.Render(last_, &text);
  EXPECT_EQ(Value(text, "flightrec_exporter_skipped_files{reason=\"truncated\"}"), 3);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), -1);
  ASSERT_EQ(log_.size(), 1u);
  EXPECT_NE(log_[0].find(path_), std::string::npos);
}

TEST_F(CollectorTest, AVanishedRingTakesItsSeriesAndAReplacedOneStartsAgain) {
  for (uint64_t i = 0; i < 4; ++i) builder_.Append(0, Done(i, 16));
  std::string text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 4);
  ASSERT_EQ(unlink(path_.c_str()), 0);
  log_.clear();
  last_ = collector_.Scan(kCreatedWall, &log_);
  text.clear();
  collector_.Render(last_, &text);
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), -1);
  EXPECT_EQ(Value(text, "flightrec_exporter_rings"), 0);
  // A new process's ring under the same name: read from its start.
  text = ScanText();
  EXPECT_EQ(Value(text, Series("flightrec_collectives_total", ",func=\"AllReduce\"")), 4);
}

TEST_F(CollectorTest, DumpsAreCountedByReason) {
  builder_.Append(0, Done(0, 16));
  WriteFile(dir_.path() + "/flightrec-job-1-node-a-4242-1.frdump", builder_.DumpBytes(1));
  const std::string text = ScanText();
  const std::string p = "job=\"job-1\",host=\"node-a\",pid=\"4242\"";
  EXPECT_EQ(Value(text, "flightrec_dumps_total{" + p + ",reason=\"timeout\"}"), 1);
  EXPECT_EQ(Value(text, "flightrec_dumps_total{" + p + ",reason=\"trigger\"}"), 0);
}

// Every byte of a ring's header fields, region table and region 0's records
// (every 4th byte there) flipped in turn under one exporter, which keeps its
// tail state across the changes: no crash (the ASan build runs this too),
// and the good ring counts right again at the end.
TEST_F(CollectorTest, EveryByteFlippedUnderTheExporterNeverCrashesIt) {
  for (uint64_t i = 0; i < 6; ++i) builder_.Append(0, Done(i, 16));
  builder_.Append(0, ImageBuilder::Coll(6, 16));  // pending
  const std::vector<uint8_t> good = builder_.Bytes();
  ScanText();
  size_t skipped_scans = 0;
  const uint64_t table = builder_.header().region_table_offset;
  const uint64_t records = builder_.header().records_offset;
  for (size_t at = 0; at < records + 8 * format::kRecordSize; ++at) {
    const bool header = at < sizeof(format::FileHeader) - sizeof(format::FileHeader::reserved);
    const bool desc = at >= table && at < table + 2 * format::kRegionDescSize;
    if (!header && !desc && !(at >= records && at % 4 == 0)) continue;
    std::vector<uint8_t> bad = good;
    bad[at] ^= 0xff;
    WriteFile(path_, bad);
    std::vector<std::string> log;
    const ScanStats stats = collector_.Scan(kCreatedWall, &log);
    std::string text;
    collector_.Render(stats, &text);
    skipped_scans += stats.skipped_files;
    ASSERT_FALSE(text.empty());
  }
  EXPECT_GT(skipped_scans, 0u);  // header damage was noticed, not parsed
  const std::string text = ScanText();
  EXPECT_EQ(Value(text, "flightrec_exporter_rings"), 1);
  EXPECT_EQ(Value(text, "flightrec_exporter_skipped_files{reason=\"invalid\"}"), 0);
}

TEST(Exposition, EscapesLabelValuesAndWritesHelpAndType) {
  std::string out;
  Exposition e(&out);
  e.Family("x_total", "counter", "An x.");
  e.Sample("x_total", {{"comm", "a\"b\\c\nd"}}, 3);
  EXPECT_EQ(out,
            "# HELP x_total An x.\n# TYPE x_total counter\nx_total{comm=\"a\\\"b\\\\c\\nd\"} 3\n");
}

}  // namespace
}  // namespace live
}  // namespace flightrec

// LiveRing::ReadSlots (the exporter's lean decode, LiveOp) against
// ReadSnapshotFile (the full decode, OpRecord) over the same ring file: the
// same slots are rejected (torn, another lap's, garbage), and every LiveOp
// field equals the OpRecord field it stands for.
#include "analyzer/reader/live_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "unit/reader/image_builder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

using test::TempDir;
using test_support::ImageBuilder;

constexpr uint64_t kCapacity = 16;

void WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// Varied valid content for op i: functions, types, states and GPU times
// (one with a GPU timer an hour off its host window: the stepped-timer rule).
format::Record Content(uint64_t i) {
  format::Record r = ImageBuilder::Coll(i, 100 + i);
  r.func = static_cast<uint8_t>(1 + i % (format::kNumFuncs - 1));
  r.datatype = i % 3 == 0 ? format::kTypeFloat64 : format::kTypeFloat32;
  r.state = static_cast<uint8_t>(i % format::kNumOpStates);
  r.t_last_progress_ns = r.t_enqueue_ns + 5000000;
  if (i % 2 == 0) {
    r.gpu_start_raw = r.t_enqueue_ns + 1000000;
    r.gpu_end_raw = r.gpu_start_raw + 2000000;
  }
  if (i == 20) r.gpu_start_raw = r.t_enqueue_ns + 3600000000000ULL;  // stepped timer
  if (i == 21) r.func = 200;                                         // out of range
  if (i == 22) r.state = 99;                                         // out of range
  return r;
}

TEST(LiveRingLeanDecode, RejectsAndDecodesExactlyLikeTheSnapshotReader) {
  TempDir dir;
  ImageBuilder b(1, kCapacity);
  b.header().gpu_offset_samples = 1;  // GPU offset 0 known: GPU times convert
  b.Claim(0, 0xaa, 0, 2, "tp0").flags = format::kRegionCompletionTracked;
  const uint64_t head = kCapacity + 12;  // lapped: [12, 28) is the last lap
  for (uint64_t i = 0; i < head; ++i) {
    format::Record& r = b.Append(0, Content(i));
    // Bytes [125, 128) (reserved today, a field tomorrow) need not be zero.
    std::memset(reinterpret_cast<uint8_t*>(&r) + 125, 0xa5, 3);
  }
  std::set<uint64_t> bad;
  b.Slot(0, 13).commit = 0;  // claim in progress
  bad.insert(13);
  b.Slot(0, 15).commit = 15 + 1 + kCapacity;  // another lap's commit
  bad.insert(15);
  b.Slot(0, 17).checksum ^= 1;  // checksum does not match
  bad.insert(17);
  b.Slot(0, 19).count ^= 0x40;  // covered bytes changed under the checksum
  bad.insert(19);
  std::memset(reinterpret_cast<uint8_t*>(&b.Slot(0, 23)) + 8, 0xee, 72);  // garbage
  bad.insert(23);
  const std::string path = dir.path() + "/flightrec-job-node-1.ring";
  WriteFile(path, b.Bytes());

  const ReadResult full = ReadSnapshotFile(path);
  ASSERT_TRUE(full.ok) << full.error;
  ASSERT_EQ(full.snapshot.comms.size(), 1u);
  const CommSnapshot& comm = full.snapshot.comms[0];

  LiveRing ring;
  RingProblem problem = RingProblem::kNone;
  std::string error;
  ASSERT_TRUE(ring.Open(path, &problem, &error)) << error;
  ProcessSnapshot headonly;
  ASSERT_TRUE(ring.ReadHead(&headonly, &problem, &error)) << error;
  ASSERT_EQ(headonly.comms.size(), 1u);
  std::vector<LiveOp> lean;
  const uint64_t torn = ring.ReadSlots(headonly.comms[0].region_index, 0, head, &lean);

  // Exactly the damaged slots are rejected, by both decodes.
  EXPECT_EQ(torn, bad.size());
  EXPECT_EQ(comm.torn, bad.size());
  ASSERT_EQ(lean.size(), comm.records.size());
  ASSERT_EQ(lean.size(), kCapacity - bad.size());
  for (size_t i = 0; i < lean.size(); ++i) {
    const LiveOp& l = lean[i];
    const OpRecord& o = comm.records[i];
    SCOPED_TRACE("slot " + std::to_string(o.slot_seq));
    EXPECT_EQ(bad.count(l.slot_seq), 0u);
    EXPECT_EQ(l.slot_seq, o.slot_seq);
    EXPECT_EQ(l.bytes, o.bytes);
    EXPECT_EQ(l.t_enqueue_ns, o.t_enqueue_ns);
    EXPECT_EQ(l.gpu_start_ns, o.gpu_start_ns);
    EXPECT_EQ(l.gpu_start_raw, o.gpu_start_raw);
    EXPECT_EQ(l.gpu_end_raw, o.gpu_end_raw);
    EXPECT_EQ(l.func, o.func);
    EXPECT_EQ(l.state, o.state);
  }
  // The cases above are really there: the stepped timer was re-based and
  // the out-of-range enums read as 0, in both decodes.
  bool stepped = false;
  for (const LiveOp& l : lean) {
    if (l.slot_seq == 20) {
      stepped = true;
      // Taken from the host's own observation, not the hour-off timer.
      EXPECT_EQ(l.gpu_start_ns, Content(20).t_last_progress_ns - test_support::kCreatedMono +
                                    test_support::kCreatedWall);
    }
    if (l.slot_seq == 21) {
      EXPECT_EQ(l.func, 0);
    }
    if (l.slot_seq == 22) {
      EXPECT_EQ(l.state, 0);
    }
  }
  EXPECT_TRUE(stepped);
}

}  // namespace
}  // namespace flightrec

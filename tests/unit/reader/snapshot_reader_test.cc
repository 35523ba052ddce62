#include "analyzer/reader/snapshot_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "analyzer/reader/image_header.h"
#include "analyzer/reader/init_file.h"
#include "analyzer/reader/live_ring.h"
#include "analyzer/reader/region_reader.h"
#include "support/files.h"
#include "tests/unit/reader/image_builder.h"
#include "tests/unit/reader/snapshot_invariants.h"

namespace flightrec {
namespace {

using test_support::ImageBuilder;
using test_support::kCreatedMono;
using test_support::kCreatedWall;

ReadResult Read(const std::vector<uint8_t>& bytes, const std::string& name = "img") {
  return ReadSnapshotBytes(bytes.data(), bytes.size(), name);
}

// Every header field gets a distinct value so that a swapped or dropped copy
// shows up.
void FillHeader(format::FileHeader* h) {
  h->pid = 31337;
  h->clock_source = format::kClockTsc;
  h->api_version = 5;
  h->tsc_hz = 2400000000ULL;
  h->gpu_to_mono_offset_ns = -7000;
  h->gpu_offset_samples = 3;
  test_support::CopyStr(h->gpu_uuid, sizeof(h->gpu_uuid), "GPU-1234");
  test_support::CopyStr(h->gpu_pci_bus_id, sizeof(h->gpu_pci_bus_id), "0000:3b:00.0");
  h->cuda_device = 3;
  h->process_state = format::kProcessExited;
  h->heartbeat_mono_ns = kCreatedMono + 900;
  h->heartbeat_wall_ns = kCreatedWall + 900;
  h->heartbeat_count = 17;
  h->dumps_sealed = 2;
  for (uint32_t i = 0; i < format::kNumDropCauses; ++i) h->drops[i] = 100 + i;
  h->watchdog_timeout_ns = 30000000000ULL;
  h->watchdog_poll_ns = 100000000ULL;
  test_support::CopyStr(h->disable_reason, sizeof(h->disable_reason), "none really");
}

format::Record FullRecord() {
  format::Record r = ImageBuilder::Coll(0, 1000);
  r.user_tag = 99;
  r.t_api_ns = kCreatedMono + 500;
  r.t_enqueue_ns = kCreatedMono + 600;
  r.stream = 0xabcdef;
  r.root_or_peer = 2;
  r.func = format::kFuncBroadcast;
  r.datatype = format::kTypeBfloat16;
  r.algo = format::kAlgoTree;
  r.proto = format::kProtoLL128;
  r.n_channels = 4;
  r.n_warps = 16;
  r.flags = format::kFlagHasApi | format::kFlagGpuTimed | format::kFlagNetwork;
  r.t_enqueued_ns = kCreatedMono + 700;
  r.gpu_start_raw = 1000000;
  r.gpu_end_raw = 1005000;
  r.t_last_progress_ns = kCreatedMono + 800;
  r.net_bytes = 4096;
  r.state = format::kOpDone;
  r.channels_started = 4;
  r.channels_stopped = 4;
  r.proxy_ops_started = 2;
  r.proxy_ops_stopped = 1;
  r.api_datatype = format::kTypeFloat16;
  return r;
}

TEST(SnapshotReaderTest, RoundTripsEveryHeaderField) {
  ImageBuilder b(2, 8);
  FillHeader(&b.header());
  ReadResult r = Read(b.Bytes(), "rank0.ring");
  ASSERT_TRUE(r.ok) << r.error;
  const ProcessSnapshot& s = r.snapshot;
  EXPECT_EQ(s.path, "rank0.ring");
  EXPECT_FALSE(s.is_dump);
  EXPECT_FALSE(s.compressed);
  EXPECT_STREQ(DescribeFileKind(s), "ring");
  EXPECT_EQ(s.version_major, 1);
  EXPECT_EQ(s.version_minor, format::kFormatMinor);  // what image_builder.h writes
  EXPECT_EQ(s.pid, 31337);
  EXPECT_EQ(s.host, "node-a");
  EXPECT_EQ(s.job_id, "job-1");
  EXPECT_EQ(s.plugin_version, "0.1.0");
  EXPECT_EQ(s.nccl_version, "2.28.9");
  EXPECT_EQ(s.gpu_uuid, "GPU-1234");
  EXPECT_EQ(s.gpu_pci_bus_id, "0000:3b:00.0");
  EXPECT_EQ(s.cuda_device, 3);
  EXPECT_EQ(s.api_version, 5u);
  EXPECT_EQ(s.clock_source, format::kClockTsc);
  EXPECT_EQ(s.process_state, format::kProcessExited);
  EXPECT_EQ(s.created_wall_ns, kCreatedWall);
  EXPECT_EQ(s.created_mono_ns, kCreatedMono);
  EXPECT_EQ(s.gpu_to_mono_offset_ns, -7000);
  EXPECT_EQ(s.gpu_offset_samples, 3u);
  EXPECT_EQ(s.heartbeat_wall_ns, kCreatedWall + 900);
  EXPECT_EQ(s.heartbeat_mono_ns, kCreatedMono + 900);
  EXPECT_EQ(s.heartbeat_count, 17u);
  EXPECT_EQ(s.watchdog_timeout_ns, 30000000000ULL);
  EXPECT_EQ(s.watchdog_poll_ns, 100000000ULL);
  EXPECT_EQ(s.dumps_sealed, 2u);
  EXPECT_EQ(s.max_regions, 2u);
  EXPECT_EQ(s.region_capacity, 8u);
  EXPECT_EQ(s.file_size, b.header().file_size);
  for (uint32_t i = 0; i < format::kNumDropCauses; ++i) EXPECT_EQ(s.drops[i], 100 + i);
  EXPECT_EQ(s.dump_reason, format::kDumpNone);
  EXPECT_EQ(s.disable_reason, "none really");
  EXPECT_EQ(s.pointer_size, 8u);
  EXPECT_EQ(s.tsc_hz, 2400000000ULL);
  EXPECT_EQ(s.region_table_offset, format::kHeaderSize);
  EXPECT_EQ(s.records_offset, 8192u);
  EXPECT_TRUE(s.comms.empty());
  EXPECT_TRUE(s.warnings.empty());
}

TEST(SnapshotReaderTest, RoundTripsEveryRegionAndRecordField) {
  ImageBuilder b(3, 8);
  b.header().gpu_to_mono_offset_ns = 1000;
  b.header().gpu_offset_samples = 1;
  format::RegionDesc& d = b.Claim(1, 0x1122334455667788ULL, 3, 8, "tp0");
  d.flags = format::kRegionIdentityFromInit;
  d.finalize_mono_ns = kCreatedMono + 5000;
  d.last_enqueue_mono_ns = kCreatedMono + 600;
  for (uint32_t i = 0; i < 8; ++i) d.drops[i] = 10 + i;
  b.Append(1, FullRecord());
  format::Record p2p = ImageBuilder::Coll(4, 16);
  p2p.func = format::kFuncSend;
  p2p.flags = format::kFlagP2p;
  p2p.nccl_seq = UINT64_MAX;
  p2p.root_or_peer = 5;
  b.Append(1, p2p);
  b.region(1).state = format::kRegionFinalized;

  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.comms.size(), 1u);  // free regions 0 and 2 are not comms
  const CommSnapshot& c = r.snapshot.comms[0];
  EXPECT_EQ(c.region_index, 1u);
  EXPECT_EQ(c.state, format::kRegionFinalized);
  EXPECT_EQ(c.flags, format::kRegionIdentityFromInit);
  EXPECT_EQ(c.comm_id, 0x1122334455667788ULL);
  EXPECT_EQ(c.name, "tp0");
  EXPECT_EQ(c.rank, 3);
  EXPECT_EQ(c.nranks, 8);
  EXPECT_EQ(c.nnodes, 1);
  EXPECT_EQ(c.generation, 2u);
  EXPECT_EQ(c.head, 2u);
  EXPECT_EQ(c.capacity, 8u);
  EXPECT_EQ(c.overwritten, 0u);
  EXPECT_EQ(c.coll_count, 1u);
  EXPECT_EQ(c.p2p_count, 1u);
  EXPECT_EQ(c.torn, 0u);
  EXPECT_EQ(c.init_wall_ns, kCreatedWall + 10);
  EXPECT_EQ(c.finalize_wall_ns, kCreatedWall + 5000);
  EXPECT_EQ(c.last_enqueue_wall_ns, kCreatedWall + 600);
  for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(c.drops[i], 10 + i);
  ASSERT_EQ(c.records.size(), 2u);

  const OpRecord& op = c.records[0];
  EXPECT_EQ(op.slot_seq, 0u);
  EXPECT_EQ(op.op_index, 0u);
  EXPECT_EQ(op.nccl_seq, 0u);
  EXPECT_EQ(op.count, 1000u);
  EXPECT_EQ(op.bytes, 2000u);  // bf16
  EXPECT_EQ(op.user_tag, 99u);
  EXPECT_EQ(op.stream, 0xabcdefu);
  EXPECT_EQ(op.root_or_peer, 2);
  EXPECT_EQ(op.func, format::kFuncBroadcast);
  EXPECT_EQ(op.datatype, format::kTypeBfloat16);
  EXPECT_EQ(op.api_datatype, format::kTypeFloat16);
  EXPECT_EQ(op.algo, format::kAlgoTree);
  EXPECT_EQ(op.proto, format::kProtoLL128);
  EXPECT_EQ(op.n_channels, 4);
  EXPECT_EQ(op.n_warps, 16);
  EXPECT_EQ(op.flags, format::kFlagHasApi | format::kFlagGpuTimed | format::kFlagNetwork);
  EXPECT_EQ(op.state, format::kOpDone);
  EXPECT_EQ(op.channels_started, 4);
  EXPECT_EQ(op.channels_stopped, 4);
  EXPECT_EQ(op.proxy_ops_started, 2);
  EXPECT_EQ(op.proxy_ops_stopped, 1);
  EXPECT_EQ(op.t_api_ns, kCreatedWall + 500);
  EXPECT_EQ(op.t_enqueue_ns, kCreatedWall + 600);
  EXPECT_EQ(op.t_enqueued_ns, kCreatedWall + 700);
  EXPECT_EQ(op.t_last_progress_ns, kCreatedWall + 800);
  EXPECT_EQ(op.gpu_start_raw, 1000000u);
  EXPECT_EQ(op.gpu_end_raw, 1005000u);
  // mono = raw + offset, then wall = mono - created_mono + created_wall.
  EXPECT_EQ(op.gpu_start_ns, 1000000 + 1000 - kCreatedMono + kCreatedWall);
  EXPECT_EQ(op.gpu_end_ns, 1005000 + 1000 - kCreatedMono + kCreatedWall);
  EXPECT_EQ(op.net_bytes, 4096u);
  EXPECT_FALSE(op.is_p2p());

  const OpRecord& send = c.records[1];
  EXPECT_EQ(send.slot_seq, 1u);
  EXPECT_TRUE(send.is_p2p());
  EXPECT_EQ(send.nccl_seq, UINT64_MAX);
  EXPECT_EQ(send.root_or_peer, 5);
  EXPECT_EQ(send.t_api_ns, 0u);  // 0 = not observed stays 0
  EXPECT_EQ(send.api_datatype, format::kTypeUnknown);
  EXPECT_EQ(send.gpu_start_ns, 0u);
}

TEST(SnapshotReaderTest, GpuTimesStayZeroWithoutOffsetSamples) {
  ImageBuilder b(1, 4);
  b.Claim(0, 1, 0, 2, "c");
  b.Append(0, FullRecord());
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.comms[0].records[0].gpu_start_raw, 1000000u);
  EXPECT_EQ(r.snapshot.comms[0].records[0].gpu_start_ns, 0u);
}

TEST(SnapshotReaderTest, WrappedRegionReturnsExactlyTheNewestCapacityRecords) {
  ImageBuilder b(2, 4);
  b.Claim(0, 7, 0, 2, "wrap");
  b.Claim(1, 8, 0, 2, "quiet");
  for (uint64_t i = 0; i < 11; ++i) b.Append(0, ImageBuilder::Coll(i, 10 + i));
  b.Append(1, ImageBuilder::Coll(0, 5));
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.comms.size(), 2u);
  const CommSnapshot& c = r.snapshot.comms[0];
  EXPECT_EQ(c.head, 11u);
  EXPECT_EQ(c.overwritten, 7u);
  EXPECT_EQ(c.torn, 0u);
  ASSERT_EQ(c.records.size(), 4u);
  for (uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(c.records[k].slot_seq, 7 + k);
    EXPECT_EQ(c.records[k].op_index, 7 + k);
    EXPECT_EQ(c.records[k].count, 17 + k);
  }
  ASSERT_EQ(r.snapshot.comms[1].records.size(), 1u);  // the quiet comm kept its record
  EXPECT_EQ(test_support::CheckSnapshotInvariants(r.snapshot), "");
}

TEST(SnapshotReaderTest, TornSlotsAreCountedNeverReturned) {
  ImageBuilder b(1, 8);
  b.Claim(0, 7, 0, 2, "torn");
  for (uint64_t i = 0; i < 6; ++i) b.Append(0, ImageBuilder::Coll(i, 1));
  b.Slot(0, 1).commit = 0;                   // a claim in progress
  b.Slot(0, 2).count = 12345;                // payload changed after the checksum
  ImageBuilder::Seal(&b.Slot(0, 3), 3 + 8);  // a record of the next lap...
  b.Slot(0, 3).commit = 4;                   // ...with a commit that looks right
  format::Record stale = ImageBuilder::Coll(99, 1);
  b.Slot(0, 5) = stale;
  ImageBuilder::Seal(&b.Slot(0, 5), 5 + 8);  // wrong lap: commit 14, expected 6

  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const CommSnapshot& c = r.snapshot.comms[0];
  EXPECT_EQ(c.torn, 4u);
  ASSERT_EQ(c.records.size(), 2u);
  EXPECT_EQ(c.records[0].slot_seq, 0u);
  EXPECT_EQ(c.records[1].slot_seq, 4u);
  EXPECT_EQ(test_support::CheckSnapshotInvariants(r.snapshot), "");
  bool warned = false;
  for (const std::string& w : r.snapshot.warnings) warned |= w.find("4 torn") != std::string::npos;
  EXPECT_TRUE(warned);
}

// A slot whose commit and op_index are one lap's and whose other immutable
// words are the next lap's (what a copy taken across a reclaim can hold) in
// a collectives-only communicator, where op_index equals the slot sequence.
format::Record MixedFromTwoLaps(uint64_t seq, uint64_t capacity, uint16_t version_minor) {
  format::Record next_lap = ImageBuilder::Coll(seq + capacity, 777);
  ImageBuilder::Seal(&next_lap, seq + capacity, version_minor);
  next_lap.commit = seq + 1;
  next_lap.op_index = seq;
  return next_lap;
}

TEST(SnapshotReaderTest, ARecordMixedFromTwoLapsIsTornEvenWhereOpIndexEqualsTheSlotSequence) {
  ImageBuilder b(1, 8);
  b.Claim(0, 7, 0, 2, "coll-only");
  for (uint64_t i = 0; i < 4; ++i) b.Append(0, ImageBuilder::Coll(i, 1));
  b.Slot(0, 2) = MixedFromTwoLaps(2, b.capacity(), format::kFormatMinor);
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const CommSnapshot& c = r.snapshot.comms[0];
  EXPECT_EQ(c.torn, 1u);
  ASSERT_EQ(c.records.size(), 3u);
  for (const OpRecord& op : c.records) EXPECT_NE(op.count, 777u) << "slot " << op.slot_seq;

  // Formats up to 1.2 could not tell: there the mixed slot verifies.
  ImageBuilder old(1, 8);
  old.header().version_minor = 2;
  old.Claim(0, 7, 0, 2, "coll-only");
  for (uint64_t i = 0; i < 4; ++i) {
    format::Record rec = ImageBuilder::Coll(i, 1);
    ImageBuilder::Seal(&rec, i, 2);
    old.Slot(0, i) = rec;
  }
  old.region(0).head = 4;
  old.region(0).coll_count = 4;
  old.Slot(0, 2) = MixedFromTwoLaps(2, old.capacity(), 2);
  ReadResult blind = Read(old.Bytes());
  ASSERT_TRUE(blind.ok) << blind.error;
  EXPECT_EQ(blind.snapshot.comms[0].torn, 0u);
  ASSERT_EQ(blind.snapshot.comms[0].records.size(), 4u);
  EXPECT_EQ(blind.snapshot.comms[0].records[2].count, 777u);
}

TEST(SnapshotReaderTest, ImagesOfFormat12AreVerifiedWithTheirOwnChecksumRule) {
  ImageBuilder b(1, 8);
  b.header().version_minor = 2;
  b.Claim(0, 7, 0, 2, "old");
  for (uint64_t i = 0; i < 4; ++i) {
    format::Record rec = ImageBuilder::Coll(i, 10 + i);
    ImageBuilder::Seal(&rec, i, 2);
    b.Slot(0, i) = rec;
  }
  b.region(0).head = 4;
  b.region(0).coll_count = 4;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const CommSnapshot& c = r.snapshot.comms[0];
  EXPECT_EQ(c.torn, 0u);
  ASSERT_EQ(c.records.size(), 4u);
  EXPECT_EQ(c.records[3].count, 13u);
  // The same bytes claimed as this format's are all torn: the rules differ.
  b.header().version_minor = format::kFormatMinor;
  ReadResult as_new = Read(b.Bytes());
  ASSERT_TRUE(as_new.ok) << as_new.error;
  EXPECT_EQ(as_new.snapshot.comms[0].torn, 4u);
}

TEST(SnapshotReaderTest, MutableProgressWordsDoNotInvalidateARecord) {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  b.Append(0, ImageBuilder::Coll(0, 1));
  b.Slot(0, 0).state = format::kOpRunning;  // written after commit by the proxy
  b.Slot(0, 0).channels_started = 2;
  b.Slot(0, 0).net_bytes = 77;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.comms[0].records.size(), 1u);
  EXPECT_EQ(r.snapshot.comms[0].records[0].state, format::kOpRunning);
  EXPECT_EQ(r.snapshot.comms[0].records[0].net_bytes, 77u);
}

TEST(SnapshotReaderTest, OutOfRangeEnumsInValidRecordsBecomeUnknownWithAWarning) {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  format::Record rec = ImageBuilder::Coll(0, 1);
  rec.func = 200;
  rec.datatype = 99;
  b.Append(0, rec);
  b.Slot(0, 0).state = 9;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  const OpRecord& op = r.snapshot.comms[0].records[0];
  EXPECT_EQ(op.func, format::kFuncUnknown);
  EXPECT_EQ(op.datatype, format::kTypeUnknown);
  EXPECT_EQ(op.state, format::kOpNone);
  EXPECT_EQ(op.bytes, 4u);  // falls back to the record's type_size
  ASSERT_FALSE(r.snapshot.warnings.empty());
  EXPECT_NE(r.snapshot.warnings[0].find("3 out-of-range enum"), std::string::npos);
}

// Record::api_datatype was reserved (never written) before format 1.4: an
// older image reads as "no API datatype" even where the byte is set, a 1.4
// image gives it, and an unknown value becomes Unknown and is counted.
TEST(SnapshotReaderTest, ApiDatatypeIsReadFromFormat14OnAndIsUnknownBefore) {
  for (const uint16_t minor : {uint16_t{3}, format::kApiDatatypeMinor}) {
    ImageBuilder b(1, 4);
    b.header().version_minor = minor;
    b.Claim(0, 7, 0, 2, "c");
    format::Record rec = ImageBuilder::Coll(0, 64);
    rec.func = format::kFuncAllGather;
    rec.datatype = format::kTypeInt8;
    rec.api_datatype = format::kTypeFloat32;
    ImageBuilder::Seal(&rec, 0, minor);
    b.Slot(0, 0) = rec;
    format::Record bad = ImageBuilder::Coll(1, 64);
    bad.api_datatype = 200;
    ImageBuilder::Seal(&bad, 1, minor);
    b.Slot(0, 1) = bad;
    b.region(0).head = 2;
    b.region(0).coll_count = 2;
    ReadResult r = Read(b.Bytes());
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_EQ(r.snapshot.comms[0].records.size(), 2u) << "minor " << minor;
    const bool has = minor >= format::kApiDatatypeMinor;
    EXPECT_EQ(r.snapshot.comms[0].records[0].api_datatype,
              has ? format::kTypeFloat32 : format::kTypeUnknown)
        << "minor " << minor;
    EXPECT_EQ(r.snapshot.comms[0].records[1].api_datatype, format::kTypeUnknown);
    EXPECT_EQ(r.snapshot.warnings.empty(), !has) << "minor " << minor;
  }
}

class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& bytes) {
    std::string tmpl = testing::TempRoot() + "/flightrec-reader-XXXXXX";
    int fd = mkstemp(tmpl.data());
    path_ = tmpl;
    if (fd >= 0) {
      EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
      close(fd);
    }
  }
  ~TempFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(SnapshotReaderTest, ReadsRingAndDumpFilesFromDisk) {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  b.Append(0, ImageBuilder::Coll(0, 1));
  TempFile ring(b.Bytes());
  TempFile dump(b.DumpBytes(3));
  ReadResult r = ReadSnapshotFile(ring.path());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.path, ring.path());
  EXPECT_EQ(r.snapshot.comms[0].records.size(), 1u);
  ReadResult d = ReadSnapshotFile(dump.path());
  ASSERT_TRUE(d.ok) << d.error;
  EXPECT_TRUE(d.snapshot.is_dump);
  EXPECT_TRUE(d.snapshot.compressed);
  EXPECT_EQ(d.snapshot.dump_sequence, 3u);
}

// The live-ring re-check (region_reader.h, LiveFile), driven directly: the
// image is what the first read of a ring returned, the file is the ring as
// the re-reads find it. Slot 0 of a 4-slot region: op 0 finished, and
// while the first read copied it, op 4 reclaimed the slot, so the image holds
// op 0's commit and immutable words with op 4's reset progress words.
struct LiveCase {
  std::vector<uint8_t> first_read;
  std::vector<uint8_t> file_now;
};

LiveCase ReclaimedDuringTheFirstRead() {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  for (uint64_t i = 0; i < 4; ++i) {
    format::Record r = ImageBuilder::Coll(i, 10 + i);
    r.state = format::kOpDone;
    r.channels_started = r.channels_stopped = 2;
    b.Append(0, r);
  }
  LiveCase out;
  format::Record op0 = b.Slot(0, 0);
  // The first read: op 0's commit and immutable words, op 4's new progress.
  format::Record& mixed = b.Slot(0, 0);
  memset(reinterpret_cast<uint8_t*>(&mixed) + 80, 0, 48);
  mixed.state = format::kOpEnqueued;
  out.first_read = b.Bytes();
  // The file afterwards: op 4 owns the slot.
  b.Slot(0, 0) = op0;
  b.Append(0, ImageBuilder::Coll(4, 14));
  out.file_now = b.Bytes();
  return out;
}

// Reads region 0 of `image` (re-checked against `file` when given).
CommSnapshot ReadRegion0(const std::vector<uint8_t>& image, const TempFile* file,
                         std::vector<std::string>* warnings) {
  BoundedView view{image.data(), image.size()};
  ProcessSnapshot snap;
  reader_internal::ImageLayout layout;
  std::string error;
  EXPECT_TRUE(reader_internal::ParseHeader(view, format::kMaxFileSize, &snap, &layout, &error))
      << error;
  CommSnapshot comm;
  int fd = file != nullptr ? open(file->path().c_str(), O_RDONLY) : -1;
  const reader_internal::LiveFile live{fd};
  EXPECT_EQ(reader_internal::ReadRegion(view, layout, 0, &comm, warnings,
                                        file != nullptr ? &live : nullptr),
            reader_internal::RegionOutcome::kRead);
  if (fd >= 0) close(fd);
  return comm;
}

TEST(LiveRingTest, ARecordReclaimedWhileTheRingWasReadIsTornNotData) {
  const LiveCase lc = ReclaimedDuringTheFirstRead();
  std::vector<std::string> warnings;
  // The first read alone passes every check for op 0 (its checksum covers
  // only the immutable words) and would show the finished op as enqueued.
  CommSnapshot alone = ReadRegion0(lc.first_read, nullptr, &warnings);
  ASSERT_EQ(alone.records.size(), 4u);
  EXPECT_EQ(alone.records[0].state, format::kOpEnqueued);
  // Re-checked against the file, op 0 is counted torn and never returned.
  warnings.clear();
  TempFile now(lc.file_now);
  CommSnapshot comm = ReadRegion0(lc.first_read, &now, &warnings);
  EXPECT_EQ(comm.head, 4u);  // the first read's head: ops 0..3
  EXPECT_EQ(comm.torn, 1u);
  ASSERT_EQ(comm.records.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(comm.records[i].slot_seq, i + 1);
    EXPECT_EQ(comm.records[i].state, format::kOpDone);
  }
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("1 torn or in-flight records skipped (1 changed while the file "
                             "was read)"),
            std::string::npos)
      << warnings[0];
}

TEST(LiveRingTest, ARecordThatProgressedBetweenReadsIsTakenFromTheLaterRead) {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  b.Append(0, ImageBuilder::Coll(0, 10));  // enqueued
  const std::vector<uint8_t> first = b.Bytes();
  b.Slot(0, 0).state = format::kOpDone;  // the same lap moved on
  b.Slot(0, 0).channels_stopped = 2;
  TempFile now(b.Bytes());
  std::vector<std::string> warnings;
  CommSnapshot comm = ReadRegion0(first, &now, &warnings);
  EXPECT_EQ(comm.torn, 0u);
  ASSERT_EQ(comm.records.size(), 1u);
  EXPECT_EQ(comm.records[0].state, format::kOpDone);
  EXPECT_TRUE(warnings.empty());
}

TEST(LiveRingTest, AFileThatShrankAfterTheFirstReadCountsItsSlotsTorn) {
  ImageBuilder b(1, 4);
  b.Claim(0, 7, 0, 2, "c");
  b.Append(0, ImageBuilder::Coll(0, 10));
  const std::vector<uint8_t> first = b.Bytes();
  TempFile now(std::vector<uint8_t>(first.begin(), first.begin() + 4096));
  std::vector<std::string> warnings;
  CommSnapshot comm = ReadRegion0(first, &now, &warnings);
  EXPECT_EQ(comm.torn, 1u);
  EXPECT_TRUE(comm.records.empty());
}

TEST(SnapshotReaderTest, FileErrorsNameTheFileAndTheProblem) {
  ReadResult missing = ReadSnapshotFile("/nonexistent/x.ring");
  EXPECT_FALSE(missing.ok);
  EXPECT_EQ(missing.error.rfind("/nonexistent/x.ring: cannot open", 0), 0u) << missing.error;
  ReadResult dir = ReadSnapshotFile("/tmp");
  EXPECT_FALSE(dir.ok);
  EXPECT_EQ(dir.error, "/tmp: not a regular file");
  TempFile empty({});
  ReadResult e = ReadSnapshotFile(empty.path());
  EXPECT_FALSE(e.ok);
  EXPECT_EQ(e.error, empty.path() + ": empty file (0 bytes)");
  ImageBuilder b(1, 4);
  TempFile big(b.Bytes());
  ReadLimits small;
  small.max_image_size = 4096;
  ReadResult l = ReadSnapshotFile(big.path(), small);
  EXPECT_FALSE(l.ok);
  EXPECT_NE(l.error.find("more than the limit of 4096"), std::string::npos) << l.error;
}

// Files in a shared directory are judged by fstat on the descriptor
// (recorder/fileio/safe_file.h): a symlink is never followed, a FIFO never
// blocks the reader, another user's file is refused; each with its reason.
TEST(SnapshotReaderTest, RefusesSymlinksFifosAndOtherUsersFilesWithTheReason) {
  ImageBuilder b(1, 4);
  TempFile ring(b.Bytes());
  ASSERT_TRUE(ReadSnapshotFile(ring.path()).ok);
  const std::string link = ring.path() + ".link";
  ASSERT_EQ(symlink(ring.path().c_str(), link.c_str()), 0);
  ReadResult l = ReadSnapshotFile(link);
  EXPECT_FALSE(l.ok);
  EXPECT_EQ(l.error, link + ": a symbolic link: never followed");
  unlink(link.c_str());

  const std::string fifo = ring.path() + ".fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  ReadResult f = ReadSnapshotFile(fifo);  // no writer: a blocking open would hang here
  EXPECT_FALSE(f.ok);
  EXPECT_EQ(f.error, fifo + ": not a regular file");
  LiveRing live;
  RingProblem problem = RingProblem::kNone;
  std::string error;
  EXPECT_FALSE(live.Open(fifo, &problem, &error));
  EXPECT_EQ(problem, RingProblem::kUnreadable);
  EXPECT_EQ(error, fifo + ": not a regular file");
  unlink(fifo.c_str());

  if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root (CI runs tests as root)";
  ASSERT_EQ(chown(ring.path().c_str(), 4242, 4242), 0);
  ReadResult o = ReadSnapshotFile(ring.path());
  EXPECT_FALSE(o.ok);
  EXPECT_EQ(o.error, ring.path() + ": not owned by you: uid 4242");
  LiveRing other;
  EXPECT_FALSE(other.Open(ring.path(), &problem, &error));
  EXPECT_EQ(problem, RingProblem::kUnreadable);
  EXPECT_EQ(error, ring.path() + ": not owned by you: uid 4242");
  const InitFile init = ReadInitFile(ring.path());
  EXPECT_FALSE(init.readable);
  EXPECT_EQ(init.error, "not owned by you: uid 4242");
  // Trusting a group the owner is not a member of changes nothing.
  fileio::Trust group = fileio::TrustSelf();
  group.group_set = true;
  group.gid = 4242;
  SetReadTrust(group);
  EXPECT_FALSE(ReadSnapshotFile(ring.path()).ok);
  SetReadTrust(fileio::TrustSelf());
}

// The plugin writes host names and job ids sanitized to [A-Za-z0-9._-]; a
// header carrying anything else is not flightrec's: rejected, never read.
TEST(SnapshotReaderTest, AHeaderWithNamesThePluginNeverWritesIsForged) {
  struct Case {
    const char* host;
    const char* job;
    const char* error;
  };
  const Case cases[] = {
      {"gpu[001-064]", "job-1",
       "host name has characters flightrec never writes: forged or corrupt"},
      {"node a", "job-1", "host name has characters flightrec never writes: forged or corrupt"},
      {"", "job-1", "host name is empty: forged or corrupt"},
      {"node-a", "job;rm -rf", "job id has characters flightrec never writes: forged or corrupt"},
      {"node-a", "", "job id is empty: forged or corrupt"},
  };
  for (const Case& c : cases) {
    ImageBuilder b(1, 4);
    test_support::CopyStr(b.header().host, sizeof(b.header().host), c.host);
    test_support::CopyStr(b.header().job_id, sizeof(b.header().job_id), c.job);
    ReadResult r = Read(b.Bytes(), "forged.ring");
    EXPECT_FALSE(r.ok) << c.host << " " << c.job;
    EXPECT_EQ(r.error, std::string("forged.ring: ") + c.error);
    ReadResult d = Read(b.DumpBytes(1), "forged.frdump");
    EXPECT_EQ(d.error, std::string("forged.frdump: ") + c.error);
    TempFile file(b.Bytes());
    const InitFile init = ReadInitFile(file.path());
    EXPECT_FALSE(init.readable);
    EXPECT_FALSE(init.header);
    EXPECT_EQ(init.error, c.error);
  }
  // A host name that fills its 64-byte field with no end.
  ImageBuilder b(1, 4);
  memset(b.header().host, 'a', sizeof(b.header().host));
  EXPECT_EQ(Read(b.Bytes(), "x").error, "x: host name fills its field: forged or corrupt");
  // The longest name the plugin writes (63 characters) is fine.
  test_support::CopyStr(b.header().host, sizeof(b.header().host), std::string(63, 'h').c_str());
  EXPECT_TRUE(Read(b.Bytes()).ok);
}

TEST(SnapshotRecencyTest, DumpsOrderBySequenceAndTheRingIsNewest) {
  ProcessSnapshot ring, d1, d2;
  ring.path = "r.ring";
  d1.is_dump = d2.is_dump = true;
  d1.dump_sequence = 1;
  d1.dump_wall_ns = 500;
  d2.dump_sequence = 2;
  d2.dump_wall_ns = 100;  // sequence wins over a skewed clock
  std::vector<ProcessSnapshot> v = {ring, d2, d1};
  SortByRecency(&v);
  EXPECT_EQ(v[0].dump_sequence, 1u);
  EXPECT_EQ(v[1].dump_sequence, 2u);
  EXPECT_FALSE(v[2].is_dump);
  EXPECT_TRUE(OlderThan(d1, d2));
  EXPECT_FALSE(OlderThan(d2, d1));
  EXPECT_FALSE(OlderThan(ring, ring));
  EXPECT_TRUE(SameProcess(ring, d1));
  d1.pid = 9;
  EXPECT_FALSE(SameProcess(ring, d1));
}

}  // namespace
}  // namespace flightrec

// Truncated and corrupt images (docs/reliability.md). Every case must
// end in either a clean rejection naming the problem or a self-consistent
// snapshot; none may crash, hang or allocate wildly.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "tests/unit/reader/image_builder.h"
#include "tests/unit/reader/snapshot_invariants.h"

namespace flightrec {
namespace {

using test_support::ImageBuilder;

ImageBuilder SmallImage() {
  ImageBuilder b(2, 4);
  b.Claim(0, 0xaaaa, 0, 2, "a");
  b.Claim(1, 0xbbbb, 1, 2, "b");
  for (uint64_t i = 0; i < 6; ++i) b.Append(0, ImageBuilder::Coll(i, 8));
  b.Append(1, ImageBuilder::Coll(0, 8));
  return b;
}

ReadResult Read(const std::vector<uint8_t>& bytes) {
  return ReadSnapshotBytes(bytes.data(), bytes.size(), "t.ring");
}

// Reads a header-mutated copy of SmallImage() and expects a rejection whose
// message contains `reason`.
template <typename Mutate>
void ExpectRejected(Mutate mutate, const std::string& reason) {
  ImageBuilder b = SmallImage();
  mutate(&b.header());
  ReadResult r = Read(b.Bytes());
  EXPECT_FALSE(r.ok) << "accepted, expected: " << reason;
  EXPECT_NE(r.error.find(reason), std::string::npos) << r.error;
  EXPECT_EQ(r.error.rfind("t.ring: ", 0), 0u) << r.error;
}

bool HasWarning(const ProcessSnapshot& s, const std::string& text) {
  for (const std::string& w : s.warnings) {
    if (w.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(CorruptionTest, EveryPrefixOfARingIsRejectedAsTruncated) {
  std::vector<uint8_t> full = SmallImage().Bytes();
  for (size_t len = 0; len < full.size(); ++len) {
    ReadResult r = ReadSnapshotBytes(full.data(), len, "t.ring");
    ASSERT_FALSE(r.ok) << "prefix " << len;
    const char* expect = len == 0 ? "empty file" : "truncated";
    ASSERT_NE(r.error.find(expect), std::string::npos) << len << ": " << r.error;
  }
  std::string msg = Read(std::vector<uint8_t>(full.begin(), full.begin() + 5000)).error;
  EXPECT_EQ(msg, "t.ring: truncated: 5000 of " + std::to_string(full.size()) + " bytes");
  EXPECT_TRUE(Read(full).ok);
}

TEST(CorruptionTest, EveryPrefixOfADumpIsRejectedAsTruncated) {
  std::vector<uint8_t> dump = SmallImage().DumpBytes();
  ASSERT_FALSE(dump.empty());
  for (size_t len = 1; len < dump.size(); ++len) {
    ReadResult r = ReadSnapshotBytes(dump.data(), len, "t.zst");
    ASSERT_FALSE(r.ok) << "prefix " << len;
    ASSERT_NE(r.error.find("truncated"), std::string::npos) << len << ": " << r.error;
  }
  EXPECT_TRUE(ReadSnapshotBytes(dump.data(), dump.size(), "t.zst").ok);
}

TEST(CorruptionTest, EverySingleBitFlipInHeaderAndRegionTableIsSafe) {
  ImageBuilder b = SmallImage();
  std::vector<uint8_t> bytes = b.Bytes();
  uint64_t end = b.header().region_table_offset + 2 * format::kRegionDescSize;
  size_t rejected = 0;
  for (uint64_t bit = 0; bit < end * 8; ++bit) {
    bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    ReadResult r = Read(bytes);
    bytes[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    if (!r.ok) {
      ++rejected;
      ASSERT_EQ(r.error.rfind("t.ring: ", 0), 0u) << r.error;
      continue;
    }
    ASSERT_EQ(test_support::CheckSnapshotInvariants(r.snapshot), "") << "bit " << bit;
  }
  EXPECT_GT(rejected, 0u);
}

TEST(CorruptionTest, HeaderFieldMutationsAreRejectedWithAReason) {
  using H = format::FileHeader;
  ExpectRejected([](H* h) { h->magic ^= 1; }, "bad magic");
  ExpectRejected([](H* h) { h->endian_marker = 0x04030201; }, "other byte order");
  ExpectRejected([](H* h) { h->endian_marker = 7; }, "bad endian marker");
  ExpectRejected(
      [](H* h) {
        h->version_major = 2;
        h->version_minor = 3;
      },
      "format version 2.3 not supported");
  ExpectRejected([](H* h) { h->header_size = 4095; }, "header_size 4095");
  ExpectRejected([](H* h) { h->record_size = 64; }, "record_size 64");
  ExpectRejected([](H* h) { h->region_desc_size = 512; }, "region_desc_size 512");
  ExpectRejected([](H* h) { h->max_regions = 0; }, "max_regions 0");
  ExpectRejected([](H* h) { h->max_regions = 5000; }, "max_regions 5000");
  ExpectRejected([](H* h) { h->max_regions = 3; }, "records [");  // past the end
  ExpectRejected([](H* h) { h->region_capacity = 3; }, "region_capacity 3");
  ExpectRejected([](H* h) { h->region_capacity = 0; }, "region_capacity 0");
  ExpectRejected([](H* h) { h->region_capacity = 1ULL << 23; }, "region_capacity 8388608");
  ExpectRejected([](H* h) { h->region_capacity = 1ULL << 63; }, "region_capacity");
  ExpectRejected([](H* h) { h->region_capacity = 8; }, "outside the image");
  ExpectRejected([](H* h) { h->region_table_offset = 4100; }, "misaligned");
  ExpectRejected([](H* h) { h->region_table_offset = 0; }, "region table [0");
  ExpectRejected([](H* h) { h->region_table_offset = 1ULL << 62; }, "outside the image");
  ExpectRejected([](H* h) { h->region_table_offset = UINT64_MAX - 7; }, "outside the image");
  ExpectRejected([](H* h) { h->records_offset = 4096 * 3; }, "outside the image");
  ExpectRejected([](H* h) { h->records_offset = 100; }, "misaligned");
  ExpectRejected([](H* h) { h->region_table_offset = h->records_offset; }, "overlap");
  ExpectRejected([](H* h) { h->file_size = 1ULL << 63; }, "exceeds the limit");
  ExpectRejected([](H* h) { h->file_size = UINT64_MAX; }, "exceeds the limit");
  ExpectRejected([](H* h) { h->file_size += 4096; }, "truncated");
  ExpectRejected([](H* h) { h->file_size -= 128; }, "header says file_size");
}

TEST(CorruptionTest, NewerMinorVersionIsReadWithAWarning) {
  ImageBuilder b = SmallImage();
  b.header().version_minor = 7;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(HasWarning(r.snapshot, "1.7 is newer"));
}

TEST(CorruptionTest, DuplicateRegionIndexSkipsOnlyThatRegion) {
  ImageBuilder b = SmallImage();
  b.region(1).region_index = 0;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.comms.size(), 1u);
  EXPECT_EQ(r.snapshot.comms[0].comm_id, 0xaaaau);
  EXPECT_TRUE(HasWarning(r.snapshot, "region 1: region_index says 0"));
}

TEST(CorruptionTest, UnknownRegionStateSkipsOnlyThatRegion) {
  ImageBuilder b = SmallImage();
  b.region(0).state = 77;
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.comms.size(), 1u);
  EXPECT_EQ(r.snapshot.comms[0].comm_id, 0xbbbbu);
  EXPECT_TRUE(HasWarning(r.snapshot, "region 0: unknown state 77"));
}

TEST(CorruptionTest, HugeHeadIsClampedAndItsSlotsCountAsTorn) {
  const uint64_t kHeads[] = {UINT64_MAX, (1ULL << 63) + 5, (1ULL << 48) + 1};
  for (uint64_t head : kHeads) {
    ImageBuilder b = SmallImage();
    b.region(0).head = head;
    ReadResult r = Read(b.Bytes());
    ASSERT_TRUE(r.ok) << r.error;
    const CommSnapshot& c = r.snapshot.comms[0];
    EXPECT_EQ(c.head, 1ULL << 48);
    EXPECT_EQ(c.torn, 4u);
    EXPECT_TRUE(c.records.empty());
    EXPECT_TRUE(HasWarning(r.snapshot, "implausible head"));
    EXPECT_EQ(test_support::CheckSnapshotInvariants(r.snapshot), "");
  }
}

TEST(CorruptionTest, HeadJustPastTheWrittenRecordsCountsTheGapAsTorn) {
  ImageBuilder b = SmallImage();
  b.region(1).head = 3;  // two claims never committed
  ReadResult r = Read(b.Bytes());
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.comms[1].records.size(), 1u);
  EXPECT_EQ(r.snapshot.comms[1].torn, 2u);
}

TEST(CorruptionTest, RandomBytesAreRejectedAsNotFlightrec) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 50; ++i) {
    std::vector<uint8_t> bytes(1 + rng() % 20000);
    for (uint8_t& x : bytes) x = static_cast<uint8_t>(rng());
    ReadResult r = Read(bytes);
    ASSERT_FALSE(r.ok);
    EXPECT_FALSE(r.error.empty());
  }
  std::vector<uint8_t> text = {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '\n'};
  EXPECT_EQ(Read(text).error,
            "t.ring: not a flightrec ring or dump (bad magic 0x6f77206f6c6c6568)");
}

TEST(CorruptionTest, RandomGarbageAfterTheHeaderIsStillConsistent) {
  std::mt19937_64 rng(7);
  ImageBuilder b = SmallImage();
  std::vector<uint8_t> clean = b.Bytes();
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> bytes = clean;
    for (int k = 0; k < 32; ++k) {
      size_t at = format::kHeaderSize + rng() % (bytes.size() - format::kHeaderSize);
      bytes[at] = static_cast<uint8_t>(rng());
    }
    ReadResult r = Read(bytes);
    ASSERT_TRUE(r.ok) << r.error;  // header intact: regions may degrade, never the file
    ASSERT_EQ(test_support::CheckSnapshotInvariants(r.snapshot), "");
  }
}

}  // namespace
}  // namespace flightrec

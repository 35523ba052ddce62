// Dumps: one zstd frame around an image. The frame is as untrusted as the
// image: declared sizes, bombs and trailing bytes.
#include <gtest/gtest.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "tests/unit/reader/image_builder.h"

namespace flightrec {
namespace {

using test_support::ImageBuilder;

ReadResult Read(const std::vector<uint8_t>& bytes, const ReadLimits& limits = {}) {
  return ReadSnapshotBytes(bytes.data(), bytes.size(), "d.zst", limits);
}

ImageBuilder SmallImage() {
  ImageBuilder b(2, 8);
  b.Claim(0, 0x1234, 1, 4, "dp");
  for (uint64_t i = 0; i < 5; ++i) b.Append(0, ImageBuilder::Coll(i, 100 + i));
  return b;
}

// Compresses without recording the content size in the frame header.
std::vector<uint8_t> CompressUnsized(const std::vector<uint8_t>& image) {
  std::vector<uint8_t> out(ZSTD_compressBound(image.size()));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 0);
  size_t n = ZSTD_compress2(cctx, out.data(), out.size(), image.data(), image.size());
  ZSTD_freeCCtx(cctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

TEST(ZstdDumpTest, DumpRoundTripsLikeTheRing) {
  ImageBuilder b = SmallImage();
  ReadResult ring = Read(b.Bytes());
  std::vector<uint8_t> dump_bytes = b.DumpBytes(4);
  ReadResult dump = Read(dump_bytes);
  ASSERT_TRUE(ring.ok) << ring.error;
  ASSERT_TRUE(dump.ok) << dump.error;
  const ProcessSnapshot& d = dump.snapshot;
  EXPECT_TRUE(d.is_dump);
  EXPECT_TRUE(d.compressed);
  EXPECT_EQ(d.compressed_size, dump_bytes.size());
  EXPECT_STREQ(DescribeFileKind(d), "dump");
  EXPECT_EQ(d.dump_reason, format::kDumpTimeout);
  EXPECT_EQ(d.dump_sequence, 4u);
  EXPECT_EQ(d.dump_wall_ns, test_support::kCreatedWall + 4000000);
  EXPECT_EQ(d.dump_mono_ns, test_support::kCreatedMono + 4000000);
  EXPECT_EQ(d.dump_detail, "comm tp0 AllReduce #3 stuck");
  ASSERT_EQ(d.comms.size(), 1u);
  ASSERT_EQ(d.comms[0].records.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(d.comms[0].records[i].count, ring.snapshot.comms[0].records[i].count);
    EXPECT_EQ(d.comms[0].records[i].t_enqueue_ns, ring.snapshot.comms[0].records[i].t_enqueue_ns);
  }
  EXPECT_TRUE(d.warnings.empty());
}

TEST(ZstdDumpTest, FrameWithoutContentSizeIsRead) {
  ReadResult r = Read(CompressUnsized(SmallImage().Bytes()));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.comms[0].records.size(), 5u);
}

TEST(ZstdDumpTest, BombDeclaringHugeContentIsRejectedBeforeDecoding) {
  std::vector<uint8_t> bomb = test_support::ZstdRleBomb(1ULL << 40, 1);
  ReadResult r = Read(bomb);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error,
            "d.zst: zstd frame declares 1099511627776 bytes, more than the limit of 17179869184");
}

TEST(ZstdDumpTest, UnsizedBombOfZerosStopsAtTheMissingMagic) {
  std::vector<uint8_t> bomb = test_support::ZstdRleBomb(0, 4096);  // 512 MiB of zeros
  ReadResult r = Read(bomb);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "d.zst: zstd content is not a flightrec image (bad magic)");
}

TEST(ZstdDumpTest, ImageFollowedByExtraContentStopsAtItsFileSize) {
  std::vector<uint8_t> image = SmallImage().Bytes();
  uint64_t file_size = image.size();
  image.resize(image.size() + (4u << 20), 0);
  ReadResult r = Read(CompressUnsized(image));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "d.zst: zstd content is larger than " + std::to_string(file_size) +
                         " bytes (the limit or the image's file_size)");
}

TEST(ZstdDumpTest, LimitAppliesToDecodedBytes) {
  ReadLimits limits;
  limits.max_image_size = 4096;
  ReadResult r = Read(CompressUnsized(SmallImage().Bytes()), limits);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.error.find("larger than 4096 bytes"), std::string::npos) << r.error;
  ReadResult sized = Read(SmallImage().DumpBytes(), limits);
  EXPECT_FALSE(sized.ok);
  EXPECT_NE(sized.error.find("more than the limit of 4096"), std::string::npos) << sized.error;
}

TEST(ZstdDumpTest, CorruptFrameIsRejectedWithZstdsReason) {
  std::vector<uint8_t> dump = SmallImage().DumpBytes();
  dump[dump.size() / 2] ^= 0x55;  // content checksum (or the entropy coding) catches it
  ReadResult r = Read(dump);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("d.zst: zstd", 0), 0u) << r.error;
  std::vector<uint8_t> bad_header = {0x28, 0xB5, 0x2F, 0xFD, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
  ReadResult h = Read(bad_header);
  EXPECT_FALSE(h.ok);
  EXPECT_NE(h.error.find("zstd"), std::string::npos) << h.error;
}

TEST(ZstdDumpTest, TrailingBytesAfterTheFrameAreAWarning) {
  std::vector<uint8_t> dump = SmallImage().DumpBytes();
  dump.insert(dump.end(), {1, 2, 3});
  ReadResult r = Read(dump);
  ASSERT_TRUE(r.ok) << r.error;
  ASSERT_EQ(r.snapshot.warnings.size(), 1u);
  EXPECT_EQ(r.snapshot.warnings[0], "3 bytes after the zstd frame ignored");
}

TEST(ZstdDumpTest, CompressedRingKindIsAWarning) {
  ReadResult r = Read(ImageBuilder::Compress(SmallImage().Bytes()));
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.snapshot.is_dump);
  ASSERT_EQ(r.snapshot.warnings.size(), 1u);
  EXPECT_EQ(r.snapshot.warnings[0], "zstd-compressed image whose header says ring");
}

// The reader reuses one decompression buffer per thread: a small dump read
// after a large one must see only its own bytes, never the larger image's.
TEST(ZstdDumpTest, SmallDumpAfterLargeOneOnTheSameThreadIsReadAlone) {
  ImageBuilder big(4, 64);
  big.Claim(0, 0x99, 0, 2, "world");
  for (uint64_t i = 0; i < 64; ++i) big.Append(0, ImageBuilder::Coll(i, 500 + i));
  ReadResult first = Read(big.DumpBytes(1));
  ASSERT_TRUE(first.ok) << first.error;
  ASSERT_EQ(first.snapshot.comms.at(0).records.size(), 64u);

  ReadResult second = Read(SmallImage().DumpBytes(2));
  ASSERT_TRUE(second.ok) << second.error;
  ASSERT_EQ(second.snapshot.comms.size(), 1u);
  EXPECT_EQ(second.snapshot.comms[0].name, "dp");
  ASSERT_EQ(second.snapshot.comms[0].records.size(), 5u);
  EXPECT_EQ(second.snapshot.comms[0].records[4].count, 104u);
  EXPECT_TRUE(second.snapshot.warnings.empty());

  // A failed frame in between leaves no state behind either.
  std::vector<uint8_t> bad = SmallImage().DumpBytes(3);
  bad.resize(bad.size() / 2);
  EXPECT_FALSE(Read(bad).ok);
  ReadResult third = Read(SmallImage().DumpBytes(4));
  ASSERT_TRUE(third.ok) << third.error;
  EXPECT_EQ(third.snapshot.comms.at(0).records.size(), 5u);
}

}  // namespace
}  // namespace flightrec

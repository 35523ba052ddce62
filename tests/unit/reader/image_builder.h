// A tiny, independent writer of flightrec images for tests and fuzz seeds.
//
// It uses record_format.h directly (not the recorder), so reader tests check
// the reader against the format as documented, and any test may build rings
// and dumps byte by byte: a header, a region table, records with a correct
// commit word and checksum, and zstd-compressed dumps.
#ifndef FLIGHTREC_TESTS_UNIT_READER_IMAGE_BUILDER_H_
#define FLIGHTREC_TESTS_UNIT_READER_IMAGE_BUILDER_H_

#include <stdint.h>
#include <string.h>
#include <zstd.h>

#include <string>
#include <vector>

#include "flightrec/record_format.h"

namespace flightrec {
namespace test_support {

// Anchors used by Default(): wall = mono - kMono + kWall.
constexpr uint64_t kCreatedWall = 1700000000000000000ULL;
constexpr uint64_t kCreatedMono = 5000000000ULL;

inline void CopyStr(char* dst, size_t n, const char* src) {
  strncpy(dst, src, n - 1);
  dst[n - 1] = '\0';
}

class ImageBuilder {
 public:
  ImageBuilder(uint32_t max_regions, uint64_t capacity)
      : regions_(max_regions), records_(max_regions * capacity), capacity_(capacity) {
    memset(&header_, 0, sizeof(header_));
    memset(regions_.data(), 0, regions_.size() * sizeof(format::RegionDesc));
    memset(records_.data(), 0, records_.size() * sizeof(format::Record));
    format::FileHeader& h = header_;
    h.magic = format::Magic();
    h.endian_marker = format::kEndianMarker;
    h.version_major = format::kFormatMajor;
    h.version_minor = format::kFormatMinor;
    h.header_size = format::kHeaderSize;
    h.record_size = format::kRecordSize;
    h.region_desc_size = format::kRegionDescSize;
    h.max_regions = max_regions;
    h.region_capacity = capacity;
    h.region_table_offset = format::kHeaderSize;
    uint64_t table_end = format::kHeaderSize + uint64_t{max_regions} * format::kRegionDescSize;
    h.records_offset = (table_end + format::kPageSize - 1) / format::kPageSize * format::kPageSize;
    h.file_size = h.records_offset + records_.size() * format::kRecordSize;
    table_offset_ = h.region_table_offset;
    records_offset_ = h.records_offset;
    file_size_ = h.file_size;
    h.pointer_size = 8;
    h.file_kind = format::kFileKindRing;
    h.pid = 4242;
    h.created_wall_ns = kCreatedWall;
    h.created_mono_ns = kCreatedMono;
    h.clock_source = format::kClockMonotonic;
    h.api_version = 7;
    CopyStr(h.host, sizeof(h.host), "node-a");
    CopyStr(h.job_id, sizeof(h.job_id), "job-1");
    CopyStr(h.plugin_version, sizeof(h.plugin_version), "0.1.0");
    CopyStr(h.nccl_version, sizeof(h.nccl_version), "2.28.9");
    h.cuda_device = 0;
    h.process_state = format::kProcessRunning;
  }

  format::FileHeader& header() { return header_; }
  format::RegionDesc& region(uint32_t i) { return regions_[i]; }
  uint64_t capacity() const { return capacity_; }

  // Claims region i for a communicator (state active, identity set).
  format::RegionDesc& Claim(uint32_t i, uint64_t comm_id, int32_t rank, int32_t nranks,
                            const char* name) {
    format::RegionDesc& d = regions_[i];
    d.state = format::kRegionActive;
    d.region_index = i;
    d.comm_id = comm_id;
    d.rank = rank;
    d.nranks = nranks;
    d.nnodes = 1;
    d.generation = i + 1;
    d.init_mono_ns = kCreatedMono + 10;
    CopyStr(d.comm_name, sizeof(d.comm_name), name);
    return d;
  }

  // The slot that holds sequence `seq` of region i.
  format::Record& Slot(uint32_t i, uint64_t seq) {
    return records_[i * capacity_ + (seq & (capacity_ - 1))];
  }

  // Writes `content` as the committed record for slot sequence head and
  // advances head (and coll_count / p2p_count), like the recorder does.
  format::Record& Append(uint32_t i, const format::Record& content) {
    format::RegionDesc& d = regions_[i];
    uint64_t seq = d.head++;
    if (content.flags & format::kFlagP2p) {
      ++d.p2p_count;
    } else {
      ++d.coll_count;
    }
    format::Record& r = Slot(i, seq);
    r = content;
    Seal(&r, seq);
    return r;
  }

  // Sets commit and checksum of `r` for slot sequence `seq`, as format
  // 1.<version_minor> computes it (default: this format's).
  static void Seal(format::Record* r, uint64_t seq, uint16_t version_minor = format::kFormatMinor) {
    r->commit = seq + 1;
    r->checksum = 0;
    r->checksum =
        format::RecordChecksumFor(version_minor, reinterpret_cast<const unsigned char*>(r), seq);
  }

  // A typical collective: AllReduce of `count` floats as op `op_index`.
  static format::Record Coll(uint64_t op_index, uint64_t count) {
    format::Record r;
    memset(&r, 0, sizeof(r));
    r.op_index = op_index;
    r.nccl_seq = op_index;
    r.count = count;
    r.t_enqueue_ns = kCreatedMono + 1000 * (op_index + 1);
    r.func = format::kFuncAllReduce;
    r.datatype = format::kTypeFloat32;
    r.algo = format::kAlgoRing;
    r.proto = format::kProtoSimple;
    r.n_channels = 2;
    r.n_warps = 8;
    r.type_size = 4;
    r.state = format::kOpEnqueued;
    return r;
  }

  // The image bytes. The layout is the one computed at construction, so a
  // test may corrupt any header field (offsets, sizes) without moving data.
  std::vector<uint8_t> Bytes() const {
    std::vector<uint8_t> out(file_size_, 0);
    memcpy(out.data(), &header_, sizeof(header_));
    memcpy(out.data() + table_offset_, regions_.data(),
           regions_.size() * sizeof(format::RegionDesc));
    memcpy(out.data() + records_offset_, records_.data(), records_.size() * sizeof(format::Record));
    return out;
  }

  // The dump image of the current state: file_kind dump, dump_* set, one
  // zstd frame with the content size and checksum.
  std::vector<uint8_t> DumpBytes(uint32_t sequence = 1) {
    format::FileHeader saved = header_;
    header_.file_kind = format::kFileKindDump;
    header_.dump_reason = format::kDumpTimeout;
    header_.dump_sequence = sequence;
    header_.dump_wall_ns = kCreatedWall + 1000000 * sequence;
    header_.dump_mono_ns = kCreatedMono + 1000000 * sequence;
    CopyStr(header_.dump_detail, sizeof(header_.dump_detail), "comm tp0 AllReduce #3 stuck");
    std::vector<uint8_t> image = Bytes();
    header_ = saved;
    return Compress(image);
  }

  static std::vector<uint8_t> Compress(const std::vector<uint8_t>& image) {
    std::vector<uint8_t> out(ZSTD_compressBound(image.size()));
    ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    size_t n = ZSTD_compress2(cctx, out.data(), out.size(), image.data(), image.size());
    ZSTD_freeCCtx(cctx);
    out.resize(ZSTD_isError(n) ? 0 : n);
    return out;
  }

 private:
  format::FileHeader header_;
  std::vector<format::RegionDesc> regions_;
  std::vector<format::Record> records_;
  uint64_t capacity_;
  uint64_t table_offset_ = 0;
  uint64_t records_offset_ = 0;
  uint64_t file_size_ = 0;
};

// A zstd frame made of `blocks` RLE blocks of 128 KiB zero bytes each (a
// decompression bomb: ~4 input bytes per 128 KiB of output). When
// `declared_size` is non-zero the frame header claims that content size.
inline std::vector<uint8_t> ZstdRleBomb(uint64_t declared_size, uint32_t blocks, uint8_t fill = 0) {
  std::vector<uint8_t> f = {0x28, 0xB5, 0x2F, 0xFD};
  if (declared_size != 0) {
    f.push_back(0xE0);  // FCS 8 bytes, single segment, no checksum
    for (int i = 0; i < 8; ++i) f.push_back(static_cast<uint8_t>(declared_size >> (8 * i)));
  } else {
    f.push_back(0x00);  // no FCS, windowed
    f.push_back(0x38);  // window log 17 (128 KiB)
  }
  const uint32_t kBlock = 128 * 1024;
  for (uint32_t b = 0; b < blocks; ++b) {
    uint32_t last = b + 1 == blocks ? 1 : 0;
    uint32_t hdr = last | (1u << 1) | (kBlock << 3);  // RLE block
    f.push_back(static_cast<uint8_t>(hdr));
    f.push_back(static_cast<uint8_t>(hdr >> 8));
    f.push_back(static_cast<uint8_t>(hdr >> 16));
    f.push_back(fill);
  }
  return f;
}

}  // namespace test_support
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_READER_IMAGE_BUILDER_H_

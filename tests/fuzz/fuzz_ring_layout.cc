// Builds a structurally plausible image from fuzzer bytes, so that mutations
// land in records and region descriptors instead of dying at the magic
// check. The oracle: an image whose header was left intact must be read;
// a region built only from clean appends must come back exactly.
#include <string.h>

#include <vector>

#include "analyzer/reader/snapshot_reader.h"
#include "tests/fuzz/harnesses.h"
#include "tests/unit/reader/image_builder.h"
#include "tests/unit/reader/snapshot_invariants.h"

namespace flightrec {
namespace fuzz {
namespace {

using test_support::ImageBuilder;

// Consumes the input front to back; reads past the end yield zeros, so every
// input (even an empty one) describes exactly one image. Choices are coded so
// that a zero byte means the plain case (free region, no corruption, ring).
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  void Bytes(void* out, size_t n) {
    size_t take = n < size_ - pos_ ? n : size_ - pos_;
    if (take > 0) memcpy(out, data_ + pos_, take);
    memset(static_cast<uint8_t*>(out) + take, 0, n - take);
    pos_ += take;
  }
  uint8_t U8() {
    uint8_t v;
    Bytes(&v, 1);
    return v;
  }
  uint64_t U64() {
    uint64_t v;
    Bytes(&v, 8);
    return v;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

struct Expect {
  bool clean = true;  // only whole, committed appends
  uint64_t head = 0;
};

// Fills region r according to the input; returns what a reader must see.
Expect BuildRegion(Input* in, ImageBuilder* b, uint32_t r) {
  Expect e;
  uint8_t mode = in->U8() % 4;
  if (mode == 0) return e;  // free
  if (mode == 3) {          // raw descriptor bytes: anything may happen
    in->Bytes(&b->region(r), sizeof(format::RegionDesc));
    e.clean = false;
    return e;
  }
  b->Claim(r, in->U64(), static_cast<int32_t>(in->U8()), 8, "fz");
  if (mode == 2) b->region(r).state = format::kRegionFinalized;
  uint32_t ops = in->U8() % (3 * b->capacity() + 1);
  for (uint32_t i = 0; i < ops; ++i) {
    format::Record rec;
    in->Bytes(&rec, sizeof(rec));
    uint8_t how = in->U8();
    if (how % 4 != 3) {
      b->Append(r, rec);  // committed, any content
    } else {
      b->Slot(r, b->region(r).head++) = rec;  // claimed, raw (torn) bytes
      e.clean = false;
    }
  }
  if (in->U8() % 16 == 15) {
    b->region(r).head = in->U64();
    e.clean = false;
  }
  e.head = b->region(r).head;
  return e;
}

std::string CheckRegion(const ProcessSnapshot& s, uint32_t r, const Expect& e, uint64_t cap) {
  const CommSnapshot* c = nullptr;
  for (const CommSnapshot& comm : s.comms) {
    if (comm.region_index == r) c = &comm;
  }
  if (c == nullptr) return "clean region " + std::to_string(r) + " missing";
  uint64_t want = e.head < cap ? e.head : cap;
  if (c->torn != 0 || c->records.size() != want) return "clean region lost records";
  return "";
}

}  // namespace

std::string FuzzRingLayout(const uint8_t* data, size_t size) {
  Input in(data, size);
  uint32_t max_regions = 1 + in.U8() % 4;
  uint64_t capacity = 1ULL << (in.U8() % 5);
  ImageBuilder b(max_regions, capacity);
  std::vector<Expect> expect;
  std::vector<uint32_t> states;
  for (uint32_t r = 0; r < max_regions; ++r) {
    expect.push_back(BuildRegion(&in, &b, r));
    states.push_back(b.region(r).state);
  }
  bool header_intact = true;
  if (in.U8() % 8 == 7) {  // overwrite up to 8 bytes somewhere in the header
    size_t at = in.U8() * 4u % (format::kHeaderSize - 8);
    in.Bytes(reinterpret_cast<uint8_t*>(&b.header()) + at, 8);
    header_intact = false;
  }
  bool dump = in.U8() % 4 == 3;
  std::vector<uint8_t> bytes = dump ? b.DumpBytes() : b.Bytes();
  std::string v = FuzzSnapshotReader(bytes.data(), bytes.size());
  if (!v.empty() || !header_intact) return v;

  ReadResult r = ReadSnapshotBytes(bytes.data(), bytes.size(), "layout");
  if (!r.ok) return "intact header rejected: " + r.error;
  for (uint32_t i = 0; i < max_regions; ++i) {
    bool used = states[i] == format::kRegionActive || states[i] == format::kRegionFinalized;
    if (!expect[i].clean || !used) continue;
    std::string bad = CheckRegion(r.snapshot, i, expect[i], capacity);
    if (!bad.empty()) return bad;
  }
  return "";
}

}  // namespace fuzz
}  // namespace flightrec

#include "support/ring_image.h"

#include <string.h>

#include "support/files.h"

namespace flightrec {
namespace testing {

std::string OnlyRingIn(const std::string& dir, std::string* error) {
  const std::vector<std::string> rings = ListFiles(dir, ".ring");
  if (rings.size() == 1) return rings[0];
  *error = rings.empty() ? "no ring file in " + dir : "more than one ring file in " + dir;
  return "";
}

const format::FileHeader* HeaderOf(const unsigned char* image) {
  return reinterpret_cast<const format::FileHeader*>(image);
}

const format::RegionDesc* RegionOf(const unsigned char* image, uint32_t region) {
  return reinterpret_cast<const format::RegionDesc*>(image + HeaderOf(image)->region_table_offset) +
         region;
}

const format::Record* SlotOf(const unsigned char* image, uint32_t region, uint64_t seq) {
  const format::FileHeader* h = HeaderOf(image);
  const uint64_t cap = h->region_capacity;
  return reinterpret_cast<const format::Record*>(image + h->records_offset) + region * cap +
         (seq & (cap - 1));
}

bool CommittedAs(const format::Record& r, uint64_t seq) {
  return r.commit == seq + 1 &&
         r.checksum == format::RecordChecksum(reinterpret_cast<const unsigned char*>(&r), seq);
}

bool RingImage::Load(const std::string& dir, std::string* error) {
  const std::string path = OnlyRingIn(dir, error);
  if (path.empty()) return false;
  const std::vector<uint8_t> bytes = ReadBytes(path);
  bytes_.assign(bytes.begin(), bytes.end());
  if (bytes_.size() < sizeof(format::FileHeader)) {
    *error = path + ": too short";
    return false;
  }
  memcpy(&header_, bytes_.data(), sizeof(header_));
  const uint64_t end = header_.records_offset + uint64_t{header_.max_regions} *
                                                    header_.region_capacity * format::kRecordSize;
  if (header_.magic != format::Magic() || end > bytes_.size()) {
    *error = path + ": bad header";
    return false;
  }
  return true;
}

int RingImage::OnlyUsedRegion() const {
  int found = -1;
  for (uint32_t i = 0; i < header_.max_regions; ++i) {
    if (Region(i).state == format::kRegionFree) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(i);
  }
  return found;
}

}  // namespace testing
}  // namespace flightrec

// Test helper: reads a plugin-written ring file into memory and gives typed
// access through record_format.h (the layout the readers rely on).
#ifndef FLIGHTREC_TESTS_UNIT_PLUGIN_RING_IMAGE_H_
#define FLIGHTREC_TESTS_UNIT_PLUGIN_RING_IMAGE_H_

#include <dirent.h>
#include <string.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "flightrec/record_format.h"

namespace flightrec {
namespace testing_plugin {

class RingImage {
 public:
  // Loads the only *.ring file in `dir`; false (with `error` set) otherwise.
  bool Load(const std::string& dir, std::string* error) {
    std::string path;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return Fail("cannot open " + dir, error);
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.size() > 5 && name.compare(name.size() - 5, 5, ".ring") == 0) {
        if (!path.empty()) {
          closedir(d);
          return Fail("more than one ring file in " + dir, error);
        }
        path = dir + "/" + name;
      }
    }
    closedir(d);
    if (path.empty()) return Fail("no ring file in " + dir, error);
    std::ifstream in(path, std::ios::binary);
    bytes_.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (bytes_.size() < sizeof(format::FileHeader)) return Fail(path + ": too short", error);
    memcpy(&header_, bytes_.data(), sizeof(header_));
    const uint64_t end = header_.records_offset + uint64_t{header_.max_regions} *
                                                      header_.region_capacity * format::kRecordSize;
    if (header_.magic != format::Magic() || end > bytes_.size()) {
      return Fail(path + ": bad header", error);
    }
    return true;
  }

  const format::FileHeader& header() const { return header_; }

  format::RegionDesc Region(uint32_t index) const {
    format::RegionDesc r;
    memcpy(&r, bytes_.data() + header_.region_table_offset + index * format::kRegionDescSize,
           sizeof(r));
    return r;
  }

  // The index of the only region that was ever claimed, or -1.
  int OnlyUsedRegion() const {
    int found = -1;
    for (uint32_t i = 0; i < header_.max_regions; ++i) {
      if (Region(i).state == format::kRegionFree) continue;
      if (found >= 0) return -1;
      found = static_cast<int>(i);
    }
    return found;
  }

  // The record slot that holds slot sequence `seq` of `region`.
  format::Record Record(uint32_t region, uint64_t seq) const {
    const uint64_t index = region * header_.region_capacity + (seq & (header_.region_capacity - 1));
    format::Record r;
    memcpy(&r, bytes_.data() + header_.records_offset + index * format::kRecordSize, sizeof(r));
    return r;
  }

  // True when `r` is the committed, checksum-valid record of `seq`.
  static bool Valid(const format::Record& r, uint64_t seq) {
    return r.commit == seq + 1 &&
           r.checksum == format::RecordChecksum(reinterpret_cast<const unsigned char*>(&r), seq);
  }

 private:
  static bool Fail(const std::string& why, std::string* error) {
    *error = why;
    return false;
  }

  std::vector<unsigned char> bytes_;
  format::FileHeader header_{};
};

}  // namespace testing_plugin
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_PLUGIN_RING_IMAGE_H_

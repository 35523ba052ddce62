// A ring file or dump image in memory, read through record_format.h (the
// layout the readers rely on), for tests that check what the recorder wrote
// byte by byte: the header, the region table, a slot and whether it holds
// the committed, checksum-valid record of a sequence. Bounds are checked
// once at Load (the image holds every region's records); the free
// functions below take an image that the caller checked.
#ifndef FLIGHTREC_TESTS_SUPPORT_RING_IMAGE_H_
#define FLIGHTREC_TESTS_SUPPORT_RING_IMAGE_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "flightrec/record_format.h"

namespace flightrec {
namespace testing {

// The path of the only `*.ring` file in `dir`; "" (and `error`) otherwise.
std::string OnlyRingIn(const std::string& dir, std::string* error);

// Typed views into a whole image.
const format::FileHeader* HeaderOf(const unsigned char* image);
const format::RegionDesc* RegionOf(const unsigned char* image, uint32_t region);
// The slot that holds slot sequence `seq` of `region`.
const format::Record* SlotOf(const unsigned char* image, uint32_t region, uint64_t seq);
// True when `r` is the committed, checksum-valid record of `seq`.
bool CommittedAs(const format::Record& r, uint64_t seq);

class RingImage {
 public:
  // Loads the only *.ring file in `dir`; false (with `error` set) otherwise.
  bool Load(const std::string& dir, std::string* error);

  const format::FileHeader& header() const { return header_; }
  format::RegionDesc Region(uint32_t index) const { return *RegionOf(bytes_.data(), index); }
  // The index of the only region that was ever claimed, or -1.
  int OnlyUsedRegion() const;
  // A copy of the slot that holds slot sequence `seq` of `region`.
  format::Record Record(uint32_t region, uint64_t seq) const {
    return *SlotOf(bytes_.data(), region, seq);
  }
  static bool Valid(const format::Record& r, uint64_t seq) { return CommittedAs(r, seq); }

 private:
  std::vector<unsigned char> bytes_;
  format::FileHeader header_{};
};

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_RING_IMAGE_H_

// Reading one communicator region (RegionDesc + its records). Internal to
// the reader; runs only after ParseHeader has validated the layout.
#ifndef FLIGHTREC_ANALYZER_READER_REGION_READER_H_
#define FLIGHTREC_ANALYZER_READER_REGION_READER_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/image_header.h"
#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace reader_internal {

// A head beyond this is not a real op count (2^48 ops is ~9 years at 1M
// ops/s); it is clamped, with a warning, before any arithmetic on it.
constexpr uint64_t kMaxPlausibleHead = 1ULL << 48;

enum class RegionOutcome {
  kFree,     // state kRegionFree: nothing to read
  kRead,     // *comm filled
  kSkipped,  // descriptor damaged; a warning says why
};

// Reads region `index`. Valid records are appended in ascending slot order;
// slots that fail the commit or checksum test are counted in comm->torn.
RegionOutcome ReadRegion(BoundedView image, const ImageLayout& layout, uint32_t index,
                         CommSnapshot* comm, std::vector<std::string>* warnings);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_REGION_READER_H_

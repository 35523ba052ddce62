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

// The live ring file an image was just read from (pread, never mmap). The
// reader then applies the slot protocol's re-check to each region: it reads
// the region's records twice more from the file and returns a record only
// when its commit word is s + 1 in all three reads (the image's, which came
// before, the data read and the one after). A record that changed meanwhile
// was being reclaimed by a newer lap: counted torn, never returned. Dumps
// are immutable images and need no re-check.
struct LiveFile {
  int fd = -1;
};

enum class RegionOutcome {
  kFree,     // state kRegionFree: nothing to read
  kRead,     // *comm filled
  kSkipped,  // descriptor damaged; a warning says why
};

// Reads region `index`. Valid records are appended in ascending slot order;
// slots that fail the commit or checksum test (or, with `live`, the re-check
// against the file) are counted in comm->torn.
RegionOutcome ReadRegion(BoundedView image, const ImageLayout& layout, uint32_t index,
                         CommSnapshot* comm, std::vector<std::string>* warnings,
                         const LiveFile* live = nullptr);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_REGION_READER_H_

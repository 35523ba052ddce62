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
#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {

// What the exporter takes from one valid record (ReadLiveSlots): the fields
// of OpRecord it uses, decoded by the same rules (payload bytes, enum range,
// wall-clock and GPU-time conversion) from the same checked bytes.
struct LiveOp {
  uint64_t slot_seq = 0;
  uint64_t bytes = 0;         // OpRecord::bytes
  uint64_t t_enqueue_ns = 0;  // wall; 0: unknown
  uint64_t gpu_start_ns = 0;  // wall; 0: unknown
  uint64_t gpu_start_raw = 0;
  uint64_t gpu_end_raw = 0;
  uint8_t func = 0;   // format::FuncType; 0 when out of range
  uint8_t state = 0;  // format::OpState; 0 when out of range
};

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

// ReadRegion for every region of an immutable image (a dump), keeping in
// full only the records `window` keeps (snapshot_reader.h, ReadWindow):
// every slot is checked and counted as ReadRegion does, with the same
// warnings, but only kept records are decoded; the dropped collectives
// leave their signatures. Returns false when the image holds ops whose
// completion is inferred from stream order: then every valid record is
// returned, untrimmed, for TrimToWindow after the inference.
bool ReadRegionsWindowed(BoundedView image, const ImageLayout& layout, const ReadWindow& window,
                         ProcessSnapshot* snapshot);

// ReadRegion without the records: the descriptor's identity, head and
// counters (comm->records stays empty, comm->torn 0).
RegionOutcome ReadRegionDesc(BoundedView image, const ImageLayout& layout, uint32_t index,
                             CommSnapshot* comm, std::vector<std::string>* warnings);

// The records of slot sequences [begin, end) of region `index`, read from
// the live ring file itself (no image): each run of slots is read three
// times (first commits, data, commits again) with the fences of RereadSlots,
// and a record is returned only when all three commits are seq + 1 and its
// checksum holds (the same check, CheckSlot, that ReadRegion applies). Only
// the last lap can be held: slots before end - capacity are not read. Valid
// records are appended to *out in ascending slot order, decoded only into a
// LiveOp (the exporter's per-slot path); returns how many slots in the range
// were torn, overwritten or unreadable.
uint64_t ReadLiveSlots(const LiveFile& live, const ImageLayout& layout, uint32_t index,
                       uint64_t begin, uint64_t end, std::vector<LiveOp>* out, uint64_t* bad_enums);

// ReadLiveSlots decoding each valid record whole, as ReadRegion does
// (`flightrec status`: the newest slots of a region, not its whole lap).
uint64_t ReadLiveRecords(const LiveFile& live, const ImageLayout& layout, uint32_t index,
                         uint64_t begin, uint64_t end, std::vector<OpRecord>* out,
                         uint64_t* bad_enums);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_REGION_READER_H_

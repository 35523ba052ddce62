// A ring file held open for incremental reading (`flightrec exporter`,
// `flightrec status`).
//
// Where ReadSnapshotFile reads a whole ring every time, a LiveRing reads the
// header and the region table (a few KiB) on each ReadHead, and the records
// of only the slot range asked for (ReadSlots, ReadRecords), with the same
// validation:
// the header through ParseHeaderPrefix, the descriptors through
// ReadRegionDesc and the records through ReadLiveSlots (the three-read
// re-check of region_reader.h). Never writes, never maps: the file is read
// with pread, so a writer is never blocked and a truncated file is an error,
// not a SIGBUS.
#ifndef FLIGHTREC_ANALYZER_READER_LIVE_RING_H_
#define FLIGHTREC_ANALYZER_READER_LIVE_RING_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/reader/byte_buffer.h"
#include "analyzer/reader/image_header.h"
#include "analyzer/reader/region_reader.h"
#include "analyzer/reader/snapshot.h"

namespace flightrec {

// Why a file could not be read as a live ring: the `reason` label of the
// exporter's skipped-file metrics.
enum class RingProblem {
  kNone,
  kVanished,    // gone between the directory listing and the read
  kUnreadable,  // open/stat/read failed, or refused: a symlink, not a regular
                // file, or not owned by the running user (or trusted group)
  kForeign,     // not a flightrec ring (bad magic, a dump, or another kind)
  kTruncated,   // shorter than its header says
  kInvalid,     // header or layout fails validation (version, sizes, offsets)
};
const char* RingProblemName(RingProblem p);  // "vanished", "unreadable", ...

class LiveRing {
 public:
  LiveRing() = default;
  ~LiveRing();
  LiveRing(const LiveRing&) = delete;
  LiveRing& operator=(const LiveRing&) = delete;

  // Opens `path` read-only, owner-checked and never blocking
  // (reader_internal::OpenTrusted). False with *error ("<path>: problem").
  bool Open(const std::string& path, RingProblem* problem, std::string* error);

  // Reads the header and every region descriptor into *snapshot (comms
  // without records; CommSnapshot::region_index names the region for
  // ReadSlots). False with *problem and *error when the file no longer
  // passes validation (it was truncated, replaced by garbage, ...).
  bool ReadHead(ProcessSnapshot* snapshot, RingProblem* problem, std::string* error);

  // The valid records of slot sequences [begin, end) of region
  // `region_index` (only the last lap of it can still be there), appended
  // to *out as LiveOps (validated as ReadSnapshotFile validates a record,
  // decoded into only what the exporter uses); returns how many slots of
  // the range were not valid (torn, overwritten meanwhile, or unreadable).
  // Needs a successful ReadHead.
  uint64_t ReadSlots(uint32_t region_index, uint64_t begin, uint64_t end, std::vector<LiveOp>* out);

  // ReadSlots decoding each valid record whole (OpRecord, as ReadRegion
  // does; `flightrec status`): appended to *out in ascending slot order;
  // records with enum values the format does not define are counted in
  // *bad_enums. Returns how many slots of the range were not valid.
  uint64_t ReadRecords(uint32_t region_index, uint64_t begin, uint64_t end,
                       std::vector<OpRecord>* out, uint64_t* bad_enums);

  // Identity of the open file (a ring replaced under the same name is a new
  // file).
  uint64_t device() const { return dev_; }
  uint64_t inode() const { return ino_; }

 private:
  int fd_ = -1;
  std::string path_;
  uint64_t dev_ = 0;
  uint64_t ino_ = 0;
  bool head_ok_ = false;
  reader_internal::ImageLayout layout_;
  reader_internal::ByteBuffer prefix_;
};

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_LIVE_RING_H_

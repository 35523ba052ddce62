// Validation of an image's FileHeader and layout. Internal to the reader.
#ifndef FLIGHTREC_ANALYZER_READER_IMAGE_HEADER_H_
#define FLIGHTREC_ANALYZER_READER_IMAGE_HEADER_H_

#include <stdint.h>

#include <string>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace reader_internal {

// Everything later stages need from a header that passed validation: the
// layout (already checked against the image size) and the clock anchors.
struct ImageLayout {
  uint32_t max_regions = 0;
  uint64_t capacity = 0;        // records per region, a power of two
  uint64_t table_offset = 0;    // RegionDesc[0]
  uint64_t records_offset = 0;  // region 0's Record[0]
  uint16_t version_minor = 0;   // picks the record checksum rule (RecordChecksumFor)
  // The anchor pair host times are converted with: the header's created_*
  // pair, or the snapshot's own (dump, else heartbeat) pair when the wall
  // clock stepped since init (ParseHeader).
  uint64_t anchor_wall_ns = 0;
  uint64_t anchor_mono_ns = 0;
  int64_t gpu_to_mono_offset_ns = 0;
  bool gpu_offset_known = false;

  // wall = mono - anchor_mono_ns + anchor_wall_ns; 0 ("not observed") stays
  // 0. Unsigned arithmetic: garbage in, garbage out, never UB. Inline: the
  // reader converts six times per record.
  uint64_t MonoToWall(uint64_t mono_ns) const {
    return mono_ns == 0 ? 0 : mono_ns - anchor_mono_ns + anchor_wall_ns;
  }
  // GPU %globaltimer -> wall, 0 when the raw value or the offset is unknown.
  uint64_t GpuToWall(uint64_t raw_ns) const {
    if (raw_ns == 0 || !gpu_offset_known) return 0;
    return MonoToWall(raw_ns + static_cast<uint64_t>(gpu_to_mono_offset_ns));
  }
};

// Whether `host` and `job_id` (as ReadString gave them) are names the plugin
// could have written: the plugin sanitizes both to [A-Za-z0-9._-] before
// writing them (format::SanitizeName), so a header with anything else (an
// empty name, a space, '[', '/', a byte ReadString showed as '?') was not
// written by flightrec. False with *error ("host name has characters
// flightrec never writes: forged or corrupt").
bool CheckWrittenNames(const std::string& host, const std::string& job_id, std::string* error);

// Checks magic, endianness, version, sizes, limits, offsets, the image
// size and the names (CheckWrittenNames), and copies the header's fields
// into *snapshot. Returns false with
// *error (no file name prefix) when the image cannot be trusted; non-fatal
// oddities go to snapshot->warnings.
bool ParseHeader(BoundedView image, uint64_t max_image_size, ProcessSnapshot* snapshot,
                 ImageLayout* layout, std::string* error);

// ParseHeader on the first bytes of a file of `file_bytes` bytes (at least
// the header; the region table too when the caller reads regions from it):
// the sizes are checked against `file_bytes`, not against the prefix. What
// lies beyond the prefix is read later, through its own bounded views.
bool ParseHeaderPrefix(BoundedView image, uint64_t file_bytes, uint64_t max_image_size,
                       ProcessSnapshot* snapshot, ImageLayout* layout, std::string* error);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_IMAGE_HEADER_H_

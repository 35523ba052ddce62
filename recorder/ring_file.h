// The process's ring file: layout, creation (preallocated, mapped shared,
// pre-faulted, fd closed at once) and the FileHeader written at init.
#ifndef FLIGHTREC_RECORDER_RING_FILE_H_
#define FLIGHTREC_RECORDER_RING_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/record_format.h"
#include "recorder/config.h"

namespace flightrec {
namespace rec {

struct RingLayout {
  uint32_t max_regions = 0;
  uint64_t region_capacity = 0;
  uint64_t region_table_offset = 0;
  uint64_t records_offset = 0;
  uint64_t file_size = 0;
};

RingLayout ComputeLayout(uint32_t max_regions, uint64_t region_capacity);

struct RingMapping {
  unsigned char* base = nullptr;
  RingLayout layout;
  char path[kPathMax + 256] = {};

  format::FileHeader* header() const { return reinterpret_cast<format::FileHeader*>(base); }
  format::RegionDesc* region(uint32_t r) const {
    return reinterpret_cast<format::RegionDesc*>(base + layout.region_table_offset) + r;
  }
  format::Record* records(uint32_t r) const {
    return reinterpret_cast<format::Record*>(base + layout.records_offset) +
           static_cast<uint64_t>(r) * layout.region_capacity;
  }
};

// Creates `<cfg.dir>/flightrec-<job>-<host>-<pid>.ring`, published complete
// (docs/format.md, "Ring creation"): made as `<name>.ring.init` (a stale one
// is unlinked first; O_EXCL|O_CLOEXEC), whose first bytes written are the
// whole FileHeader with process_state kProcessStarting; then preallocated,
// mapped, pre-faulted, the region table written, kProcessRunning set, and
// renamed to `<name>.ring`. So a `.ring` is always complete, and a process
// killed during init leaves only a `.ring.init` (empty, or with a valid
// header naming it). `at`: nullptr, or the base of a parked mapping of the
// same size to map over (MAP_FIXED; the range stays mapped throughout). On
// failure no file is left behind, nothing new stays mapped (`at` is left
// mapped to anonymous memory) and `err` says what failed and where.
bool CreateRingFile(const Config& cfg, const char* host, unsigned char* at, RingMapping* out,
                    char* err, size_t err_len);

// Replaces [base, base + size) with private anonymous memory (MAP_FIXED):
// the address range stays valid for any late writer, the file's pages are
// let go. False on failure (ENOMEM). Async-signal-safe.
bool Anonymize(unsigned char* base, uint64_t size);

// Replaces the mapping with private anonymous memory at the same address
// (fork child: it must never write to the parent's file). Async-signal-safe.
void DetachMapping(RingMapping* m);

void UnmapRing(RingMapping* m);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_RING_FILE_H_

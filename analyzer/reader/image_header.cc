#include "analyzer/reader/image_header.h"

#include <stddef.h>

#include <cinttypes>
#include <cstdio>

#include "flightrec/job_dir.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace reader_internal {
namespace {

using format::FileHeader;

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%" PRIx64, v);
  return buf;
}

std::string Truncated(uint64_t have, uint64_t want) {
  return "truncated: " + std::to_string(have) + " of " + std::to_string(want) + " bytes";
}

// The fields that must be checked before the rest of the header may even be
// read: magic, byte order, major version, and enough bytes for the header.
bool CheckPreamble(BoundedView image, std::string* error) {
  uint64_t magic = 0;
  if (image.size == 0) {
    *error = "empty file (0 bytes)";
    return false;
  }
  if (!image.Read(offsetof(FileHeader, magic), &magic)) {
    *error = "truncated: " + std::to_string(image.size) + " bytes, too short for a header";
    return false;
  }
  if (magic != format::Magic()) {
    *error = "not a flightrec ring or dump (bad magic " + Hex(magic) + ")";
    return false;
  }
  uint32_t endian = 0;
  uint16_t major = 0;
  uint16_t minor = 0;
  uint64_t file_size = 0;
  if (!image.Read(offsetof(FileHeader, version_minor), &minor) ||
      !image.Read(offsetof(FileHeader, file_size), &file_size)) {
    *error = "truncated: " + std::to_string(image.size) + " bytes, too short for a header";
    return false;
  }
  image.Read(offsetof(FileHeader, endian_marker), &endian);
  image.Read(offsetof(FileHeader, version_major), &major);
  if (endian == __builtin_bswap32(format::kEndianMarker)) {
    *error = "written by a host of the other byte order (endian marker " + Hex(endian) + ")";
    return false;
  }
  if (endian != format::kEndianMarker) {
    *error = "bad endian marker " + Hex(endian);
    return false;
  }
  if (major != format::kFormatMajor) {
    *error = "format version " + std::to_string(major) + "." + std::to_string(minor) +
             " not supported (this reader reads " + std::to_string(format::kFormatMajor) + ".x)";
    return false;
  }
  if (image.size < format::kHeaderSize) {
    *error = Truncated(image.size, file_size);
    return false;
  }
  return true;
}

bool CheckSize(const char* what, uint64_t have, uint64_t want, std::string* error) {
  if (have == want) return true;
  *error = std::string(what) + " " + std::to_string(have) + " differs from this reader's " +
           std::to_string(want);
  return false;
}

bool CheckSizesAndLimits(const FileHeader& h, uint64_t actual, uint64_t max_image_size,
                         std::string* error) {
  if (!CheckSize("header_size", h.header_size, format::kHeaderSize, error) ||
      !CheckSize("record_size", h.record_size, format::kRecordSize, error) ||
      !CheckSize("region_desc_size", h.region_desc_size, format::kRegionDescSize, error)) {
    return false;
  }
  if (h.file_size > max_image_size) {
    *error = "file_size " + std::to_string(h.file_size) + " exceeds the limit of " +
             std::to_string(max_image_size) + " bytes";
    return false;
  }
  if (actual < h.file_size) {
    *error = Truncated(actual, h.file_size);
    return false;
  }
  if (actual > h.file_size) {
    *error = "image is " + std::to_string(actual) + " bytes but its header says file_size " +
             std::to_string(h.file_size);
    return false;
  }
  if (h.max_regions == 0 || h.max_regions > format::kMaxRegions) {
    *error = "max_regions " + std::to_string(h.max_regions) + " outside [1, " +
             std::to_string(format::kMaxRegions) + "]";
    return false;
  }
  uint64_t cap = h.region_capacity;
  if (cap == 0 || cap > format::kMaxRegionCapacity || (cap & (cap - 1)) != 0) {
    *error = "region_capacity " + std::to_string(cap) + " is not a power of two in [1, " +
             std::to_string(format::kMaxRegionCapacity) + "]";
    return false;
  }
  return true;
}

// [begin, begin + len) inside [kHeaderSize, file_size). The products below
// cannot overflow: max_regions <= 2^12, capacity <= 2^22, record 2^7.
bool CheckRange(const char* what, uint64_t begin, uint64_t len, uint64_t file_size,
                std::string* error) {
  if (begin >= format::kHeaderSize && begin <= file_size && len <= file_size - begin) return true;
  *error = std::string(what) + " [" + std::to_string(begin) + ", +" + std::to_string(len) +
           ") is outside the image (header " + std::to_string(format::kHeaderSize) +
           " bytes, file_size " + std::to_string(file_size) + ")";
  return false;
}

bool CheckLayout(const FileHeader& h, std::string* error) {
  if (h.region_table_offset % 8 != 0 || h.records_offset % format::kPageSize != 0) {
    *error = "misaligned offsets (region_table_offset " + std::to_string(h.region_table_offset) +
             " must be a multiple of 8, records_offset " + std::to_string(h.records_offset) +
             " of " + std::to_string(format::kPageSize) + ")";
    return false;
  }
  uint64_t table_len = uint64_t{h.max_regions} * format::kRegionDescSize;
  uint64_t records_len = uint64_t{h.max_regions} * h.region_capacity * format::kRecordSize;
  if (!CheckRange("region table", h.region_table_offset, table_len, h.file_size, error) ||
      !CheckRange("records", h.records_offset, records_len, h.file_size, error)) {
    return false;
  }
  bool disjoint = h.region_table_offset + table_len <= h.records_offset ||
                  h.records_offset + records_len <= h.region_table_offset;
  if (!disjoint) {
    *error = "region table and records overlap";
    return false;
  }
  return true;
}

void Warn(ProcessSnapshot* s, const std::string& w) { s->warnings.push_back(w); }

void CheckEnums(const FileHeader& h, bool compressed, ProcessSnapshot* s) {
  if (h.file_kind != format::kFileKindRing && h.file_kind != format::kFileKindDump) {
    Warn(s, "unknown file_kind " + std::to_string(h.file_kind) + " (read as a ring)");
  } else if (compressed && h.file_kind != format::kFileKindDump) {
    Warn(s, "zstd-compressed image whose header says ring");
  }
  if (h.process_state < format::kProcessRunning || h.process_state > format::kProcessStarting) {
    Warn(s, "unknown process_state " + std::to_string(h.process_state));
  }
  if (h.clock_source != format::kClockMonotonic && h.clock_source != format::kClockTsc) {
    Warn(s, "unknown clock_source " + std::to_string(h.clock_source));
  }
  if (h.dump_reason > format::kDumpRequest) {
    Warn(s, "unknown dump_reason " + std::to_string(h.dump_reason));
  }
  if (h.pointer_size != 4 && h.pointer_size != 8) {
    Warn(s, "unusual pointer_size " + std::to_string(h.pointer_size));
  }
  if (h.version_minor > format::kFormatMinor) {
    Warn(s, "format version 1." + std::to_string(h.version_minor) +
                " is newer than this reader's; fields it added are ignored");
  }
}

#define FR_STR(field) image.ReadString(offsetof(FileHeader, field), sizeof(FileHeader::field))

void CopyHeader(BoundedView image, const FileHeader& h, ProcessSnapshot* s) {
  s->is_dump = h.file_kind == format::kFileKindDump;
  s->file_kind = h.file_kind;
  s->version_major = h.version_major;
  s->version_minor = h.version_minor;
  s->pid = h.pid;
  s->host = FR_STR(host);
  s->job_id = FR_STR(job_id);
  s->plugin_version = FR_STR(plugin_version);
  s->nccl_version = FR_STR(nccl_version);
  s->gpu_uuid = FR_STR(gpu_uuid);
  s->gpu_pci_bus_id = FR_STR(gpu_pci_bus_id);
  s->dump_detail = FR_STR(dump_detail);
  s->disable_reason = FR_STR(disable_reason);
  s->cuda_device = h.cuda_device;
  s->api_version = h.api_version;
  s->clock_source = h.clock_source;
  s->process_state = h.process_state;
  s->created_wall_ns = h.created_wall_ns;
  s->created_mono_ns = h.created_mono_ns;
  s->gpu_to_mono_offset_ns = h.gpu_to_mono_offset_ns;
  s->gpu_offset_samples = h.gpu_offset_samples;
  s->heartbeat_wall_ns = h.heartbeat_wall_ns;
  s->heartbeat_mono_ns = h.heartbeat_mono_ns;
  s->heartbeat_count = h.heartbeat_count;
  s->watchdog_timeout_ns = h.watchdog_timeout_ns;
  s->watchdog_poll_ns = h.watchdog_poll_ns;
  s->dumps_sealed = h.dumps_sealed;
  s->max_dumps = h.max_dumps;
  s->dumps_open = h.dumps_open;
  s->dumps_released = h.dumps_released;
  s->dumps_refused = h.dumps_refused;
  s->last_refused_reason = h.last_refused_reason;
  s->dumps_absorbed = h.dumps_absorbed;
  s->last_refused_mono_ns = h.last_refused_mono_ns;
  s->max_regions = h.max_regions;
  s->region_capacity = h.region_capacity;
  s->file_size = h.file_size;
  for (uint32_t i = 0; i < format::kNumDropCauses; ++i) s->drops[i] = h.drops[i];
  s->dump_reason = h.dump_reason;
  s->dump_sequence = h.dump_sequence;
  s->dump_wall_ns = h.dump_wall_ns;
  s->dump_mono_ns = h.dump_mono_ns;
  s->pointer_size = h.pointer_size;
  s->tsc_hz = h.tsc_hz;
  s->region_table_offset = h.region_table_offset;
  s->records_offset = h.records_offset;
}

#undef FR_STR

// A wall-clock difference this large between the init anchor and a later
// (wall, mono) pair is a step of the host's clock (NTP slews CLOCK_MONOTONIC
// and CLOCK_REALTIME alike; a leap second is 1 s), or, over a long run, the
// TSC calibration's rate error adding up: either way the later pair is the
// better one for the recent records a diagnosis looks at.
constexpr uint64_t kWallStepNs = 2000000000ULL;
constexpr uint64_t kMaxPollNs = 60000000000ULL;

// Host times are stored on the monotonic clock and converted to wall time
// with one anchor pair. The header's created_* pair holds while the wall
// clock runs with the monotonic one. When it stepped since init (NTP, `date
// -s`), the process itself no longer reads that time line: its dump and
// heartbeat times, every process started after the step (whose anchors come
// from the new clock) and the host's own logs are on the new one. Records
// converted with the old pair would then be off by the step against all of
// them: an op an hour older than its dump after a step forward (a false
// hang), younger than zero after one back (a missed hang), two ranks on one
// host an hour apart. So a stepped file is converted with its snapshot's pair
// (the dump's, else the last heartbeat's): every host time of the process,
// old or new, sits on the wall clock as it read then. Monotonic differences
// (ages, durations) are the same either way.
void ChooseAnchor(const FileHeader& h, ProcessSnapshot* s, ImageLayout* layout) {
  layout->anchor_wall_ns = h.created_wall_ns;
  layout->anchor_mono_ns = h.created_mono_ns;
  uint64_t wall = 0, mono = 0;
  const char* when = nullptr;
  // A dump's pair is written in one go; a ring's heartbeat pair is two
  // stores, so a live read may pair one beat's mono with the previous
  // beat's wall: off by up to a poll interval, which the limit allows for.
  uint64_t slack = 0;
  if (h.file_kind == format::kFileKindDump && h.dump_wall_ns != 0 && h.dump_mono_ns != 0) {
    wall = h.dump_wall_ns;
    mono = h.dump_mono_ns;
    when = "the dump";
  } else if (h.heartbeat_wall_ns != 0 && h.heartbeat_mono_ns != 0) {
    wall = h.heartbeat_wall_ns;
    mono = h.heartbeat_mono_ns;
    when = "the last heartbeat";
    slack = 2 * (h.watchdog_poll_ns < kMaxPollNs ? h.watchdog_poll_ns : kMaxPollNs);
  }
  if (when == nullptr || h.created_wall_ns == 0 || h.created_mono_ns == 0) return;
  const uint64_t limit = kWallStepNs > slack ? kWallStepNs : slack;
  const uint64_t expected = mono - h.created_mono_ns + h.created_wall_ns;
  const bool ahead = wall >= expected;
  const uint64_t step = ahead ? wall - expected : expected - wall;
  if (step < limit) return;
  layout->anchor_wall_ns = wall;
  layout->anchor_mono_ns = mono;
  char buf[192];
  std::snprintf(buf, sizeof(buf),
                "the wall clock stepped %s by %.3f s against the recorder's clock between "
                "init and %s: host times are shown on the wall clock as it read at %s",
                ahead ? "forward" : "back", static_cast<double>(step) / 1e9, when, when);
  Warn(s, buf);
}

bool CheckName(const char* what, const std::string& name, std::string* error) {
  if (format::IsSanitizedName(name.c_str(), name.size() + 1)) return true;
  if (name.empty()) {
    *error = std::string(what) + " is empty: forged or corrupt";
  } else if (name.size() >= format::kNameMax) {
    *error = std::string(what) + " fills its field: forged or corrupt";
  } else {
    *error = std::string(what) + " has characters flightrec never writes: forged or corrupt";
  }
  return false;
}

}  // namespace

bool CheckWrittenNames(const std::string& host, const std::string& job_id, std::string* error) {
  return CheckName("host name", host, error) && CheckName("job id", job_id, error);
}

bool ParseHeader(BoundedView image, uint64_t max_image_size, ProcessSnapshot* snapshot,
                 ImageLayout* layout, std::string* error) {
  return ParseHeaderPrefix(image, image.size, max_image_size, snapshot, layout, error);
}

bool ParseHeaderPrefix(BoundedView image, uint64_t file_bytes, uint64_t max_image_size,
                       ProcessSnapshot* snapshot, ImageLayout* layout, std::string* error) {
  if (!CheckPreamble(image, error)) return false;
  FileHeader h;
  if (!image.Read(0, &h)) {  // cannot fail after CheckPreamble; kept for the invariant
    *error = Truncated(image.size, format::kHeaderSize);
    return false;
  }
  if (!CheckSizesAndLimits(h, file_bytes, max_image_size, error) || !CheckLayout(h, error)) {
    return false;
  }
  CheckEnums(h, snapshot->compressed, snapshot);
  CopyHeader(image, h, snapshot);
  if (!CheckWrittenNames(snapshot->host, snapshot->job_id, error)) return false;
  layout->max_regions = h.max_regions;
  layout->capacity = h.region_capacity;
  layout->table_offset = h.region_table_offset;
  layout->records_offset = h.records_offset;
  layout->version_minor = h.version_minor;
  ChooseAnchor(h, snapshot, layout);
  layout->gpu_to_mono_offset_ns = h.gpu_to_mono_offset_ns;
  layout->gpu_offset_known = h.gpu_offset_samples > 0;
  return true;
}

}  // namespace reader_internal
}  // namespace flightrec

#include "analyzer/reader/snapshot_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/byte_buffer.h"
#include "analyzer/reader/file_read.h"
#include "analyzer/reader/image_header.h"
#include "analyzer/reader/region_reader.h"
#include "analyzer/reader/stream_order.h"
#include "analyzer/reader/zstd_image.h"

namespace flightrec {
namespace {

using reader_internal::ImageLayout;
using reader_internal::RegionOutcome;

ReadResult Fail(const std::string& name, const std::string& problem) {
  ReadResult r;
  r.ok = false;
  r.error = name + ": " + problem;
  return r;
}

// Reads the whole file. A file that shrinks while we read yields the bytes
// that were there (the parser then reports it as truncated); one that grows
// is read up to its size at fstat time.
bool ReadWholeFile(int fd, uint64_t size, reader_internal::ByteBuffer* out, std::string* error) {
  out->Resize(static_cast<size_t>(size));
  uint64_t done = 0;
  const bool ok = reader_internal::PreadFully(fd, 0, out->data(), size, &done, error);
  out->Resize(static_cast<size_t>(done));
  return ok;
}

// An uncompressed image (a ring) with only the bytes the parser looks at
// read: the header, the region table and, of each region in use, its slots
// in use. A ring's record areas are sized for NCCL_FLIGHTREC_MAX_COMMS
// regions (16 by default) of which a job uses a few: 1.5 of a ring's 8 MiB
// with 3 communicators at the default 4,096 records, the rest being a copy
// in the kernel for nothing (`flightrec status` reads every ring of a job
// on each refresh). The parser never reads a free
// region's records or anything outside these ranges (ParseHeader reads the
// header, ReadRegion a descriptor and its slots [0, min(head, capacity))),
// so the bytes left unread, indeterminate in the buffer, are never looked
// at. Returns false when the layout cannot be judged from the header or a
// range comes back short (the file changed size): the caller then reads the
// whole file and the parser says what is wrong with it.
bool ReadInUse(int fd, uint64_t size, uint64_t max_image_size, reader_internal::ByteBuffer* out) {
  if (size < format::kHeaderSize) return false;
  out->Resize(static_cast<size_t>(size));
  std::string error;
  auto read = [&](uint64_t offset, uint64_t n) {
    uint64_t done = 0;
    return offset <= size && n <= size - offset &&
           reader_internal::PreadFully(fd, offset, out->data() + offset, n, &done, &error) &&
           done == n;
  };
  if (!read(0, format::kHeaderSize)) return false;
  const BoundedView image{out->data(), static_cast<size_t>(size)};
  ProcessSnapshot header;
  reader_internal::ImageLayout layout;
  if (!reader_internal::ParseHeader(image, max_image_size, &header, &layout, &error)) return false;
  if (!read(layout.table_offset, uint64_t{layout.max_regions} * format::kRegionDescSize)) {
    return false;
  }
  for (uint32_t i = 0; i < layout.max_regions; ++i) {
    const uint64_t desc = layout.table_offset + uint64_t{i} * format::kRegionDescSize;
    uint32_t state = 0;
    uint64_t head = 0;
    if (!image.Read(desc + offsetof(format::RegionDesc, state), &state) ||
        !image.Read(desc + offsetof(format::RegionDesc, head), &head)) {
      return false;
    }
    if (state == format::kRegionFree) continue;
    const uint64_t used = head < layout.capacity ? head : layout.capacity;
    const uint64_t base =
        layout.records_offset + uint64_t{i} * layout.capacity * format::kRecordSize;
    if (used > 0 && !read(base, used * format::kRecordSize)) return false;
  }
  return true;
}

// True unless the first 8 bytes are there and start neither a ring (format
// magic) nor a dump (zstd frame magic).
bool StartsLikeOurs(const uint8_t* head, uint64_t n) {
  const BoundedView v{head, static_cast<size_t>(n)};
  uint64_t magic = 0;
  if (!v.Read(0, &magic)) return true;  // too short to tell: the parser says why
  return reader_internal::IsZstdFrame(v) || magic == format::Magic();
}

// Parses an uncompressed image already in memory; `window` applies only to
// an immutable image (no `live` file).
ReadResult ParseImage(BoundedView image, const std::string& name, const ReadLimits& limits,
                      ProcessSnapshot snapshot, const reader_internal::LiveFile* live,
                      const ReadWindow* window) {
  ImageLayout layout;
  std::string error;
  if (!reader_internal::ParseHeader(image, limits.max_image_size, &snapshot, &layout, &error)) {
    return Fail(name, error);
  }
  bool windowed = false;
  if (window != nullptr && live == nullptr) {
    windowed = reader_internal::ReadRegionsWindowed(image, layout, *window, &snapshot);
  } else {
    for (uint32_t i = 0; i < layout.max_regions; ++i) {
      CommSnapshot comm;
      if (reader_internal::ReadRegion(image, layout, i, &comm, &snapshot.warnings, live) ==
          RegionOutcome::kRead) {
        snapshot.comms.push_back(std::move(comm));
      }
    }
  }
  InferStreamOrderCompletion(&snapshot);  // kFlagNoCompletion ops (stream_order.h)
  ReadResult r;
  r.ok = true;
  r.windowed = windowed;
  r.snapshot = std::move(snapshot);
  return r;
}

// ReadSnapshotBytes; `live` is the ring file the bytes were read from, if any.
ReadResult ReadImageBytes(const uint8_t* data, size_t size, const std::string& name,
                          const ReadLimits& limits, const reader_internal::LiveFile* live,
                          const ReadWindow* window) {
  BoundedView bytes{data, data == nullptr ? 0 : size};
  ProcessSnapshot snapshot;
  snapshot.path = name;
  if (!reader_internal::IsZstdFrame(bytes)) {
    if (bytes.size > limits.max_image_size) {
      return Fail(name, std::to_string(bytes.size) + " bytes exceeds the limit of " +
                            std::to_string(limits.max_image_size));
    }
    return ParseImage(bytes, name, limits, std::move(snapshot), live, window);
  }
  // Reused by every file this thread reads (see DecompressImage); the
  // parsed snapshot copies what it keeps, so nothing points into it.
  thread_local reader_internal::ByteBuffer image;
  size_t image_size = 0;
  std::string error;
  if (!reader_internal::DecompressImage(bytes, limits.max_image_size, &image, &image_size, &error,
                                        &snapshot.warnings)) {
    return Fail(name, error);
  }
  snapshot.compressed = true;
  snapshot.compressed_size = bytes.size;
  // A dump is an immutable image: nothing to re-check against its file.
  return ParseImage(BoundedView{image.data(), image_size}, name, limits, std::move(snapshot),
                    nullptr, window);
}

}  // namespace

ReadResult ReadSnapshotBytes(const uint8_t* data, size_t size, const std::string& name,
                             const ReadLimits& limits) {
  return ReadImageBytes(data, size, name, limits, nullptr, nullptr);
}

ReadResult ReadSnapshotFile(const std::string& path, const ReadLimits& limits,
                            const ReadWindow* window) {
  struct stat st;
  std::string error;
  const int fd = reader_internal::OpenTrusted(path, &st, &error);
  if (fd < 0) return Fail(path, error);
  // Reused like the image (byte_buffer.h); ReadSnapshotBytes copies what it
  // keeps, so nothing points into it once this returns.
  thread_local reader_internal::ByteBuffer bytes;
  uint8_t head[8] = {};
  uint64_t head_size = 0;
  bool read_ok = false;
  bool foreign = false;
  if (!reader_internal::PreadFully(fd, 0, head, sizeof(head), &head_size, &error)) {
    // error says why
  } else if (!StartsLikeOurs(head, head_size)) {
    // Judged on its first bytes, whatever its size: the directories given to
    // `flightrec analyze` may also hold checkpoints and logs.
    foreign = true;
  } else if (static_cast<uint64_t>(st.st_size) > limits.max_image_size) {
    error = "file is " + std::to_string(st.st_size) + " bytes, more than the limit of " +
            std::to_string(limits.max_image_size);
  } else {
    const BoundedView h{head, static_cast<size_t>(head_size)};
    read_ok = (!reader_internal::IsZstdFrame(h) &&
               ReadInUse(fd, static_cast<uint64_t>(st.st_size), limits.max_image_size, &bytes)) ||
              ReadWholeFile(fd, static_cast<uint64_t>(st.st_size), &bytes, &error);
  }
  if (foreign || !read_ok) {
    close(fd);
    if (foreign) return ReadSnapshotBytes(head, head_size, path, limits);  // names the magic
    return Fail(path, error);
  }
  // The file stays open while it is parsed: a ring's records are re-checked
  // against it (region_reader.h, LiveFile).
  const reader_internal::LiveFile live{fd};
  ReadResult r = ReadImageBytes(bytes.data(), bytes.size(), path, limits, &live, window);
  close(fd);
  return r;
}

const char* DescribeFileKind(const ProcessSnapshot& snapshot) {
  return snapshot.is_dump ? "dump" : "ring";
}

const char* ProcessStateName(uint32_t state) {
  switch (state) {
    case format::kProcessRunning:
      return "running";
    case format::kProcessExited:
      return "exited";
    case format::kProcessDisabled:
      return "disabled";
    case format::kProcessStarting:
      return "starting";
    default:
      return "unknown";
  }
}

const char* ClockSourceName(uint32_t clock) {
  switch (clock) {
    case format::kClockMonotonic:
      return "monotonic";
    case format::kClockTsc:
      return "tsc";
    default:
      return "unknown";
  }
}

const char* RegionStateName(uint32_t state) {
  switch (state) {
    case format::kRegionFree:
      return "free";
    case format::kRegionActive:
      return "active";
    case format::kRegionFinalized:
      return "finalized";
    default:
      return "unknown";
  }
}

}  // namespace flightrec

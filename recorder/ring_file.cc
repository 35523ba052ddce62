#include "recorder/ring_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flightrec/job_dir.h"
#include "flightrec/version.h"
#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/fileio/safe_file.h"
#include "recorder/host_info.h"
#include "recorder/testpoint.h"

namespace flightrec {
namespace rec {
namespace {

uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// Every identity field of the header (the region table is written through
// the mapping later). process_state is kProcessStarting until the ring is
// complete.
void InitHeader(const Config& cfg, const char* host, const RingLayout& l, format::FileHeader* h) {
  h->magic = format::Magic();
  h->endian_marker = format::kEndianMarker;
  h->version_major = format::kFormatMajor;
  h->version_minor = format::kFormatMinor;
  h->header_size = format::kHeaderSize;
  h->record_size = format::kRecordSize;
  h->region_desc_size = format::kRegionDescSize;
  h->max_regions = l.max_regions;
  h->region_capacity = l.region_capacity;
  h->region_table_offset = l.region_table_offset;
  h->records_offset = l.records_offset;
  h->file_size = l.file_size;
  h->pointer_size = sizeof(void*);
  h->file_kind = format::kFileKindRing;
  h->pid = getpid();
  // The anchor pair: taken back to back so wall - mono is one instant.
  h->created_mono_ns = ClockNowNs();
  h->created_wall_ns = RealtimeNs();
  h->clock_source = __atomic_load_n(&g_clock.source, __ATOMIC_RELAXED);
  h->tsc_hz = g_clock.tsc_hz;
  snprintf(h->host, sizeof(h->host), "%s", host);
  snprintf(h->job_id, sizeof(h->job_id), "%s", cfg.job_id);
  snprintf(h->plugin_version, sizeof(h->plugin_version), "%s", kVersion);
  FillHostFacts(h);
  h->process_state = format::kProcessStarting;
  h->watchdog_timeout_ns = cfg.timeout_ns;
  h->watchdog_poll_ns = cfg.poll_ns;
  h->max_dumps = cfg.max_dumps;
}

void InitRegionTable(const RingLayout& l, unsigned char* base) {
  for (uint32_t r = 0; r < l.max_regions; ++r) {
    auto* d = reinterpret_cast<format::RegionDesc*>(base + l.region_table_offset) + r;
    d->state = format::kRegionFree;
    d->region_index = r;
  }
}

// Touches every page for writing so the hot path never takes a first-write
// fault (MAP_POPULATE maps pages but may leave them write-protected). Writes
// each byte back unchanged: the header is already in the file. The stride is
// the system's page size (64 KiB on many aarch64 kernels), not the file
// format's kPageSize.
void Prefault(unsigned char* base, uint64_t size) {
  const long page = sysconf(_SC_PAGESIZE);
  const uint64_t stride = page > 0 ? static_cast<uint64_t>(page) : format::kPageSize;
  for (uint64_t off = 0; off < size; off += stride) {
    volatile unsigned char* p = base + off;
    *p = *p;
  }
}

bool WriteAll(int fd, const void* data, size_t len) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  size_t done = 0;
  while (done < len) {
    ssize_t n = pwrite(fd, p + done, len - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

bool Fail(char* err, size_t err_len, const char* what, const char* path, int e) {
  snprintf(err, err_len, "%s %s: %s", what, path, strerror(e));
  return false;
}

}  // namespace

RingLayout ComputeLayout(uint32_t max_regions, uint64_t region_capacity) {
  RingLayout l;
  l.max_regions = max_regions;
  l.region_capacity = region_capacity;
  l.region_table_offset = format::kHeaderSize;
  l.records_offset =
      RoundUp(l.region_table_offset + static_cast<uint64_t>(max_regions) * format::kRegionDescSize,
              format::kPageSize);
  l.file_size =
      l.records_offset + static_cast<uint64_t>(max_regions) * region_capacity * format::kRecordSize;
  return l;
}

static bool CreateRingFileAt(const Config& cfg, int dirfd, const char* host, unsigned char* at,
                             RingMapping* out, char* err, size_t err_len) {
  const RingLayout l = ComputeLayout(cfg.max_comms, cfg.records);
  const int64_t pid = getpid();
  char name[format::kFileNameMax], init_name[format::kFileNameMax];
  if (!format::RingName(cfg.job_id, host, pid, name, sizeof(name)) ||
      !format::RingInitName(cfg.job_id, host, pid, init_name, sizeof(init_name))) {
    return Fail(err, err_len, "ring file name too long for job", cfg.job_id, ENAMETOOLONG);
  }
  snprintf(out->path, sizeof(out->path), "%s/%s", cfg.dir, name);
  char init_path[sizeof(out->path) + 8];
  snprintf(init_path, sizeof(init_path), "%s.init", out->path);
  // A stale file from an earlier process with our pid (ours: the directory
  // is ours alone).
  fileio::RemoveOurs(dirfd, init_name, cfg.trust);
  char why[fileio::kWhyMax];
  int fd = fileio::CreateExclusive(dirfd, init_name, cfg.trust, why, sizeof(why));
  if (fd < 0) {
    snprintf(err, err_len, "%s in %s", why, cfg.dir);
    return false;
  }
  FLIGHTREC_TESTPOINT(ring_init);  // 1st hit: the .init file exists, empty
  // The whole header first: from here on even a .init file names its writer.
  format::FileHeader header;
  memset(&header, 0, sizeof(header));
  InitHeader(cfg, host, l, &header);
  if (!WriteAll(fd, &header, sizeof(header))) {
    const int e = errno != 0 ? errno : EIO;
    close(fd);
    unlinkat(dirfd, init_name, 0);
    return Fail(err, err_len, "cannot write the header of", init_path, e);
  }
  FLIGHTREC_TESTPOINT(ring_init);  // 2nd hit: header written, nothing else
  // Reserve every block now: a full disk fails here, never as SIGBUS later.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(l.file_size));
  if (rc != 0) {
    close(fd);
    unlinkat(dirfd, init_name, 0);
    return Fail(err, err_len, "cannot preallocate", init_path, rc);
  }
  const int fixed = at != nullptr ? MAP_FIXED : 0;
  void* p = mmap(at, l.file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE | fixed, fd, 0);
  int map_errno = errno;
  close(fd);  // the mapping keeps the file; a host closing all fds cannot hurt
  if (p == MAP_FAILED) {
    if (at != nullptr) Anonymize(at, l.file_size);  // MAP_FIXED may have dropped it
    unlinkat(dirfd, init_name, 0);
    return Fail(err, err_len, "cannot map", init_path, map_errno);
  }
  unsigned char* base = static_cast<unsigned char*>(p);
  Prefault(base, l.file_size);
  InitRegionTable(l, base);
  auto* h = reinterpret_cast<format::FileHeader*>(base);
  StoreRelaxed(&h->process_state, uint32_t{format::kProcessRunning});
  FLIGHTREC_TESTPOINT(ring_init);  // 3rd hit: complete, not yet published
  // Publishes the complete ring under its name (atomic: a reader sees the
  // old file, or none, or this one whole).
  if (renameat(dirfd, init_name, dirfd, name) != 0) {
    const int e = errno;
    if (at != nullptr) {
      Anonymize(at, l.file_size);
    } else {
      munmap(base, l.file_size);
    }
    unlinkat(dirfd, init_name, 0);
    return Fail(err, err_len, "cannot rename to its name", init_path, e);
  }
  out->base = base;
  out->layout = l;
  return true;
}

bool CreateRingFile(const Config& cfg, const char* host, unsigned char* at, RingMapping* out,
                    char* err, size_t err_len) {
  // The ring directory is ours alone: created 0700 (0750 with a trusted
  // group), refused when another user owns it or can write it.
  const int dirfd = fileio::OpenDir(cfg.dir, fileio::DirRole::kPrivate, cfg.trust, true, err,
                                    err_len, nullptr, 0);
  if (dirfd < 0) return false;
  const bool ok = CreateRingFileAt(cfg, dirfd, host, at, out, err, err_len);
  close(dirfd);
  return ok;
}

bool Anonymize(unsigned char* base, uint64_t size) {
  void* p =
      mmap(base, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  return p != MAP_FAILED;
}

void DetachMapping(RingMapping* m) {
  if (m->base == nullptr) return;
  // On failure (ENOMEM) the file stays mapped, but the child's hot path is
  // already off and CommByRegion answers nullptr there, so the plugin has no
  // way left to write through it.
  (void)Anonymize(m->base, m->layout.file_size);
}

void UnmapRing(RingMapping* m) {
  if (m->base != nullptr) munmap(m->base, m->layout.file_size);
  m->base = nullptr;
}

}  // namespace rec
}  // namespace flightrec

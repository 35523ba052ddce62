#include "recorder/ring_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "flightrec/version.h"
#include "recorder/clock.h"
#include "recorder/host_info.h"

namespace flightrec {
namespace rec {
namespace {

uint64_t RoundUp(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

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
  h->process_state = format::kProcessRunning;
  h->watchdog_timeout_ns = cfg.timeout_ns;
  h->watchdog_poll_ns = cfg.poll_ns;
  for (uint32_t r = 0; r < l.max_regions; ++r) {
    auto* d = reinterpret_cast<format::RegionDesc*>(reinterpret_cast<unsigned char*>(h) +
                                                    l.region_table_offset) +
              r;
    d->state = format::kRegionFree;
    d->region_index = r;
  }
}

// Touches every page for writing so the hot path never takes a first-write
// fault (MAP_POPULATE maps pages but may leave them write-protected).
void Prefault(unsigned char* base, uint64_t size) {
  for (uint64_t off = 0; off < size; off += format::kPageSize) {
    *reinterpret_cast<volatile unsigned char*>(base + off) = 0;
  }
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

bool MakeDirs(const char* dir, char* err, size_t err_len) {
  char path[kPathMax];
  snprintf(path, sizeof(path), "%s", dir);
  size_t len = strlen(path);
  for (size_t i = 1; i <= len; ++i) {
    if (path[i] != '/' && path[i] != '\0') continue;
    char saved = path[i];
    path[i] = '\0';
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
      return Fail(err, err_len, "cannot create directory", path, errno);
    }
    path[i] = saved;
  }
  struct stat st;
  if (stat(dir, &st) != 0) return Fail(err, err_len, "cannot stat directory", dir, errno);
  if (!S_ISDIR(st.st_mode)) return Fail(err, err_len, "not a directory:", dir, ENOTDIR);
  return true;
}

bool CreateRingFile(const Config& cfg, const char* host, RingMapping* out, char* err,
                    size_t err_len) {
  if (!MakeDirs(cfg.dir, err, err_len)) return false;
  const RingLayout l = ComputeLayout(cfg.max_comms, cfg.records);
  snprintf(out->path, sizeof(out->path), "%s/flightrec-%s-%s-%d.ring", cfg.dir, cfg.job_id, host,
           static_cast<int>(getpid()));
  unlink(out->path);  // a stale file from an earlier process with our pid
  int fd = open(out->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Fail(err, err_len, "cannot create", out->path, errno);
  // Reserve every block now: a full disk fails here, never as SIGBUS later.
  int rc = posix_fallocate(fd, 0, static_cast<off_t>(l.file_size));
  if (rc != 0) {
    close(fd);
    unlink(out->path);
    return Fail(err, err_len, "cannot preallocate", out->path, rc);
  }
  void* p = mmap(nullptr, l.file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int map_errno = errno;
  close(fd);  // the mapping keeps the file; a host closing all fds cannot hurt
  if (p == MAP_FAILED) {
    unlink(out->path);
    return Fail(err, err_len, "cannot map", out->path, map_errno);
  }
  out->base = static_cast<unsigned char*>(p);
  out->layout = l;
  Prefault(out->base, l.file_size);
  InitHeader(cfg, host, l, out->header());
  return true;
}

void DetachMapping(RingMapping* m) {
  if (m->base == nullptr) return;
  void* p = mmap(m->base, m->layout.file_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  // On failure (ENOMEM) the file stays mapped, but the child's hot path is
  // already off and CommByRegion answers nullptr there, so the plugin has no
  // way left to write through it.
  (void)p;
}

void UnmapRing(RingMapping* m) {
  if (m->base != nullptr) munmap(m->base, m->layout.file_size);
  m->base = nullptr;
}

}  // namespace rec
}  // namespace flightrec

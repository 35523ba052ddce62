#include "recorder/dump_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

#include "flightrec/record_names.h"
#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/log.h"
#include "recorder/record_copy.h"
#include "recorder/testpoint.h"

namespace flightrec {
namespace rec {
namespace {

constexpr uint64_t kHugePage = 2ULL << 20;

uint64_t HugeRound(uint64_t size) { return (size + kHugePage - 1) & ~(kHugePage - 1); }

// Seal buffers: fresh anonymous memory (so every byte not written reads as
// zero), 2 MB-aligned and advised onto 2 MB pages, which turns the ~2,000
// page faults an 8 MB malloc cost per seal (a third of its CPU time) into a
// handful. Released with UnmapBuffer(p, size).
unsigned char* MapBuffer(uint64_t size) {
  const uint64_t len = HugeRound(size);
  void* p =
      mmap(nullptr, len + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return nullptr;
  const uintptr_t raw = reinterpret_cast<uintptr_t>(p);
  const uintptr_t aligned = (raw + kHugePage - 1) & ~static_cast<uintptr_t>(kHugePage - 1);
  if (aligned > raw) munmap(p, aligned - raw);
  if (aligned + len < raw + len + kHugePage) {
    munmap(reinterpret_cast<void*>(aligned + len), raw + kHugePage - aligned);
  }
  madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);  // advisory: THP may be off
  return reinterpret_cast<unsigned char*>(aligned);
}

void UnmapBuffer(unsigned char* p, uint64_t size) {
  if (p != nullptr) munmap(p, HugeRound(size));
}

// One seal's zstd frame: level 1 with the content size and the
// content checksum, written into a ZSTD_compressBound()-sized buffer whose
// untouched pages are never faulted in. The context is the DumpWriter's.
class FrameSink {
 public:
  explicit FrameSink(ZSTD_CCtx* cctx) : cctx_(cctx) {}
  ~FrameSink() { UnmapBuffer(out_, cap_); }
  bool Open(uint64_t content_size, char* err, size_t err_len) {
    cap_ = ZSTD_compressBound(content_size);
    out_ = MapBuffer(cap_);
    if (out_ == nullptr || cctx_ == nullptr) {
      snprintf(err, err_len, "out of memory for %zu compressed bytes", cap_);
      return false;
    }
    ZSTD_CCtx_reset(cctx_, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_contentSizeFlag, 1);
    return true;
  }
  // Compresses the whole image as one frame.
  bool Compress(const unsigned char* src, size_t len, char* err, size_t err_len) {
    const size_t n = ZSTD_compress2(cctx_, out_, cap_, src, len);
    if (ZSTD_isError(n)) {
      snprintf(err, err_len, "zstd: %s", ZSTD_getErrorName(n));
      return false;
    }
    len_ = n;
    return true;
  }
  const unsigned char* data() const { return out_; }
  size_t size() const { return len_; }

 private:
  ZSTD_CCtx* cctx_ = nullptr;
  unsigned char* out_ = nullptr;
  size_t cap_ = 0;
  size_t len_ = 0;
};

// Bytes of region r's records that can hold data for the copied descriptor:
// the reader looks at slot sequences [head - capacity, head) only, so slots
// at or past `head` (never claimed when the table was copied) are not read
// and stay zero in the image, as they are in a fresh ring.
uint64_t UsedRecordBytes(const unsigned char* table, uint32_t r, uint64_t capacity) {
  const auto* d = reinterpret_cast<const format::RegionDesc*>(table) + r;
  const uint64_t used = d->head < capacity ? d->head : capacity;
  return used * format::kRecordSize;
}

}  // namespace

void CopyLiveImage(const unsigned char* src, unsigned char* dst, uint64_t size) {
  const uint64_t* s = reinterpret_cast<const uint64_t*>(src);
  uint64_t* d = reinterpret_cast<uint64_t*>(dst);
  const uint64_t words = size / 8;  // spans are multiples of 8 bytes
  for (uint64_t i = 0; i < words; ++i) d[i] = LoadRelaxed(&s[i]);
}

uint64_t CopyRingImage(const RingMapping& ring, unsigned char* image) {
  const RingLayout& l = ring.layout;
  // Header and region table first: the copied heads bound what is read.
  CopyLiveImage(ring.base, image, l.records_offset);
  const unsigned char* table = image + l.region_table_offset;
  const uint64_t region_bytes = l.region_capacity * format::kRecordSize;
  uint64_t changed = 0;
  for (uint32_t r = 0; r < l.max_regions; ++r) {
    if (r == l.max_regions / 2) FLIGHTREC_TESTPOINT(during_seal);  // once per seal
    const uint64_t off = l.records_offset + r * region_bytes;
    // Record by record with the slot protocol's re-check (record_copy.h): a
    // record that changed while copied keeps commit 0 in the image, so the
    // reader counts it torn. Copying it again would not help: the new lap's
    // sequence is at or past the head copied above, outside the window the
    // reader accepts for this image.
    changed += CopyLiveRecords(reinterpret_cast<const format::Record*>(ring.base + off),
                               reinterpret_cast<format::Record*>(image + off),
                               UsedRecordBytes(table, r, l.region_capacity) / format::kRecordSize);
  }
  const uint64_t end = l.records_offset + l.max_regions * region_bytes;
  if (end < l.file_size) CopyLiveImage(ring.base + end, image + end, l.file_size - end);
  return changed;
}

DumpWriter::~DumpWriter() { ZSTD_freeCCtx(cctx_); }

void DumpWriter::Init(const RingMapping* ring, const Config* cfg, const char* host, LogFn log) {
  ring_ = ring;
  dump_dir_ = cfg->dump_dir;
  trust_ = &cfg->trust;
  job_ = cfg->job_id;
  host_ = host;
  log_ = log;
  max_dumps_ = cfg->max_dumps;
  sealed_ = 0;
  incident_dumps_ = 0;
  open_ = 0;
  newest_open_ns_ = 0;
  limit_logged_ = false;
}

bool DumpWriter::Admit(format::DumpReason reason) {
  if (reason == format::kDumpExit) return true;  // the newest evidence, always
  const uint64_t lifetime_cap = static_cast<uint64_t>(max_dumps_) * kLifetimeDumpsPerBudget;
  const bool over_open = open_ >= max_dumps_;
  if (!over_open && incident_dumps_ < lifetime_cap) return true;
  format::FileHeader* h = ring_->header();
  AddRelaxed(&h->dumps_refused, 1u);
  StoreRelaxed(&h->last_refused_reason, static_cast<uint32_t>(reason));
  StoreRelaxed(&h->last_refused_mono_ns, ClockNowNs());
  if (!limit_logged_) {
    if (over_open) {
      Logf(log_, kLogWarn,
           "not sealing a %s dump: NCCL_FLIGHTREC_MAX_DUMPS=%u dumps are open (their ops have "
           "not completed); further refusals are only counted",
           format::DumpReasonName(reason), max_dumps_);
    } else {
      Logf(log_, kLogWarn,
           "not sealing a %s dump: %u incident dumps sealed, the lifetime cap (%u x "
           "NCCL_FLIGHTREC_MAX_DUMPS=%u); further refusals are only counted",
           format::DumpReasonName(reason), incident_dumps_, kLifetimeDumpsPerBudget, max_dumps_);
    }
    limit_logged_ = true;
  }
  return false;
}

void DumpWriter::ReleaseResolved(uint64_t oldest_pending_ns) {
  if (open_ == 0 || oldest_pending_ns <= newest_open_ns_) return;
  format::FileHeader* h = ring_->header();
  AddRelaxed(&h->dumps_released, open_);
  open_ = 0;
  StoreRelaxed(&h->dumps_open, 0u);
  limit_logged_ = false;  // a later refusal is a new story
}

void DumpWriter::CountAbsorbed() { AddRelaxed(&ring_->header()->dumps_absorbed, 1u); }

bool DumpWriter::SealInto(unsigned char* image, format::DumpReason reason, const char* detail,
                          const char* name, char* err, size_t err_len) {
  const RingLayout& l = ring_->layout;
  CopyRingImage(*ring_, image);
  auto* h = reinterpret_cast<format::FileHeader*>(image);
  h->file_kind = format::kFileKindDump;
  h->dump_reason = reason;
  h->dump_sequence = sealed_ + 1;
  h->dump_mono_ns = ClockNowNs();
  h->dump_wall_ns = RealtimeNs();
  snprintf(h->dump_detail, sizeof(h->dump_detail), "%s", detail != nullptr ? detail : "");
  // Kept across seals: its tables are allocated and faulted in once.
  if (cctx_ == nullptr) cctx_ = ZSTD_createCCtx();
  FrameSink sink(cctx_);
  if (!sink.Open(l.file_size, err, err_len) || !sink.Compress(image, l.file_size, err, err_len)) {
    return false;
  }
  // A unique temporary in the directory opened now (O_NOFOLLOW, O_EXCL),
  // fsynced and renamed into place: a name planted in advance (a symlink)
  // is replaced, never written through.
  char why[fileio::kWhyMax];
  const int dirfd = fileio::OpenDir(dump_dir_, fileio::DirRole::kShared, *trust_, true, why,
                                    sizeof(why), nullptr, 0);
  if (dirfd < 0) {
    snprintf(err, err_len, "%s", why);
    return false;
  }
  const bool ok =
      fileio::WriteFileAt(dirfd, name, sink.data(), sink.size(), *trust_, true, why, sizeof(why));
  close(dirfd);
  if (!ok) snprintf(err, err_len, "%s in %s", why, dump_dir_);
  return ok;
}

bool DumpWriter::Seal(format::DumpReason reason, const char* detail, char* path_out,
                      size_t path_len) {
  if (!Admit(reason)) return false;
  const uint64_t copy_ns = ClockNowNs();  // ops pending in the image were enqueued before
  char name[format::kFileNameMax];
  char path[kPathMax + format::kFileNameMax];
  if (!format::DumpName(job_, host_, getpid(), sealed_ + 1, name, sizeof(name))) name[0] = '\0';
  snprintf(path, sizeof(path), "%s/%s", dump_dir_, name);
  char err[kPathMax + 128] = {};
  const RingLayout& l = ring_->layout;
  unsigned char* image = l.file_size <= kMaxDumpImageBytes ? MapBuffer(l.file_size) : nullptr;
  bool ok = false;
  if (image == nullptr) {
    snprintf(err, sizeof(err), "cannot allocate %llu bytes for the image copy",
             static_cast<unsigned long long>(l.file_size));
  } else {
    ok = SealInto(image, reason, detail, name, err, sizeof(err));
    UnmapBuffer(image, l.file_size);
  }
  // Every incident attempt counts, so a broken disk cannot make the watchdog
  // retry without bound.
  ++sealed_;
  if (reason != format::kDumpExit) {
    ++incident_dumps_;
    ++open_;
    newest_open_ns_ = copy_ns;
    StoreRelaxed(&ring_->header()->dumps_open, open_);
  }
  if (!ok) {
    Logf(log_, kLogWarn, "%s dump failed: %s: %s", format::DumpReasonName(reason), path, err);
    return false;
  }
  AddRelaxed(&ring_->header()->dumps_sealed, uint64_t{1});
  Logf(log_, kLogInfo, "sealed %s dump %s (%s)", format::DumpReasonName(reason), path,
       detail != nullptr ? detail : "");
  if (path_out != nullptr) snprintf(path_out, path_len, "%s", path);
  return true;
}

}  // namespace rec
}  // namespace flightrec

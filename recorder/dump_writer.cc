#include "recorder/dump_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "flightrec/record_names.h"
#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/file_util.h"
#include "recorder/log.h"
#include "recorder/testpoint.h"

namespace flightrec {
namespace rec {
namespace {

const char* ReasonName(format::DumpReason r) {
  switch (r) {
    case format::kDumpTimeout:
      return "timeout";
    case format::kDumpTrigger:
      return "trigger";
    case format::kDumpExit:
      return "exit";
    case format::kDumpRequest:
      return "request";
    default:
      return "none";
  }
}

// Compresses `src` into a malloc'd zstd frame; nullptr on failure.
unsigned char* Compress(const unsigned char* src, size_t len, size_t* out_len, char* err,
                        size_t err_len) {
  const size_t bound = ZSTD_compressBound(len);
  unsigned char* dst = static_cast<unsigned char*>(malloc(bound));
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  if (dst == nullptr || cctx == nullptr) {
    free(dst);
    ZSTD_freeCCtx(cctx);
    snprintf(err, err_len, "out of memory for %zu compressed bytes", bound);
    return nullptr;
  }
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_contentSizeFlag, 1);
  const size_t n = ZSTD_compress2(cctx, dst, bound, src, len);
  ZSTD_freeCCtx(cctx);
  if (ZSTD_isError(n)) {
    snprintf(err, err_len, "zstd: %s", ZSTD_getErrorName(n));
    free(dst);
    return nullptr;
  }
  *out_len = n;
  return dst;
}

}  // namespace

void CopyLiveImage(const unsigned char* src, unsigned char* dst, uint64_t size) {
  const uint64_t* s = reinterpret_cast<const uint64_t*>(src);
  uint64_t* d = reinterpret_cast<uint64_t*>(dst);
  const uint64_t words = size / 8;  // the image is page-aligned in size
  for (uint64_t i = 0; i < words; ++i) {
    d[i] = LoadRelaxed(&s[i]);
    if (i == words / 2) FLIGHTREC_TESTPOINT(during_seal);
  }
  // Pairs with the release fence in CommRecorder::BeginOp: a record whose
  // payload we copied from a newer lap also shows its commit reset to 0.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

void DumpWriter::Init(const RingMapping* ring, const Config* cfg, const char* host, LogFn log) {
  ring_ = ring;
  dump_dir_ = cfg->dump_dir;
  job_ = cfg->job_id;
  host_ = host;
  log_ = log;
  max_dumps_ = cfg->max_dumps;
  sealed_ = 0;
  limit_logged_ = false;
}

bool DumpWriter::SealInto(unsigned char* image, format::DumpReason reason, const char* detail,
                          const char* path, char* err, size_t err_len) {
  const uint64_t size = ring_->layout.file_size;
  CopyLiveImage(ring_->base, image, size);
  auto* h = reinterpret_cast<format::FileHeader*>(image);
  h->file_kind = format::kFileKindDump;
  h->dump_reason = reason;
  h->dump_sequence = sealed_ + 1;
  h->dump_mono_ns = ClockNowNs();
  h->dump_wall_ns = RealtimeNs();
  snprintf(h->dump_detail, sizeof(h->dump_detail), "%s", detail != nullptr ? detail : "");
  size_t frame_len = 0;
  unsigned char* frame = Compress(image, size, &frame_len, err, err_len);
  if (frame == nullptr) return false;
  const bool ok = WriteFileAtomically(path, frame, frame_len, err, err_len);
  free(frame);
  return ok;
}

bool DumpWriter::Seal(format::DumpReason reason, const char* detail, char* path_out,
                      size_t path_len) {
  if (exhausted()) {
    if (!limit_logged_) {
      Logf(log_, kLogWarn, "not sealing a %s dump: NCCL_FLIGHTREC_MAX_DUMPS=%u reached",
           ReasonName(reason), max_dumps_);
      limit_logged_ = true;
    }
    return false;
  }
  char path[kPathMax + 128];
  snprintf(path, sizeof(path), "%s/flightrec-%s-%s-%d-%u.frdump", dump_dir_, job_, host_,
           static_cast<int>(getpid()), sealed_ + 1);
  char err[kPathMax + 128] = {};
  const uint64_t size = ring_->layout.file_size;
  unsigned char* image =
      size <= kMaxDumpImageBytes ? static_cast<unsigned char*>(malloc(size)) : nullptr;
  bool ok = false;
  if (image == nullptr) {
    snprintf(err, sizeof(err), "cannot allocate %llu bytes for the image copy",
             static_cast<unsigned long long>(size));
  } else {
    ok = SealInto(image, reason, detail, path, err, sizeof(err));
    free(image);
  }
  // Every attempt counts against the limit, so a broken disk cannot make the
  // watchdog retry forever.
  ++sealed_;
  if (!ok) {
    Logf(log_, kLogWarn, "%s dump failed: %s", ReasonName(reason), err);
    return false;
  }
  AddRelaxed(&ring_->header()->dumps_sealed, uint64_t{1});
  Logf(log_, kLogInfo, "sealed %s dump %s (%s)", ReasonName(reason), path,
       detail != nullptr ? detail : "");
  if (path_out != nullptr) snprintf(path_out, path_len, "%s", path);
  return true;
}

}  // namespace rec
}  // namespace flightrec

// Seals dumps: a raw copy of the whole live image (header, region table,
// records) taken while writers run, marked file_kind = kFileKindDump with the
// dump_* fields filled in the COPY, compressed as one zstd frame (level 1,
// content checksum, content size) and published atomically as
// `<dumpdir>/flightrec-<job>-<host>-<pid>-<seq>.frdump`. Records are copied
// with the reader side of the slot protocol (record_copy.h): one that changed
// while it was copied is stored with commit 0. Validation of the copied
// records is the reader's job (commit words + checksums).
//
// The copy goes into fresh zeroed memory on 2 MB pages (few page faults):
// header and region table first, then only the slots each region's copied
// head says were ever claimed (min(head, capacity)); the rest stays zero, as
// in a fresh ring, and costs zstd almost nothing. The zstd context is kept
// across seals (created by the first).
//
// Not thread-safe: one DumpWriter is used by one thread at a time (the
// watchdog, or the closing thread after the watchdog was joined).
#ifndef FLIGHTREC_RECORDER_DUMP_WRITER_H_
#define FLIGHTREC_RECORDER_DUMP_WRITER_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/record_format.h"
#include "recorder/config.h"
#include "recorder/recorder.h"
#include "recorder/ring_file.h"

struct ZSTD_CCtx_s;

namespace flightrec {
namespace rec {

// Images above this size are not dumped (the compressed buffer must fit in
// memory next to the host's); the ring file itself remains.
constexpr uint64_t kMaxDumpImageBytes = 1ULL << 30;

class DumpWriter {
 public:
  DumpWriter() = default;
  ~DumpWriter();
  DumpWriter(const DumpWriter&) = delete;
  DumpWriter& operator=(const DumpWriter&) = delete;

  void Init(const RingMapping* ring, const Config* cfg, const char* host, LogFn log);

  // Seals one dump. False (with one log line) when MAX_DUMPS is reached or
  // anything fails; `path_out` receives the dump's path on success.
  bool Seal(format::DumpReason reason, const char* detail, char* path_out, size_t path_len);

  uint32_t sealed() const { return sealed_; }
  bool exhausted() const { return sealed_ >= max_dumps_; }

 private:
  // `image`: file_size zeroed bytes.
  bool SealInto(unsigned char* image, format::DumpReason reason, const char* detail,
                const char* path, char* err, size_t err_len);

  ZSTD_CCtx_s* cctx_ = nullptr;  // created by the first seal, reused
  const RingMapping* ring_ = nullptr;
  const char* dump_dir_ = nullptr;
  const char* job_ = nullptr;
  const char* host_ = nullptr;
  LogFn log_ = nullptr;
  uint32_t max_dumps_ = 0;
  uint32_t sealed_ = 0;
  bool limit_logged_ = false;
};

// Copies `size` bytes (a multiple of 8) of a live image with relaxed 8-byte
// loads (writers may be storing concurrently). For the header, the region
// table and the tail; records go through CopyLiveRecords (record_copy.h).
void CopyLiveImage(const unsigned char* src, unsigned char* dst, uint64_t size);

// The seal's copy of the live ring into `image` (file_size zeroed bytes):
// header and region table, then each region's claimed slots record by record
// (CopyLiveRecords). Returns how many records changed while they were copied
// (stored with commit 0).
uint64_t CopyRingImage(const RingMapping& ring, unsigned char* image);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_DUMP_WRITER_H_

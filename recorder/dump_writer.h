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
// The dump budget (docs/design/recorder.md, "Dump budget"): incident dumps
// (timeout, trigger, request) count against NCCL_FLIGHTREC_MAX_DUMPS while
// they are OPEN, i.e. while an op that was pending when they were sealed has
// not completed; the watchdog releases them (ReleaseResolved) once every
// such op is done, so a stall that recovers gives its budget back. The exit
// dump is never refused and never counts. A lifetime cap of
// kLifetimeDumpsPerBudget x MAX_DUMPS incident dumps bounds the disk a job
// that stalls over and over can fill. Budget state and refusals are kept in
// the ring header (max_dumps .. last_refused_mono_ns).
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

// Incident dumps a process may seal over its life, per unit of MAX_DUMPS.
constexpr uint32_t kLifetimeDumpsPerBudget = 16;

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

  // Seals one dump. False when the budget refuses it (counted in the ring
  // header; logged once) or anything fails (logged); `path_out` receives the
  // dump's path on success. An incident dump counts as open from here on
  // (also a failed attempt: a broken disk cannot make the watchdog retry
  // without bound); kDumpExit is never refused and never counts.
  bool Seal(format::DumpReason reason, const char* detail, char* path_out, size_t path_len);

  // Every poll: `oldest_pending_ns` is the enqueue time of the oldest op not
  // done in any region that reports completion (UINT64_MAX: none). Open
  // dumps sealed before it are resolved: every op pending at their seal has
  // completed. Releases them all (they are sealed in time order).
  void ReleaseResolved(uint64_t oldest_pending_ns);
  // An incident dump of this process is open (its ops still pending).
  bool incident_open() const { return open_ > 0; }
  // A trigger change answered by an earlier dump (counted in the header).
  void CountAbsorbed();

  uint32_t sealed() const { return sealed_; }

 private:
  // `image`: file_size zeroed bytes.
  bool SealInto(unsigned char* image, format::DumpReason reason, const char* detail,
                const char* path, char* err, size_t err_len);
  // The budget's verdict on an incident dump; counts and logs a refusal.
  bool Admit(format::DumpReason reason);

  ZSTD_CCtx_s* cctx_ = nullptr;  // created by the first seal, reused
  const RingMapping* ring_ = nullptr;
  const char* dump_dir_ = nullptr;
  const fileio::Trust* trust_ = nullptr;
  const char* job_ = nullptr;
  const char* host_ = nullptr;
  LogFn log_ = nullptr;
  uint32_t max_dumps_ = 0;
  uint32_t sealed_ = 0;          // attempts of any reason (names the files)
  uint32_t incident_dumps_ = 0;  // incident attempts over the life (lifetime cap)
  uint32_t open_ = 0;            // incident dumps counted against max_dumps_
  uint64_t newest_open_ns_ = 0;  // seal time of the newest open dump
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

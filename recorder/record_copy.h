// The reader side of the slot protocol (include/flightrec/record_format.h,
// "reader"), for every reader that copies records out of the live mapping:
// the dump copy (dump_writer.cc) and the watchdog scan (watchdog.cc).
//
//   c1 = commit (acquire)   -- pairs with the release store of commit in
//                              CommRecorder::BeginOp: the words below are at
//                              least as new as the lap c1 names
//   copy words 1..15 (relaxed, 8 bytes each)
//   acquire fence           -- pairs with the release fence in BeginOp
//   c2 = commit (relaxed)
//   c1 == c2: every word copied belongs to the lap c1 names
//   else:     the copy's commit is 0 (the reader reports it torn)
//
// The progress words are covered by this re-check, not by a per-lap tag: a
// new lap's writer stores commit = 0 and issues its release fence before it
// touches any word of the slot (payload and progress words alike), so a copy
// that read any word of the new lap re-reads a commit other than c1. Each
// location is read with the size its writers use (comm_recorder_inl.h,
// RecordByte): words 0..14 as 64-bit atomics, the one-byte fields of word 15
// as bytes.
//
// No lock, no allocation, no syscall: safe on any thread.
#ifndef FLIGHTREC_RECORDER_RECORD_COPY_H_
#define FLIGHTREC_RECORDER_RECORD_COPY_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/record_format.h"
#include "recorder/atomics.h"
#include "recorder/testpoint.h"

namespace flightrec {
namespace rec {

// Copies the live record `src` into `dst` (private memory). Returns the
// commit word the copy is consistent with (0: never written, being claimed,
// or changed while copied; dst->commit is then 0 too). `*changed` (when
// given) tells the last case apart.
inline uint64_t CopyLiveRecord(const format::Record* src, format::Record* dst,
                               bool* changed = nullptr) {
  constexpr uint32_t kFirstProgress = 80 / 8;  // words [10, 16) are progress words
  constexpr uint32_t kOpWord = offsetof(format::Record, state) / 8;  // 15: the one-byte fields
  static_assert(kOpWord == format::kRecordSize / 8 - 1 && offsetof(format::Record, state) % 8 == 0,
                "state and the counters fill the last word");
  const uint64_t* s = reinterpret_cast<const uint64_t*>(src);
  uint64_t* d = reinterpret_cast<uint64_t*>(dst);
  // Pairs with the release store of commit in CommRecorder::BeginOp.
  const uint64_t c1 = __atomic_load_n(&s[0], __ATOMIC_ACQUIRE);
  for (uint32_t i = 1; i < kFirstProgress; ++i) d[i] = LoadRelaxed(&s[i]);
  FLIGHTREC_TESTPOINT(mid_record_copy);
  for (uint32_t i = kFirstProgress; i < kOpWord; ++i) d[i] = LoadRelaxed(&s[i]);
  // Word 15 byte by byte, as its writers access it.
  const unsigned char* sb = reinterpret_cast<const unsigned char*>(&s[kOpWord]);
  unsigned char* db = reinterpret_cast<unsigned char*>(&d[kOpWord]);
  for (uint32_t i = 0; i < 8; ++i) db[i] = LoadRelaxed(&sb[i]);
  // Pairs with the release fence in CommRecorder::BeginOp: a word copied
  // from a newer lap makes the load below see that lap's commit reset.
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  const uint64_t c2 = LoadRelaxed(&s[0]);
  d[0] = c1 == c2 ? c1 : 0;
  if (changed != nullptr) *changed = c1 != 0 && c1 != c2;
  return d[0];
}

// CopyLiveRecord over `n` consecutive records. Returns how many were
// committed when their copy began and changed before it ended (stored with
// commit 0).
inline uint64_t CopyLiveRecords(const format::Record* src, format::Record* dst, uint64_t n) {
  uint64_t changed = 0;
  for (uint64_t i = 0; i < n; ++i) {
    bool c = false;
    CopyLiveRecord(&src[i], &dst[i], &c);
    changed += c ? 1 : 0;
  }
  return changed;
}

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_RECORD_COPY_H_

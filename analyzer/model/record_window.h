// The windowed load of `flightrec analyze`: each file keeps at most a fixed
// number of full records, its newest by enqueue time (the same time cut for
// all its comms, so the straggler's per-process gaps stay right), plus every
// op that is not done (where a hang is). The older collectives are kept as
// 8-byte CollSig entries by op index, enough for the mismatch and shift
// detectors to compare every op a member holds; the one op they describe is
// re-read from its file (JobIndex::FetchColl).
//
// Two limits set the number (WindowFor): the record memory shared by the
// files, which bounds memory however many ranks there are, and a window of
// full records per file, which bounds the work: a record is decoded once,
// but keeping it costs fresh pages and every later pass, and the detectors
// need only the newest ops in full (stragglers look at the newest 512 per
// comm, a hang at the ops not done). Older p2p records have no signature:
// they stay in full while the file is within its memory share, and are
// counted in `trimmed` and dropped only when it is over it.
#ifndef FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_
#define FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_

#include <stdint.h>

#include "analyzer/reader/snapshot.h"
#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {
namespace analysis {

// Full records a file may keep when `budget_bytes` is shared by `files`
// files (at least FloorRecords(files); UINT64_MAX when budget_bytes is 0,
// meaning no limit).
//
// The floor is kMinWindowRecords per file up to kFloorFiles files; beyond,
// the kMinWindowRecords * kFloorFiles records (600 MiB) are shared, down
// to kMinFloorRecords per file, so that memory stops growing with the
// ranks: 64 records per file at 65,536 ranks (the newest 16 steps of a
// 4-op step, and every op not done).
constexpr uint64_t kMinWindowRecords = 256;
constexpr uint64_t kFloorFiles = 16384;
constexpr uint64_t kMinFloorRecords = 64;
uint64_t FloorRecords(uint64_t files);
uint64_t RecordsPerFile(uint64_t budget_bytes, uint64_t files);

// What one file of a load keeps in full.
struct WindowPolicy {
  uint64_t full = UINT64_MAX;   // newest records kept in full (plus ops not done)
  uint64_t share = UINT64_MAX;  // the file's memory share: within it, p2p records stay
};

// The policy for `files` files sharing `budget_bytes` (0: no memory limit)
// with at most `window_records` full records each (0: no window).
WindowPolicy WindowFor(uint64_t budget_bytes, uint64_t window_records, uint64_t files);

// The same policy applied while a dump is read (snapshot_reader.h,
// ReadWindow): the records it drops are never decoded. A snapshot read so
// (ReadResult::windowed) is not trimmed again.
ReadWindow ReadWindowFor(const WindowPolicy& policy);

// Trims `snap` as described above. A file that holds no more than
// policy.full records is left exactly as read.
void TrimToWindow(const WindowPolicy& policy, ProcessSnapshot* snap);

// The memory limit alone: `max_records` both as window and as share.
inline void TrimToWindow(uint64_t max_records, ProcessSnapshot* snap) {
  TrimToWindow(WindowPolicy{max_records, max_records}, snap);
}

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_

// The windowed load `flightrec analyze` uses on big jobs, so that memory
// stays bounded however many ranks there are: each file keeps at most a
// fixed number of full records, its newest by enqueue time (the same time
// cut for all its comms, so the straggler's per-process gaps stay right),
// plus every op that is not done (where a hang is). The older collectives
// are kept as 8-byte CollSig entries by op index, enough for the mismatch
// and shift detectors to compare every op a member holds; the one op they
// describe is re-read from its file (JobIndex::FetchColl). Older p2p
// records are counted in `trimmed` and not kept.
#ifndef FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_
#define FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_

#include <stdint.h>

#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace analysis {

// Full records a file may keep when `budget_bytes` is shared by `files`
// files (at least kMinWindowRecords; UINT64_MAX when budget_bytes is 0,
// meaning no limit).
constexpr uint64_t kMinWindowRecords = 256;
uint64_t RecordsPerFile(uint64_t budget_bytes, uint64_t files);

// Trims `snap` to `max_records` full records as described above. A file
// that holds no more than that is left exactly as read.
void TrimToWindow(uint64_t max_records, ProcessSnapshot* snap);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_RECORD_WINDOW_H_

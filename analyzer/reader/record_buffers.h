// Spare record vectors, one small set per thread, so that a load that keeps
// only part of each file does not pay fresh pages for the part it drops.
//
// The reader decodes every valid record of a region into a vector it takes
// here; the windowed load (analyzer/model/record_window.h) copies the
// records it keeps into an exact-size vector and gives the decoded one
// back, so the next file of the same thread decodes into memory that is
// already mapped and warm. Without a caller that gives vectors back this is
// an ordinary allocation. Bounded: a thread keeps at most kMaxSpares vectors
// and kMaxSpareBytes in all; ReleaseRecordBuffers frees them.
#ifndef FLIGHTREC_ANALYZER_READER_RECORD_BUFFERS_H_
#define FLIGHTREC_ANALYZER_READER_RECORD_BUFFERS_H_

#include <stddef.h>

#include <vector>

#include "analyzer/reader/snapshot.h"

namespace flightrec {

constexpr size_t kMaxSpares = 8;
constexpr size_t kMaxSpareBytes = size_t{16} << 20;

// An empty vector with room for `n` records: this thread's smallest spare
// that holds `n` and is not more than twice that, else a new one.
std::vector<OpRecord> TakeRecordBuffer(size_t n);

// Keeps `v`'s storage (emptied) for this thread's next TakeRecordBuffer,
// unless the thread's spares are full; else it is freed.
void RecycleRecordBuffer(std::vector<OpRecord>&& v);

// Frees this thread's spares (a reader thread calls it when it is done).
void ReleaseRecordBuffers();

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_RECORD_BUFFERS_H_

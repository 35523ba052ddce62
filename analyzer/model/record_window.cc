#include "analyzer/model/record_window.h"

#include <algorithm>
#include <vector>

#include "analyzer/model/coll_signature.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// A damaged file could claim op indices far apart; a history longer than
// this is not kept (its ops are then simply not compared).
constexpr uint64_t kMaxHistorySpan = uint64_t{1} << 22;

// Kept whatever its age: an op that is not done is where a hang is. In a
// region that does not track completion no op is ever done, so there age
// decides alone (else nothing would ever be trimmed).
bool Pinned(const CommSnapshot& c, const OpRecord& r) {
  return (c.flags & format::kRegionCompletionTracked) != 0 && r.state < format::kOpDone;
}

// The enqueue time from which records are kept: the newest `keep` of all
// the file's records by enqueue time (0 = never enqueued sorts oldest).
uint64_t CutTime(const ProcessSnapshot& snap, uint64_t keep) {
  std::vector<uint64_t> times;
  for (const CommSnapshot& c : snap.comms) {
    for (const OpRecord& r : c.records) times.push_back(r.t_enqueue_ns);
  }
  const size_t drop = times.size() - static_cast<size_t>(keep);
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(drop), times.end());
  return times[drop];
}

bool Kept(const CommSnapshot& c, const OpRecord& r, uint64_t cut) {
  return r.t_enqueue_ns >= cut || Pinned(c, r);
}

void Trim(uint64_t cut, CommSnapshot* c) {
  uint64_t lo = UINT64_MAX, hi = 0;
  for (const OpRecord& r : c->records) {
    if (Kept(*c, r, cut) || r.is_p2p()) continue;
    lo = std::min(lo, r.op_index);
    hi = std::max(hi, r.op_index);
  }
  const bool history = lo != UINT64_MAX && hi - lo < kMaxHistorySpan;
  if (history) {
    c->history_first = lo;
    c->history.assign(static_cast<size_t>(hi - lo + 1), CollSig{});
  }
  // Compacted in place: no second vector while the file is being read.
  std::vector<OpRecord>& recs = c->records;
  size_t out = 0;
  for (size_t i = 0; i < recs.size(); ++i) {
    const OpRecord& r = recs[i];
    if (Kept(*c, r, cut)) {
      if (out != i) recs[out] = r;
      ++out;
      continue;
    }
    ++c->trimmed;
    if (!history || r.is_p2p()) continue;
    CollSig& slot = c->history[static_cast<size_t>(r.op_index - lo)];
    // Once per index, the first record (as JobIndex::FindColl picks).
    if (!slot.held()) slot = SigOf(r);
  }
  recs.resize(out);
  // Give the trimmed part back unless it is small (a shrink is a copy).
  if (recs.capacity() > out + out / 4) recs.shrink_to_fit();
}

}  // namespace

uint64_t RecordsPerFile(uint64_t budget_bytes, uint64_t files) {
  if (budget_bytes == 0) return UINT64_MAX;
  const uint64_t per_file = budget_bytes / sizeof(OpRecord) / std::max<uint64_t>(files, 1);
  return std::max(per_file, kMinWindowRecords);
}

void TrimToWindow(uint64_t max_records, ProcessSnapshot* snap) {
  uint64_t total = 0;
  for (const CommSnapshot& c : snap->comms) total += c.records.size();
  if (total <= max_records) return;
  const uint64_t cut = CutTime(*snap, max_records);
  for (CommSnapshot& c : snap->comms) Trim(cut, &c);
}

}  // namespace analysis
}  // namespace flightrec

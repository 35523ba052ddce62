#include "analyzer/model/record_window.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "analyzer/model/coll_signature.h"
#include "analyzer/reader/record_buffers.h"
#include "analyzer/reader/window_rules.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

using window_rules::Cut;

bool Kept(const CommSnapshot& c, const OpRecord& r, const Cut& cut) {
  return window_rules::Kept(cut, c.flags, r.t_enqueue_ns, r.state, r.is_p2p());
}

// The enqueue time from which records are kept: the newest `keep` of all
// the file's records by enqueue time (0 = never enqueued sorts oldest).
uint64_t CutTime(const ProcessSnapshot& snap, uint64_t total, uint64_t keep) {
  // One per reader thread, reused: a fresh vector grown by push_back cost
  // more than the selection itself.
  thread_local std::vector<uint64_t> times;
  times.resize(static_cast<size_t>(total));
  size_t n = 0;
  for (const CommSnapshot& c : snap.comms) {
    for (const OpRecord& r : c.records) times[n++] = r.t_enqueue_ns;
  }
  const size_t drop = times.size() - static_cast<size_t>(keep);
  std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(drop), times.end());
  return times[drop];
}

void Trim(const Cut& cut, CommSnapshot* c) {
  uint64_t lo = UINT64_MAX, hi = 0;
  size_t n_kept = 0;
  for (const OpRecord& r : c->records) {
    if (Kept(*c, r, cut)) {
      ++n_kept;
      continue;
    }
    if (r.is_p2p()) continue;
    lo = std::min(lo, r.op_index);
    hi = std::max(hi, r.op_index);
  }
  const bool history = lo != UINT64_MAX && hi - lo < window_rules::kMaxHistorySpan;
  // Signatures by position, in this thread's reused vector, then kept in
  // CollHistory's compact form.
  thread_local std::vector<CollSig> sigs;
  if (history) {
    c->history_first = lo;
    sigs.assign(static_cast<size_t>(hi - lo + 1), CollSig{});
  }
  // The kept records go to an exact-size vector; the decoded one goes back
  // to this thread's spares, so the next file decodes into warm memory.
  std::vector<OpRecord>& recs = c->records;
  std::vector<OpRecord> kept;
  kept.reserve(n_kept);
  for (const OpRecord& r : recs) {
    if (Kept(*c, r, cut)) {
      kept.push_back(r);
      continue;
    }
    ++c->trimmed;
    if (!history || r.is_p2p()) continue;
    CollSig& slot = sigs[static_cast<size_t>(r.op_index - lo)];
    // Once per index, the first record (as JobIndex::FindColl picks).
    if (!slot.held()) slot = SigOf(r);
  }
  RecycleRecordBuffer(std::move(recs));
  recs = std::move(kept);
  if (history) c->history.Assign(sigs);
}

}  // namespace

uint64_t FloorRecords(uint64_t files) {
  const uint64_t shared = kMinWindowRecords * kFloorFiles / std::max<uint64_t>(files, 1);
  return std::clamp(shared, kMinFloorRecords, kMinWindowRecords);
}

uint64_t RecordsPerFile(uint64_t budget_bytes, uint64_t files) {
  if (budget_bytes == 0) return UINT64_MAX;
  const uint64_t per_file = budget_bytes / sizeof(OpRecord) / std::max<uint64_t>(files, 1);
  return std::max(per_file, FloorRecords(files));
}

WindowPolicy WindowFor(uint64_t budget_bytes, uint64_t window_records, uint64_t files) {
  WindowPolicy p;
  p.share = RecordsPerFile(budget_bytes, files);
  p.full = window_records == 0 ? p.share : std::min(p.share, window_records);
  return p;
}

ReadWindow ReadWindowFor(const WindowPolicy& policy) {
  ReadWindow w;
  w.full = policy.full;
  w.share = policy.share;
  w.signature = &SigOf;
  return w;
}

void TrimToWindow(const WindowPolicy& policy, ProcessSnapshot* snap) {
  uint64_t total = 0;
  for (const CommSnapshot& c : snap->comms) total += c.records.size();
  if (total <= policy.full) return;
  const Cut cut{CutTime(*snap, total, policy.full), total <= policy.share};
  for (CommSnapshot& c : snap->comms) Trim(cut, &c);
}

}  // namespace analysis
}  // namespace flightrec

#include "analyzer/reader/coll_history.h"

#include <algorithm>

namespace flightrec {

void CollHistory::Assign(const std::vector<CollSig>& by_position) {
  clear();
  size_t end = by_position.size();
  while (end > 0 && !by_position[end - 1].held()) --end;
  size_ = end;
  if (end == 0) return;
  // Runs first counted, then built in an exact-size vector.
  size_t n_runs = 0;
  for (size_t k = 0; k < end; ++k) {
    const CollSig& s = by_position[k];
    if (!s.held()) continue;
    const bool extends = k > 0 && by_position[k - 1].held() && by_position[k - 1].sig == s.sig &&
                         by_position[k - 1].seq_lo + 1 == s.seq_lo;
    if (!extends) ++n_runs;
  }
  if (n_runs * sizeof(Run) >= end * sizeof(CollSig)) {
    flat_.assign(by_position.begin(), by_position.begin() + static_cast<std::ptrdiff_t>(end));
    return;
  }
  runs_.reserve(n_runs);
  for (size_t k = 0; k < end; ++k) {
    const CollSig& s = by_position[k];
    if (!s.held()) continue;
    if (!runs_.empty()) {
      Run& last = runs_.back();
      if (size_t{last.offset} + last.length == k && last.sig == s.sig &&
          last.seq_lo + last.length == s.seq_lo) {
        ++last.length;
        continue;
      }
    }
    runs_.push_back(Run{static_cast<uint32_t>(k), 1, s.sig, s.seq_lo});
  }
}

void CollHistory::clear() {
  size_ = 0;
  std::vector<Run>().swap(runs_);
  std::vector<CollSig>().swap(flat_);
}

CollSig CollHistory::operator[](size_t k) const {
  if (k >= size_) return CollSig{};
  if (runs_.empty()) return flat_[k];
  // The last run starting at or before k.
  auto it = std::upper_bound(runs_.begin(), runs_.end(), k,
                             [](size_t pos, const Run& r) { return pos < r.offset; });
  if (it == runs_.begin()) return CollSig{};
  --it;
  const size_t i = k - it->offset;
  if (i >= it->length) return CollSig{};
  return CollSig{it->sig, it->seq_lo + static_cast<uint32_t>(i)};
}

size_t CollHistory::FirstHeld() const {
  if (!runs_.empty()) return runs_.front().offset;
  for (size_t k = 0; k < flat_.size(); ++k) {
    if (flat_[k].held()) return k;
  }
  return size_;
}

size_t CollHistory::LastHeld() const {
  // The last position is held by construction (Assign trims the holes at
  // the end).
  return size_ == 0 ? size_ : size_ - 1;
}

}  // namespace flightrec

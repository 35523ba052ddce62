// What a windowed load (analyzer/model/record_window.h) keeps of the
// collectives older than its window: a signature per op index, enough to
// compare the op with the other members' op of the same index.
//
// A job repeats the same few collectives, each op's nccl_seq one more than
// the previous one's, so the history is stored as runs: ops
// [offset, offset + length) of one signature whose nccl_seq goes up by one
// per op. A comm that held 4,096 such ops keeps a handful of 16-byte runs
// instead of 32 KiB; a history that does not repeat is kept as one 8-byte
// signature per op (whichever is smaller), as before.
#ifndef FLIGHTREC_ANALYZER_READER_COLL_HISTORY_H_
#define FLIGHTREC_ANALYZER_READER_COLL_HISTORY_H_

#include <stddef.h>
#include <stdint.h>

#include <vector>

#include "flightrec/record_format.h"

namespace flightrec {

// The signature of one collective.
struct CollSig {
  static constexpr uint32_t kHashBits = 28;
  static constexpr uint32_t kHashMask = (uint32_t{1} << kHashBits) - 1;
  // Bits [0, 28): a hash of func, count, datatype and root (never 0);
  // bits [28, 32): the record's api_datatype (0: none). 0: not held.
  uint32_t sig = 0;
  uint32_t seq_lo = 0;  // low 32 bits of nccl_seq
  bool held() const { return sig != 0; }
  uint32_t hash() const { return sig & kHashMask; }
  uint8_t api_datatype() const { return static_cast<uint8_t>(sig >> kHashBits); }
};
static_assert(format::kNumDataTypes <= 16, "CollSig keeps api_datatype in 4 bits");

// Signatures by position k = op index - the comm's history_first; a
// position with none is not held.
class CollHistory {
 public:
  // Takes the signatures by position (entries not held are holes) and keeps
  // them in the smaller of the two forms.
  void Assign(const std::vector<CollSig>& by_position);
  void clear();

  // Positions covered: the last held one + 1 (0 when empty).
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  // The signature at position k (not held outside the history or in a hole).
  CollSig operator[](size_t k) const;
  // Lowest and highest held position; size() when none.
  size_t FirstHeld() const;
  size_t LastHeld() const;
  // Calls fn(size_t k, CollSig) for every held position, ascending.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    if (!runs_.empty()) {
      for (const Run& r : runs_) {
        for (uint32_t i = 0; i < r.length; ++i) {
          fn(size_t{r.offset} + i, CollSig{r.sig, r.seq_lo + i});
        }
      }
      return;
    }
    for (size_t k = 0; k < flat_.size(); ++k) {
      if (flat_[k].held()) fn(k, flat_[k]);
    }
  }
  // Bytes held (for tests and the memory figures).
  size_t bytes() const {
    return runs_.capacity() * sizeof(Run) + flat_.capacity() * sizeof(CollSig);
  }

 private:
  struct Run {
    uint32_t offset = 0;
    uint32_t length = 0;
    uint32_t sig = 0;
    uint32_t seq_lo = 0;  // of the op at `offset`
  };
  size_t size_ = 0;
  std::vector<Run> runs_;      // ascending offset, not overlapping; or
  std::vector<CollSig> flat_;  // by position
};

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_COLL_HISTORY_H_

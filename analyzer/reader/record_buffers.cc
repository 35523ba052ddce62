#include "analyzer/reader/record_buffers.h"

#include <utility>

namespace flightrec {
namespace {

struct Spares {
  std::vector<std::vector<OpRecord>> vectors;
  size_t bytes = 0;
};

Spares& ThreadSpares() {
  thread_local Spares spares;
  return spares;
}

size_t BytesOf(const std::vector<OpRecord>& v) { return v.capacity() * sizeof(OpRecord); }

}  // namespace

std::vector<OpRecord> TakeRecordBuffer(size_t n) {
  Spares& s = ThreadSpares();
  size_t best = s.vectors.size();
  for (size_t i = 0; i < s.vectors.size(); ++i) {
    const size_t cap = s.vectors[i].capacity();
    // More than twice the need would hold memory the file never uses.
    if (cap < n || cap / 2 > n) continue;
    if (best == s.vectors.size() || cap < s.vectors[best].capacity()) best = i;
  }
  std::vector<OpRecord> v;
  if (best != s.vectors.size()) {
    v = std::move(s.vectors[best]);
    s.vectors[best] = std::move(s.vectors.back());
    s.vectors.pop_back();
    s.bytes -= BytesOf(v);
  } else {
    v.reserve(n);
  }
  return v;
}

void RecycleRecordBuffer(std::vector<OpRecord>&& v) {
  Spares& s = ThreadSpares();
  std::vector<OpRecord> mine = std::move(v);
  const size_t bytes = BytesOf(mine);
  if (bytes == 0 || s.vectors.size() >= kMaxSpares || s.bytes + bytes > kMaxSpareBytes) return;
  mine.clear();
  s.bytes += bytes;
  s.vectors.push_back(std::move(mine));
}

void ReleaseRecordBuffers() {
  Spares& s = ThreadSpares();
  s.vectors.clear();
  s.vectors.shrink_to_fit();
  s.bytes = 0;
}

}  // namespace flightrec

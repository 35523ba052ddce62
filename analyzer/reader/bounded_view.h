// BoundedView: the one way the reader touches bytes that came from a file.
//
// Every byte of a ring file or dump is untrusted (docs/design/reader.md,
// Perfetto's IsCorrupt discipline): a count, an offset or a length read from
// the file is copied into a local, checked, and only then used. This type
// makes the check impossible to forget: it has no operator[] and no way to
// get a pointer past its end. Each accessor either succeeds completely or
// fails without touching memory outside [data, data + size).
//
// Offsets and lengths are uint64_t (the width they have on disk), and every
// range check is written so that offset + len cannot overflow.
#ifndef FLIGHTREC_ANALYZER_READER_BOUNDED_VIEW_H_
#define FLIGHTREC_ANALYZER_READER_BOUNDED_VIEW_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <string>
#include <type_traits>

namespace flightrec {

struct BoundedView {
  const uint8_t* data = nullptr;
  size_t size = 0;

  // True when [offset, offset + len) lies inside the view. Overflow-safe:
  // never computes offset + len.
  bool Contains(uint64_t offset, uint64_t len) const {
    return offset <= size && len <= size - offset;
  }

  // Copies sizeof(T) bytes at `offset` into *out (memcpy: no alignment or
  // aliasing assumptions about the file). Returns false, leaving *out
  // untouched, when the bytes are not all inside the view.
  template <typename T>
  bool Read(uint64_t offset, T* out) const {
    static_assert(std::is_trivially_copyable<T>::value, "Read copies bytes");
    if (!Contains(offset, sizeof(T))) return false;
    memcpy(out, data + offset, sizeof(T));
    return true;
  }

  // The sub-range [offset, offset + len) as its own view. Returns false and
  // leaves *out untouched when it does not fit.
  bool Sub(uint64_t offset, uint64_t len, BoundedView* out) const {
    if (!Contains(offset, len)) return false;
    out->data = data + offset;
    out->size = static_cast<size_t>(len);
    return true;
  }

  // A printable copy of the NUL-terminated string at `offset`: stops at the
  // first NUL, at `max` bytes or at the end of the view, whichever comes
  // first; bytes outside printable ASCII become '?' so that a corrupt name
  // cannot inject terminal escapes or invalid UTF-8 into reports.
  std::string ReadString(uint64_t offset, size_t max) const {
    std::string out;
    if (offset >= size) return out;
    size_t avail = size - static_cast<size_t>(offset);
    size_t n = max < avail ? max : avail;
    const uint8_t* p = data + offset;
    for (size_t i = 0; i < n && p[i] != 0; ++i) {
      out.push_back(p[i] >= 0x20 && p[i] < 0x7f ? static_cast<char>(p[i]) : '?');
    }
    return out;
  }
};

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_BOUNDED_VIEW_H_

// A growable byte buffer that does not zero what it grows by.
//
// Internal to the reader. Each reader thread keeps one for a file's bytes
// and one for a dump's decompressed image and reuses them for every file
// it reads: std::vector<uint8_t>::resize would zero-fill every growth
// (touching, and so faulting in, pages that pread or zstd overwrite right
// away), and a fresh vector per file would pay that for every file. Bytes
// past what the caller wrote are indeterminate; readers only look at the
// prefix they filled.
#ifndef FLIGHTREC_ANALYZER_READER_BYTE_BUFFER_H_
#define FLIGHTREC_ANALYZER_READER_BYTE_BUFFER_H_

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <memory>

namespace flightrec {
namespace reader_internal {

class ByteBuffer {
 public:
  uint8_t* data() { return data_.get(); }
  size_t size() const { return size_; }

  // size() becomes n. The first min(n, size()) bytes are kept; any bytes
  // beyond are uninitialized. Storage only grows (by at least doubling, so
  // growing byte by byte stays linear) and is never given back.
  void Resize(size_t n) {
    if (n > capacity_) Grow(n);
    size_ = n;
  }

 private:
  void Grow(size_t n) {
    const size_t cap = n > capacity_ * 2 ? n : capacity_ * 2;
    std::unique_ptr<uint8_t[]> bigger(new uint8_t[cap]);  // default-initialized: no fill
    if (size_ > 0) memcpy(bigger.get(), data_.get(), size_);
    data_ = std::move(bigger);
    capacity_ = cap;
  }

  std::unique_ptr<uint8_t[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_BYTE_BUFFER_H_

// Relaxed atomic accessors for the plain fields of the shared-memory structs
// in record_format.h (which must stay plain, fixed-width types).
//
// Relaxed is enough wherever these are used: each field is either a counter
// whose exact interleaving does not matter, or is published by a separate
// release store (a commit word or a region state) whose acquire load the
// reader performs first. Non-relaxed operations are written out at their call
// sites with the operation they pair with.
#ifndef FLIGHTREC_RECORDER_ATOMICS_H_
#define FLIGHTREC_RECORDER_ATOMICS_H_

#include <stddef.h>
#include <stdint.h>

namespace flightrec {
namespace rec {

template <typename T>
inline T LoadRelaxed(const T* p) {
  return __atomic_load_n(p, __ATOMIC_RELAXED);
}

template <typename T>
inline void StoreRelaxed(T* p, T v) {
  __atomic_store_n(p, v, __ATOMIC_RELAXED);
}

template <typename T>
inline T AddRelaxed(T* p, T v) {
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

// Copies a C string into a fixed field one relaxed byte at a time, always
// NUL-terminating and zero-filling the rest (readers in other threads may
// look at the field at any time).
inline void CopyNameRelaxed(char* dst, size_t dst_len, const char* src) {
  size_t i = 0;
  if (src != nullptr) {
    for (; i + 1 < dst_len && src[i] != '\0'; ++i) StoreRelaxed(&dst[i], src[i]);
  }
  for (; i < dst_len; ++i) StoreRelaxed(&dst[i], '\0');
}

// Reads a fixed name field written by CopyNameRelaxed into `out`.
inline void ReadNameRelaxed(const char* src, size_t src_len, char* out, size_t out_len) {
  size_t i = 0;
  for (; i + 1 < out_len && i < src_len; ++i) {
    char c = LoadRelaxed(&src[i]);
    if (c == '\0') break;
    out[i] = c;
  }
  if (out_len > 0) out[i] = '\0';
}

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_ATOMICS_H_

// Decompression of a dump's zstd frame into an image, with hard caps.
//
// Internal to the reader. A dump is one zstd frame; its declared content size
// (when present) is untrusted, so it only ever lowers the output cap and the
// output buffer grows geometrically as bytes actually arrive: a 20-byte frame
// that claims 16 GiB costs nothing. Once the first bytes of the image are out,
// its magic and file_size are checked so that a bomb of zeros (no declared
// size) stops after a few hundred KiB instead of at the global limit.
#ifndef FLIGHTREC_ANALYZER_READER_ZSTD_IMAGE_H_
#define FLIGHTREC_ANALYZER_READER_ZSTD_IMAGE_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/byte_buffer.h"

namespace flightrec {
namespace reader_internal {

// True when the view starts with the zstd frame magic.
bool IsZstdFrame(BoundedView bytes);

// Decompresses the frame at the start of `frame` into the first *image_size
// bytes of *buffer (at most `max_size` bytes). The buffer only ever grows and
// is never shrunk, so a caller that reuses it across files (one per reader
// thread) pays no allocation, page fault or zero fill after the first file.
// On failure returns false with *error set (no file name prefix). Non-fatal
// oddities (trailing bytes) are appended to *warnings.
bool DecompressImage(BoundedView frame, uint64_t max_size, ByteBuffer* buffer, size_t* image_size,
                     std::string* error, std::vector<std::string>* warnings);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_ZSTD_IMAGE_H_

#include "analyzer/reader/zstd_image.h"

#include <zstd.h>

#include <algorithm>
#include <memory>

#include "flightrec/record_format.h"

namespace flightrec {
namespace reader_internal {
namespace {

constexpr size_t kInitialOutput = 1u << 20;
// Images up to this size (a default ring is 8 MiB) get their declared size
// at once; larger claims grow geometrically from kInitialOutput.
constexpr uint64_t kDeclaredAtOnce = uint64_t{64} << 20;
// ZSTD_FRAMEHEADERSIZE_MAX: a frame shorter than this may just be cut short.
constexpr size_t kMaxFrameHeader = 18;
// Magic (8 bytes) and file_size (at offset 56) are enough to stop a bomb.
constexpr uint64_t kEarlyCheckBytes = offsetof(format::FileHeader, file_size) + 8;

struct DCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One context per reader thread: creating one costs ~100 KiB of zeroed
// tables, per file at 16k files.
ZSTD_DCtx* ThreadContext() {
  thread_local std::unique_ptr<ZSTD_DCtx, DCtxDeleter> dctx(ZSTD_createDCtx());
  if (dctx) ZSTD_DCtx_reset(dctx.get(), ZSTD_reset_session_only);
  return dctx.get();
}

// After the first bytes are out: a non-image stops now, and an image can
// never be longer than its own file_size.
bool EarlyImageCheck(BoundedView head, uint64_t* cap, std::string* error) {
  uint64_t magic = 0;
  uint64_t file_size = 0;
  head.Read(0, &magic);
  head.Read(offsetof(format::FileHeader, file_size), &file_size);
  if (magic != format::Magic()) {
    *error = "zstd content is not a flightrec image (bad magic)";
    return false;
  }
  if (file_size < *cap) *cap = file_size;
  return true;
}

}  // namespace

bool IsZstdFrame(BoundedView bytes) {
  uint32_t magic = 0;
  return bytes.Read(0, &magic) && magic == format::kZstdFrameMagic;
}

bool DecompressImage(BoundedView frame, uint64_t max_size, ByteBuffer* buffer, size_t* image_size,
                     std::string* error, std::vector<std::string>* warnings) {
  *image_size = 0;
  unsigned long long declared = ZSTD_getFrameContentSize(frame.data, frame.size);
  if (declared == ZSTD_CONTENTSIZE_ERROR && frame.size >= kMaxFrameHeader) {
    *error = "invalid zstd frame header";
    return false;
  }
  bool has_declared = declared != ZSTD_CONTENTSIZE_ERROR && declared != ZSTD_CONTENTSIZE_UNKNOWN;
  if (has_declared && declared > max_size) {
    *error = "zstd frame declares " + std::to_string(declared) + " bytes, more than the limit of " +
             std::to_string(max_size);
    return false;
  }
  uint64_t cap = has_declared ? declared : max_size;
  ZSTD_DCtx* dctx = ThreadContext();
  if (dctx == nullptr) {
    *error = "out of memory creating a zstd context";
    return false;
  }
  ZSTD_inBuffer in{frame.data, frame.size, 0};
  ByteBuffer& out = *buffer;
  size_t filled = 0;
  bool checked = false;
  for (;;) {
    if (filled == out.size()) {
      // Grows only as bytes actually arrive, one byte past the cap so that
      // "too long" is observed, not assumed. A declared size up to
      // kDeclaredAtOnce is taken at its word: the buffer is not zero-filled
      // (byte_buffer.h), so a lie costs address space, not memory, and a
      // true one decompresses in one pass with no regrowth and no copy.
      uint64_t want = std::max<uint64_t>(kInitialOutput, uint64_t{filled} * 2);
      if (has_declared && declared <= kDeclaredAtOnce) want = std::max<uint64_t>(want, cap + 1);
      out.Resize(static_cast<size_t>(std::min<uint64_t>(want, cap + 1)));
    }
    // Never offer more than cap + 1 bytes of a larger reused buffer.
    const size_t room = static_cast<size_t>(std::min<uint64_t>(out.size(), cap + 1)) - filled;
    ZSTD_outBuffer ob{out.data() + filled, room, 0};
    size_t ret = ZSTD_decompressStream(dctx, &ob, &in);
    if (ZSTD_isError(ret)) {
      *error = std::string("zstd: ") + ZSTD_getErrorName(ret);
      return false;
    }
    filled += ob.pos;
    if (!checked && filled >= kEarlyCheckBytes) {
      if (!EarlyImageCheck(BoundedView{out.data(), filled}, &cap, error)) return false;
      checked = true;
    }
    if (filled > cap) {
      *error = "zstd content is larger than " + std::to_string(cap) +
               " bytes (the limit or the image's file_size)";
      return false;
    }
    if (ret == 0) break;  // frame complete
    if (in.pos == in.size && ob.pos < ob.size) {
      *error = "zstd frame truncated after " + std::to_string(frame.size) + " bytes";
      return false;
    }
  }
  if (has_declared && filled != declared) {
    *error = "zstd frame declared " + std::to_string(declared) + " bytes but held " +
             std::to_string(filled);
    return false;
  }
  if (in.pos < in.size) {
    warnings->push_back(std::to_string(in.size - in.pos) + " bytes after the zstd frame ignored");
  }
  *image_size = filled;
  return true;
}

}  // namespace reader_internal
}  // namespace flightrec

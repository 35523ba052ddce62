#include "analyzer/reader/init_file.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/file_read.h"
#include "analyzer/reader/image_header.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace {

constexpr size_t kChunk = 1 << 16;

// Reads up to `size` bytes at `offset`, retrying EINTR; returns the count.
size_t ReadAt(int fd, uint8_t* dst, size_t size, uint64_t offset) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = pread(fd, dst + done, size - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

bool Zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (p[i] != 0) return false;
  }
  return true;
}

void ParseIdentity(const uint8_t* bytes, size_t n, InitFile* out) {
  const BoundedView v{bytes, n};
  if (n < format::kHeaderSize) return;
  uint64_t magic = 0;
  uint32_t endian = 0;
  uint16_t major = 0;
  if (!v.Read(offsetof(format::FileHeader, magic), &magic) || magic != format::Magic()) return;
  if (!v.Read(offsetof(format::FileHeader, endian_marker), &endian) ||
      endian != format::kEndianMarker) {
    return;
  }
  if (!v.Read(offsetof(format::FileHeader, version_major), &major) ||
      major != format::kFormatMajor) {
    return;
  }
  out->header = v.Read(offsetof(format::FileHeader, pid), &out->pid) &&
                v.Read(offsetof(format::FileHeader, created_wall_ns), &out->created_wall_ns) &&
                v.Read(offsetof(format::FileHeader, process_state), &out->process_state);
  out->host = v.ReadString(offsetof(format::FileHeader, host), sizeof(format::FileHeader::host));
  out->job_id =
      v.ReadString(offsetof(format::FileHeader, job_id), sizeof(format::FileHeader::job_id));
}

}  // namespace

bool HasSuffix(const std::string& path, const char* suffix) {
  const size_t n = std::strlen(suffix);
  return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
}

InitFile ReadInitFile(const std::string& path) {
  InitFile out;
  struct stat st;
  const int fd = reader_internal::OpenTrusted(path, &st, &out.error);
  if (fd < 0) return out;
  out.readable = true;
  out.size = static_cast<uint64_t>(st.st_size);
  out.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                 static_cast<uint64_t>(st.st_mtim.tv_nsec);
  static thread_local uint8_t buf[kChunk];
  const size_t head = ReadAt(fd, buf, format::kHeaderSize, 0);
  ParseIdentity(buf, head, &out);
  if (out.header && !reader_internal::CheckWrittenNames(out.host, out.job_id, &out.error)) {
    // Not a header flightrec wrote: nothing in it is an identity.
    out.readable = false;
    out.header = false;
    close(fd);
    return out;
  }
  out.all_zero = Zero(buf, head);
  for (uint64_t off = head; out.all_zero && off < out.size;) {
    const size_t n = ReadAt(fd, buf, kChunk, off);
    if (n == 0) break;
    out.all_zero = Zero(buf, n);
    off += n;
  }
  close(fd);
  return out;
}

bool ParseRingName(const std::string& path, const std::string& job_id, std::string* host,
                   int64_t* pid) {
  std::string name =
      path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  for (const char* suffix : {kInitSuffix, kRingSuffix}) {
    if (HasSuffix(name, suffix)) {
      name.resize(name.size() - std::strlen(suffix));
      break;
    }
  }
  const std::string prefix = "flightrec-" + job_id + "-";
  if (job_id.empty() || name.compare(0, prefix.size(), prefix) != 0) return false;
  const size_t dash = name.find_last_of('-');
  if (dash == std::string::npos || dash < prefix.size() + 1 || dash + 1 >= name.size()) {
    return false;
  }
  int64_t value = 0;
  for (size_t i = dash + 1; i < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || value > (INT64_MAX - 9) / 10) return false;
    value = value * 10 + (name[i] - '0');
  }
  *host = name.substr(prefix.size(), dash - prefix.size());
  *pid = value;
  return true;
}

}  // namespace flightrec

#include "analyzer/reader/file_read.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

namespace flightrec {
namespace reader_internal {

bool PreadFully(int fd, uint64_t offset, uint8_t* dst, uint64_t size, uint64_t* done,
                std::string* error) {
  *done = 0;
  while (*done < size) {
    ssize_t n = pread(fd, dst + *done, static_cast<size_t>(size - *done),
                      static_cast<off_t>(offset + *done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      *error = std::string("read failed: ") + std::strerror(errno);
      return false;
    }
    if (n == 0) break;
    *done += static_cast<uint64_t>(n);
  }
  return true;
}

}  // namespace reader_internal
}  // namespace flightrec

#include "analyzer/reader/file_read.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <mutex>

#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {
namespace {

std::mutex g_trust_mu;
bool g_trust_set = false;
fileio::Trust g_trust;

}  // namespace

void SetReadTrust(const fileio::Trust& trust) {
  std::lock_guard<std::mutex> lock(g_trust_mu);
  g_trust = trust;
  g_trust_set = true;
}

fileio::Trust ReadTrust() {
  {
    std::lock_guard<std::mutex> lock(g_trust_mu);
    if (g_trust_set) return g_trust;
  }
  return fileio::TrustSelf();  // computed each time: a forked child may run as another user
}

namespace reader_internal {

int OpenTrusted(const std::string& path, struct stat* st, std::string* error,
                fileio::OpenStatus* status) {
  fileio::OpenStatus local = fileio::OpenStatus::kOk;
  if (status == nullptr) status = &local;
  char why[fileio::kWhyMax] = {};
  const int fd =
      fileio::OpenForRead(AT_FDCWD, path.c_str(), ReadTrust(), st, status, why, sizeof(why));
  if (fd >= 0) return fd;
  *error = *status == fileio::OpenStatus::kMissing
               ? std::string("cannot open: ") + std::strerror(ENOENT)
               : std::string(why);
  return -1;
}

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

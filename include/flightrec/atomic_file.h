// Crash-safe file publication, shared by the recorder (dumps, the trigger)
// and the CLI (`flightrec trigger`): a file either appears complete or not
// at all. Header-only, libc only.
#ifndef FLIGHTREC_ATOMIC_FILE_H_
#define FLIGHTREC_ATOMIC_FILE_H_

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "flightrec/job_dir.h"

namespace flightrec {
namespace format {

namespace detail {

inline bool WriteAll(int fd, const unsigned char* p, size_t len) {
  while (len > 0) {
    ssize_t n = write(fd, p, len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

inline void SyncParentDir(const char* path) {
  char dir[kPathMax];
  snprintf(dir, sizeof(dir), "%s", path);
  char* slash = strrchr(dir, '/');
  if (slash == nullptr) {
    snprintf(dir, sizeof(dir), ".");
  } else if (slash == dir) {
    slash[1] = '\0';
  } else {
    *slash = '\0';
  }
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // the rename is done; durability is best effort
  fsync(fd);
  close(fd);
}

}  // namespace detail

// Writes `data` to `<path>.<pid>.tmp` (O_CREAT|O_EXCL|O_CLOEXEC), fsyncs it,
// renames it to `path` and fsyncs the directory. On failure the tmp file is
// removed and `err` names the file and the reason.
inline bool WriteFileAtomically(const char* path, const void* data, size_t len, char* err,
                                size_t err_len) {
  char tmp[kPathMax + 32];
  int n = snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, static_cast<int>(getpid()));
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(tmp)) {
    snprintf(err, err_len, "path too long: %s", path);
    return false;
  }
  unlink(tmp);  // left over by a process that died with our pid
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    snprintf(err, err_len, "cannot create %s: %s", tmp, strerror(errno));
    return false;
  }
  const char* what = nullptr;
  if (!detail::WriteAll(fd, static_cast<const unsigned char*>(data), len)) {
    what = "cannot write";
  } else if (fsync(fd) != 0) {
    what = "cannot fsync";
  }
  int saved = errno;
  close(fd);
  if (what == nullptr && rename(tmp, path) != 0) {
    what = "cannot rename to final name";
    saved = errno;
  }
  if (what != nullptr) {
    unlink(tmp);
    snprintf(err, err_len, "%s %s: %s", what, tmp, strerror(saved));
    return false;
  }
  detail::SyncParentDir(path);
  return true;
}

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_ATOMIC_FILE_H_

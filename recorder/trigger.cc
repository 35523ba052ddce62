#include "recorder/trigger.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flightrec {
namespace rec {

void ReadTriggerLine(const char* path, char* out, size_t out_len) {
  if (out_len == 0) return;
  out[0] = '\0';
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return;
  ssize_t n = read(fd, out, out_len - 1);
  close(fd);
  if (n <= 0) n = 0;
  out[n] = '\0';
  for (ssize_t i = 0; i < n; ++i) {
    if (out[i] == '\n' || out[i] == '\0') {
      out[i] = '\0';
      break;
    }
    if (out[i] < ' ' || out[i] > '~') out[i] = '?';  // never echo control bytes
  }
}

TriggerIdentity ReadTriggerIdentity(const char* path) {
  TriggerIdentity id;
  struct stat st;
  if (stat(path, &st) != 0) return id;
  id.exists = true;
  id.dev = static_cast<uint64_t>(st.st_dev);
  id.inode = static_cast<uint64_t>(st.st_ino);
  id.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                static_cast<uint64_t>(st.st_mtim.tv_nsec);
  id.size = static_cast<uint64_t>(st.st_size);
  return id;
}

}  // namespace rec
}  // namespace flightrec

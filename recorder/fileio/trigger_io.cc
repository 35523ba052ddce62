#include "recorder/fileio/trigger_io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace flightrec {
namespace fileio {
namespace {

uint64_t MtimeNs(const struct stat& st) {
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
         static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

}  // namespace

__attribute__((noinline)) bool UserTriggerName(const char* job, uint32_t uid, char* out, size_t out_len) {
  const int n = snprintf(out, out_len, "flightrec-%s.u%u.trigger", job, uid);
  return n > 0 && static_cast<size_t>(n) < out_len;
}

bool WriteTrigger(const char* dir, const char* job, const char* host, int64_t pid,
                  const char* reason, const Trust& t, char* why, size_t why_len) {
  char text[format::kNameMax + 64];
  if (!format::FormatTrigger(host, pid, reason, text, sizeof(text))) {
    snprintf(why, why_len, "not a trigger flightrec writes: host '%s' pid %lld reason '%s'",
             host != nullptr ? host : "", static_cast<long long>(pid),
             reason != nullptr ? reason : "");
    return false;
  }
  char names[2][format::kFileNameMax];
  if (!format::TriggerName(job, names[0], sizeof(names[0])) ||
      !UserTriggerName(job, t.uid, names[1], sizeof(names[1]))) {
    snprintf(why, why_len, "trigger name too long for job %s", job);
    return false;
  }
  const int dirfd = OpenDir(dir, DirRole::kShared, t, false, why, why_len, nullptr, 0);
  if (dirfd < 0) return false;
  char first[kWhyMax] = {};
  bool ok = WriteFileAt(dirfd, names[0], text, strlen(text), t, true, first, sizeof(first));
  if (!ok) {
    char second[kWhyMax] = {};
    ok = WriteFileAt(dirfd, names[1], text, strlen(text), t, true, second, sizeof(second));
    if (!ok) snprintf(why, why_len, "%s in %s; %s", first, dir, second);
  }
  close(dirfd);
  return ok;
}

bool TriggerState::operator==(const TriggerState& o) const {
  for (int i = 0; i < 2; ++i) {
    if (ino[i] != o.ino[i] || dev[i] != o.dev[i] || mtime_ns[i] != o.mtime_ns[i] ||
        size[i] != o.size[i]) {
      return false;
    }
  }
  return true;
}

bool MakeTriggerPaths(const char* dir, const char* job, uint32_t uid, TriggerPaths* out) {
  char names[2][format::kFileNameMax];
  if (!format::TriggerName(job, names[0], sizeof(names[0])) ||
      !UserTriggerName(job, uid, names[1], sizeof(names[1]))) {
    return false;
  }
  for (int i = 0; i < 2; ++i) {
    const int n = snprintf(out->path[i], sizeof(out->path[i]), "%s/%s", dir, names[i]);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(out->path[i])) return false;
  }
  return true;
}

TriggerState ReadTriggerState(const TriggerPaths& p, const Trust& t) {
  TriggerState s;
  for (int i = 0; i < 2; ++i) {
    struct stat st;
    if (p.path[i][0] == '\0' || lstat(p.path[i], &st) != 0) continue;
    if (!S_ISREG(st.st_mode) || !Believed(st, t, nullptr, 0)) continue;  // never believed
    s.ino[i] = static_cast<uint64_t>(st.st_ino);
    s.dev[i] = static_cast<uint64_t>(st.st_dev);
    s.mtime_ns[i] = MtimeNs(st);
    s.size[i] = static_cast<uint64_t>(st.st_size);
  }
  return s;
}

bool ReadTrigger(const TriggerPaths& p, const Trust& t, format::TriggerLine* out) {
  bool found = false;
  uint64_t newest = 0;
  for (int i = 0; i < 2; ++i) {
    if (p.path[i][0] == '\0') continue;
    struct stat st;
    OpenStatus status;
    const int fd = OpenForRead(AT_FDCWD, p.path[i], t, &st, &status, nullptr, 0);
    if (fd < 0) continue;
    char text[128];
    const ssize_t n = ReadSmall(fd, text, sizeof(text));
    close(fd);
    format::TriggerLine line;
    if (n <= 0 || !format::ParseTrigger(text, &line)) continue;
    if (found && MtimeNs(st) < newest) continue;
    newest = MtimeNs(st);
    *out = line;
    found = true;
  }
  return found;
}

}  // namespace fileio
}  // namespace flightrec

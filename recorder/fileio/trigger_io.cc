#include "recorder/fileio/trigger_io.h"

#include <dirent.h>
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

// Whether an entry exists at `path` that we do not believe (a stranger's
// file, a symlink, a FIFO): then the fixed names may be taken.
bool HeldByStranger(const char* path, const Trust& t) {
  struct stat st;
  if (lstat(path, &st) != 0) return false;
  return !S_ISREG(st.st_mode) || !Believed(st, t, nullptr, 0);
}

// The newest believed `<prefix><token>.trigger` in `dir`; false when none.
bool NewestRandom(const TriggerPaths& p, const Trust& t, char* path, size_t path_len,
                  struct stat* out) {
  DIR* d = opendir(p.dir);
  if (d == nullptr) return false;
  const size_t n = strlen(p.random_prefix);
  bool found = false;
  while (struct dirent* e = readdir(d)) {
    if (strncmp(e->d_name, p.random_prefix, n) != 0 || !format::EndsWith(e->d_name, ".trigger")) {
      continue;
    }
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        !Believed(st, t, nullptr, 0)) {
      continue;
    }
    if (found && MtimeNs(st) <= MtimeNs(*out)) continue;
    *out = st;
    snprintf(path, path_len, "%s/%s", p.dir, e->d_name);
    found = true;
  }
  closedir(d);
  return found;
}

}  // namespace

__attribute__((noinline)) bool UserTriggerName(const char* job, uint32_t uid, char* out,
                                               size_t out_len) {
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
  char second[kWhyMax] = {};
  if (!ok) ok = WriteFileAt(dirfd, names[1], text, strlen(text), t, true, second, sizeof(second));
  if (!ok) {
    // Both fixed names are held (a stranger in a sticky directory): a name
    // nobody could take in advance; watchers list the directory for it.
    char token[24], third[format::kFileNameMax];
    RandomToken(token, sizeof(token));
    const int n = snprintf(third, sizeof(third), "flightrec-%s.u%u.r%s.trigger", job, t.uid, token);
    char last[kWhyMax] = {};
    ok = n > 0 && static_cast<size_t>(n) < sizeof(third) &&
         WriteFileAt(dirfd, third, text, strlen(text), t, true, last, sizeof(last));
    if (!ok) snprintf(why, why_len, "%s in %s; %s; %s", first, dir, second, last);
  }
  close(dirfd);
  return ok;
}

bool TriggerState::operator==(const TriggerState& o) const {
  for (int i = 0; i < 3; ++i) {
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
  const int d = snprintf(out->dir, sizeof(out->dir), "%s", dir);
  const int r =
      snprintf(out->random_prefix, sizeof(out->random_prefix), "flightrec-%s.u%u.r", job, uid);
  return d > 0 && static_cast<size_t>(d) < sizeof(out->dir) && r > 0 &&
         static_cast<size_t>(r) < sizeof(out->random_prefix);
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
  if (HeldByStranger(p.path[0], t) && HeldByStranger(p.path[1], t)) {
    char path[format::kPathMax + format::kFileNameMax];
    struct stat st;
    if (NewestRandom(p, t, path, sizeof(path), &st)) {
      s.ino[2] = static_cast<uint64_t>(st.st_ino);
      s.dev[2] = static_cast<uint64_t>(st.st_dev);
      s.mtime_ns[2] = MtimeNs(st);
      s.size[2] = static_cast<uint64_t>(st.st_size);
    }
  }
  return s;
}

bool ReadTrigger(const TriggerPaths& p, const Trust& t, format::TriggerLine* out) {
  bool found = false;
  uint64_t newest = 0;
  char random_path[format::kPathMax + format::kFileNameMax] = {};
  struct stat random_st;
  if (HeldByStranger(p.path[0], t) && HeldByStranger(p.path[1], t)) {
    NewestRandom(p, t, random_path, sizeof(random_path), &random_st);
  }
  const char* paths[3] = {p.path[0], p.path[1], random_path};
  for (int i = 0; i < 3; ++i) {
    if (paths[i][0] == '\0') continue;
    struct stat st;
    OpenStatus status;
    const int fd = OpenForRead(AT_FDCWD, paths[i], t, &st, &status, nullptr, 0);
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

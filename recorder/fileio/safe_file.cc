#include "recorder/fileio/safe_file.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

namespace flightrec {
namespace fileio {
namespace {

void Say(char* why, size_t why_len, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
void Say(char* why, size_t why_len, const char* fmt, ...) {
  if (why == nullptr || why_len == 0) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, why_len, fmt, ap);
  va_end(ap);
}

// Whether `uid` is a member of group `gid` (its primary group or a listed
// member). Looked up through NSS with stack buffers; an entry too large
// for them counts as not a member.
bool UidInGroup(uint32_t uid, uint32_t gid) {
  char buf[16384];
  struct passwd pw;
  struct passwd* pwp = nullptr;
  const char* user = nullptr;
  if (getpwuid_r(static_cast<uid_t>(uid), &pw, buf, sizeof(buf), &pwp) == 0 && pwp != nullptr) {
    if (pwp->pw_gid == static_cast<gid_t>(gid)) return true;
    user = pwp->pw_name;
  }
  if (user == nullptr) return false;
  char user_copy[256];
  snprintf(user_copy, sizeof(user_copy), "%s", user);
  char gbuf[65536];
  struct group gr;
  struct group* grp = nullptr;
  if (getgrgid_r(static_cast<gid_t>(gid), &gr, gbuf, sizeof(gbuf), &grp) != 0 || grp == nullptr) {
    return false;
  }
  for (char** m = grp->gr_mem; m != nullptr && *m != nullptr; ++m) {
    if (strcmp(*m, user_copy) == 0) return true;
  }
  return false;
}

// Whether the running process is in group `gid` (effective, or
// supplementary).
bool SelfInGroup(uint32_t gid) {
  if (getegid() == static_cast<gid_t>(gid)) return true;
  gid_t groups[256];
  const int n = getgroups(256, groups);
  for (int i = 0; i < n; ++i) {
    if (groups[i] == static_cast<gid_t>(gid)) return true;
  }
  return false;
}

uint64_t Random64() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != static_cast<ssize_t>(sizeof(r))) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    r = static_cast<uint64_t>(ts.tv_nsec) * 0x9E3779B97F4A7C15ULL ^
        static_cast<uint64_t>(getpid()) << 32 ^ static_cast<uint64_t>(ts.tv_sec);
  }
  return r;
}

void RandomSuffix(char* out, size_t out_len) {
  snprintf(out, out_len, "%d-%016llx", static_cast<int>(getpid()),
           static_cast<unsigned long long>(Random64()));
}

void SetGroup(int fd, const Trust& t) {
  if (!t.group_set) return;
  // Best effort: the directory's setgid bit or our group list may already
  // give the file this group; a failure leaves it ours, only less shared.
  if (fchown(fd, static_cast<uid_t>(-1), static_cast<gid_t>(t.gid)) != 0) return;
  fchmod(fd, FileMode(t));
}

const char* Who(const struct stat& st) {
  const bool g = (st.st_mode & S_IWGRP) != 0;
  const bool o = (st.st_mode & S_IWOTH) != 0;
  if (g && o) return "its group and every user";
  if (g) return "its group";
  if (o) return "every user";
  return "nobody else";
}

int OpenChecked(int dirfd, const char* name, int access, const Trust& t, struct stat* st,
                OpenStatus* status, char* why, size_t why_len) {
  OpenStatus dummy;
  if (status == nullptr) status = &dummy;
  struct stat local;
  if (st == nullptr) st = &local;
  const int fd = openat(dirfd, name, access | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) {
      *status = OpenStatus::kMissing;
      Say(why, why_len, "no such file");
    } else if (e == ELOOP || e == EMLINK) {
      *status = OpenStatus::kRefused;
      Say(why, why_len, "a symbolic link: never followed");
    } else if (e == ENXIO) {
      *status = OpenStatus::kRefused;  // a FIFO without a writer, a socket
      Say(why, why_len, "not a regular file");
    } else {
      *status = OpenStatus::kError;
      Say(why, why_len, "cannot open: %s", strerror(e));
    }
    return -1;
  }
  if (fstat(fd, st) != 0) {
    const int e = errno;
    close(fd);
    *status = OpenStatus::kError;
    Say(why, why_len, "cannot stat: %s", strerror(e));
    return -1;
  }
  if (!S_ISREG(st->st_mode)) {
    close(fd);
    *status = OpenStatus::kRefused;
    Say(why, why_len, "not a regular file");
    return -1;
  }
  if (!Believed(*st, t, why, why_len)) {
    close(fd);
    *status = OpenStatus::kRefused;
    return -1;
  }
  const int fl = fcntl(fd, F_GETFL);
  if (fl >= 0) fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
  *status = OpenStatus::kOk;
  return fd;
}

// mkdir -p of every missing component of `path`, each DirMode(t) and, with
// a trusted group, that group.
bool MakeParents(const char* path, const Trust& t, char* why, size_t why_len) {
  const mode_t mode = DirMode(t);
  char p[1024];
  const int n = snprintf(p, sizeof(p), "%s", path);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(p)) {
    Say(why, why_len, "path too long: %s", path);
    return false;
  }
  for (int i = 1; i <= n; ++i) {
    if (p[i] != '/' && p[i] != '\0') continue;
    const char saved = p[i];
    p[i] = '\0';
    if (mkdir(p, mode) == 0) {
      if (t.group_set && chown(p, static_cast<uid_t>(-1), static_cast<gid_t>(t.gid)) == 0) {
        chmod(p, mode);  // chown may clear bits; the umask may have taken some
      }
    } else if (errno != EEXIST) {
      Say(why, why_len, "cannot create directory %s: %s", p, strerror(errno));
      return false;
    }
    p[i] = saved;
  }
  return true;
}

}  // namespace

Trust TrustSelf() {
  Trust t;
  t.uid = static_cast<uint32_t>(geteuid());
  return t;
}

bool TrustGroup(const char* group, Trust* out, char* why, size_t why_len) {
  *out = TrustSelf();
  if (group == nullptr || group[0] == '\0') {
    Say(why, why_len, "empty group name");
    return false;
  }
  uint32_t gid = 0;
  bool numeric = true;
  for (const char* c = group; *c != '\0'; ++c) {
    if (*c < '0' || *c > '9') numeric = false;
  }
  if (numeric && strlen(group) < 10) {
    gid = static_cast<uint32_t>(strtoul(group, nullptr, 10));
  } else {
    char buf[65536];
    struct group gr;
    struct group* grp = nullptr;
    if (getgrnam_r(group, &gr, buf, sizeof(buf), &grp) != 0 || grp == nullptr) {
      Say(why, why_len, "no such group: %s", group);
      return false;
    }
    gid = static_cast<uint32_t>(grp->gr_gid);
  }
  if (!SelfInGroup(gid)) {
    Say(why, why_len, "you are not a member of group %s (gid %u)", group, gid);
    return false;
  }
  out->gid = gid;
  out->group_set = true;
  return true;
}

bool TrustFromEnv(Trust* out, char* why, size_t why_len) {
  const char* g = getenv("NCCL_FLIGHTREC_GROUP");
  if (g == nullptr || g[0] == '\0') {
    *out = TrustSelf();
    return true;
  }
  if (TrustGroup(g, out, why, why_len)) return true;
  *out = TrustSelf();
  return false;
}

bool Believed(const struct stat& st, const Trust& t, char* why, size_t why_len) {
  if (static_cast<uint32_t>(st.st_uid) == t.uid) return true;
  if (t.group_set && static_cast<uint32_t>(st.st_gid) == t.gid &&
      UidInGroup(static_cast<uint32_t>(st.st_uid), t.gid)) {
    return true;
  }
  if (t.group_set) {
    Say(why, why_len, "not owned by you or a member of group %u: uid %u", t.gid,
        static_cast<unsigned>(st.st_uid));
  } else {
    Say(why, why_len, "not owned by you: uid %u", static_cast<unsigned>(st.st_uid));
  }
  return false;
}

mode_t FileMode(const Trust& t) { return t.group_set ? 0640 : 0600; }
mode_t DirMode(const Trust& t) { return t.group_set ? 0750 : 0700; }

int OpenDir(const char* path, DirRole role, const Trust& t, bool create, char* why, size_t why_len,
            char* note, size_t note_len) {
  if (note != nullptr && note_len > 0) note[0] = '\0';
  if (path == nullptr || path[0] == '\0') {
    Say(why, why_len, "empty directory name");
    return -1;
  }
  if (create && !MakeParents(path, t, why, why_len)) return -1;
  const int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    Say(why, why_len, "cannot open directory %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    Say(why, why_len, "cannot stat directory %s: %s", path, strerror(errno));
    close(fd);
    return -1;
  }
  const bool sticky = (st.st_mode & S_ISVTX) != 0;
  const bool other_w = (st.st_mode & S_IWOTH) != 0;
  const bool group_w = (st.st_mode & S_IWGRP) != 0;
  if (other_w && !sticky) {
    Say(why, why_len,
        "directory %s is writable by every user and not sticky (mode %04o): anyone could "
        "replace flightrec's files there",
        path, static_cast<unsigned>(st.st_mode & 07777));
    close(fd);
    return -1;
  }
  if (role == DirRole::kPrivate) {
    if (static_cast<uint32_t>(st.st_uid) != t.uid) {
      Say(why, why_len, "ring directory %s is not yours (uid %u, mode %04o)", path,
          static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_mode & 07777));
      close(fd);
      return -1;
    }
    const bool trusted_group_w =
        group_w && t.group_set && static_cast<uint32_t>(st.st_gid) == t.gid;
    if (other_w || (group_w && !trusted_group_w)) {
      Say(why, why_len,
          "ring directory %s can be written by %s (mode %04o); it must be yours alone", path,
          Who(st), static_cast<unsigned>(st.st_mode & 07777));
      close(fd);
      return -1;
    }
    return fd;
  }
  if (note != nullptr && (group_w || other_w || static_cast<uint32_t>(st.st_uid) != t.uid)) {
    Say(note, note_len,
        "dump directory %s (owner uid %u, group %u, mode %04o) can be written by %s%s; files "
        "there are believed only when owned by you%s",
        path, static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_gid),
        static_cast<unsigned>(st.st_mode & 07777),
        static_cast<uint32_t>(st.st_uid) != t.uid ? "its owner and " : "", Who(st),
        t.group_set ? " or your trusted group" : "");
  }
  return fd;
}

bool CreateTemp(int dirfd, const char* final_name, const Trust& t, TempFile* out, char* why,
                size_t why_len) {
  out->fd = -1;
  for (int attempt = 0; attempt < 8; ++attempt) {
    char suffix[40];
    RandomSuffix(suffix, sizeof(suffix));
    const int n = snprintf(out->name, sizeof(out->name), ".%s.%s.tmp", final_name, suffix);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof(out->name)) {
      Say(why, why_len, "file name too long: %s", final_name);
      return false;
    }
    const int fd =
        openat(dirfd, out->name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileMode(t));
    if (fd >= 0) {
      SetGroup(fd, t);
      out->fd = fd;
      return true;
    }
    if (errno != EEXIST) {
      Say(why, why_len, "cannot create %s: %s", out->name, strerror(errno));
      return false;
    }
  }
  Say(why, why_len, "cannot create a unique temporary for %s", final_name);
  return false;
}

bool WriteAll(int fd, const void* data, size_t len) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  while (len > 0) {
    const ssize_t n = write(fd, p, len);
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

bool Publish(int dirfd, TempFile* tmp, const char* final_name, bool sync, char* why,
             size_t why_len) {
  const char* what = nullptr;
  int saved = 0;
  if (sync && fsync(tmp->fd) != 0) {
    what = "cannot fsync";
    saved = errno;
  }
  if (close(tmp->fd) != 0 && what == nullptr && errno != EINTR) {
    what = "cannot close";
    saved = errno;
  }
  tmp->fd = -1;
  if (what == nullptr && renameat(dirfd, tmp->name, dirfd, final_name) != 0) {
    what = "cannot rename to its name";
    saved = errno;
  }
  if (what != nullptr) {
    unlinkat(dirfd, tmp->name, 0);
    Say(why, why_len, "%s %s: %s", what, tmp->name, strerror(saved));
    tmp->name[0] = '\0';
    return false;
  }
  tmp->name[0] = '\0';
  if (sync) fsync(dirfd);  // the rename is done; durability is best effort
  return true;
}

void Discard(int dirfd, TempFile* tmp) {
  if (tmp->fd >= 0) close(tmp->fd);
  tmp->fd = -1;
  if (tmp->name[0] != '\0') unlinkat(dirfd, tmp->name, 0);
  tmp->name[0] = '\0';
}

bool WriteFileAt(int dirfd, const char* final_name, const void* data, size_t len, const Trust& t,
                 bool sync, char* why, size_t why_len) {
  TempFile tmp;
  if (!CreateTemp(dirfd, final_name, t, &tmp, why, why_len)) return false;
  if (!WriteAll(tmp.fd, data, len)) {
    Say(why, why_len, "cannot write %s: %s", tmp.name, strerror(errno));
    Discard(dirfd, &tmp);
    return false;
  }
  return Publish(dirfd, &tmp, final_name, sync, why, why_len);
}

int OpenForRead(int dirfd, const char* name, const Trust& t, struct stat* st, OpenStatus* status,
                char* why, size_t why_len) {
  return OpenChecked(dirfd, name, O_RDONLY, t, st, status, why, why_len);
}

int OpenForUpdate(int dirfd, const char* name, const Trust& t, struct stat* st, OpenStatus* status,
                  char* why, size_t why_len) {
  return OpenChecked(dirfd, name, O_RDWR, t, st, status, why, why_len);
}

int CreateExclusive(int dirfd, const char* name, const Trust& t, char* why, size_t why_len) {
  const int fd =
      openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, FileMode(t));
  if (fd < 0) {
    const int e = errno;
    Say(why, why_len, "cannot create %s: %s", name, strerror(e));
    errno = e;
    return -1;
  }
  SetGroup(fd, t);
  return fd;
}

bool RemoveOurs(int dirfd, const char* name, const Trust& t) {
  struct stat st;
  if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return errno == ENOENT;
  if (!S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) return false;
  if (!Believed(st, t, nullptr, 0)) return false;
  return unlinkat(dirfd, name, 0) == 0 || errno == ENOENT;
}

void RandomToken(char* out, size_t out_len) {
  snprintf(out, out_len, "%016llx", static_cast<unsigned long long>(Random64()));
}

ssize_t ReadSmall(int fd, char* out, size_t len) {
  if (len == 0) return -1;
  size_t got = 0;
  while (got + 1 < len) {
    const ssize_t n = read(fd, out + got, len - 1 - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out[got] = '\0';
      return got > 0 ? static_cast<ssize_t>(got) : -1;
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  out[got] = '\0';
  return static_cast<ssize_t>(got);
}

}  // namespace fileio
}  // namespace flightrec

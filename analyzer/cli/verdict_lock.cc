#include "analyzer/cli/verdict_lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "flightrec/job_dir.h"

namespace flightrec {
namespace cli {
namespace {

uint64_t MtimeNs(const struct stat& st) {
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

// The first line of a believed small file of `dirfd`, or "" (missing,
// refused: then *why says why, unreadable).
std::string ReadBelieved(int dirfd, const std::string& name, const fileio::Trust& trust,
                         struct stat* st, fileio::OpenStatus* status, char* why, size_t why_len) {
  const int fd = fileio::OpenForRead(dirfd, name.c_str(), trust, st, status, why, why_len);
  if (fd < 0) return "";
  char text[256];
  const ssize_t n = fileio::ReadSmall(fd, text, sizeof(text));
  close(fd);
  if (n <= 0) return "";
  return std::string(text, static_cast<size_t>(n));
}

}  // namespace

std::string LocalHostName() {
  char raw[256] = {};
  if (gethostname(raw, sizeof(raw) - 1) != 0) raw[0] = '\0';
  char host[format::kNameMax];
  format::SanitizeName(raw, "unknown-host", host, sizeof(host));
  return host;
}

VerdictLock::VerdictLock(int dirfd, std::string dir, std::string job, const fileio::Trust& trust,
                         std::chrono::milliseconds stale_after)
    : dirfd_(dirfd),
      dir_(std::move(dir)),
      job_(std::move(job)),
      trust_(trust),
      stale_after_(stale_after) {}

VerdictLock::~VerdictLock() {
  if (fd_ >= 0) close(fd_);
}

std::string VerdictLock::LockName(uint64_t generation) const {
  char name[format::kFileNameMax];
  if (!format::LockName(job_.c_str(), generation, name, sizeof(name))) return "";
  return name;
}

bool VerdictLock::Believed(const struct stat& st) const {
  return S_ISREG(st.st_mode) && fileio::Believed(st, trust_, nullptr, 0);
}

void VerdictLock::Ignore(const std::string& name, const char* why) const {
  if (!ignored_.insert(name).second) return;
  std::fprintf(stderr, "flightrec watch: ignoring %s: %s\n", Path(name).c_str(), why);
}

VerdictLock::Generations VerdictLock::List() const {
  Generations out;
  // A descriptor of its own: readdir moves the offset it reads from.
  const int fd = openat(dirfd_, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR* d = fd < 0 ? nullptr : fdopendir(fd);
  if (d == nullptr) {
    if (fd >= 0) close(fd);
    return out;
  }
  while (const dirent* e = readdir(d)) {
    const uint64_t g = format::LockGeneration(e->d_name, job_.c_str());
    if (g == 0) continue;
    struct stat st;
    if (fstatat(dirfd_, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    char why[fileio::kWhyMax] = "not a regular file";
    if (S_ISREG(st.st_mode) && fileio::Believed(st, trust_, why, sizeof(why))) {
      out.ours.push_back(g);
    } else {
      out.foreign.insert(g);
      Ignore(e->d_name, why);
    }
  }
  closedir(d);
  std::sort(out.ours.begin(), out.ours.end());
  return out;
}

DoneMark VerdictLock::ReadDone() const {
  DoneMark mark;
  char names[2][format::kFileNameMax];
  if (!format::DoneName(job_.c_str(), names[0], sizeof(names[0])) ||
      !format::UserDoneName(job_.c_str(), trust_.uid, names[1], sizeof(names[1]))) {
    return mark;
  }
  for (const char* name : names) {
    struct stat st;
    fileio::OpenStatus status = fileio::OpenStatus::kOk;
    char why[fileio::kWhyMax] = {};
    const std::string text = ReadBelieved(dirfd_, name, trust_, &st, &status, why, sizeof(why));
    if (status == fileio::OpenStatus::kRefused) Ignore(name, why);
    format::DoneText done;
    if (text.empty() || !format::ParseDone(text.c_str(), &done)) continue;
    if (mark.valid &&
        (done.generation < mark.generation ||
         (done.generation == mark.generation && done.covered_until_ns <= mark.covered_until_ns))) {
      continue;
    }
    mark.valid = true;
    mark.generation = done.generation;
    mark.incident_start_ns = done.incident_start_ns;
    mark.covered_until_ns = done.covered_until_ns;
  }
  return mark;
}

VerdictLock::Attempt VerdictLock::TryAcquire(std::string* error) {
  Generations gens = List();
  const uint64_t highest = gens.highest();
  bool take = highest == 0 || ReadDone().generation == highest;
  if (!take) {
    const std::string name = LockName(highest);
    struct stat st;
    fileio::OpenStatus status = fileio::OpenStatus::kOk;
    char why[fileio::kWhyMax] = {};
    const std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
    const std::string content = ReadBelieved(dirfd_, name, trust_, &st, &status, why, sizeof(why));
    // Removed or replaced since the listing: look again at the next poll.
    if (status != fileio::OpenStatus::kOk) return Attempt::kBusy;
    format::LockText lock;
    const bool parsed = format::ParseLock(content.c_str(), &lock);
    holder_ = parsed ? std::string(lock.host) + " " + std::to_string(lock.pid) : "(unknown)";
    if (highest != watched_generation_ || MtimeNs(st) != watched_mtime_ns_) {
      watched_generation_ = highest;
      watched_mtime_ns_ = MtimeNs(st);
      watched_since_ = now;
    }
    const bool released = parsed && lock.released;
    const bool dead_here = parsed && LocalHostName() == lock.host &&
                           kill(static_cast<pid_t>(lock.pid), 0) != 0 && errno == ESRCH;
    take = released || now - watched_since_ >= stale_after_ || dead_here;
    if (take) {
      std::fprintf(stderr, "flightrec watch: taking over from %s verdict lock %s (holder %s)\n",
                   released ? "released" : "stale", Path(name).c_str(), holder_.c_str());
    }
  }
  if (!take) return Attempt::kBusy;
  // The next generation, past any name another user's file occupies (they
  // cannot be removed, and must not block the verdict). A name taken
  // between the listing and the create by a believed file is a watcher that
  // won; by anything else, one more name to skip.
  uint64_t mine = highest + 1;
  for (int tries = 0; tries < 64; ++tries) {
    while (gens.foreign.count(mine) != 0) ++mine;
    const std::string name = LockName(mine);
    char why[fileio::kWhyMax] = {};
    const int fd = fileio::CreateExclusive(dirfd_, name.c_str(), trust_, why, sizeof(why));
    if (fd < 0) {
      if (errno != EEXIST) {
        *error = Path(name) + ": cannot create the verdict lock: " + why;
        return Attempt::kError;
      }
      struct stat st;
      if (fstatat(dirfd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || Believed(st)) {
        return Attempt::kBusy;  // another watcher won this generation (or it went again)
      }
      Ignore(name, "not a lock of yours (another user's file, or not a regular file)");
      gens.foreign.insert(mine);
      continue;
    }
    char text[format::kNameMax + 48];
    struct stat st;
    if (!format::FormatLock(LocalHostName().c_str(), getpid(), false, text, sizeof(text)) ||
        !fileio::WriteAll(fd, text, std::strlen(text)) || fstat(fd, &st) != 0) {
      *error = Path(name) + ": cannot write the verdict lock: " + std::strerror(errno);
      close(fd);
      unlinkat(dirfd_, name.c_str(), 0);
      return Attempt::kError;
    }
    fd_ = fd;
    generation_ = mine;
    dev_ = st.st_dev;
    ino_ = st.st_ino;
    return Attempt::kAcquired;
  }
  return Attempt::kBusy;  // names taken as fast as we try: look again at the next poll
}

std::string VerdictLock::Release() {
  const std::string path = Path(LockName(generation_));
  if (fd_ < 0) return path;
  char text[format::kNameMax + 48];
  // Longer than what it overwrites: no truncation, so no reader ever sees
  // an empty lock.
  if (!format::FormatLock(LocalHostName().c_str(), getpid(), true, text, sizeof(text)) ||
      pwrite(fd_, text, std::strlen(text), 0) != static_cast<ssize_t>(std::strlen(text))) {
    std::fprintf(stderr, "flightrec watch: %s: cannot mark the verdict lock released: %s\n",
                 path.c_str(), std::strerror(errno));
  }
  const timespec epoch[2] = {{0, 0}, {0, 0}};
  futimens(fd_, epoch);
  close(fd_);
  fd_ = -1;
  return path;
}

void VerdictLock::Abandon() {
  if (fd_ < 0) return;
  close(fd_);
  fd_ = -1;
  // Only the file we created: never one that took its name since.
  const std::string name = LockName(generation_);
  struct stat st;
  if (fstatat(dirfd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev_ &&
      st.st_ino == ino_) {
    unlinkat(dirfd_, name.c_str(), 0);
  }
}

bool VerdictLock::StillOurs() const {
  if (fd_ < 0) return false;
  if (List().highest() > generation_) return false;
  // Our file removed and its generation created again by another watcher.
  struct stat st;
  const std::string name = LockName(generation_);
  return fstatat(dirfd_, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !Believed(st) ||
         (st.st_dev == dev_ && st.st_ino == ino_);
}

void VerdictLock::Refresh() const {
  if (fd_ >= 0) futimens(fd_, nullptr);
}

bool VerdictLock::MarkDone(uint64_t incident_start_ns, uint64_t covered_until_ns,
                           std::string* error) {
  char name[format::kFileNameMax], user_name[format::kFileNameMax];
  char text[256];
  if (!format::DoneName(job_.c_str(), name, sizeof(name)) ||
      !format::UserDoneName(job_.c_str(), trust_.uid, user_name, sizeof(user_name)) ||
      !format::FormatDone(generation_, incident_start_ns, covered_until_ns, LocalHostName().c_str(),
                          getpid(), text, sizeof(text))) {
    *error = dir_ + ": job id too long for the done marker";
    return false;
  }
  std::string why;
  if (WriteShared(dirfd_, name, user_name, text, trust_, &why).empty()) {
    *error = Path(name) + ": " + why;
    return false;
  }
  for (uint64_t g : List().ours) {
    if (g < generation_) fileio::RemoveOurs(dirfd_, LockName(g).c_str(), trust_);
  }
  return true;
}

std::string WriteShared(int dirfd, const std::string& name, const std::string& user_name,
                        const std::string& text, const fileio::Trust& trust, std::string* error) {
  char why[fileio::kWhyMax] = {};
  if (fileio::WriteFileAt(dirfd, name.c_str(), text.data(), text.size(), trust, true, why,
                          sizeof(why))) {
    return name;
  }
  struct stat st;
  const bool foreign = fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       !(S_ISREG(st.st_mode) && fileio::Believed(st, trust, nullptr, 0));
  if (!foreign) {
    *error = why;
    return "";
  }
  char user_why[fileio::kWhyMax] = {};
  if (fileio::WriteFileAt(dirfd, user_name.c_str(), text.data(), text.size(), trust, true, user_why,
                          sizeof(user_why))) {
    return user_name;
  }
  // Our user's name is held too (a stranger took it first in a sticky
  // directory): a name nobody could take in advance,
  // flightrec-<job>.u<uid>.r<random>.<rest>. Readers of the done marker do
  // not look for it: the worst case is a second verdict, never none.
  const size_t dot = user_name.find(".verdict");
  char token[24];
  fileio::RandomToken(token, sizeof(token));
  const std::string random_name =
      dot == std::string::npos ? user_name + ".r" + token
                               : user_name.substr(0, dot) + ".r" + token + user_name.substr(dot);
  char random_why[fileio::kWhyMax] = {};
  if (fileio::WriteFileAt(dirfd, random_name.c_str(), text.data(), text.size(), trust, true,
                          random_why, sizeof(random_why))) {
    return random_name;
  }
  *error = std::string(why) + "; " + user_name + ": " + user_why + "; " + random_name + ": " +
           random_why;
  return "";
}

}  // namespace cli
}  // namespace flightrec

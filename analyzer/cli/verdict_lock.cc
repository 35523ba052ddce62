#include "analyzer/cli/verdict_lock.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "analyzer/report/output.h"
#include "flightrec/trigger_file.h"

namespace flightrec {
namespace cli {
namespace {

uint64_t MtimeNs(const struct stat& st) {
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
         static_cast<uint64_t>(st.st_mtim.tv_nsec);
}

constexpr char kReleasedWord[] = "released";

// "host pid released": the holder gave the generation up.
bool IsReleased(const std::string& content) {
  char host[256] = {}, word[16] = {};
  long long pid = 0;
  return std::sscanf(content.c_str(), "%255s %lld %15s", host, &pid, word) == 3 &&
         std::strcmp(word, kReleasedWord) == 0;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line.substr(0, 512);
}

}  // namespace

std::string LocalHostName() {
  char host[format::kNameMax];
  format::HostName(host, sizeof(host));
  return host;
}

VerdictLock::VerdictLock(std::string dir, std::string job, std::chrono::milliseconds stale_after)
    : dir_(std::move(dir)), job_(std::move(job)), stale_after_(stale_after) {}

VerdictLock::~VerdictLock() {
  if (fd_ >= 0) close(fd_);
}

std::string VerdictLock::LockPath(uint64_t generation) const {
  return dir_ + "/flightrec-" + job_ + ".verdict-" + std::to_string(generation) + ".lock";
}

std::string VerdictLock::DonePath() const { return dir_ + "/flightrec-" + job_ + ".verdict.done"; }

uint64_t VerdictLock::HighestGeneration() const {
  const std::string prefix = "flightrec-" + job_ + ".verdict-";
  uint64_t highest = 0;
  DIR* d = opendir(dir_.c_str());
  if (d == nullptr) return 0;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() <= prefix.size() + 5 || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - 5, 5, ".lock") != 0) {
      continue;
    }
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - 5);
    if (digits.empty() || digits.size() > 18 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    highest = std::max<uint64_t>(highest, std::stoull(digits));
  }
  closedir(d);
  return highest;
}

DoneMark VerdictLock::ReadDone() const {
  DoneMark mark;
  const std::string line = ReadSmallFile(DonePath());
  unsigned long long g = 0, start = 0, until = 0;
  if (std::sscanf(line.c_str(), "generation=%llu incident_start_ns=%llu covered_until_ns=%llu", &g,
                  &start, &until) == 3) {
    mark.valid = true;
    mark.generation = g;
    mark.incident_start_ns = start;
    mark.covered_until_ns = until;
  }
  return mark;
}

bool VerdictLock::HolderIsDeadHere(const std::string& content) const {
  char host[256] = {};
  long long pid = 0;
  if (std::sscanf(content.c_str(), "%255s %lld", host, &pid) != 2 || pid <= 0) return false;
  if (LocalHostName() != host) return false;
  return kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

VerdictLock::Attempt VerdictLock::TryAcquire(std::string* error) {
  const uint64_t highest = HighestGeneration();
  bool take = highest == 0 || ReadDone().generation == highest;
  if (!take) {
    struct stat st;
    const std::string path = LockPath(highest);
    const std::chrono::steady_clock::time_point now = std::chrono::steady_clock::now();
    if (stat(path.c_str(), &st) != 0) return Attempt::kBusy;  // removed meanwhile: look again
    const std::string content = ReadSmallFile(path);
    holder_ = content.empty() ? "(unknown)" : content;
    if (highest != watched_generation_ || MtimeNs(st) != watched_mtime_ns_) {
      watched_generation_ = highest;
      watched_mtime_ns_ = MtimeNs(st);
      watched_since_ = now;
    }
    const bool released = IsReleased(content);
    take = released || now - watched_since_ >= stale_after_ || HolderIsDeadHere(content);
    if (take) {
      std::fprintf(stderr, "flightrec watch: taking over from %s verdict lock %s (holder %s)\n",
                   released ? "released" : "stale", path.c_str(), holder_.c_str());
    }
  }
  if (!take) return Attempt::kBusy;
  const uint64_t mine = highest + 1;
  const std::string path = LockPath(mine);
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    if (errno == EEXIST) return Attempt::kBusy;  // another watcher won this generation
    *error = path + ": cannot create the verdict lock: " + std::strerror(errno);
    return Attempt::kError;
  }
  const std::string content = LocalHostName() + " " + std::to_string(getpid()) + "\n";
  if (write(fd, content.data(), content.size()) != static_cast<ssize_t>(content.size())) {
    *error = path + ": cannot write the verdict lock: " + std::strerror(errno);
    close(fd);
    unlink(path.c_str());
    return Attempt::kError;
  }
  fd_ = fd;
  generation_ = mine;
  return Attempt::kAcquired;
}

std::string VerdictLock::Release() {
  const std::string path = LockPath(generation_);
  if (fd_ < 0) return path;
  const std::string content =
      LocalHostName() + " " + std::to_string(getpid()) + " " + kReleasedWord + "\n";
  // Longer than what it overwrites: no truncation, so no reader ever sees
  // an empty lock.
  if (pwrite(fd_, content.data(), content.size(), 0) != static_cast<ssize_t>(content.size())) {
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
  unlink(LockPath(generation_).c_str());
}

bool VerdictLock::StillOurs() const {
  struct stat st;
  return fd_ >= 0 && stat(LockPath(generation_ + 1).c_str(), &st) != 0 && errno == ENOENT;
}

void VerdictLock::Refresh() const {
  if (fd_ >= 0) futimens(fd_, nullptr);
}

bool VerdictLock::MarkDone(uint64_t incident_start_ns, uint64_t covered_until_ns,
                           std::string* error) {
  char line[256];
  std::snprintf(line, sizeof(line),
                "generation=%" PRIu64 " incident_start_ns=%" PRIu64 " covered_until_ns=%" PRIu64
                " host=%s pid=%d\n",
                generation_, incident_start_ns, covered_until_ns, LocalHostName().c_str(),
                static_cast<int>(getpid()));
  if (!report::WriteOutput(DonePath(), line, error)) return false;
  for (uint64_t g = generation_; g-- > 1;) {
    if (unlink(LockPath(g).c_str()) != 0 && errno == ENOENT && g + 1 < generation_) break;
  }
  return true;
}

}  // namespace cli
}  // namespace flightrec

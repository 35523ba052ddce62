// Exactly one verdict per hang per job among any number of watchers (in-job
// spawns on several nodes, sidecars) that share only the dump directory
// (docs/design/verdict.md). Names and texts: flightrec/job_dir.h.
//
//   <dir>/flightrec-<job>.verdict-<g>.lock  generation g, created with
//       O_CREAT|O_EXCL (one winner per generation); "host pid" inside. The
//       holder refreshes its mtime (futimens on the descriptor it holds)
//       every second while it works.
//   <dir>/flightrec-<job>.verdict.done  written (unique temporary + rename)
//       after the reports: "generation=<g> incident_start_ns=<t>
//       covered_until_ns=<c> host=<h> pid=<p>". Hang dumps sealed up to c
//       plus their watchdog timeout belong to the judged incident.
//
// A lock nobody has refreshed for the stale limit (format::
// kVerdictLockStaleS, seen by the waiter's own clock: no clock is compared
// across hosts), or whose holder is a dead pid on this host, or that its
// holder released ("host pid released" inside, mtime the epoch), is taken
// over by creating generation g + 1. A holder that finds a newer generation
// before writing gives up.
//
// Only files the watcher believes count (recorder/fileio/safe_file.h:
// regular files owned by the running user or a member of the trusted
// group): a lock or done marker of another user is ignored (reported once
// on stderr), so a forged `.done` or a foreign lock kept fresh can neither
// cover nor hold up a verdict. A foreign file at a generation's name is
// skipped: it counts for neither the highest generation nor a takeover,
// and the next generation is created past it.
#ifndef FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_
#define FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_

#include <stdint.h>

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "analyzer/cli/dump_scan.h"
#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace cli {

struct DoneMark {
  bool valid = false;
  uint64_t generation = 0;
  uint64_t incident_start_ns = 0;
  uint64_t covered_until_ns = 0;
  Coverage coverage() const { return {valid, covered_until_ns}; }
};

class VerdictLock {
 public:
  enum class Attempt { kAcquired, kBusy, kError };

  // `dirfd`: the dump directory, opened with fileio::OpenDir(kShared) and
  // kept open by the caller while the lock exists; `dir` names it in
  // messages.
  VerdictLock(int dirfd, std::string dir, std::string job, const fileio::Trust& trust,
              std::chrono::milliseconds stale_after);
  ~VerdictLock();
  VerdictLock(const VerdictLock&) = delete;
  VerdictLock& operator=(const VerdictLock&) = delete;

  // The done marker (the shared name, or our user's, WriteShared: the
  // higher generation of the two); invalid when absent, unreadable, not
  // parsable or not believed (another user's).
  DoneMark ReadDone() const;
  // One attempt; kBusy: a live holder (or a lost race), try again after a
  // poll. The staleness of the holder is judged across attempts.
  Attempt TryAcquire(std::string* error);
  // Gives up a generation just acquired (nothing was written under it).
  void Abandon();
  // Gives up a generation whose incident stays unjudged (a stop signal):
  // the file stays (generations only grow, so an older holder still sees
  // it was taken over), marked released and with the epoch as its mtime,
  // so that the next watcher, and the plugin's candidates, take over at
  // once instead of waiting for it to go stale. The refreshing must have
  // stopped. Returns the lock file's path (for messages).
  std::string Release();
  // No newer believed generation exists, and our generation's name holds
  // no other believed file: nobody took over from us. A file of another
  // user (at any name) never takes the lock from us.
  bool StillOurs() const;
  // Marks the lock alive (futimens on the held descriptor); called every
  // second by the holder, from another thread.
  void Refresh() const;
  // Writes the done marker (WriteShared), then removes older generations'
  // lock files (ours or the trusted group's only).
  bool MarkDone(uint64_t incident_start_ns, uint64_t covered_until_ns, std::string* error);

  bool held() const { return fd_ >= 0; }
  uint64_t generation() const { return generation_; }
  // "host pid" of the holder last seen busy, for messages.
  const std::string& holder() const { return holder_; }

 private:
  // The believed lock generations in the directory (ascending), and the
  // generations whose name another user's file (or a non-file) occupies.
  struct Generations {
    std::vector<uint64_t> ours;
    std::set<uint64_t> foreign;
    uint64_t highest() const { return ours.empty() ? 0 : ours.back(); }
  };
  Generations List() const;
  std::string LockName(uint64_t generation) const;
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  bool Believed(const struct stat& st) const;
  // Reports a file that is not believed, once per name.
  void Ignore(const std::string& name, const char* why) const;

  int dirfd_;
  std::string dir_;
  std::string job_;
  fileio::Trust trust_;
  std::chrono::milliseconds stale_after_;
  int fd_ = -1;
  uint64_t generation_ = 0;
  dev_t dev_ = 0;  // the held lock file
  ino_t ino_ = 0;
  // Staleness watch of another holder's lock.
  uint64_t watched_generation_ = 0;
  uint64_t watched_mtime_ns_ = 0;
  std::chrono::steady_clock::time_point watched_since_;
  std::string holder_;
  mutable std::set<std::string> ignored_;
};

// Writes `text` as `name` in `dirfd` (fileio::WriteFileAt: a unique
// temporary renamed over the name, fsynced). When that fails because
// another user's file (or a non-file) holds `name` where it cannot be
// replaced (a sticky directory), writes `user_name` instead (format::
// UserVerdictReportName, UserDoneName). Returns the name written, or ""
// with *error.
std::string WriteShared(int dirfd, const std::string& name, const std::string& user_name,
                        const std::string& text, const fileio::Trust& trust, std::string* error);

// This host's name, as the plugin writes it into files (sanitized:
// format::SanitizeName).
std::string LocalHostName();

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_

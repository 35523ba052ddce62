// Exactly one verdict per hang per job among any number of watchers (in-job
// spawns on several nodes, sidecars) that share only the dump directory
// (docs/design/verdict.md):
//
//   <dir>/flightrec-<job>.verdict-<g>.lock  generation g, created with
//       O_CREAT|O_EXCL (one winner per generation); "host pid" inside. The
//       holder refreshes its mtime every second while it works.
//   <dir>/flightrec-<job>.verdict.done  written (tmp + rename) after the
//       reports: "generation=<g> incident_start_ns=<t> covered_until_ns=<c>
//       host=<h> pid=<p>". Hang dumps sealed up to c plus their watchdog
//       timeout belong to the judged incident.
//
// A lock nobody has refreshed for the stale limit (seen by the waiter's own
// clock: no clock is compared across hosts), or whose holder is a dead pid
// on this host, or that its holder released ("host pid released" inside,
// mtime the epoch), is taken over by creating generation g + 1. A holder
// that finds a newer generation before writing gives up.
#ifndef FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_
#define FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_

#include <stdint.h>

#include <chrono>
#include <string>

#include "analyzer/cli/dump_scan.h"

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

  VerdictLock(std::string dir, std::string job, std::chrono::milliseconds stale_after);
  ~VerdictLock();
  VerdictLock(const VerdictLock&) = delete;
  VerdictLock& operator=(const VerdictLock&) = delete;

  // The done marker; invalid when absent or unreadable.
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
  // stopped. Returns the lock file's path.
  std::string Release();
  // No newer generation exists: nobody took over from us.
  bool StillOurs() const;
  // Marks the lock alive (its mtime); called every second by the holder.
  void Refresh() const;
  // Writes the done marker, then removes older generations' lock files.
  bool MarkDone(uint64_t incident_start_ns, uint64_t covered_until_ns, std::string* error);

  bool held() const { return fd_ >= 0; }
  uint64_t generation() const { return generation_; }
  // "host pid" of the holder last seen busy, for messages.
  const std::string& holder() const { return holder_; }

 private:
  std::string LockPath(uint64_t generation) const;
  std::string DonePath() const;
  uint64_t HighestGeneration() const;
  bool HolderIsDeadHere(const std::string& content) const;

  std::string dir_;
  std::string job_;
  std::chrono::milliseconds stale_after_;
  int fd_ = -1;
  uint64_t generation_ = 0;
  // Staleness watch of another holder's lock.
  uint64_t watched_generation_ = 0;
  uint64_t watched_mtime_ns_ = 0;
  std::chrono::steady_clock::time_point watched_since_;
  std::string holder_;
};

// This host's name, as the plugin writes it into files.
std::string LocalHostName();

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_VERDICT_LOCK_H_

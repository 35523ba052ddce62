// The in-job verdict (docs/design/verdict.md): after this process sealed a
// timeout or trigger dump it is a candidate to spawn
//   flightrec watch <dump dir> [<ring dir>] --job <job> --once --parent-pid <pid>
// with NCCL_FLIGHTREC_ON_VERDICT (the hook) in its inherited environment only,
// which waits for every rank's dump, writes flightrec-<job>.verdict.* beside
// the dumps and runs the hook. A candidate spawns only when neither a verdict
// of this incident, nor a fresh lock of a running `watch`, nor a fresh hint
// of a spawn still starting (flightrec-<job>.verdict-spawned) is in the dump dir,
// after a stagger derived from its pid (ranks that saw the op stuck first),
// so normally one process of the job spawns; `watch` arbitrates the rest
// (exit 3). The child runs at nice 19 and idle I/O priority, with a bounded
// address space, in its own process group, and is killed after
// kVerdictTimeLimitS. Its output comes back through a non-blocking pipe; the
// `flightrec verdict: ...` line is logged at WARN.
//
// Everything here runs on the watchdog thread (never on NCCL's threads), and
// never changes the host's signal dispositions: the child is reaped with
// waitpid(pid, WNOHANG), and a status taken by the host (SIGCHLD ignored, or
// a host that reaps every child) is replaced by what the pipe carried.
#ifndef FLIGHTREC_RECORDER_VERDICT_H_
#define FLIGHTREC_RECORDER_VERDICT_H_

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "flightrec/job_dir.h"
#include "recorder/config.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace rec {

// The analysis (grace, analysis and hook together) is killed after this.
constexpr uint64_t kVerdictTimeLimitS = 180;
// Address-space limit of the analysis (RLIMIT_AS; not set in sanitizer builds).
constexpr uint64_t kVerdictMemoryLimitBytes = 4ULL << 30;
// A lock whose mtime has not changed for this long belongs to a dead
// `watch` (it refreshes its lock every second): flightrec/job_dir.h.
using format::kVerdictLockStaleS;
// A candidate gives up an incident this long after its dump.
constexpr uint64_t kVerdictGiveUpS = 600;
// Spawns per incident per process (each ended by exit 3 or a lost status).
constexpr uint32_t kVerdictMaxSpawns = 8;

class VerdictSpawner {
 public:
  VerdictSpawner() = default;
  VerdictSpawner(const VerdictSpawner&) = delete;
  VerdictSpawner& operator=(const VerdictSpawner&) = delete;

  // Slow path (recorder start): remembers the config and resolves the
  // analyzer binary (NCCL_FLIGHTREC_ANALYZER, else beside the plugin, else
  // `flightrec` on PATH).
  void Init(const Config* cfg, int64_t pid, LogFn log);
  // Watchdog thread, after this process sealed a hang dump: `saw_stuck` for
  // a timeout dump (this process saw the op stuck), false for a trigger dump.
  void OnIncidentDump(bool saw_stuck);
  // Watchdog thread, every poll: drains and reaps a running analysis, or
  // spawns one when this process is the candidate whose turn it is.
  void Poll();
  // Recorder stop: kills a running analysis (its process group) and reaps it.
  void Stop();
  // Fork child: the analysis is the parent's.
  void ForgetAfterFork();

  const char* analyzer() const { return analyzer_; }

 private:
  bool VerdictExists() const;
  bool FreshLockExists();
  void SpawnHintPath(char* out, size_t out_len) const;
  bool FreshSpawnHint() const;
  void LeaveSpawnHint() const;
  void Spawn();
  void Drain();
  void TakeLine();
  void Finish(bool status_known, int status);

  const Config* cfg_ = nullptr;
  int64_t pid_ = 0;
  LogFn log_ = nullptr;
  char analyzer_[kPathMax] = {};

  // The incident this process is a candidate for.
  bool candidate_ = false;
  bool saw_stuck_ = false;
  uint64_t incident_mono_ns_ = 0;
  uint64_t incident_wall_ns_ = 0;  // when this process sealed its first dump of it
  uint64_t next_try_mono_ns_ = 0;
  uint32_t spawns_ = 0;
  // The newest verdict lock and when its mtime last changed (this clock).
  uint64_t lock_generation_ = 0;
  uint64_t lock_mtime_ns_ = 0;
  uint64_t lock_seen_mono_ns_ = 0;

  // The running analysis.
  pid_t child_ = -1;
  int pipe_fd_ = -1;
  uint64_t spawn_mono_ns_ = 0;
  bool killed_ = false;
  bool eof_ = false;
  char partial_[512] = {};  // the line being read
  size_t partial_len_ = 0;
  bool headline_ = false;     // the "flightrec verdict: " line was read and logged
  char last_line_[512] = {};  // last non-empty line (diagnostics)
};

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_VERDICT_H_

// The watchdog: one thread per process recorder (all signals blocked) that,
// every poll interval,
//   * refreshes FileHeader::heartbeat_{mono,wall}_ns and heartbeat_count,
//   * seals a dump requested through RequestDump() (API or signal),
//   * scans each active region from its cursor (the oldest op not done) and
//     seals a kDumpTimeout dump when that op is older than the timeout, then
//     leaves the trigger file for the other ranks,
//   * stat()s the trigger file and seals a kDumpTrigger dump when it changed
//     since the watchdog started or since this process's last dump, unless
//     the change belongs to an incident this process already dumped,
//   * releases the dump budget held by dumps whose pending ops all completed
//     (DumpWriter::ReleaseResolved),
//   * after such a hang dump, spawns and reaps the in-job verdict
//     (recorder/verdict.h).
// It never takes a lock: the hot path takes none, and the slow path's mutex
// is not needed to read the mapping (regions are published by release
// stores of their state).
#ifndef FLIGHTREC_RECORDER_WATCHDOG_H_
#define FLIGHTREC_RECORDER_WATCHDOG_H_

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "flightrec/record_format.h"
#include "recorder/config.h"
#include "recorder/dump_writer.h"
#include "recorder/fileio/trigger_io.h"
#include "recorder/recorder.h"
#include "recorder/ring_file.h"
#include "recorder/verdict.h"

namespace flightrec {
namespace rec {

// Records scanned per region per poll (the cursor resumes next poll).
constexpr uint64_t kScanBudget = 4096;

struct WatchdogContext {
  const RingMapping* ring = nullptr;
  const Config* cfg = nullptr;
  DumpWriter* dumps = nullptr;
  const char* host = nullptr;
  LogFn log = nullptr;
};

class Watchdog {
 public:
  // Starts the thread. False with `err` set when it cannot.
  bool Start(const WatchdogContext& ctx, char* err, size_t err_len);
  // Stops and joins the thread (a dump in progress finishes first).
  void Stop();
  // Fork child: the thread does not exist there; forget it without joining.
  void ForgetAfterFork();
  bool running() const { return started_; }

  // One poll, exposed for the thread loop.
  void Poll();

 private:
  struct Cursor {
    uint64_t generation;
    uint64_t next;      // oldest slot sequence not known to be done
    uint64_t reported;  // slot sequence of the last timeout dump, or max
  };

  static void* ThreadMain(void* self);
  void Loop();
  void Heartbeat();
  void CheckRequest();
  void ScanRegion(uint32_t r, uint64_t now);
  void OnStuck(uint32_t r, const format::Record* rec, uint64_t seq, uint64_t now);
  void CheckTrigger();
  void RefreshTriggerBaseline();

  WatchdogContext ctx_;
  pthread_t thread_{};
  bool started_ = false;
  uint32_t stop_ = 0;  // relaxed atomic; the eventfd write wakes the thread
  int wake_fd_ = -1;
  Cursor* cursors_ = nullptr;  // one per region
  fileio::TriggerPaths trigger_paths_;
  fileio::TriggerState trigger_seen_;
  // CLOCK_MONOTONIC ns of this process's last sealed dump (0: none yet).
  // Trigger changes within one timeout of it are absorbed: when N ranks time
  // out one after another, each rewrites the trigger, and without this every
  // rank would answer every rewrite and burn its MAX_DUMPS on one incident.
  uint64_t last_dump_ns_ = 0;
  // This poll's scan: the enqueue time of the oldest op not done in any
  // region that reports completion, and whether every region was scanned up
  // to it (the dump budget is released only on a complete answer).
  uint64_t oldest_pending_ns_ = UINT64_MAX;
  bool scan_complete_ = true;
  VerdictSpawner verdict_;
};

// Asks the watchdog to seal a dump at its next wake-up (immediately when it
// is running). Async-signal-safe: atomics and one write(2) to an eventfd.
void PostDumpRequest(format::DumpReason reason, const char* detail);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_WATCHDOG_H_

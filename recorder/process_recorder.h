// The process recorder: one per process while any communicator is open. It
// uses a RingSlab (the ring mapping and the CommRecorders, whose lifetime
// rule is in ring_slab.h: never freed while the library is loaded) and owns
// the dump writer and the watchdog. All its methods are slow path and are called with
// the recorder mutex (recorder.cc) held; the watchdog thread reads the
// mapping only.
#ifndef FLIGHTREC_RECORDER_PROCESS_RECORDER_H_
#define FLIGHTREC_RECORDER_PROCESS_RECORDER_H_

#include <stdint.h>

#include "flightrec/record_format.h"
#include "recorder/comm_recorder.h"
#include "recorder/config.h"
#include "recorder/dump_writer.h"
#include "recorder/recorder.h"
#include "recorder/ring_file.h"
#include "recorder/ring_slab.h"
#include "recorder/watchdog.h"

namespace flightrec {

namespace rec {
// g_comm_table (region index -> live CommRecorder) is declared in
// comm_recorder_inl.h, next to the inline lookup that reads it.
// The live ring's header while a process recorder runs, else nullptr; and
// process drops counted while there was none (CountProcessDrop).
extern format::FileHeader* g_live_header;
extern uint64_t g_pending_drops[format::kNumDropCauses];
}  // namespace rec

class ProcessRecorder {
 public:
  // Reads the config, creates the ring file, starts the watchdog. Returns
  // nullptr (reason logged once through `log`) when disabled or impossible.
  static ProcessRecorder* Start(LogFn log, int api_version);

  CommRecorder* OpenComm(const CommIdentity& id, LogFn log);
  void BindIdentity(CommRecorder* c, uint64_t comm_id, const char* name, int32_t rank);
  // Finalizes the region. True when no communicator is left open.
  bool CloseComm(CommRecorder* c);
  // Ops of `c`'s region not done, within the ring's live window (0 when the
  // region does not track completion). Slow path: scans the whole window.
  uint32_t OpenAtFinalize(const CommRecorder* c) const;
  bool Owns(const CommRecorder* c) const;
  void SetApiVersion(int api_version);
  void CountDrop(format::DropCause cause);

  // Last CloseComm: stop the watchdog, seal the exit dump (if configured),
  // mark kProcessExited, park the slab (nothing is unmapped or freed that an
  // event may still reach: ring_slab.h). Deletes `this`.
  void Shutdown();
  // atexit: as Shutdown but keeps the mapping (other threads may still
  // write) and the object.
  void ExitHandler();
  // pthread_atfork child: never touch the parent's file again.
  void ForkChild();

  const char* ring_path() const { return slab_->ring.path; }

 private:
  ProcessRecorder() = default;
  ~ProcessRecorder() = default;
  bool Init(LogFn log, int api_version);
  int32_t ClaimRegion() const;
  void ResetRegion(uint32_t r);
  void FinishProcess();
  rec::RingMapping& ring() const { return slab_->ring; }

  rec::Config cfg_;
  char host_[64] = {};
  LogFn log_ = nullptr;
  rec::RingSlab* slab_ = nullptr;  // mapped; parked at Shutdown
  rec::DumpWriter dumps_;
  rec::Watchdog watchdog_;
  int open_comms_ = 0;
  bool finished_ = false;  // exit dump sealed / process marked exited
  bool forked_ = false;
  bool no_region_logged_ = false;
};

}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_PROCESS_RECORDER_H_

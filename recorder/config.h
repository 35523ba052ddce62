// NCCL_FLIGHTREC_* environment variables, parsed once per process recorder.
// The table of variables and defaults is in docs/design/recorder.md.
#ifndef FLIGHTREC_RECORDER_CONFIG_H_
#define FLIGHTREC_RECORDER_CONFIG_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/job_dir.h"
#include "flightrec/job_identity.h"
#include "recorder/fileio/safe_file.h"
#include "recorder/recorder.h"

namespace flightrec {
namespace rec {

using format::kNameMax;  // flightrec/job_dir.h
using format::kPathMax;  // flightrec/job_dir.h
constexpr size_t kCommandMax = 1024;

enum ClockRequest : uint32_t {
  kClockRequestAuto = 0,
  kClockRequestTsc = 1,
  kClockRequestMonotonic = 2,
};

struct Config {
  bool enable = true;
  // The ring directory: NCCL_FLIGHTREC_DIR, else $TMPDIR/flightrec-<uid>
  // (TMPDIR unset: /tmp). Node-local and ours alone (docs/security.md).
  char dir[kPathMax] = {};
  char dump_dir[kPathMax] = {};
  uint64_t timeout_ns = 120ULL * 1000000000ULL;
  uint64_t poll_ns = 1000ULL * 1000000ULL;
  uint64_t records = 4096;  // per communicator, power of two
  uint32_t max_comms = 16;  // regions in the ring file
  uint32_t max_dumps = 4;   // per process, all reasons together
  bool dump_on_exit = true;
  char job_id[kNameMax] = {};  // sanitized to [A-Za-z0-9._-]
  ClockRequest clock = kClockRequestAuto;
  bool trigger = true;
  int dump_signal = 0;  // 0: no handler
  // The in-job verdict (recorder/verdict.h): spawn `flightrec watch --once`
  // after a hang dump. analyzer: NCCL_FLIGHTREC_ANALYZER ("" = look beside
  // the plugin; never PATH); on_verdict: the hook command ("" = none),
  // reaching `watch` through the inherited environment only.
  bool verdict = true;
  char analyzer[kPathMax] = {};
  char on_verdict[kCommandMax] = {};
  // Whose files are believed and how files are shared: the running user,
  // plus the group NCCL_FLIGHTREC_GROUP names (files 0640, dirs 0750).
  fileio::Trust trust;
};

// Reads the environment into `cfg`. A value that does not parse or is out of
// range is reported once through `log` as a warning naming the variable and
// the value, and the default is kept.
void LoadConfig(Config* cfg, LogFn log);

// The job id and file-name rules the CLI shares: flightrec/job_identity.h,
// flightrec/job_dir.h.
using format::ResolveJobId;
using format::SanitizeName;

// Parses a signal number ("12") or name ("SIGUSR2", "USR2"); 0 when invalid
// or uncatchable.
int ParseSignal(const char* text);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_CONFIG_H_

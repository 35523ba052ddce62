// The trigger file: `<dumpdir>/flightrec-<job>.trigger`, one line
// "host pid reason". Any rank that sees an op stuck leaves it after its own
// dump; every other rank's watchdog (recorder/trigger.h, recorder/watchdog.h)
// notices the file changed and dumps too, so the culprit (whose own ops look
// fine) is captured as well. Users leave one with `flightrec trigger DIR`.
// What both sides must agree on lives here: the names (job id, host), the
// path, the line and how it is written. Header-only, libc only.
#ifndef FLIGHTREC_TRIGGER_FILE_H_
#define FLIGHTREC_TRIGGER_FILE_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "flightrec/atomic_file.h"
#include "flightrec/job_dir.h"
#include "flightrec/job_identity.h"

namespace flightrec {
namespace format {

// `<dir>/flightrec-<job>.trigger`; false when it does not fit. Not inlined:
// the result is checked, and GCC would warn about truncation at call sites
// whose buffer sizes it can see.
__attribute__((noinline)) inline bool TriggerPath(const char* dir, const char* job, char* out,
                                                  size_t out_len) {
  int n = snprintf(out, out_len, "%s/flightrec-%s.trigger", dir, job);
  return n > 0 && static_cast<size_t>(n) < out_len;
}

// Writes the trigger atomically (unique tmp name + fsync + rename). On
// failure `err` names the file and the reason.
inline bool WriteTrigger(const char* path, const char* host, int64_t pid, const char* reason,
                         char* err, size_t err_len) {
  char line[512];
  int n = snprintf(line, sizeof(line), "%s %lld %s\n", host, static_cast<long long>(pid),
                   reason != nullptr && reason[0] != '\0' ? reason : "trigger");
  if (n <= 0) n = 0;
  if (static_cast<size_t>(n) >= sizeof(line)) {
    n = sizeof(line) - 1;
    line[n - 1] = '\n';
  }
  return WriteFileAtomically(path, line, static_cast<size_t>(n), err, err_len);
}

// Whether a trigger line ("host pid reason", without the newline) was left
// by a rank whose own op timed out (reason "timeout", written by the
// watchdog): only that one says the job hangs. Any other reason (`flightrec
// trigger`'s default "user", an empty file) is a request for a snapshot.
inline bool TriggerFromTimeout(const char* line) {
  const char* reason = line;
  for (int field = 0; field < 2 && reason != nullptr; ++field) {
    reason = strchr(reason, ' ');
    if (reason != nullptr) ++reason;
  }
  return reason != nullptr && strcmp(reason, "timeout") == 0;
}

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_TRIGGER_FILE_H_

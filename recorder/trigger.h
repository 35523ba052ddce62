// The trigger file: `<dumpdir>/flightrec-<job>.trigger`, one line
// "host pid reason". Any rank that sees an op stuck leaves it after its own
// dump; every other rank's watchdog notices the file changed and dumps too,
// so the culprit (whose own ops look fine) is captured as well. Users can
// leave one with `flightrec trigger DIR`.
#ifndef FLIGHTREC_RECORDER_TRIGGER_H_
#define FLIGHTREC_RECORDER_TRIGGER_H_

#include <stddef.h>
#include <stdint.h>

namespace flightrec {
namespace rec {

// What a watcher compares between polls. Rename-based writes change the
// inode even when mtime granularity is coarse.
struct TriggerIdentity {
  bool exists = false;
  uint64_t dev = 0;
  uint64_t inode = 0;
  uint64_t mtime_ns = 0;
  uint64_t size = 0;

  bool operator==(const TriggerIdentity& o) const {
    return exists == o.exists && dev == o.dev && inode == o.inode && mtime_ns == o.mtime_ns &&
           size == o.size;
  }
  bool operator!=(const TriggerIdentity& o) const { return !(*this == o); }
};

// `<dir>/flightrec-<job>.trigger`; false when it does not fit.
bool TriggerPath(const char* dir, const char* job, char* out, size_t out_len);

// Writes the trigger atomically (unique tmp name + fsync + rename). On
// failure `err` names the file and the reason.
bool WriteTrigger(const char* path, const char* host, int64_t pid, const char* reason, char* err,
                  size_t err_len);

// The first line of the trigger (without the newline), at most out_len - 1
// bytes; "" when unreadable.
void ReadTriggerLine(const char* path, char* out, size_t out_len);

// Whether a trigger line ("host pid reason", as ReadTriggerLine returns it)
// was left by a rank whose own op timed out (reason "timeout", written by
// Watchdog::OnStuck): only that one says the job hangs. Any other reason
// (`flightrec trigger`'s default "user", an empty file) is a request for a
// snapshot, sealed as kDumpRequest so the analyzer applies its age rule.
bool TriggerFromTimeout(const char* line);

// stat() of the trigger; exists=false when absent or unreadable.
TriggerIdentity ReadTriggerIdentity(const char* path);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_TRIGGER_H_

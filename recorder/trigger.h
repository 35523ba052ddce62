// The recorder's side of the trigger file (flightrec/trigger_file.h: its
// path, line and how it is written, shared with `flightrec trigger`): how a
// watchdog reads it and notices that it changed.
#ifndef FLIGHTREC_RECORDER_TRIGGER_H_
#define FLIGHTREC_RECORDER_TRIGGER_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/trigger_file.h"

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

using format::TriggerFromTimeout;
using format::TriggerPath;
using format::WriteTrigger;

// The first line of the trigger (without the newline), at most out_len - 1
// bytes; "" when unreadable.
void ReadTriggerLine(const char* path, char* out, size_t out_len);

// stat() of the trigger; exists=false when absent or unreadable.
TriggerIdentity ReadTriggerIdentity(const char* path);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_TRIGGER_H_

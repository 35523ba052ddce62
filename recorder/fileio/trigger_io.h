// Reading and writing the trigger file (flightrec/job_dir.h: its names and
// text) by the fileio rules: the recorder's watchdog and `flightrec trigger`
// share this. A trigger is believed only when it is a regular file owned by
// the running user (or the trusted group) whose text parses; anything else
// in its place is ignored, never followed, never echoed.
//
// Names: `flightrec-<job>.trigger`; when another user's file occupies that
// name where we cannot replace it (a sticky directory), the per-user
// `flightrec-<job>.u<uid>.trigger`; when a stranger took that one first
// too, `flightrec-<job>.u<uid>.r<random>.trigger`, a name nobody can take in
// advance. Writers try them in that order; watchers look at the first two,
// and list the directory for the third only while a stranger's file holds
// one of the first two (a cost paid only under that attack).
#ifndef FLIGHTREC_FILEIO_TRIGGER_IO_H_
#define FLIGHTREC_FILEIO_TRIGGER_IO_H_

#include <stddef.h>
#include <stdint.h>

#include "flightrec/job_dir.h"
#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace fileio {

// The per-user fallback name `flightrec-<job>.u<uid>.trigger`.
bool UserTriggerName(const char* job, uint32_t uid, char* out, size_t out_len);

// Writes "host pid reason" (format::FormatTrigger) into `dir` under the
// trigger's name, else under the per-user name. False with `why` when the
// fields are not the protocol's or neither name could be written.
bool WriteTrigger(const char* dir, const char* job, const char* host, int64_t pid,
                  const char* reason, const Trust& t, char* why, size_t why_len);

// What a watcher compares between polls (lstat of both names; a name that
// is not a believed regular file counts as absent). Rename-based writes
// change the inode even when mtime granularity is coarse.
struct TriggerState {
  // [0] the shared name, [1] the per-user name, [2] the newest random name.
  uint64_t ino[3] = {0, 0, 0};
  uint64_t dev[3] = {0, 0, 0};
  uint64_t mtime_ns[3] = {0, 0, 0};
  uint64_t size[3] = {0, 0, 0};
  bool operator==(const TriggerState& o) const;
  bool operator!=(const TriggerState& o) const { return !(*this == o); }
  bool any() const { return ino[0] != 0 || ino[1] != 0 || ino[2] != 0; }
};

// Paths of the two fixed names for `dir` and `job`, and what the listing
// for a random name needs.
struct TriggerPaths {
  char path[2][format::kPathMax + format::kFileNameMax] = {};
  char dir[format::kPathMax] = {};
  char random_prefix[format::kFileNameMax] = {};  // "flightrec-<job>.u<uid>.r"
};
bool MakeTriggerPaths(const char* dir, const char* job, uint32_t uid, TriggerPaths* out);

TriggerState ReadTriggerState(const TriggerPaths& p, const Trust& t);

// The newest believed trigger whose text parses (of the names above);
// false when none does.
bool ReadTrigger(const TriggerPaths& p, const Trust& t, format::TriggerLine* out);

}  // namespace fileio
}  // namespace flightrec

#endif  // FLIGHTREC_FILEIO_TRIGGER_IO_H_

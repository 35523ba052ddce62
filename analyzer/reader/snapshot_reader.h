// Reads one ring file or zstd dump into a ProcessSnapshot, trusting nothing.
//
// Guarantees (docs/design/reader.md): never crashes, hangs or allocates from
// an unchecked count on any input; every failure is a message naming the
// file and the problem; a torn or stale record is counted, never returned.
// Region-level damage (one bad RegionDesc) is a warning and the other
// regions are still returned; header-level damage rejects the file.
#ifndef FLIGHTREC_ANALYZER_READER_SNAPSHOT_READER_H_
#define FLIGHTREC_ANALYZER_READER_SNAPSHOT_READER_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/reader/snapshot.h"
#include "flightrec/record_format.h"
#include "recorder/fileio/safe_file.h"

namespace flightrec {

// Whose files the reader believes (ReadSnapshotFile, ReadInitFile,
// LiveRing::Open): every file is opened O_NOFOLLOW|O_NONBLOCK and judged by
// fstat (recorder/fileio/safe_file.h): a regular file owned by the running
// user, or by a member of the trusted group, else it is refused with the
// reason ("not owned by you: uid 1002"). The running user alone unless set;
// the CLI sets it once from --trust-group / NCCL_FLIGHTREC_GROUP, before
// anything is read.
void SetReadTrust(const fileio::Trust& trust);
fileio::Trust ReadTrust();

struct ReadResult {
  bool ok = false;
  ProcessSnapshot snapshot;  // meaningful only when ok
  std::string error;         // "<name>: <problem>" when !ok
  // The read applied its ReadWindow: the snapshot holds what the window
  // keeps and is not to be trimmed again.
  bool windowed = false;
};

// A windowed read: what analyzer/model/record_window.h's TrimToWindow would
// keep of the file, applied while the image is parsed, so that the records
// it drops are checked (commit, checksum, enum ranges: the same torn counts
// and warnings) but never decoded into OpRecords. Applies to dumps (an
// immutable image); a ring, and a dump holding ops whose completion is
// inferred from stream order (stream_order.h: that inference needs every
// record), are read whole and returned with windowed false.
struct ReadWindow {
  uint64_t full = UINT64_MAX;   // WindowPolicy::full
  uint64_t share = UINT64_MAX;  // WindowPolicy::share
  // The signature kept for a dropped collective (analysis::SigOf): its
  // CollSig::sig from count, root_or_peer, func, datatype, flags and
  // api_datatype only, its seq_lo from nccl_seq (the reader reuses the sig
  // of a record with the same arguments).
  CollSig (*signature)(const OpRecord&) = nullptr;
};

struct ReadLimits {
  // Largest image accepted: the file itself, a zstd frame's declared
  // content size, and the bytes actually decompressed. Fuzzers lower it.
  uint64_t max_image_size = format::kMaxFileSize;
};

// Reads `path` with pread into memory (never mmap: a file truncated under a
// mapping would SIGBUS us). Files larger than the limit are rejected before
// any allocation; a symlink, a FIFO or another non-regular file, and a file
// ReadTrust() does not believe, are refused before any byte is read.
// With `window`, a dump is read windowed (ReadWindow).
ReadResult ReadSnapshotFile(const std::string& path, const ReadLimits& limits = {},
                            const ReadWindow* window = nullptr);

// Parses bytes already in memory. `name` is used in messages and stored as
// snapshot.path. zstd frames are decompressed first.
ReadResult ReadSnapshotBytes(const uint8_t* data, size_t size, const std::string& name,
                             const ReadLimits& limits = {});

// "ring" or "dump" (the JSON `kind` of `flightrec show`).
const char* DescribeFileKind(const ProcessSnapshot& snapshot);

// Names of header enums, "unknown" for values outside the format (dump
// reasons: format::DumpReasonName in flightrec/record_names.h).
const char* ProcessStateName(uint32_t state);  // "running" | "exited" | "disabled" | "starting"
const char* ClockSourceName(uint32_t clock);   // "monotonic" | "tsc"
const char* RegionStateName(uint32_t state);   // "free" | "active" | "finalized"

// True when both snapshots come from the same process instance (host, pid
// and creation instant agree): a ring and its dumps.
bool SameProcess(const ProcessSnapshot& a, const ProcessSnapshot& b);

// Strict weak order "a holds older data than b" for snapshots of the same
// process: dumps by (dump_sequence, dump_wall_ns); a ring is newer than every
// dump (it is where dumps are copied from) and rings compare by heartbeat;
// the path breaks ties so that the order is deterministic.
bool OlderThan(const ProcessSnapshot& a, const ProcessSnapshot& b);

// Sorts oldest first with OlderThan.
void SortByRecency(std::vector<ProcessSnapshot>* snapshots);

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_SNAPSHOT_READER_H_

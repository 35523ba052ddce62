// PyTorch Flight Recorder dumps as analyzer input (docs/design/pytorch-fr.md).
//
// PyTorch writes one file per rank: a pickle (fr_pickle.h) on disk, or the
// same content as JSON from its API. Both are recognized by content, never
// by name, and mapped into the model every other input uses: one
// ProcessSnapshot per file, one CommSnapshot per process group the rank is a
// member of (pg_config), one OpRecord per entry (collective_seq_id as the op
// index). What FR says beyond that model (the Python frames, the process
// groups, the entries' names) is kept in ProcessSnapshot::pytorch_fr for the
// reports.
#ifndef FLIGHTREC_ANALYZER_READER_FR_READER_H_
#define FLIGHTREC_ANALYZER_READER_FR_READER_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "analyzer/reader/fr_pickle.h"
#include "analyzer/reader/snapshot.h"
#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {

struct FrFrame {
  std::string name;
  std::string filename;
  int64_t line = 0;
};

// One FR entry kept for the reports (by record_id = OpRecord::slot_seq).
struct FrEntryInfo {
  uint64_t record_id = 0;
  int32_t comm = -1;   // index into the FR snapshot's comms
  int32_t group = -1;  // index into PytorchFrInfo::groups
  std::string profiling_name;
  const char* state = "scheduled";  // "scheduled" | "started" | "completed"
  uint64_t collective_seq_id = 0;
  uint64_t p2p_seq_id = 0;
  // Python frames, innermost first, as indices into PytorchFrInfo::frames;
  // kept for the entries that can matter to a report (not completed, and
  // the newest of each process group), empty for the others.
  std::vector<uint32_t> frames;
};

struct FrGroupInfo {
  std::string name;  // pg_config key, e.g. "0"
  std::string desc;  // e.g. "default_pg", "undefined"
  std::vector<int64_t> ranks;
  bool member = false;  // the file's rank is in it (a CommSnapshot exists)
};

struct PytorchFrInfo {
  std::string format;  // "pickle" | "json"
  std::string version;
  int64_t global_rank = -1;
  std::string rank_from;  // how the global rank was found
  std::vector<FrGroupInfo> groups;
  std::string path;  // the FR dump these come from
  std::vector<FrFrame> frames;
  std::vector<FrEntryInfo> entries;  // ascending record_id
  uint64_t first_record_id = 0;      // > 0: the ring wrapped, older entries are lost

  const FrEntryInfo* Entry(uint64_t record_id) const;
  // The entry a report shows for a process: its oldest entry not
  // completed (where it waits), else its newest (the last call it made).
  const FrEntryInfo* Current() const;
  // "default_pg" (the desc), or "pg <name>" when the desc is "undefined".
  std::string GroupName(int32_t group) const;
};

namespace fr {

struct ReadOptions {
  PickleLimits pickle;
  uint64_t max_entries = 1u << 20;
  uint32_t max_frames_per_entry = 64;
};

// Whether the first bytes are those of an FR dump this reader knows: a
// pickle (PROTO 2..5) or a JSON object.
bool LooksLikeFrDump(const uint8_t* data, size_t size);

// Parses a whole FR dump in memory. `name` is the file's path: it names
// the file in messages and, when the content alone cannot tell the global
// rank (every process group the file lists holds several ranks), its
// "rank_<N>" or trailing digits do.
ReadResult ReadFrBytes(const uint8_t* data, size_t size, const std::string& name,
                       const ReadOptions& options = {});

}  // namespace fr

// The analyzer's reader of one input file: flightrec's rings and dumps
// (ReadSnapshotFile), and PyTorch FR dumps, opened the same way (owner
// checked, never through a symlink, never blocking: fileio::OpenForRead
// with ReadTrust()). `window` applies to flightrec's dumps
// (ReadSnapshotFile); a PyTorch FR dump is always read whole.
ReadResult ReadInputFile(const std::string& path, const ReadWindow* window = nullptr);

// The Python frames of a process's current FR entry (PytorchFrInfo::
// Current), innermost first, at most `max` lines "fn (file:line)"; empty
// for flightrec files. *what says which entry: "nccl:all_reduce #41
// (completed) on default_pg".
std::vector<std::string> FrCurrentFrames(const ProcessSnapshot& p, size_t max, std::string* what);

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_FR_READER_H_

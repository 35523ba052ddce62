// Turns the PATH... arguments of `flightrec analyze`/`timeline` into one
// snapshot per process: walks directories, reads files in parallel, keeps
// the file holding the newest state of each process (its newest dump, or
// its ring when the ring moved on since: docs/analyzer.md "Which file"),
// reports rings left half-made by processes that died during init, and
// sets aside unreadable files, files the reader refuses (a symlink, not a
// regular file, another user's: snapshot_reader.h, ReadTrust) and files of
// another job, each with the reason.
#ifndef FLIGHTREC_ANALYZER_MODEL_INPUTS_H_
#define FLIGHTREC_ANALYZER_MODEL_INPUTS_H_

#include <functional>
#include <string>
#include <vector>

#include "analyzer/model/job_index.h"
#include "analyzer/reader/snapshot.h"
#include "analyzer/reader/snapshot_reader.h"

namespace flightrec {
namespace analysis {

struct RejectedInput {
  std::string path;
  std::string reason;
};

struct SupersededInput {
  std::string path;
  std::string by;   // the file of the same process that was used instead
  std::string why;  // e.g. "older dump (#2 of 4)", "the ring moved on after it"
};

// Where a process's state came from (one per analyzed process).
struct EvidenceSource {
  std::string path;
  const char* kind = "ring";  // "ring" | "dump" | "init" (a ring left half-made)
  std::string reason;         // why this file holds the newest state
  uint64_t time_wall_ns = 0;  // when that state was captured, on the process's own clock
  bool over_dump = false;     // a ring chosen over a dump of the same process (newer)
};

struct Inputs {
  std::vector<ProcessSnapshot> processes;   // ordered by (host, pid, path)
  std::vector<EvidenceSource> sources;      // same order
  std::vector<std::string> read;            // the files analyzed, same order
  std::vector<SupersededInput> superseded;  // older files of those processes
  std::vector<RejectedInput> rejected;      // sorted by path
  std::string job_id;                       // the majority job id
  // What the user asked to analyze and when (the reports' header): the
  // PATH arguments as given, and the analysis time (0: not stated). Set by
  // the CLI (cli/analysis_run.h), not by LoadInputs.
  std::vector<std::string> paths;
  uint64_t analyzed_wall_ns = 0;
};

using ReadFunction = std::function<ReadResult(const std::string& path)>;

struct LoadOptions {
  unsigned threads = 0;  // 0: one per core
  ReadFunction read;     // default: ReadSnapshotFile
  // Memory for full records, shared by all files; a file with more than its
  // share is trimmed as it is read (record_window.h). 0: keep everything.
  uint64_t record_budget_bytes = 0;
  // Full records a file keeps at most, whatever the budget (0: no window).
  uint64_t window_records = 0;
};

Inputs LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options = {});

// Reads inputs->processes[i] again for each i in `which`, the record budget
// now shared by those files only: a view of a few ranks (`flightrec
// timeline --ranks`) keeps more of their history than a 16k-file load
// could. A file that fails to read, or now holds another process, keeps
// what it had.
void ReloadProcesses(const std::vector<size_t>& which, const LoadOptions& options, Inputs* inputs);

// Re-reads records from the files LoadInputs read (with the same read
// function), for JobIndex::set_record_source. Keeps the last file read, so
// several ops of one file cost one read.
RecordSource FileRecordSource(const LoadOptions& options = {});

// Files found under `paths` (directories walked recursively, sorted): every
// entry but a directory and our companion files (flightrec/job_dir.h,
// IsCompanionName: temporaries, triggers, what `flightrec watch` writes; a
// *.ring.init is an input: a process that died during init). None is
// opened here; the reader refuses a symlink, a FIFO or another user's file
// and rejects one that is not a ring or a dump from its first bytes, each
// with the reason. Missing paths are reported in *rejected.
std::vector<std::string> CollectFiles(const std::vector<std::string>& paths,
                                      std::vector<RejectedInput>* rejected);

// Keeps one snapshot per process and drops foreign jobs (exposed for tests).
// Snapshots with process_state format::kProcessStarting and no regions stand
// for processes that died during init (see DiedDuringInit).
Inputs SelectSnapshots(std::vector<ProcessSnapshot> snapshots, std::vector<RejectedInput> rejected);

// A process that never finished init: its ring is a `.ring.init` or an
// all-zero `.ring` (analyzer/reader/init_file.h), kept as a snapshot with
// no regions so that it counts in the job.
bool DiedDuringInit(const ProcessSnapshot& process);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_INPUTS_H_

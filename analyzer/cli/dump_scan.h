// What `flightrec watch` sees in its directories: every ring and dump's
// identity (job, host, pid, kind, dump reason and time, communicator sizes),
// read through the reader and cached per file, and the hang incident those
// files describe (docs/design/verdict.md).
#ifndef FLIGHTREC_ANALYZER_CLI_DUMP_SCAN_H_
#define FLIGHTREC_ANALYZER_CLI_DUMP_SCAN_H_

#include <stdint.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace flightrec {
namespace cli {

// One ring or dump, as far as the watcher needs it.
struct SeenFile {
  std::string path;
  bool is_dump = false;
  std::string job_id;
  std::string host;
  int64_t pid = 0;
  uint64_t created_wall_ns = 0;
  uint32_t dump_reason = 0;  // format::DumpReason (dumps)
  uint64_t dump_wall_ns = 0;
  uint64_t timeout_ns = 0;  // the process's NCCL_FLIGHTREC_TIMEOUT_S
  uint64_t poll_ns = 0;     // its watchdog period (= heartbeat period)
  uint64_t heartbeat_count = 0;
  int32_t max_nranks = 0;  // largest communicator it belongs to
  // When this file was last read, and when (local steady clock) its
  // heartbeat count last changed: a ring whose heartbeat stands still for
  // several watchdog periods belongs to a process that is gone.
  std::chrono::steady_clock::time_point read_at;
  std::chrono::steady_clock::time_point heartbeat_moved_at;

  bool IsHangDump() const;  // a dump sealed on timeout or trigger
  std::string ProcessKey() const;
};

// Lists DIRs (recursively, as `flightrec analyze` does: analysis::
// CollectFiles, which leaves out our companion files) and keeps the
// identity of every *.ring and *.frdump in them. A file is read once (again
// only when it is replaced or changes size or mtime) through the reader,
// which refuses a symlink, a FIFO and a file not owned by the running user
// (or the trusted group): such a file, like one that cannot be read, is
// reported once on stderr, never counted in an incident, and stays among
// the analysis inputs, where the report lists it with its reason.
class DumpScanner {
 public:
  explicit DumpScanner(std::vector<std::string> dirs) : dirs_(std::move(dirs)) {}

  // False (with *error) when the first directory cannot be listed. Other
  // directories that vanish are reported once and skipped.
  bool Scan(std::string* error);
  const std::vector<SeenFile>& files() const { return files_; }
  // The analysis inputs for `job`: every file of DIRs but our own outputs
  // and the rings and dumps of other jobs (two jobs may share a directory;
  // `flightrec analyze` would take the majority job).
  std::vector<std::string> InputsOf(const std::string& job) const;

  // Reads the ring at `path` again (for its heartbeat) when it was last
  // read more than `min_age` ago.
  void RefreshRing(const std::string& path, std::chrono::steady_clock::duration min_age);

 private:
  struct Entry {
    uint64_t dev = 0, ino = 0, size = 0, mtime_ns = 0;
    bool ok = false;
    SeenFile file;
  };
  bool ReadInto(const std::string& path, Entry* entry);

  std::vector<std::string> dirs_;
  std::map<std::string, Entry> cache_;
  std::set<std::string> reported_;  // paths and dirs already complained about
  std::vector<SeenFile> files_;
  std::vector<std::string> inputs_;
};

// The job `flightrec watch` follows when not told: the one most processes
// (rings and dumps) belong to; ties go to the smaller name.
std::string MajorityJob(const std::vector<SeenFile>& files);

// What the watcher has already judged (the done marker, verdict_lock.h). A
// hang dump belongs to the judged incident when the op that caused it could
// have been stuck before the verdict was written: sealed by covered_until_ns
// plus its watchdog timeout, two of its watchdog periods (the late timeout
// dump, then the trigger dumps it causes) and a second of slack for sealing
// (docs/design/verdict.md).
struct Coverage {
  static constexpr uint64_t kSlackNs = 1000000000;
  bool valid = false;
  uint64_t covered_until_ns = 0;
  bool Covers(const SeenFile& dump) const {
    return valid &&
           dump.dump_wall_ns <= covered_until_ns + dump.timeout_ns + 2 * dump.poll_ns + kSlackNs;
  }
};

// One hang incident of one job: its hang dumps not yet judged.
struct Incident {
  bool open = false;                     // some hang dump of the job is not covered
  bool any_hang = false;                 // the job has hang dumps at all
  uint64_t start_ns = 0;                 // earliest uncovered hang dump
  uint64_t newest_ns = 0;                // newest hang dump of the incident
  size_t expected = 0;                   // processes that should dump
  size_t dumped = 0;                     // processes with a hang dump of the incident
  size_t gone = 0;                       // processes not expected: their ring stopped beating
  std::vector<std::string> waiting_for;  // host:pid of processes seen but not dumped
  // Rings of waited-for processes whose heartbeat was not seen moving for
  // long enough: re-read them (DumpScanner::RefreshRing) and assess again.
  std::vector<std::string> quiet_rings;
  bool complete() const { return open && dumped + gone >= expected && waiting_for.empty(); }
};

// `now` is the local steady clock. A visible process without a dump of the
// incident whose ring heartbeat has not moved for three of its watchdog
// periods (at least 1 s) is counted gone (killed, its node lost), not
// waited for. Only a read of the ring confirms it: rings not read since are
// listed in quiet_rings.
Incident AssessIncident(const std::vector<SeenFile>& files, const std::string& job,
                        const Coverage& coverage, std::chrono::steady_clock::time_point now);

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_DUMP_SCAN_H_

#include "analyzer/model/inputs.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "analyzer/model/describe.h"
#include "analyzer/model/record_window.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/reader/init_file.h"
#include "analyzer/reader/record_buffers.h"
#include "flightrec/job_dir.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace analysis {
namespace {

namespace fs = std::filesystem;

// Files of ours that are never inputs (flightrec/job_dir.h,
// IsCompanionName): a file still being written (or left by a process
// killed before its rename), the trigger, and what `flightrec watch` writes
// beside the dumps. A `.ring.init` is an input: a process that died during
// init.
bool Companion(const fs::path& p) {
  const std::string name = p.filename().string();
  return format::IsCompanionName(name.c_str()) && !HasSuffix(name, kInitSuffix);
}

void Walk(const std::string& dir, std::vector<std::string>* files,
          std::vector<RejectedInput>* rejected) {
  std::error_code ec;
  fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
  if (ec) {
    rejected->push_back({dir, "cannot list directory: " + ec.message()});
    return;
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      rejected->push_back({dir, "error while listing: " + ec.message()});
      return;
    }
    std::error_code fec;
    if (Companion(it->path())) continue;
    // Directories are walked (a symlink to one is not followed); every
    // other entry goes to the reader, which refuses a symlink, a FIFO or a
    // file of another owner with the reason: nothing is dropped silently.
    if (!it->is_symlink(fec) && it->is_directory(fec)) continue;
    // Not opened here: the reader threads judge every file, from its first
    // bytes when it is not ours (one open per file, in parallel: on a
    // shared file system of 16k dumps the opens are the cost).
    files->push_back(it->path().string());
  }
}

using ProcessKey = std::tuple<std::string, int64_t, uint64_t>;  // host, pid, created
ProcessKey KeyOf(const ProcessSnapshot& s) { return ProcessKey(s.host, s.pid, s.created_wall_ns); }

constexpr uint64_t kDefaultPollNs = 1000000000ULL;

// Dumps of one process, newest last: by sequence, then time; the path
// breaks ties.
bool DumpOlder(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  if (a.dump_sequence != b.dump_sequence) return a.dump_sequence < b.dump_sequence;
  if (a.dump_wall_ns != b.dump_wall_ns) return a.dump_wall_ns < b.dump_wall_ns;
  return a.path < b.path;
}

// Rings of one process instance (normally one), newest last.
bool RingOlder(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  if (a.heartbeat_wall_ns != b.heartbeat_wall_ns) return a.heartbeat_wall_ns < b.heartbeat_wall_ns;
  return a.path < b.path;
}

bool SealedOnHangOrExit(const ProcessSnapshot& d) {
  return d.dump_reason == format::kDumpTimeout || d.dump_reason == format::kDumpTrigger ||
         d.dump_reason == format::kDumpExit;
}

// Whether `ring` holds newer state than `dump`, judged on content, which
// needs no clock: a dump is a copy of the ring, so a ring that claimed more
// slots in a region, holds a region the dump lacks, finalized one, or holds
// a record in a later state than the dump's copy of it has moved on.
// `*how` says what moved.
bool RingMovedOn(const ProcessSnapshot& ring, const ProcessSnapshot& dump, std::string* how) {
  for (const CommSnapshot& r : ring.comms) {
    const CommSnapshot* d = nullptr;
    for (const CommSnapshot& c : dump.comms) {
      if (c.region_index == r.region_index && c.comm_id == r.comm_id &&
          c.generation == r.generation) {
        d = &c;
      }
    }
    if (d == nullptr) {
      *how = "comm " + r.name + " was created after it";
      return true;
    }
    if (r.head > d->head) {
      *how = std::to_string(r.head - d->head) + " more ops on comm " + r.name;
      return true;
    }
    if (r.state != d->state) {
      *how = "comm " + r.name + " was finalized since";
      return true;
    }
    // Both ascend by slot_seq: one merge walk.
    size_t j = 0;
    for (const OpRecord& rec : r.records) {
      while (j < d->records.size() && d->records[j].slot_seq < rec.slot_seq) ++j;
      if (j < d->records.size() && d->records[j].slot_seq == rec.slot_seq &&
          d->records[j].op_index == rec.op_index && rec.state > d->records[j].state) {
        *how = "op #" + std::to_string(rec.op_index) + " on comm " + r.name + " progressed since";
        return true;
      }
    }
  }
  return false;
}

// How much later the ring's heartbeat is than the dump's seal, on the
// process's own clock: CLOCK_MONOTONIC when both files carry it (immune to
// wall-clock steps), else the wall clock. Negative when earlier.
int64_t HeartbeatAfterDumpNs(const ProcessSnapshot& ring, const ProcessSnapshot& dump) {
  if (ring.heartbeat_mono_ns != 0 && dump.dump_mono_ns != 0) {
    return static_cast<int64_t>(ring.heartbeat_mono_ns - dump.dump_mono_ns);
  }
  if (ring.heartbeat_wall_ns == 0 || dump.dump_wall_ns == 0) return INT64_MIN;
  return static_cast<int64_t>(ring.heartbeat_wall_ns - dump.dump_wall_ns);
}

std::string DumpName(const ProcessSnapshot& d) {
  return "dump #" + std::to_string(d.dump_sequence) + " (" + format::DumpReasonName(d.dump_reason) +
         ")";
}

std::string SecondsText(int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f s", static_cast<double>(ns) / 1e9);
  return buf;
}

uint64_t NewestRecordTime(const ProcessSnapshot& p) {
  uint64_t t = 0;
  for (const CommSnapshot& c : p.comms) {
    for (const OpRecord& r : c.records) t = std::max({t, r.t_enqueue_ns, r.last_progress_ns()});
  }
  return t;
}

EvidenceSource SourceOf(const ProcessSnapshot& p, std::string reason) {
  EvidenceSource s;
  s.path = p.path;
  s.kind = p.is_dump ? "dump" : "ring";
  s.reason = std::move(reason);
  if (p.is_dump) {
    s.time_wall_ns = p.dump_wall_ns;
  } else {
    s.time_wall_ns = p.heartbeat_wall_ns != 0 ? p.heartbeat_wall_ns : NewestRecordTime(p);
  }
  return s;
}

// The file of one process instance that holds its newest state, with the
// reason; every other file of it is superseded, with why. The newest dump
// wins unless the ring is newer: the process exited after the dump (and
// the dump is not its exit dump), the ring moved on since the dump (a
// process stops dumping after NCCL_FLIGHTREC_MAX_DUMPS, so after a few
// transient stalls its newest state exists only in the ring), or its
// heartbeat is more than two polls later and the dump was not sealed on a
// hang or at exit (a dump sealed on a hang whose ops have not moved holds
// the same ops as the ring, and is evidence that they were stuck).
size_t ChooseFile(const std::vector<ProcessSnapshot>& snaps, const std::vector<size_t>& idx,
                  std::vector<std::string>* why, EvidenceSource* source) {
  std::vector<size_t> dumps, rings;
  for (size_t i : idx) (snaps[i].is_dump ? dumps : rings).push_back(i);
  auto by_dump = [&snaps](size_t a, size_t b) { return DumpOlder(snaps[a], snaps[b]); };
  auto by_ring = [&snaps](size_t a, size_t b) { return RingOlder(snaps[a], snaps[b]); };
  std::sort(dumps.begin(), dumps.end(), by_dump);
  std::sort(rings.begin(), rings.end(), by_ring);
  // Sized once per load and cleared only at this process's files: clearing
  // all of it per process would be quadratic in the files (4.3 billion
  // string assignments at 65,536 ranks).
  if (why->size() != snaps.size()) why->assign(snaps.size(), std::string());
  for (size_t i : idx) (*why)[i].clear();
  const std::string n_dumps = std::to_string(dumps.size());
  for (size_t k = 0; k + 1 < dumps.size(); ++k) {
    (*why)[dumps[k]] =
        "older " + DumpName(snaps[dumps[k]]) + ", " + std::to_string(k + 1) + " of " + n_dumps;
  }
  for (size_t k = 0; k + 1 < rings.size(); ++k) (*why)[rings[k]] = "an older copy of the ring";
  if (dumps.empty()) {
    *source = SourceOf(snaps[rings.back()], "no dump of this process");
    return rings.back();
  }
  const ProcessSnapshot& dump = snaps[dumps.back()];
  if (rings.empty()) {
    *source = SourceOf(dump, "newest " + DumpName(dump) + " (no ring of this process)");
    return dumps.back();
  }
  const ProcessSnapshot& ring = snaps[rings.back()];
  const uint64_t poll = ring.watchdog_poll_ns != 0 ? ring.watchdog_poll_ns : kDefaultPollNs;
  const int64_t later = HeartbeatAfterDumpNs(ring, dump);
  std::string how, reason;
  if (ring.process_state == format::kProcessExited && dump.dump_reason != format::kDumpExit) {
    reason = "the process exited after its newest " + DumpName(dump) +
             " (no exit dump), the ring holds its final state";
  } else if (RingMovedOn(ring, dump, &how)) {
    reason = "it moved on after its newest " + DumpName(dump) + " (" + how + ")";
  } else if (later > static_cast<int64_t>(2 * poll) && !SealedOnHangOrExit(dump)) {
    reason = "its heartbeat is " + SecondsText(later) + " later than the newest " + DumpName(dump);
  }
  if (!reason.empty()) {
    (*why)[dumps.back()] = "older than the ring: " + reason;
    *source = SourceOf(ring, reason);
    source->over_dump = true;
    return rings.back();
  }
  (*why)[rings.back()] = "holds nothing newer than " + DumpName(dump);
  *source = SourceOf(
      dump, "newest " + DumpName(dump) + " of " + n_dumps + "; the ring holds nothing newer");
  return dumps.back();
}

// PyTorch FR dumps carry no job id: they count only when no flightrec file
// does (docs/design/pytorch-fr.md).
std::string MajorityJob(const std::vector<ProcessSnapshot>& snapshots) {
  std::map<std::string, std::map<ProcessKey, int>> by_job;
  const bool ours = std::any_of(snapshots.begin(), snapshots.end(),
                                [](const ProcessSnapshot& s) { return !s.pytorch_fr; });
  for (const ProcessSnapshot& s : snapshots) {
    if (!ours || !s.pytorch_fr) by_job[s.job_id][KeyOf(s)] = 1;
  }
  std::string best;
  size_t best_count = 0;
  for (const auto& [job, procs] : by_job) {  // ordered: ties go to the smaller id
    if (procs.size() > best_count) {
      best = job;
      best_count = procs.size();
    }
  }
  return best;
}

// The global ranks flightrec's files show in each communicator: comm id ->
// (comm rank -> global rank), a process's global rank being its rank in its
// widest communicator.
using CommMembers = std::map<uint64_t, std::map<int32_t, int32_t>>;

CommMembers MembersOf(const std::vector<ProcessSnapshot>& snapshots) {
  CommMembers members;
  for (const ProcessSnapshot& s : snapshots) {
    const CommSnapshot* widest = s.pytorch_fr ? nullptr : WidestComm(s);
    if (widest == nullptr) continue;
    for (const CommSnapshot& c : s.comms) members[c.comm_id][c.rank] = widest->rank;
  }
  return members;
}

std::string RanksList(const std::vector<int64_t>& ranks) {
  std::string s = "[";
  for (size_t k = 0; k < ranks.size() && k < 16; ++k) {
    s += (k ? ", " : "") + std::to_string(ranks[k]);
  }
  return s + (ranks.size() > 16 ? ", ...]" : "]");
}

// Whether an FR dump's process groups agree with a flightrec process's
// communicators: each communicator of two ranks or more has a group of its
// size in which the process holds the same position and that lists, at each
// position, the global rank flightrec's files show there. A communicator
// whose size no group of the dump has proves nothing either way (a comm
// made outside PyTorch's process groups), nor does a group with no
// communicator (one the plugin did not record). *why names the first
// disagreement.
bool SameGroups(const PytorchFrInfo& fr, const ProcessSnapshot& ours, const CommMembers& members,
                std::string* why) {
  static const std::map<int32_t, int32_t> kNone;
  for (const CommSnapshot& c : ours.comms) {
    if (c.nranks < 2) continue;
    const auto m = members.find(c.comm_id);
    const std::map<int32_t, int32_t>& seen = m == members.end() ? kNone : m->second;
    bool sized = false, agrees = false;
    for (const FrGroupInfo& g : fr.groups) {
      if (!g.member || g.ranks.size() != static_cast<size_t>(c.nranks)) continue;
      sized = true;
      const auto at = std::find(g.ranks.begin(), g.ranks.end(), fr.global_rank);
      if (at - g.ranks.begin() != c.rank) continue;
      agrees = std::all_of(seen.begin(), seen.end(), [&g](const auto& rg) {
        return rg.first >= 0 && static_cast<size_t>(rg.first) < g.ranks.size() &&
               g.ranks[static_cast<size_t>(rg.first)] == rg.second;
      });
      if (agrees) break;
    }
    if (sized && !agrees) {
      std::vector<int64_t> globals;
      for (const auto& [rank, global] : seen) globals.push_back(global);
      *why = ours.path + "'s communicator " + c.name + " (rank " + std::to_string(c.rank) + " of " +
             std::to_string(c.nranks) + ", global ranks " + RanksList(globals) +
             ") matches none of the dump's " + std::to_string(c.nranks) + "-rank process groups";
      return false;
    }
  }
  return true;
}

// A PyTorch FR dump and flightrec files of the same process: the same
// global rank (the rank in the process's widest communicator, which has as
// many ranks as the FR dump's widest group), and process groups that agree
// with the process's communicators (SameGroups): flightrec's records are
// the evidence, the FR dump's Python frames are attached to them
// (docs/design/pytorch-fr.md "Mixed directories"). For each FR dump merged
// so, the index of a flightrec file it was attached to, else SIZE_MAX; a
// dump of a global rank whose groups disagree stays a process of its own,
// with a warning saying why.
std::vector<size_t> MergeFrDumps(std::vector<ProcessSnapshot>* snapshots) {
  std::vector<size_t> merged(snapshots->size(), SIZE_MAX);
  std::map<std::pair<int32_t, int32_t>, std::vector<size_t>> ours;  // (nranks, rank) -> files
  for (size_t i = 0; i < snapshots->size(); ++i) {
    const ProcessSnapshot& s = (*snapshots)[i];
    const CommSnapshot* widest = s.pytorch_fr ? nullptr : WidestComm(s);
    if (widest != nullptr) ours[{widest->nranks, widest->rank}].push_back(i);
  }
  if (ours.empty()) return merged;
  const CommMembers members = MembersOf(*snapshots);
  for (size_t i = 0; i < snapshots->size(); ++i) {
    ProcessSnapshot& fr = (*snapshots)[i];
    const bool fr_file = fr.pytorch_fr && fr.pytorch_fr->path == fr.path;
    const CommSnapshot* widest = fr_file ? WidestComm(fr) : nullptr;
    if (widest == nullptr) continue;
    auto it = ours.find({widest->nranks, static_cast<int32_t>(fr.pytorch_fr->global_rank)});
    if (it == ours.end()) continue;
    std::string why;
    for (size_t k : it->second) {
      ProcessSnapshot& s = (*snapshots)[k];
      if (s.job_id != fr.job_id || !SameGroups(*fr.pytorch_fr, s, members, &why)) continue;
      s.pytorch_fr = fr.pytorch_fr;
      if (merged[i] == SIZE_MAX) merged[i] = k;
    }
    if (merged[i] == SIZE_MAX && !why.empty()) {
      fr.warnings.push_back("not taken as the same process as flightrec's files of global rank " +
                            std::to_string(fr.pytorch_fr->global_rank) + ": " + why);
    }
  }
  return merged;
}

// A ring never renamed from `.ring.init` stands for a process that died
// during init: no regions, state format::kProcessStarting.
void AsDiedDuringInit(ProcessSnapshot* s) {
  s->is_dump = false;
  s->process_state = format::kProcessStarting;
  s->comms.clear();
}

// The snapshot of a half-made ring the reader could not read: what its
// header says, else only the file's time (the name gives host and pid).
ProcessSnapshot InitSnapshot(const std::string& path, const InitFile& f) {
  ProcessSnapshot s;
  s.path = path;
  s.file_size = f.size;
  if (f.header) {
    s.version_major = format::kFormatMajor;
    s.pid = f.pid;
    s.host = f.host;
    s.job_id = f.job_id;
    s.created_wall_ns = f.created_wall_ns;
  } else {
    s.created_wall_ns = f.mtime_ns;
  }
  AsDiedDuringInit(&s);
  return s;
}

ReadFunction ReaderOf(const LoadOptions& options) {
  if (options.read) return options.read;
  return [](const std::string& p) { return ReadInputFile(p); };  // ours and PyTorch FR dumps
}

// Reads `path` (ReaderOf) and keeps what `keep` keeps of it. The default
// reader applies the window while it parses a dump (ReadWindow: the records
// it drops are never decoded); anything it returned whole, and whatever a
// read function of the caller returned, is trimmed here.
ReadResult ReadWindowed(const LoadOptions& options, const ReadFunction& read,
                        const WindowPolicy& keep, const std::string& path) {
  ReadResult r;
  if (options.read || keep.full == UINT64_MAX) {
    r = read(path);
  } else {
    const ReadWindow window = ReadWindowFor(keep);
    r = ReadInputFile(path, &window);
  }
  if (r.ok && !r.windowed) TrimToWindow(keep, &r.snapshot);
  return r;
}

}  // namespace

std::vector<std::string> CollectFiles(const std::vector<std::string>& paths,
                                      std::vector<RejectedInput>* rejected) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    const fs::file_status st = fs::status(p, ec);
    if (ec || !fs::exists(st)) {
      rejected->push_back({p, "no such file or directory"});
    } else if (fs::is_directory(st)) {
      Walk(p, &files, rejected);
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

bool DiedDuringInit(const ProcessSnapshot& process) {
  return !process.is_dump && process.process_state == format::kProcessStarting &&
         process.comms.empty();
}

Inputs SelectSnapshots(std::vector<ProcessSnapshot> snapshots,
                       std::vector<RejectedInput> rejected) {
  Inputs in;
  in.job_id = MajorityJob(snapshots);
  // FR dumps beside flightrec files belong to their job (they name none).
  for (ProcessSnapshot& s : snapshots) {
    if (s.pytorch_fr) s.job_id = in.job_id;
  }
  const std::vector<size_t> merged = MergeFrDumps(&snapshots);
  std::map<ProcessKey, std::vector<size_t>> by_process;
  // host, pid -> an init-less file: a ring that finished init supersedes a
  // half-made one of the same process (whose creation time may be unknown).
  std::map<std::pair<std::string, int64_t>, size_t> complete;
  std::vector<size_t> init_only;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const ProcessSnapshot& s = snapshots[i];
    if (merged[i] != SIZE_MAX) {
      in.superseded.push_back({s.path, snapshots[merged[i]].path,
                               "a PyTorch FR dump of the same global rank: its Python frames are "
                               "attached to that process, whose records are the evidence"});
      continue;
    }
    if (s.job_id != in.job_id) {
      rejected.push_back({s.path, "foreign job id '" + s.job_id +
                                      "' (the majority of processes are job '" + in.job_id + "')"});
      continue;
    }
    if (DiedDuringInit(s)) {
      init_only.push_back(i);
      continue;
    }
    by_process[KeyOf(s)].push_back(i);
    complete.emplace(std::make_pair(s.host, s.pid), i);
  }
  std::map<ProcessKey, std::vector<size_t>> init_by_process;
  for (size_t i : init_only) {
    const ProcessSnapshot& s = snapshots[i];
    const auto done = complete.find(std::make_pair(s.host, s.pid));
    if (done != complete.end()) {
      in.superseded.push_back({s.path, snapshots[done->second].path,
                               "left by init; the process finished init and its ring is used"});
      continue;
    }
    init_by_process[KeyOf(s)].push_back(i);
  }
  for (auto& [key, idx] : init_by_process) {
    std::sort(idx.begin(), idx.end(),
              [&snapshots](size_t a, size_t b) { return snapshots[a].path < snapshots[b].path; });
    for (size_t k = 1; k < idx.size(); ++k) {
      in.superseded.push_back(
          {snapshots[idx[k]].path, snapshots[idx[0]].path, "another file left by the same init"});
    }
    by_process[key] = {idx[0]};
  }
  // std::map order = (host, pid, created): deterministic, scheduling-free.
  std::vector<std::string> why;
  for (auto& [key, idx] : by_process) {
    EvidenceSource source;
    size_t best = idx[0];
    if (DiedDuringInit(snapshots[best])) {
      const ProcessSnapshot& s = snapshots[best];
      source.path = s.path;
      source.kind = "init";
      source.reason = std::string("a ring left half-made: the process died during init (") +
                      (s.version_major != 0 ? "identity from the header it wrote"
                                            : "no header: identity from the file name, time from "
                                              "the file's mtime") +
                      ")";
      source.time_wall_ns = s.created_wall_ns;
    } else {
      best = ChooseFile(snapshots, idx, &why, &source);
      for (size_t i : idx) {
        if (i != best) in.superseded.push_back({snapshots[i].path, snapshots[best].path, why[i]});
      }
    }
    in.read.push_back(snapshots[best].path);
    in.sources.push_back(std::move(source));
    in.processes.push_back(std::move(snapshots[best]));
  }
  std::sort(in.superseded.begin(), in.superseded.end(),
            [](const SupersededInput& a, const SupersededInput& b) { return a.path < b.path; });
  std::sort(rejected.begin(), rejected.end(),
            [](const RejectedInput& a, const RejectedInput& b) { return a.path < b.path; });
  in.rejected = std::move(rejected);
  return in;
}

Inputs LoadInputs(const std::vector<std::string>& paths, const LoadOptions& options) {
  std::vector<RejectedInput> rejected;
  const std::vector<std::string> files = CollectFiles(paths, &rejected);
  const ReadFunction read = ReaderOf(options);
  const WindowPolicy keep =
      WindowFor(options.record_budget_bytes, options.window_records, files.size());
  unsigned threads = options.threads != 0 ? options.threads : std::thread::hardware_concurrency();
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(files.size())));
  // Results land at the file's index, so the outcome does not depend on
  // which thread read what.
  std::vector<ReadResult> results(files.size());
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t i = next.fetch_add(1, std::memory_order_relaxed); i < files.size();
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      // Trimmed right away, so at most one untrimmed file per thread exists.
      results[i] = ReadWindowed(options, read, keep, files[i]);
    }
    ReleaseRecordBuffers();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  std::vector<ProcessSnapshot> snapshots;
  std::vector<size_t> nameless;  // half-made rings with no header: identity from the name
  std::vector<InitFile> init_files(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    const bool init_name = HasSuffix(files[i], kInitSuffix);
    if (results[i].ok) {
      if (results[i].snapshot.path.empty()) results[i].snapshot.path = files[i];
      // Never renamed: its process did not finish init, whatever it wrote.
      if (init_name) AsDiedDuringInit(&results[i].snapshot);
      snapshots.push_back(std::move(results[i].snapshot));
      continue;
    }
    if (init_name || HasSuffix(files[i], kRingSuffix)) {
      init_files[i] = ReadInitFile(files[i]);
      const InitFile& f = init_files[i];
      if (f.readable && (init_name || f.all_zero)) {
        if (f.header) {
          snapshots.push_back(InitSnapshot(files[i], f));
        } else {
          nameless.push_back(i);
        }
        continue;
      }
    }
    // The init reader's reason when it refused the file or found a header
    // flightrec never writes; else the reader's.
    const std::string why = !init_files[i].readable && !init_files[i].error.empty()
                                ? files[i] + ": " + init_files[i].error
                                : results[i].error;
    rejected.push_back({files[i], why.empty() ? "unreadable" : why});
  }
  // The name says host and pid once the job id is known; it is the job's
  // (the file is in the job's directory under the job's name).
  const std::string job = MajorityJob(snapshots);
  for (size_t i : nameless) {
    ProcessSnapshot s = InitSnapshot(files[i], init_files[i]);
    if (!ParseRingName(files[i], job, &s.host, &s.pid)) {
      rejected.push_back(
          {files[i], results[i].error + " (" + (init_files[i].all_zero ? "all zero" : "no header") +
                         ": a ring left half-made by a process that died during init, but its "
                         "name is not flightrec-" +
                         job + "-<host>-<pid>.ring)"});
      continue;
    }
    s.job_id = job;
    snapshots.push_back(std::move(s));
  }
  return SelectSnapshots(std::move(snapshots), std::move(rejected));
}

void ReloadProcesses(const std::vector<size_t>& which, const LoadOptions& options, Inputs* inputs) {
  const ReadFunction read = ReaderOf(options);
  const WindowPolicy keep =
      WindowFor(options.record_budget_bytes, options.window_records, which.size());
  for (size_t i : which) {
    if (i >= inputs->processes.size()) continue;
    ProcessSnapshot& old = inputs->processes[i];
    if (DiedDuringInit(old)) continue;  // nothing more to read
    ReadResult r = ReadWindowed(options, read, keep, old.path);
    if (!r.ok || r.snapshot.pid != old.pid || r.snapshot.host != old.host ||
        r.snapshot.created_wall_ns != old.created_wall_ns) {
      continue;
    }
    r.snapshot.path = old.path;
    old = std::move(r.snapshot);
  }
}

RecordSource FileRecordSource(const LoadOptions& options) {
  struct Cache {
    std::mutex mutex;  // the detectors run per comm group on several threads
    std::string path;
    ReadResult result;
  };
  auto cache = std::make_shared<Cache>();
  const ReadFunction read = ReaderOf(options);
  return [cache, read](const ProcessSnapshot& process, const CommSnapshot& comm, uint64_t op_index,
                       OpRecord* out) {
    std::lock_guard<std::mutex> lock(cache->mutex);
    if (cache->path != process.path) {
      cache->path = process.path;
      cache->result = read(process.path);
    }
    if (!cache->result.ok) return false;
    for (const CommSnapshot& c : cache->result.snapshot.comms) {
      if (c.region_index != comm.region_index || c.comm_id != comm.comm_id) continue;
      for (const OpRecord& r : c.records) {
        if (!r.is_p2p() && r.op_index == op_index) {
          *out = r;
          return true;
        }
      }
    }
    return false;
  };
}

}  // namespace analysis
}  // namespace flightrec

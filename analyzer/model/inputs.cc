#include "analyzer/model/inputs.h"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <tuple>

#include "analyzer/model/record_window.h"
#include "analyzer/reader/record_buffers.h"

namespace flightrec {
namespace analysis {
namespace {

namespace fs = std::filesystem;

// Files of ours that are never inputs: a dump or report still being
// written (or left by a process killed before its rename), and the trigger
// file ranks use to ask each other for dumps.
bool Companion(const fs::path& p) { return p.extension() == ".tmp" || p.extension() == ".trigger"; }

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
    if (Companion(it->path()) || !it->is_regular_file(fec)) continue;
    // Not opened here: the reader threads judge every file, from its first
    // bytes when it is not ours (one open per file, in parallel: on a
    // shared file system of 16k dumps the opens are the cost), and a file
    // that is not ours is listed with the reason, so nothing is dropped
    // silently.
    files->push_back(it->path().string());
  }
}

using ProcessKey = std::tuple<std::string, int64_t, uint64_t>;  // host, pid, created
ProcessKey KeyOf(const ProcessSnapshot& s) { return ProcessKey(s.host, s.pid, s.created_wall_ns); }

// "a is a better representative of its process than b": the newest sealed
// dump, else the ring with the newest heartbeat; the path breaks ties.
bool Better(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  if (a.is_dump != b.is_dump) return a.is_dump;
  if (a.is_dump) {
    if (a.dump_sequence != b.dump_sequence) return a.dump_sequence > b.dump_sequence;
    if (a.dump_wall_ns != b.dump_wall_ns) return a.dump_wall_ns > b.dump_wall_ns;
  } else if (a.heartbeat_wall_ns != b.heartbeat_wall_ns) {
    return a.heartbeat_wall_ns > b.heartbeat_wall_ns;
  }
  return a.path < b.path;
}

std::string MajorityJob(const std::vector<ProcessSnapshot>& snapshots) {
  std::map<std::string, std::map<ProcessKey, int>> by_job;
  for (const ProcessSnapshot& s : snapshots) by_job[s.job_id][KeyOf(s)] = 1;
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

ReadFunction ReaderOf(const LoadOptions& options) {
  if (options.read) return options.read;
  return [](const std::string& p) { return ReadSnapshotFile(p); };
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

Inputs SelectSnapshots(std::vector<ProcessSnapshot> snapshots,
                       std::vector<RejectedInput> rejected) {
  Inputs in;
  in.job_id = MajorityJob(snapshots);
  std::map<ProcessKey, std::vector<size_t>> by_process;
  for (size_t i = 0; i < snapshots.size(); ++i) {
    const ProcessSnapshot& s = snapshots[i];
    if (s.job_id != in.job_id) {
      rejected.push_back({s.path, "foreign job id '" + s.job_id +
                                      "' (the majority of processes are job '" + in.job_id + "')"});
      continue;
    }
    by_process[KeyOf(s)].push_back(i);
  }
  // std::map order = (host, pid, created): deterministic, scheduling-free.
  for (auto& [key, idx] : by_process) {
    std::sort(idx.begin(), idx.end(),
              [&snapshots](size_t a, size_t b) { return Better(snapshots[a], snapshots[b]); });
    for (size_t k = 1; k < idx.size(); ++k) {
      in.superseded.push_back({snapshots[idx[k]].path, snapshots[idx[0]].path});
    }
    in.read.push_back(snapshots[idx[0]].path);
    in.processes.push_back(std::move(snapshots[idx[0]]));
  }
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
      results[i] = read(files[i]);
      // Trimmed right away, so at most one untrimmed file per thread exists.
      if (results[i].ok) TrimToWindow(keep, &results[i].snapshot);
    }
    ReleaseRecordBuffers();
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();

  std::vector<ProcessSnapshot> snapshots;
  for (size_t i = 0; i < files.size(); ++i) {
    if (results[i].ok) {
      if (results[i].snapshot.path.empty()) results[i].snapshot.path = files[i];
      snapshots.push_back(std::move(results[i].snapshot));
    } else {
      rejected.push_back({files[i], results[i].error.empty() ? "unreadable" : results[i].error});
    }
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
    ReadResult r = read(old.path);
    if (!r.ok || r.snapshot.pid != old.pid || r.snapshot.host != old.host ||
        r.snapshot.created_wall_ns != old.created_wall_ns) {
      continue;
    }
    TrimToWindow(keep, &r.snapshot);
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

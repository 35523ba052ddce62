#include "analyzer/cli/dump_scan.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "analyzer/model/inputs.h"
#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string BaseName(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace

bool SeenFile::IsHangDump() const {
  return is_dump && (dump_reason == format::kDumpTimeout || dump_reason == format::kDumpTrigger);
}

std::string SeenFile::ProcessKey() const {
  return host + ":" + std::to_string(pid) + "@" + std::to_string(created_wall_ns);
}

bool DumpScanner::ReadInto(const std::string& path, Entry* entry) {
  const ReadResult r = ReadSnapshotFile(path);
  const Clock::time_point now = Clock::now();
  if (!r.ok) {
    if (reported_.insert(path).second) {
      std::fprintf(stderr, "flightrec watch: skipping %s\n", r.error.c_str());
    }
    entry->ok = false;
    return false;
  }
  const ProcessSnapshot& s = r.snapshot;
  SeenFile f;
  f.path = path;
  f.is_dump = s.is_dump;
  f.job_id = s.job_id;
  f.host = s.host;
  f.pid = s.pid;
  f.created_wall_ns = s.created_wall_ns;
  f.dump_reason = s.dump_reason;
  f.dump_wall_ns = s.dump_wall_ns;
  f.timeout_ns = s.watchdog_timeout_ns;
  f.poll_ns = s.watchdog_poll_ns;
  f.heartbeat_count = s.heartbeat_count;
  for (const CommSnapshot& c : s.comms) f.max_nranks = std::max(f.max_nranks, c.nranks);
  f.read_at = now;
  const bool moved = !entry->ok || entry->file.heartbeat_count != f.heartbeat_count;
  f.heartbeat_moved_at = moved ? now : entry->file.heartbeat_moved_at;
  entry->file = std::move(f);
  entry->ok = true;
  return true;
}

bool DumpScanner::Scan(std::string* error) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dirs_[0], ec)) {
    *error = dirs_[0] + ": not a readable directory" + (ec ? ": " + ec.message() : "");
    return false;
  }
  std::vector<analysis::RejectedInput> missing;
  std::vector<std::string> all = analysis::CollectFiles(dirs_, &missing);
  for (const analysis::RejectedInput& m : missing) {
    if (reported_.insert(m.path).second) {
      std::fprintf(stderr, "flightrec watch: %s: %s (skipped)\n", m.path.c_str(), m.reason.c_str());
    }
  }
  inputs_.clear();
  std::map<std::string, Entry> next;
  for (const std::string& path : all) {
    const std::string name = BaseName(path);
    inputs_.push_back(path);
    const bool ring = EndsWith(name, ".ring");
    if (!ring && !EndsWith(name, ".frdump")) continue;
    struct stat st;
    if (lstat(path.c_str(), &st) != 0) continue;  // gone since the listing
    Entry e;
    e.dev = st.st_dev;
    e.ino = st.st_ino;
    e.size = static_cast<uint64_t>(st.st_size);
    e.mtime_ns = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                 static_cast<uint64_t>(st.st_mtim.tv_nsec);
    auto old = cache_.find(path);
    const bool same_file =
        old != cache_.end() && old->second.dev == e.dev && old->second.ino == e.ino;
    // A ring is rewritten in place all the time: its identity never changes,
    // RefreshRing re-reads it when its heartbeat matters. A dump is sealed
    // once (tmp + rename); a new inode, size or mtime is a new file.
    if (same_file && (ring || (old->second.size == e.size && old->second.mtime_ns == e.mtime_ns))) {
      next.emplace(path, std::move(old->second));
      continue;
    }
    if (old != cache_.end() && same_file) e.file = old->second.file, e.ok = old->second.ok;
    ReadInto(path, &e);
    next.emplace(path, std::move(e));
  }
  cache_ = std::move(next);
  files_.clear();
  for (const auto& [path, e] : cache_) {
    if (e.ok) files_.push_back(e.file);
  }
  return true;
}

std::vector<std::string> DumpScanner::InputsOf(const std::string& job) const {
  std::vector<std::string> out;
  for (const std::string& path : inputs_) {
    auto it = cache_.find(path);
    if (it != cache_.end() && it->second.ok && it->second.file.job_id != job) continue;
    out.push_back(path);
  }
  return out;
}

void DumpScanner::RefreshRing(const std::string& path, Clock::duration min_age) {
  auto it = cache_.find(path);
  if (it == cache_.end() || !it->second.ok || it->second.file.is_dump) return;
  if (Clock::now() - it->second.file.read_at < min_age) return;
  ReadInto(path, &it->second);
  for (SeenFile& f : files_) {
    if (f.path == path) f = it->second.file;
  }
}

std::string MajorityJob(const std::vector<SeenFile>& files) {
  std::map<std::string, std::set<std::string>> processes;
  for (const SeenFile& f : files) processes[f.job_id].insert(f.ProcessKey());
  std::string best;
  size_t most = 0;
  for (const auto& [job, keys] : processes) {
    if (keys.size() > most) best = job, most = keys.size();
  }
  return best;
}

Incident AssessIncident(const std::vector<SeenFile>& files, const std::string& job,
                        const Coverage& coverage, Clock::time_point now) {
  Incident in;
  std::map<std::string, const SeenFile*> ring_of;
  std::set<std::string> seen, dumped;
  int32_t nranks = 0;
  for (const SeenFile& f : files) {
    if (f.job_id != job) continue;
    seen.insert(f.ProcessKey());
    nranks = std::max(nranks, f.max_nranks);
    if (!f.is_dump) ring_of[f.ProcessKey()] = &f;
    if (!f.IsHangDump()) continue;
    in.any_hang = true;
    if (coverage.Covers(f)) continue;
    in.start_ns = in.open ? std::min(in.start_ns, f.dump_wall_ns) : f.dump_wall_ns;
    in.newest_ns = std::max(in.newest_ns, f.dump_wall_ns);
    in.open = true;
    dumped.insert(f.ProcessKey());
  }
  if (!in.open) return in;
  in.dumped = dumped.size();
  in.expected = std::max(seen.size(), static_cast<size_t>(std::max(nranks, 0)));
  for (const std::string& key : seen) {
    if (dumped.count(key) != 0) continue;
    auto ring = ring_of.find(key);
    if (ring != ring_of.end()) {
      const SeenFile& r = *ring->second;
      const Clock::duration still = std::max<Clock::duration>(
          std::chrono::nanoseconds(3 * r.poll_ns), std::chrono::seconds(1));
      // Gone only when a read confirms the stillness; a ring not read for
      // that long is re-read first (the caller's RefreshRing).
      if (r.read_at - r.heartbeat_moved_at >= still) {
        ++in.gone;
        continue;
      }
      if (now - r.heartbeat_moved_at >= still) in.quiet_rings.push_back(r.path);
    }
    in.waiting_for.push_back(key.substr(0, key.find('@')));
  }
  return in;
}

}  // namespace cli
}  // namespace flightrec

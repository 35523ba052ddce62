#include "analyzer/live/collector.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <set>
#include <thread>

#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
#include "flightrec/version.h"

namespace flightrec {
namespace live {
namespace {

bool EndsWith(const std::string& s, const char* suffix) {
  const std::string x = suffix;
  return s.size() > x.size() && s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
  return buf;
}

double Seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// Ring files (`*.ring`; `.ring.init` files are processes still in init) and
// dumps (`*.frdump`) directly under each directory.
void ListDir(const std::string& dir, std::set<std::string>* rings, std::set<std::string>* dumps) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return;
  while (struct dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (EndsWith(name, ".ring")) rings->insert(dir + "/" + name);
    if (EndsWith(name, ".frdump")) dumps->insert(dir + "/" + name);
  }
  closedir(d);
}

// The dump reasons flightrec_dumps_total reports, every one from 0.
constexpr std::array<uint32_t, 4> kDumpReasons = {format::kDumpTimeout, format::kDumpTrigger,
                                                  format::kDumpExit, format::kDumpRequest};

// A file the reader rejected: its problem, from the reader's message.
RingProblem ProblemOf(const std::string& error) {
  if (error.find("truncated") != std::string::npos) return RingProblem::kTruncated;
  if (error.find("not a flightrec") != std::string::npos) return RingProblem::kForeign;
  if (error.find("cannot open") != std::string::npos) return RingProblem::kVanished;
  return RingProblem::kInvalid;
}

// The process's rank in its widest communicator (the first of the widest,
// as the analyzer's "world rank" is: the world rank when it has a world
// communicator); "" before it has one.
std::string GlobalRankOf(const ProcessSnapshot& h) {
  const CommSnapshot* widest = nullptr;
  for (const CommSnapshot& c : h.comms) {
    if (widest == nullptr || c.nranks > widest->nranks) widest = &c;
  }
  if (widest == nullptr || widest->nranks <= 0 || widest->rank < 0) return "";
  return std::to_string(widest->rank);
}

}  // namespace

// One communicator of one process, as its series show it: counters that
// only grow while the process's ring exists, and the gauges of the last scan.
struct CommSeries {
  uint64_t comm_id = 0;
  std::string name;
  int32_t rank = -1;
  std::array<uint64_t, format::kNumFuncs> count{};  // kFuncUnknown: slots never read
  std::array<uint64_t, format::kNumFuncs> bytes{};
  uint64_t unread = 0;
  Histogram duration;
  Histogram queueing;
  // Completed collectives (not p2p, not among the region's first
  // kSyncWarmupSlots) with enqueue, GPU start and GPU end all known: the
  // per-rank half of the arrival signal (docs/monitoring.md,
  // "Fail-slow"). The late arriver of a collective waits least, so the
  // recording rules compare these means across the communicator's ranks.
  uint64_t sync_ops = 0;
  uint64_t sync_gpu_ns = 0;
  uint64_t sync_queueing_ns = 0;
  bool live = false;  // a region of the last scan holds this comm
  uint64_t pending = 0;
  uint64_t oldest_enqueue_ns = 0;  // of the pending ops; 0: none
};

// Where the tail of one region stands.
struct RegionTail {
  uint64_t generation = 0;
  uint64_t next_seq = 0;                 // first slot sequence not read yet
  std::map<uint64_t, uint64_t> pending;  // slot seq -> t_enqueue (wall ns), not done when read
};

struct Collector::Ring {
  LiveRing file;
  ProcessSnapshot head;
  std::map<uint32_t, RegionTail> tails;      // by region index
  std::map<std::string, CommSeries> series;  // by comm identity
};

struct Collector::Dump {
  bool ok = false;
  std::string job;
  std::string host;
  int64_t pid = 0;
  uint32_t reason = 0;
  RingProblem problem = RingProblem::kNone;  // when !ok
  std::string error;
};

namespace {

// Below this many new slots in all (~2 ms of reading), a scan runs on the
// calling thread: on a busy machine a second thread waits for a core longer
// than it saves.
constexpr uint64_t kMinParallelSlots = 65536;

// fn(i, scratch) for every ring i < n: on up to one thread per core (at most
// one per ring) when `slots` is worth it, each thread with its own scratch.
template <typename Fn>
void ForEachRing(size_t n, uint64_t slots, Fn&& fn) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = slots < kMinParallelSlots ? 1 : std::min(cores, n);
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    // Reused by every ring and scan on this thread (at most kBatchSlots).
    thread_local std::vector<LiveOp> recs;
    for (size_t i = next.fetch_add(1); i < n; i = next.fetch_add(1)) fn(i, &recs);
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace

Collector::Collector(std::vector<std::string> dirs, Detail detail)
    : dirs_(std::move(dirs)), detail_(detail) {}
Collector::~Collector() = default;

ScanStats Collector::Scan(uint64_t now_wall_ns, std::vector<std::string>* log) {
  now_wall_ns_ = now_wall_ns;
  ScanStats stats;
  std::set<std::string> ring_paths;
  std::set<std::string> dump_paths;
  for (const std::string& dir : dirs_) ListDir(dir, &ring_paths, &dump_paths);
  for (auto it = rings_.begin(); it != rings_.end();) {
    it = ring_paths.count(it->first) != 0 ? std::next(it) : rings_.erase(it);
  }
  for (auto it = dumps_.begin(); it != dumps_.end();) {
    it = dump_paths.count(it->first) != 0 ? std::next(it) : dumps_.erase(it);
  }
  std::map<std::string, RingProblem> previous;
  previous.swap(skipped_);
  std::map<std::string, RingProblem>& now_skipped = skipped_;
  // A file is logged (and counted) when it starts being skipped, or for
  // another reason than in the last scan; not again every scan.
  auto skip = [&](const std::string& path, RingProblem p, const std::string& error) {
    const auto before = previous.find(path);
    if (before == previous.end() || before->second != p) {
      ++skips_total_[RingProblemName(p)];
      log->push_back("skipped (" + std::string(RingProblemName(p)) + "): " + error);
    }
    now_skipped[path] = p;
  };
  // Headers first (a few KiB per ring), then the new slots: on more than
  // one core when there are many (ScanRing touches only its own ring).
  std::vector<Ring*> work;
  uint64_t new_slots = 0;
  for (const std::string& path : ring_paths) {
    std::unique_ptr<Ring>& ring = rings_[path];
    struct stat st;
    if (ring != nullptr && (stat(path.c_str(), &st) != 0 || st.st_ino != ring->file.inode() ||
                            st.st_dev != ring->file.device())) {
      ring.reset();  // replaced (or gone) under the same name: a new file
    }
    RingProblem problem = RingProblem::kNone;
    std::string error;
    if (ring == nullptr) {
      ring.reset(new Ring);
      if (!ring->file.Open(path, &problem, &error)) {
        rings_.erase(path);
        skip(path, problem, error);
        continue;
      }
    }
    if (!ring->file.ReadHead(&ring->head, &problem, &error)) {
      rings_.erase(path);
      skip(path, problem, error);
      continue;
    }
    new_slots += NewSlots(*ring);
    work.push_back(ring.get());
  }
  std::vector<ScanStats> ring_stats(work.size());
  ForEachRing(work.size(), new_slots, [&](size_t i, std::vector<LiveOp>* recs) {
    ScanRing(work[i], recs, &ring_stats[i]);
  });
  for (const ScanStats& r : ring_stats) stats.slots_read += r.slots_read;
  stats.rings += work.size();
  for (const std::string& path : dump_paths) {
    std::unique_ptr<Dump>& dump = dumps_[path];
    if (dump == nullptr) {
      dump.reset(new Dump);
      ReadResult r = ReadSnapshotFile(path);
      if (r.ok && r.snapshot.is_dump) {
        dump->ok = true;
        dump->job = r.snapshot.job_id;
        dump->host = r.snapshot.host;
        dump->pid = r.snapshot.pid;
        dump->reason = r.snapshot.dump_reason;
      } else if (r.ok) {
        r.error = path + ": not a dump (file_kind ring)";
      }
      if (!dump->ok) {
        dump->problem = r.ok ? RingProblem::kForeign : ProblemOf(r.error);
        dump->error = r.error;
        const RingProblem p = dump->problem;
        if (p == RingProblem::kVanished) dumps_.erase(path);  // read again if it comes back
        skip(path, p, r.error);
        continue;
      }
    } else if (!dump->ok) {
      skip(path, dump->problem, dump->error);  // a dump never changes: not read again
    }
  }
  stats.skipped_files = skipped_.size();
  return stats;
}

namespace {

// The first operations of a communicator carry its members' arrival from
// init (ranks start seconds apart on a big job: the first collective waits
// for the last one) and NCCL's connection setup: not a rank's pace. The
// sync counters leave out the region's first kSyncWarmupSlots slots.
constexpr uint64_t kSyncWarmupSlots = 16;

// Send, Recv and SendRecv pair with one peer each, not with the whole
// communicator: they carry no arrival order of its members.
bool IsP2pFunc(uint8_t func) {
  return func == format::kFuncSend || func == format::kFuncRecv || func == format::kFuncSendRecv;
}

void Observe(const LiveOp& op, CommSeries* s) {
  const bool timed = op.gpu_start_raw != 0 && op.gpu_end_raw >= op.gpu_start_raw;
  const bool queued = op.gpu_start_ns != 0 && op.t_enqueue_ns != 0;
  const uint64_t gpu_ns = timed ? op.gpu_end_raw - op.gpu_start_raw : 0;
  const uint64_t queue_ns =
      queued && op.gpu_start_ns >= op.t_enqueue_ns ? op.gpu_start_ns - op.t_enqueue_ns : 0;
  if (timed) s->duration.ObserveNs(gpu_ns);
  if (queued) s->queueing.ObserveNs(queue_ns);
  if (timed && queued && op.func != format::kFuncUnknown && !IsP2pFunc(op.func) &&
      op.slot_seq >= kSyncWarmupSlots) {
    ++s->sync_ops;
    s->sync_gpu_ns += gpu_ns;
    s->sync_queueing_ns += queue_ns;
  }
}

// New slots are read and counted this many at a time.
constexpr uint64_t kBatchSlots = 512;

}  // namespace

uint64_t Collector::NewSlots(const Ring& ring) {
  uint64_t n = 0;
  for (const CommSnapshot& c : ring.head.comms) {
    const auto t = ring.tails.find(c.region_index);
    const uint64_t next =
        t == ring.tails.end() || t->second.generation != c.generation ? 0 : t->second.next_seq;
    const uint64_t floor = c.head > c.capacity ? c.head - c.capacity : 0;
    const uint64_t begin = std::max(next, floor);
    if (c.head > begin) n += c.head - begin;
    if (t != ring.tails.end()) n += t->second.pending.size();
  }
  return n;
}

void Collector::ScanRing(Ring* ring, std::vector<LiveOp>* scratch, ScanStats* stats) {
  for (auto& kv : ring->series) {
    kv.second.live = false;
    kv.second.pending = 0;
    kv.second.oldest_enqueue_ns = 0;
  }
  std::vector<LiveOp>& recs = *scratch;
  for (const CommSnapshot& c : ring->head.comms) {
    RegionTail& t = ring->tails[c.region_index];
    if (t.generation != c.generation) {
      t = RegionTail{};  // a new communicator in a reused region
      t.generation = c.generation;
    }
    const std::string key = Hex(c.comm_id) + "/" + std::to_string(c.rank) + "/" + c.name;
    CommSeries& s = ring->series[key];
    s.comm_id = c.comm_id;
    s.name = c.name;
    s.rank = c.rank;
    s.live = true;
    const bool tracked = (c.flags & format::kRegionCompletionTracked) != 0;
    const uint64_t floor = c.head > c.capacity ? c.head - c.capacity : 0;
    // Ops seen pending before: done now, still pending, or overwritten.
    for (auto it = t.pending.begin(); it != t.pending.end();) {
      if (it->first < floor) {
        it = t.pending.erase(it);
        continue;
      }
      recs.clear();
      ring->file.ReadSlots(c.region_index, it->first, it->first + 1, &recs);
      ++stats->slots_read;
      if (recs.size() == 1 && recs[0].state == format::kOpDone) {
        Observe(recs[0], &s);
        it = t.pending.erase(it);
        continue;
      }
      ++it;
    }
    // Slots claimed since the last scan.
    if (c.head > t.next_seq) {
      const uint64_t begin = std::max(t.next_seq, floor);
      s.count[format::kFuncUnknown] += begin - t.next_seq;  // overwritten before read
      s.unread += begin - t.next_seq;
      stats->slots_read += c.head - begin;
      uint64_t expect = begin;
      // In batches of kBatchSlots: the batch's records stay in cache while
      // they are counted.
      for (uint64_t from = begin; from < c.head; from += kBatchSlots) {
        const uint64_t to = c.head - from > kBatchSlots ? from + kBatchSlots : c.head;
        recs.clear();
        ring->file.ReadSlots(c.region_index, from, to, &recs);
        for (const LiveOp& op : recs) {
          s.count[format::kFuncUnknown] += op.slot_seq - expect;  // torn in between
          s.unread += op.slot_seq - expect;
          expect = op.slot_seq + 1;
          const uint8_t func = op.func < format::kNumFuncs ? op.func : 0;
          ++s.count[func];
          s.bytes[func] += op.bytes;
          if (!tracked) continue;
          if (op.state == format::kOpDone) {
            Observe(op, &s);
          } else if (t.pending.size() < kMaxPendingPerComm) {
            t.pending[op.slot_seq] = op.t_enqueue_ns;
          }
        }
      }
      // Torn slots after the last valid one may be claims in progress: read
      // again next scan.
      t.next_seq = expect;
    }
    s.pending += t.pending.size();
    for (const auto& p : t.pending) {
      if (p.second != 0 && (s.oldest_enqueue_ns == 0 || p.second < s.oldest_enqueue_ns)) {
        s.oldest_enqueue_ns = p.second;
      }
    }
  }
}

void Collector::Render(const ScanStats& scan, std::string* out) const {
  const size_t start = out->size();
  out->reserve(start + last_render_bytes_ + last_render_bytes_ / 8);
  Exposition e(out);
  e.Family("flightrec_build_info", "gauge", "flightrec exporter build; the value is always 1.");
  e.Sample("flightrec_build_info", {{"version", kVersion}}, 1);

  auto proc_labels = [](const ProcessSnapshot& h) {
    return Labels{{"job", h.job_id}, {"host", h.host}, {"pid", std::to_string(h.pid)}};
  };
  auto comm_labels = [&](const ProcessSnapshot& h, const CommSeries& s) {
    Labels l = proc_labels(h);
    l.push_back({"comm", s.name});
    l.push_back({"comm_id", Hex(s.comm_id)});
    l.push_back({"rank", std::to_string(s.rank)});
    return l;
  };

  e.Family("flightrec_process_info", "gauge",
           "One per ring file: the process's state (starting, running, exited, disabled), "
           "versions and global_rank (its rank in its widest communicator, \"\" before it has "
           "one); the value is always 1.");
  for (const auto& kv : rings_) {
    const ProcessSnapshot& h = kv.second->head;
    Labels l = proc_labels(h);
    l.push_back({"state", ProcessStateName(h.process_state)});
    l.push_back({"global_rank", GlobalRankOf(h)});
    l.push_back({"plugin_version", h.plugin_version});
    l.push_back({"nccl_version", h.nccl_version});
    e.Sample("flightrec_process_info", l, 1);
  }

  e.Family("flightrec_heartbeat_age_seconds", "gauge",
           "Seconds since the process's watchdog last refreshed its heartbeat (since its ring "
           "was created when it never did).");
  for (const auto& kv : rings_) {
    const ProcessSnapshot& h = kv.second->head;
    const uint64_t beat = h.heartbeat_wall_ns != 0 ? h.heartbeat_wall_ns : h.created_wall_ns;
    const double age = now_wall_ns_ > beat ? Seconds(now_wall_ns_ - beat) : 0.0;
    e.Sample("flightrec_heartbeat_age_seconds", proc_labels(h), age);
  }

  // Every communicator's labels, rendered once for its ~50 lines.
  struct SeriesText {
    const CommSeries* s;
    std::string labels;
  };
  std::vector<SeriesText> series;
  for (const auto& kv : rings_) {
    for (const auto& sv : kv.second->series) {
      series.push_back({&sv.second, LabelText(comm_labels(kv.second->head, sv.second))});
    }
  }
  // The operation counters and histograms: per rank, or (node mode) summed
  // per job, host and communicator.
  std::map<std::string, CommSeries> node_sums;  // by label text
  std::vector<SeriesText> op_series;
  if (detail_ == Detail::kNode) {
    for (const auto& kv : rings_) {
      const ProcessSnapshot& h = kv.second->head;
      for (const auto& sv : kv.second->series) {
        const CommSeries& c = sv.second;
        CommSeries& sum = node_sums[LabelText(
            {{"job", h.job_id}, {"host", h.host}, {"comm", c.name}, {"comm_id", Hex(c.comm_id)}})];
        for (uint32_t f = 0; f < format::kNumFuncs; ++f) {
          sum.count[f] += c.count[f];
          sum.bytes[f] += c.bytes[f];
        }
        sum.unread += c.unread;
        sum.duration.Add(c.duration);
        sum.queueing.Add(c.queueing);
      }
    }
    for (const auto& kv : node_sums) op_series.push_back({&kv.second, kv.first});
  } else {
    op_series = series;
  }
  auto with_func = [](const std::string& labels, const std::string& func) {
    return labels + ",func=\"" + EscapeLabelValue(func) + "\"";
  };

  e.Family("flightrec_collectives_total", "counter",
           "Collective and p2p operations started (ring slots claimed), by function; "
           "func=\"unknown\" counts slots overwritten or torn before the exporter read them.");
  for (const SeriesText& st : op_series) {
    for (uint32_t f = 0; f < format::kNumFuncs; ++f) {
      if (st.s->count[f] == 0) continue;
      e.SampleText("flightrec_collectives_total",
                   with_func(st.labels, f == 0 ? std::string("unknown") : format::FuncName(f)),
                   static_cast<double>(st.s->count[f]));
    }
  }
  e.Family("flightrec_collective_bytes_total", "counter",
           "Payload bytes (count x element size) of the operations read, by function.");
  for (const SeriesText& st : op_series) {
    for (uint32_t f = 1; f < format::kNumFuncs; ++f) {
      if (st.s->count[f] == 0) continue;
      e.SampleText("flightrec_collective_bytes_total", with_func(st.labels, format::FuncName(f)),
                   static_cast<double>(st.s->bytes[f]));
    }
  }
  e.Family("flightrec_unread_records_total", "counter",
           "Operations whose record was overwritten (ring lap) or torn before the exporter read "
           "it: missing from bytes and histograms.");
  for (const SeriesText& st : op_series) {
    e.SampleText("flightrec_unread_records_total", st.labels, static_cast<double>(st.s->unread));
  }
  e.Family("flightrec_collective_duration_seconds", "histogram",
           "GPU time of completed operations, first kernel start to last kernel end.");
  for (const SeriesText& st : op_series) {
    e.HistogramText("flightrec_collective_duration_seconds", st.labels, st.s->duration);
  }
  e.Family("flightrec_collective_queueing_seconds", "histogram",
           "Time from enqueue (NCCL's Coll/P2p start) to the GPU start of completed operations.");
  for (const SeriesText& st : op_series) {
    e.HistogramText("flightrec_collective_queueing_seconds", st.labels, st.s->queueing);
  }
  e.Family(
      "flightrec_sync_collectives_total", "counter",
      "Completed collectives (not p2p) with enqueue, GPU start and GPU end known: the "
      "operations of flightrec_sync_gpu_seconds_total and flightrec_sync_queueing_seconds_total.");
  for (const SeriesText& st : series) {
    e.SampleText("flightrec_sync_collectives_total", st.labels,
                 static_cast<double>(st.s->sync_ops));
  }
  e.Family("flightrec_sync_gpu_seconds_total", "counter",
           "GPU time (kernel start to end) of those collectives. Every member's kernel ends when "
           "the last member arrived, so the rank that arrives last has the shortest.");
  for (const SeriesText& st : series) {
    e.SampleText("flightrec_sync_gpu_seconds_total", st.labels,
                 static_cast<double>(st.s->sync_gpu_ns) / 1e9);
  }
  e.Family("flightrec_sync_queueing_seconds_total", "counter",
           "Enqueue to GPU start of those collectives: short for a rank whose host is late (its "
           "stream waits for it), long for one whose stream starts them late.");
  for (const SeriesText& st : series) {
    e.SampleText("flightrec_sync_queueing_seconds_total", st.labels,
                 static_cast<double>(st.s->sync_queueing_ns) / 1e9);
  }
  e.Family("flightrec_pending_ops", "gauge",
           "Operations enqueued and not yet completed (regions with completion tracking).");
  for (const SeriesText& st : series) {
    if (!st.s->live) continue;
    e.SampleText("flightrec_pending_ops", st.labels, static_cast<double>(st.s->pending));
  }
  e.Family("flightrec_oldest_pending_op_seconds", "gauge",
           "Age of the oldest operation enqueued and not completed; 0 when nothing is pending.");
  for (const SeriesText& st : series) {
    if (!st.s->live) continue;
    const uint64_t t = st.s->oldest_enqueue_ns;
    const double age = t != 0 && now_wall_ns_ > t ? Seconds(now_wall_ns_ - t) : 0.0;
    e.SampleText("flightrec_oldest_pending_op_seconds", st.labels, age);
  }
  e.Family("flightrec_dropped_events_total", "counter",
           "NCCL profiler events the plugin could not record, by cause (docs/format.md).");
  for (const auto& kv : rings_) {
    const ProcessSnapshot& h = kv.second->head;
    for (uint32_t c = 0; c <= format::kDropPxnForeign; ++c) {
      Labels l = proc_labels(h);
      l.push_back({"cause", format::kDropCauseNames[c]});
      e.Sample("flightrec_dropped_events_total", l, static_cast<double>(h.drops[c]));
    }
  }
  e.Family("flightrec_dumps_total", "counter",
           "Dump files (*.frdump) in the exporter's directories, by the reason they were sealed.");
  std::map<std::string, std::pair<Labels, std::array<uint64_t, 8>>> dumps;
  for (const auto& kv : rings_) {
    const ProcessSnapshot& h = kv.second->head;
    const std::string key = h.job_id + "\n" + h.host + "\n" + std::to_string(h.pid);
    dumps[key].first = proc_labels(h);
  }
  for (const auto& kv : dumps_) {
    const Dump& d = *kv.second;
    if (!d.ok) continue;
    const std::string key = d.job + "\n" + d.host + "\n" + std::to_string(d.pid);
    auto& entry = dumps[key];
    entry.first = Labels{{"job", d.job}, {"host", d.host}, {"pid", std::to_string(d.pid)}};
    if (d.reason < entry.second.size()) ++entry.second[d.reason];
  }
  for (const auto& kv : dumps) {
    for (uint32_t reason : kDumpReasons) {
      Labels l = kv.second.first;
      l.push_back({"reason", format::DumpReasonName(reason)});
      e.Sample("flightrec_dumps_total", l, static_cast<double>(kv.second.second[reason]));
    }
  }

  e.Family("flightrec_exporter_rings", "gauge", "Ring files read by the last scan.");
  e.Sample("flightrec_exporter_rings", {}, static_cast<double>(scan.rings));
  e.Family("flightrec_exporter_scan_slots", "gauge",
           "Record slots the last scan read (new ones and pending re-checks).");
  e.Sample("flightrec_exporter_scan_slots", {}, static_cast<double>(scan.slots_read));
  e.Family("flightrec_exporter_scan_duration_seconds", "gauge", "Wall time of the last scan.");
  e.Sample("flightrec_exporter_scan_duration_seconds", {}, scan.seconds);
  e.Family("flightrec_exporter_skipped_files", "gauge",
           "Ring and dump files the last scan skipped, by reason.");
  std::map<std::string, uint64_t> by_reason;
  for (const RingProblem p :
       {RingProblem::kVanished, RingProblem::kUnreadable, RingProblem::kForeign,
        RingProblem::kTruncated, RingProblem::kInvalid}) {
    by_reason[RingProblemName(p)] = 0;
  }
  for (const auto& kv : skipped_) ++by_reason[RingProblemName(kv.second)];
  for (const auto& kv : by_reason) {
    e.Sample("flightrec_exporter_skipped_files", {{"reason", kv.first}},
             static_cast<double>(kv.second));
  }
  e.Family("flightrec_exporter_file_skips_total", "counter",
           "Times a file started being skipped (each is one log line), by reason.");
  for (const auto& kv : by_reason) {
    const auto it = skips_total_.find(kv.first);
    e.Sample("flightrec_exporter_file_skips_total", {{"reason", kv.first}},
             static_cast<double>(it == skips_total_.end() ? 0 : it->second));
  }
  last_render_bytes_ = out->size() - start;
}

}  // namespace live
}  // namespace flightrec

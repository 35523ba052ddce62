// Chrome trace-event JSON (loads in Perfetto and chrome://tracing):
//   a process per rank (pid = global rank when one communicator spans every
//   process, else a stable index); per communicator, threads for the host's
//   enqueue calls, the GPU kernels and (unfinished ops only) the queue, with
//   each op a complete ("X") slice that never overlaps another on its thread
//   (unfinished ones end at the snapshot time, marked); flows ("s"/"f")
//   from the rank that enqueued a collective first to every other rank's
//   enqueue of it; and an instant ("i") where each rank is stuck.
// Written as text while walking the records (json_writer.h), never held as a
// document: a trace is hundreds of bytes per op.
#include <algorithm>
#include <string>

#include "analyzer/model/describe.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/timeline.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {
namespace {

using analysis::JobIndex;

constexpr uint64_t kFlowOpsPerComm = 64;  // newest ops joined by flows
constexpr size_t kChunkBytes = 1u << 20;  // handed to the sink at a time

// Global rank: the rank in a communicator every process belongs to.
std::vector<int64_t> TracePids(const JobIndex& index) {
  const size_t n = index.processes().size();
  std::vector<int64_t> pids(n);
  for (size_t p = 0; p < n; ++p) pids[p] = static_cast<int64_t>(p);
  for (size_t g = 0; g < index.groups().size(); ++g) {
    const analysis::CommGroup& group = index.groups()[g];
    if (static_cast<size_t>(group.present) != n) continue;
    for (size_t r = 0; r < group.members.size(); ++r) {
      if (group.members[r].present()) pids[group.members[r].process] = static_cast<int64_t>(r);
    }
    break;
  }
  return pids;
}

std::vector<char> Selected(const std::vector<int64_t>& pids, const TimelineOptions& options) {
  std::vector<char> on(pids.size(), options.ranks.empty() ? 1 : 0);
  for (size_t p = 0; p < pids.size(); ++p) {
    for (const auto& [lo, hi] : options.ranks) {
      if (pids[p] >= lo && pids[p] <= hi) on[p] = 1;
    }
  }
  return on;
}

class TraceWriter {
 public:
  TraceWriter(const JobIndex& index, const analysis::JobProgress& progress,
              const TimelineOptions& options, const TextSink& sink)
      : index_(index),
        progress_(progress),
        pids_(TracePids(index)),
        selected_(Selected(pids_, options)),
        sink_(sink),
        host_tid_(index.processes().size()) {
    base_ = UINT64_MAX;
    for (size_t p = 0; p < index.processes().size(); ++p) {
      if (!selected_[p]) continue;
      for (const CommSnapshot& c : index.processes()[p].comms) {
        left_out_ += c.trimmed;
        for (const OpRecord& r : c.records) {
          if (r.t_enqueue_ns != 0) base_ = std::min(base_, r.t_enqueue_ns);
        }
      }
    }
    if (base_ == UINT64_MAX) base_ = 0;
  }

  bool Write() {
    w_.BeginObject();
    w_.Key("displayTimeUnit").String("ms");
    OtherData();
    w_.Key("traceEvents").BeginArray();
    for (size_t p = 0; p < index_.processes().size() && ok_; ++p) {
      if (selected_[p]) Process(static_cast<int32_t>(p));
    }
    for (size_t g = 0; g < index_.groups().size() && ok_; ++g) Flows(static_cast<int32_t>(g));
    w_.EndArray();
    w_.EndObject();
    std::string last;
    if (w_.TakeIfLarger(0, &last)) ok_ = ok_ && sink_(last + "\n");
    return ok_;
  }

 private:
  uint64_t Ns(uint64_t wall_ns) const { return wall_ns >= base_ ? wall_ns - base_ : 0; }

  // Between events: hands a full chunk to the sink.
  void Drain() {
    if (ok_ && w_.TakeIfLarger(kChunkBytes, &chunk_)) ok_ = sink_(chunk_);
  }

  void OtherData() {
    w_.Key("otherData").BeginObject();
    w_.Key("generator").String("flightrec timeline");
    w_.Key("base_wall_ns").Uint(base_);
    w_.Key("base_wall").String(analysis::IsoTime(base_));
    if (left_out_ > 0) {
      w_.Key("records_left_out").Uint(left_out_);
      w_.Key("note").String(
          "older records were left out to bound memory (--record-memory); the trace shows each "
          "rank's newest ones");
    }
    w_.EndObject();
  }

  // A metadata ("M") event naming a process or thread.
  void Meta(const char* name, int64_t pid, int64_t tid, const char* arg, const std::string& value) {
    w_.BeginObject();
    w_.Key("ph").String("M");
    w_.Key("name").String(name);
    w_.Key("pid").Int(pid);
    if (tid >= 0) w_.Key("tid").Int(tid);
    w_.Key("args").BeginObject();
    w_.Key(arg).String(value);
    w_.EndObject();
    w_.EndObject();
  }

  void Process(int32_t p) {
    const ProcessSnapshot& snap = index_.processes()[p];
    const int64_t pid = pids_[p];
    Meta("process_name", pid, -1, "name",
         "rank " + std::to_string(pid) + " (" + analysis::ProcessLabel(snap) + ")");
    SortIndex("process_sort_index", pid, -1, pid);
    const uint64_t now = progress_.processes[p].snapshot_wall_ns;
    next_tid_ = 1;
    host_tid_[p].resize(snap.comms.size());
    for (size_t c = 0; c < snap.comms.size() && ok_; ++c) {
      const CommSnapshot& comm = snap.comms[c];
      host_tid_[p][c].assign(comm.records.size(), 0);
      const Track track{pid, comm,
                        (comm.name.empty() ? analysis::HexId(comm.comm_id) : comm.name) + " rank " +
                            std::to_string(comm.rank),
                        analysis::HexId(comm.comm_id), now};
      for (int kind = 0; kind < kNumKinds && ok_; ++kind) {
        Lanes(track, static_cast<Kind>(kind), &host_tid_[p][c]);
      }
    }
    Stuck(p, pid);
    Drain();
  }

  void SortIndex(const char* name, int64_t pid, int64_t tid, int64_t index) {
    w_.BeginObject();
    w_.Key("ph").String("M");
    w_.Key("name").String(name);
    w_.Key("pid").Int(pid);
    if (tid >= 0) w_.Key("tid").Int(tid);
    w_.Key("args").BeginObject();
    w_.Key("sort_index").Int(index);
    w_.EndObject();
    w_.EndObject();
  }

  // The tracks of one communicator of one process. Each kind of span gets
  // its own tracks (docs/analyzer.md, "flightrec timeline"):
  //   enqueue: the host call, Coll/P2p start to stop (t_enqueue..t_enqueued);
  //   GPU:     the kernel, first channel start to last channel stop;
  //   queued:  an unfinished op NCCL holds that the GPU has not started, from
  //            the end of its enqueue call to the snapshot.
  // A track holds slices that do not overlap: a span that overlaps the last
  // one of every track of its kind (grouped ops, concurrent streams, queued
  // ops) opens one more track ("GPU (2)"), so Perfetto never has to.
  enum Kind { kEnqueue = 0, kGpu = 1, kQueued = 2, kNumKinds = 3 };
  struct Track {
    int64_t pid;
    const CommSnapshot& comm;
    std::string name;
    std::string comm_id;
    uint64_t now;
  };
  struct Span {
    uint64_t start = 0, end = 0;
    bool unfinished = false;
  };

  // The span of `r` on a kind of track; false when it has none there.
  static bool SpanOf(const OpRecord& r, Kind kind, uint64_t now, Span* s) {
    if (r.t_enqueue_ns == 0) return false;
    const bool done = r.state >= format::kOpDone;
    switch (kind) {
      case kEnqueue:
        s->start = r.t_enqueue_ns;
        // Still in the call when the GPU has not started it either.
        s->unfinished = r.t_enqueued_ns == 0 && r.state < format::kOpRunning;
        s->end = r.t_enqueued_ns != 0 ? r.t_enqueued_ns : (s->unfinished ? now : r.t_enqueue_ns);
        break;
      case kGpu:
        if (r.gpu_start_ns == 0) return false;
        s->start = r.gpu_start_ns;
        s->unfinished = !done;
        s->end = done ? r.gpu_end_ns : now;
        break;
      case kQueued:
        if (r.state >= format::kOpRunning || r.gpu_start_ns != 0 || r.t_enqueued_ns == 0) {
          return false;
        }
        s->start = std::max(r.t_enqueue_ns, r.t_enqueued_ns);
        s->unfinished = true;
        s->end = now;
        break;
      default:
        return false;
    }
    s->end = std::max(s->end, s->start);  // untrusted clocks: never negative
    return true;
  }

  void Lanes(const Track& track, Kind kind, std::vector<uint32_t>* enqueue_tids) {
    static const char* const kSuffix[kNumKinds] = {"enqueue", "GPU", "queued"};
    const std::vector<OpRecord>& recs = track.comm.records;
    std::vector<std::pair<Span, uint32_t>> spans;
    for (size_t i = 0; i < recs.size(); ++i) {
      Span s;
      if (SpanOf(recs[i], kind, track.now, &s)) spans.emplace_back(s, static_cast<uint32_t>(i));
    }
    std::stable_sort(spans.begin(), spans.end(),
                     [](const auto& a, const auto& b) { return a.first.start < b.first.start; });
    std::vector<std::pair<uint64_t, int64_t>> lanes;  // (end of its last slice, tid)
    for (const auto& [span, i] : spans) {
      size_t lane = 0;
      while (lane < lanes.size() && lanes[lane].first > span.start) ++lane;
      if (lane == lanes.size()) {
        const int64_t tid = next_tid_++;
        std::string name = track.name + " " + kSuffix[kind];
        if (lane > 0) name += " (" + std::to_string(lane + 1) + ")";
        Meta("thread_name", track.pid, tid, "name", name);
        SortIndex("thread_sort_index", track.pid, tid, tid);
        lanes.emplace_back(0, tid);
      }
      lanes[lane].first = span.end;
      const int64_t tid = lanes[lane].second;
      if (kind == kEnqueue) (*enqueue_tids)[i] = static_cast<uint32_t>(tid);
      Slice(track, tid, recs[i], span, kind);
      Drain();
    }
  }

  void SliceArgs(const std::string& comm_id, const OpRecord& r, bool unfinished, Kind kind) {
    static const char* const kPhase[kNumKinds] = {"enqueue", "gpu", "queued"};
    w_.Key("args").BeginObject();
    w_.Key("phase").String(kPhase[kind]);
    if (kind != kEnqueue) {  // the op's details are on its enqueue slice (same slot_seq)
      w_.Key("slot_seq").Uint(r.slot_seq);
      if (unfinished) w_.Key("unfinished").Bool(true);
      w_.EndObject();
      return;
    }
    w_.Key("comm").String(comm_id);
    w_.Key("count").Uint(r.count);
    w_.Key("datatype").String(format::DataTypeName(r.datatype));
    w_.Key("op_index").Uint(r.op_index);
    if (r.is_p2p()) w_.Key("peer").Int(r.root_or_peer);
    if (r.nccl_seq != UINT64_MAX) w_.Key("seq").Uint(r.nccl_seq);
    w_.Key("slot_seq").Uint(r.slot_seq);
    w_.Key("state").String(format::OpStateName(r.state));
    if (unfinished) w_.Key("unfinished").Bool(true);
    if (r.user_tag != 0) w_.Key("user_tag").Uint(r.user_tag);
    w_.EndObject();
  }

  void Slice(const Track& track, int64_t tid, const OpRecord& r, const Span& span, Kind kind) {
    w_.BeginObject();
    w_.Key("ph").String("X");
    w_.Key("name").String(analysis::OpLabel(analysis::OpOf(r)));
    w_.Key("cat").String(r.is_p2p() ? "p2p" : "coll");
    w_.Key("pid").Int(track.pid);
    w_.Key("tid").Int(tid);
    w_.Key("ts").Micros(Ns(span.start));
    w_.Key("dur").Micros(Ns(span.end) - Ns(span.start));
    SliceArgs(track.comm_id, r, span.unfinished, kind);
    w_.EndObject();
    if (span.unfinished) Instant("t", "unfinished at snapshot", "marker", track.pid, tid, span.end);
  }

  void Instant(const char* scope, const std::string& name, const char* cat, int64_t pid,
               int64_t tid, uint64_t wall_ns) {
    w_.BeginObject();
    w_.Key("ph").String("i");
    w_.Key("s").String(scope);
    w_.Key("name").String(name);
    w_.Key("cat").String(cat);
    w_.Key("pid").Int(pid);
    w_.Key("tid").Int(tid);
    w_.Key("ts").Micros(Ns(wall_ns));
    w_.EndObject();
  }

  // Where the rank is stuck: its oldest unfinished op, or "outside NCCL".
  void Stuck(int32_t p, int64_t pid) {
    const analysis::ProcessProgress& pp = progress_.processes[p];
    if (!pp.stuck && !pp.dead) return;
    const ProcessSnapshot& snap = index_.processes()[p];
    if (pp.blocked()) {
      const OpRecord& r = snap.comms[pp.blocked_comm].records[pp.blocked_record];
      Instant(
          "p",
          std::string(pp.dead ? "died in " : "stuck in ") + analysis::OpLabel(analysis::OpOf(r)),
          "stuck", pid, host_tid_[p][pp.blocked_comm][pp.blocked_record], r.t_enqueue_ns);
    } else {
      Instant("p", "stopped (heartbeat quiet)", "stuck", pid, 0, snap.heartbeat_wall_ns);
    }
  }

  void FlowEnd(const char* ph, uint64_t id, const std::string& name, int32_t process, uint32_t tid,
               uint64_t wall_ns) {
    w_.BeginObject();
    w_.Key("ph").String(ph);
    if (ph[0] == 'f') w_.Key("bp").String("e");  // bound to the enclosing slice
    w_.Key("id").Uint(id);
    w_.Key("name").String(name);
    w_.Key("cat").String("op");
    w_.Key("pid").Int(pids_[process]);
    w_.Key("tid").Int(tid);
    w_.Key("ts").Micros(Ns(wall_ns));
    w_.EndObject();
  }

  // The enqueue tid of a member's record of collective `i`; 0 when not drawn.
  uint32_t EnqueueTid(const analysis::MemberRef& m, const OpRecord* r) const {
    const std::vector<OpRecord>& recs = index_.Comm(m).records;
    if (r == nullptr || r->t_enqueue_ns == 0 || r < recs.data() || r >= recs.data() + recs.size()) {
      return 0;
    }
    return host_tid_[m.process][m.comm][static_cast<size_t>(r - recs.data())];
  }

  // Where a flow meets a record's enqueue slice: a nanosecond after its
  // start, inside it, so that the viewer, which binds a flow end to the
  // slice open on the track at that time, cannot take the previous slice
  // ending at the same instant (a zero-length slice: at its start).
  uint64_t FlowTs(const OpRecord& r, int32_t process) const {
    Span s;
    SpanOf(r, kEnqueue, progress_.processes[process].snapshot_wall_ns, &s);
    return s.end > s.start ? s.start + 1 : s.start;
  }

  // Flow arrows between the enqueue slices of the same collective: from the
  // drawn rank that enqueued it first to every other drawn rank, so arrows
  // run forward in time and the longest points at the latecomer (newest
  // ops only: flows are for reading).
  void Flows(int32_t g) {
    const analysis::CommGroup& group = index_.groups()[g];
    uint64_t hi = 0;
    int32_t drawn = 0;
    for (size_t r = 0; r < group.members.size(); ++r) {
      const analysis::MemberRef& m = group.members[r];
      if (!m.present() || !selected_[m.process]) continue;
      ++drawn;
      hi = std::max(hi, index_.Comm(m).coll_count);
    }
    if (drawn < 2) return;
    const uint64_t lo = hi > kFlowOpsPerComm ? hi - kFlowOpsPerComm : 0;
    struct End {
      const OpRecord* r;
      int32_t process;
      uint32_t tid;
      uint64_t ts;
    };
    std::vector<End> ends;
    for (uint64_t i = lo; i < hi && ok_; ++i) {
      ends.clear();
      size_t first = 0;
      for (size_t r = 0; r < group.members.size(); ++r) {
        const analysis::MemberRef& m = group.members[r];
        if (!m.present() || !selected_[m.process]) continue;
        const OpRecord* rec = index_.FindColl(g, static_cast<int32_t>(r), i);
        const uint32_t tid = EnqueueTid(m, rec);
        if (tid == 0) continue;
        const uint64_t ts = FlowTs(*rec, m.process);
        if (!ends.empty() && ts < ends[first].ts) first = ends.size();
        ends.push_back({rec, m.process, tid, ts});
      }
      if (ends.size() < 2) continue;
      const End& src = ends[first];
      const std::string name = analysis::OpLabel(analysis::OpOf(*src.r));
      for (size_t k = 0; k < ends.size(); ++k) {
        if (k == first) continue;
        const uint64_t id = ++flow_id_;
        FlowEnd("s", id, name, src.process, src.tid, src.ts);
        FlowEnd("f", id, name, ends[k].process, ends[k].tid, ends[k].ts);
      }
      Drain();
    }
  }

  const JobIndex& index_;
  const analysis::JobProgress& progress_;
  const std::vector<int64_t> pids_;
  const std::vector<char> selected_;
  const TextSink& sink_;
  uint64_t base_ = 0;
  uint64_t left_out_ = 0;
  uint64_t flow_id_ = 0;
  int64_t next_tid_ = 1;  // per process; 0 is the markers' thread
  // The tid of every record's enqueue slice ([process][comm][record]; 0:
  // none), for the flows that bind to them.
  std::vector<std::vector<std::vector<uint32_t>>> host_tid_;
  JsonWriter w_;
  std::string chunk_;
  bool ok_ = true;
};

bool ParseUint(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 12) return false;
  int64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + (ch - '0');
  }
  *out = v;
  return true;
}

}  // namespace

bool ParseRankRanges(std::string_view text, std::vector<std::pair<int64_t, int64_t>>* ranges,
                     std::string* error) {
  ranges->clear();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view item = text.substr(start, comma - start);
    const size_t dash = item.find('-');
    int64_t lo = 0, hi = 0;
    const bool ok = dash == std::string_view::npos
                        ? ParseUint(item, &lo) && ParseUint(item, &hi)
                        : ParseUint(item.substr(0, dash), &lo) &&
                              ParseUint(item.substr(dash + 1), &hi) && lo <= hi;
    if (!ok) {
      *error = "'" + std::string(item) + "' is not a rank or a range like 0-7";
      return false;
    }
    ranges->emplace_back(lo, hi);
    start = comma + 1;
  }
  return true;
}

std::vector<size_t> DrawnProcesses(const JobIndex& index, const TimelineOptions& options) {
  const std::vector<char> on = Selected(TracePids(index), options);
  std::vector<size_t> out;
  for (size_t p = 0; p < on.size(); ++p) {
    if (on[p]) out.push_back(p);
  }
  return out;
}

bool WriteTimeline(const JobIndex& index, const analysis::JobProgress& progress,
                   const TimelineOptions& options, const TextSink& sink) {
  return TraceWriter(index, progress, options, sink).Write();
}

std::string TimelineTrace(const JobIndex& index, const analysis::JobProgress& progress,
                          const TimelineOptions& options) {
  std::string out;
  WriteTimeline(index, progress, options, [&out](std::string_view text) {
    out += text;
    return true;
  });
  return out;
}

}  // namespace report
}  // namespace flightrec

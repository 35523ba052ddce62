// straggler: in a run that did not hang, members that arrive consistently
// late at collectives. Lateness is measured against the per-op median after
// removing each member's clock offset, estimated from GPU end times (a
// collective ends at about the same instant on every rank, whoever arrived
// last), so NTP skew between hosts is not mistaken for slowness.
//
// Only lateness of a member's own making counts, of two kinds:
//  - CPU-side: it enqueued late (data loader, GC, host), after a longer
//    pause than the others took since its host was last known busy or
//    released (its previous enqueue, or the end of an op it may have waited
//    for; see GapClock): also a pause taken while its op on another comm
//    still ran on the GPU, which kept this comm's peers waiting all the same;
//  - GPU-side: it enqueued on time, but its stream started the collective
//    late (a slow or throttled GPU, other work on the stream), after a
//    longer gap on its GPU since its previous op ended than the others had.
// A member late only because its previous op (on another comm) ended late
// is a victim: both its gaps are the others', and it is not named.
// With enqueue times alone (no GPU times, no op ends: PyTorch FR dumps
// without timing) no gap is known; there only the last member to enqueue
// counts as late, by its lead over the next to last (what the op waited
// for it).
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "analyzer/model/parallel.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// Per process, per region, per record: how long the process took, of its
// own accord, to reach this op's `field` (enqueue: the host; GPU start: the
// stream); kUnknownGap until an earlier op of the process has a known end. A
// member that arrives late only because an op of its own ended late (a
// victim of someone else) has normal gaps; the slow one has a long host
// gap (CPU-side) or a long GPU gap (GPU-side).
//
// The host gap runs from the last instant the host is known to have been
// busy or released: the latest of the end of an earlier enqueue call of the
// process (t_enqueued, t_enqueue when missing) and the end of any earlier op
// that ended before this enqueue (a host that waited for that op went on
// from there). Ops still running at the enqueue say nothing of the host:
// they run on streams of their own, and a host that paused while its
// previous op (of another comm) was still running on the GPU kept its peers
// on this op's comm waiting all the same; such a gap is `ahead`, and counts
// only as far as its GPU start was late too (GroupStragglers): a pause while
// the op's own stream was still busy delayed nobody.
//
// The GPU gap runs from the end of the latest-ending earlier op, 0 when the
// op started before that (the stream was ahead): another stream's op
// running says nothing of when this op's stream was free.
constexpr double kUnknownGap = -1.0;
struct Gap {
  double ns = kUnknownGap;
  bool ahead = false;  // host gap: an earlier op was still running
};
using Gaps = std::vector<std::vector<std::vector<Gap>>>;

// The gaps of one process's ops, fed in (field, region, record) order.
class GapClock {
 public:
  explicit GapClock(bool host) : host_(host) {}

  // The gap before an op at `at`, every op before it added.
  Gap Before(uint64_t at) {
    Gap g;
    if (!host_) {
      if (ended_ != 0) g.ns = at > ended_ ? static_cast<double>(at - ended_) : 0.0;
      return g;
    }
    while (!running_.empty() && running_.front() <= at) {
      ended_ = std::max(ended_, running_.front());
      std::pop_heap(running_.begin(), running_.end(), std::greater<uint64_t>());
      running_.pop_back();
    }
    // No earlier op with a known end (dumps without GPU times, e.g.
    // PyTorch FR dumps recorded without timing): enqueue to enqueue cannot
    // tell a host that paused from one that blocked in a sync waiting for
    // its ops, so the gap is unknown, as it is before the first op ends.
    if (ended_ == 0 && running_.empty()) return g;
    const uint64_t from = std::max(ended_, busy_);
    g.ns = at > from ? static_cast<double>(at - from) : 0.0;
    g.ahead = !running_.empty();
    return g;
  }

  // An op at `at` that ended at `end` (0: not done) and whose enqueue call
  // returned at `busy` (host only).
  void Add(uint64_t at, uint64_t end, uint64_t busy) {
    if (!host_) {
      ended_ = std::max(ended_, end);
      return;
    }
    busy_ = std::max(busy_, busy);
    if (end == 0) return;
    if (end <= at) {
      ended_ = std::max(ended_, end);
    } else {
      running_.push_back(end);
      std::push_heap(running_.begin(), running_.end(), std::greater<uint64_t>());
    }
  }

 private:
  const bool host_;
  uint64_t ended_ = 0;             // latest end seen passed
  uint64_t busy_ = 0;              // host: latest enqueue call's return
  std::vector<uint64_t> running_;  // host: ends still ahead (min-heap)
};

uint64_t EndOf(const OpRecord& r) { return r.state >= format::kOpDone ? r.gpu_end_ns : 0; }
uint64_t BusyOf(const OpRecord& r) { return std::max(r.t_enqueue_ns, r.t_enqueued_ns); }

// Merging by cursors costs a pass over the cursors per record: for the
// usual few regions per process; more go through runs merged pairwise.
constexpr size_t kMaxCursorRegions = 8;

// The gaps of one process (at most kMaxCursorRegions regions) whose regions
// each hold their records in `field` order (the usual case: a region's
// records are in op order), by a merge of the regions on (field, region,
// record); false, with `gaps` partly written, at the first region found out
// of order.
bool MergeGaps(const std::vector<CommSnapshot>& comms, uint64_t OpRecord::*field,
               std::vector<std::vector<Gap>>* gaps) {
  const size_t n = comms.size();
  const OpRecord* cur[kMaxCursorRegions];
  const OpRecord* begin[kMaxCursorRegions];
  const OpRecord* end[kMaxCursorRegions];
  uint64_t head[kMaxCursorRegions];
  for (size_t c = 0; c < n; ++c) {
    begin[c] = comms[c].records.data();
    end[c] = begin[c] + comms[c].records.size();
    cur[c] = begin[c];
    while (cur[c] != end[c] && (*cur[c]).*field == 0) ++cur[c];
    head[c] = cur[c] != end[c] ? (*cur[c]).*field : 0;
  }
  GapClock clock(field == &OpRecord::t_enqueue_ns);
  for (;;) {
    size_t best = n;
    for (size_t c = 0; c < n; ++c) {
      if (cur[c] != end[c] && (best == n || head[c] < head[best])) best = c;
    }
    if (best == n) return true;
    const OpRecord& r = *cur[best];
    const uint64_t at = head[best];
    (*gaps)[best][static_cast<size_t>(cur[best] - begin[best])] = clock.Before(at);
    clock.Add(at, EndOf(r), BusyOf(r));
    const OpRecord* next = cur[best] + 1;
    while (next != end[best] && (*next).*field == 0) ++next;
    cur[best] = next;
    if (next != end[best]) {
      head[best] = (*next).*field;
      if (head[best] < at) return false;
    }
  }
}

// The gaps of one process's regions, `gaps` sized as its regions.
void ProcessGaps(const std::vector<CommSnapshot>& comms, uint64_t OpRecord::*field,
                 std::vector<std::vector<Gap>>* gaps) {
  gaps->resize(comms.size());
  for (size_t c = 0; c < comms.size(); ++c) {
    (*gaps)[c].assign(comms[c].records.size(), Gap());
  }
  if (comms.size() <= kMaxCursorRegions && MergeGaps(comms, field, gaps)) return;
  struct Entry {
    uint64_t at, end, busy;
    uint32_t comm, rec;
  };
  const auto by_at = [](const Entry& a, const Entry& b) { return a.at < b.at; };
  std::vector<Entry> entries;
  std::vector<size_t> runs(1, 0), next;
  // One run per region, in time order (sorted here when its records are
  // not), then the runs merged: the process's ops on (field, region,
  // record), as MergeGaps takes them.
  for (size_t c = 0; c < comms.size(); ++c) {
    std::fill((*gaps)[c].begin(), (*gaps)[c].end(), Gap());
    const size_t begin = entries.size();
    bool ordered = true;
    for (size_t i = 0; i < comms[c].records.size(); ++i) {
      const OpRecord& r = comms[c].records[i];
      if (r.*field == 0) continue;
      ordered = ordered && (entries.size() == begin || entries.back().at <= r.*field);
      entries.push_back(
          {r.*field, EndOf(r), BusyOf(r), static_cast<uint32_t>(c), static_cast<uint32_t>(i)});
    }
    if (!ordered) {
      std::stable_sort(entries.begin() + static_cast<std::ptrdiff_t>(begin), entries.end(), by_at);
    }
    if (entries.size() > begin) runs.push_back(entries.size());
  }
  // Pairwise merges of neighbouring runs: log2(regions) passes.
  while (runs.size() > 2) {
    next.assign(1, 0);
    for (size_t k = 0; k + 1 < runs.size(); k += 2) {
      if (k + 2 < runs.size()) {
        std::inplace_merge(entries.begin() + static_cast<std::ptrdiff_t>(runs[k]),
                           entries.begin() + static_cast<std::ptrdiff_t>(runs[k + 1]),
                           entries.begin() + static_cast<std::ptrdiff_t>(runs[k + 2]), by_at);
        next.push_back(runs[k + 2]);
      } else {
        next.push_back(runs[k + 1]);
      }
    }
    runs.swap(next);
  }
  GapClock clock(field == &OpRecord::t_enqueue_ns);
  for (const Entry& e : entries) {
    (*gaps)[e.comm][e.rec] = clock.Before(e.at);
    clock.Add(e.at, e.end, e.busy);
  }
}

double Median(std::vector<double>* v) {
  // Lower median: with two members the earlier one is the reference.
  auto mid = v->begin() + static_cast<std::ptrdiff_t>((v->size() - 1) / 2);
  std::nth_element(v->begin(), mid, v->end());
  return *mid;
}

class GroupStragglers {
 public:
  GroupStragglers(const JobIndex& index, int32_t group, const StragglerOptions& options,
                  const Gaps& host_gaps, const Gaps& gpu_gaps)
      : index_(index),
        group_(group),
        options_(options),
        host_gaps_(host_gaps),
        gpu_gaps_(gpu_gaps),
        n_(index.groups()[group].members.size()) {}

  void Run(std::vector<StragglerMeasure>* out) {
    const CommGroup& g = index_.groups()[group_];
    if (g.present != g.nranks || n_ < 2) return;
    uint64_t lo = 0, hi = UINT64_MAX;
    for (int32_t r = 0; r < static_cast<int32_t>(n_); ++r) {
      const CommSnapshot& c = index_.Comm(g.members[r]);
      if (c.coll_count == 0) return;
      lo = std::max(lo, index_.FirstCollIndex(group_, r));
      hi = std::min(hi, c.coll_count - 1);
    }
    if (lo == UINT64_MAX || hi < lo) return;
    if (hi - lo + 1 > options_.window) lo = hi + 1 - options_.window;
    base_.resize(n_);
    host_gap_.resize(n_);
    gpu_gap_.resize(n_);
    for (size_t r = 0; r < n_; ++r) {
      const MemberRef& m = g.members[r];
      base_[r] = index_.Comm(m).records.data();
      host_gap_[r] = host_gaps_[m.process][m.comm].data();
      gpu_gap_[r] = gpu_gaps_[m.process][m.comm].data();
    }
    // Both passes read the same rows: kept from the first when they fit.
    rows_.clear();
    row_ok_.clear();
    cache_rows_ = (hi - lo + 1) * n_ <= kMaxCachedRecords;
    offset_.assign(n_, 0.0);
    EstimateOffsets(lo, hi);
    MeasureLateness(lo, hi);
    Report(out);
  }

 private:
  // Row pointers kept between the two passes over a window, at most.
  static constexpr uint64_t kMaxCachedRecords = uint64_t{1} << 20;

  // All members' records of index i, all done; false when any is missing.
  // Rows are asked for in ascending i from lo, once per pass.
  bool Row(uint64_t i, uint64_t lo) {
    const size_t k = static_cast<size_t>(i - lo);
    if (cache_rows_ && k < row_ok_.size()) {
      if (!row_ok_[k]) return false;
      row_.assign(rows_.begin() + static_cast<std::ptrdiff_t>(k * n_),
                  rows_.begin() + static_cast<std::ptrdiff_t>((k + 1) * n_));
      return true;
    }
    const bool ok = FindRow(i);
    if (cache_rows_) {
      row_ok_.push_back(ok);
      if (ok) {
        rows_.insert(rows_.end(), row_.begin(), row_.end());
      } else {
        rows_.resize(rows_.size() + n_, nullptr);
      }
    }
    return ok;
  }

  bool FindRow(uint64_t i) {
    row_.assign(n_, nullptr);
    for (int32_t r = 0; r < static_cast<int32_t>(n_); ++r) {
      const OpRecord* rec = index_.FindColl(group_, r, i);
      if (rec == nullptr || rec->state < format::kOpDone || rec->t_enqueue_ns == 0) return false;
      row_[r] = rec;
    }
    return true;
  }

  void EstimateOffsets(uint64_t lo, uint64_t hi) {
    std::vector<double> sum(n_, 0.0);
    uint64_t ops = 0;
    for (uint64_t i = lo; i <= hi; ++i) {
      if (!Row(i, lo)) continue;
      bool timed = true;
      for (const OpRecord* rec : row_) timed = timed && rec->gpu_end_ns != 0;
      if (!timed) continue;
      scratch_.clear();
      for (const OpRecord* rec : row_) scratch_.push_back(static_cast<double>(rec->gpu_end_ns));
      const double med = Median(&scratch_);
      for (size_t r = 0; r < n_; ++r) sum[r] += static_cast<double>(row_[r]->gpu_end_ns) - med;
      ++ops;
    }
    if (ops == 0) return;
    // One clock per host: members on the same host share its offset (the
    // mean of theirs), so scheduling noise on one member's GPU end times is
    // not mistaken for clock skew and subtracted from its enqueue times.
    std::map<std::string, std::pair<double, size_t>> by_host;
    const CommGroup& g = index_.groups()[group_];
    for (size_t r = 0; r < n_; ++r) {
      auto& h = by_host[index_.processes()[g.members[r].process].host];
      h.first += sum[r] / static_cast<double>(ops);
      ++h.second;
    }
    for (size_t r = 0; r < n_; ++r) {
      const auto& h = by_host[index_.processes()[g.members[r].process].host];
      offset_[r] = h.first / static_cast<double>(h.second);
    }
  }

  // Lateness of each member for one time field; false (all 0) when a
  // member's is not observed.
  bool Lateness(uint64_t OpRecord::*field, std::vector<double>* late) {
    scratch_.clear();
    for (size_t r = 0; r < n_; ++r) {
      if (row_[r]->*field == 0) {
        late->assign(n_, 0.0);
        return false;
      }
      scratch_.push_back(static_cast<double>(row_[r]->*field) - offset_[r]);
    }
    const double med = Median(&scratch_);
    for (size_t r = 0; r < n_; ++r) {
      (*late)[r] = static_cast<double>(row_[r]->*field) - offset_[r] - med;
    }
    return true;
  }

  // Member r's gap before its record in row_, from that member's gaps.
  const Gap& GapOf(const std::vector<const Gap*>& gaps, size_t r) const {
    return gaps[r][row_[r] - base_[r]];
  }

  // Member r's gap, as far as it can have made the member late: a host gap
  // taken while an earlier op still ran (ahead) only as far as its kernel
  // started late (`by_gpu`, when every member's start is known; else not
  // at all): its stream may have been busy with that op all along, and
  // then the pause delayed nobody. A member ahead of its GPU that waited
  // on the others (a victim) so counts 0, as it did not make itself late.
  static double Counted(const Gap& g, bool gpu_timed, double by_gpu) {
    if (!g.ahead || g.ns < 0) return g.ns;
    return gpu_timed ? std::min(g.ns, std::max(by_gpu, 0.0)) : 0.0;
  }

  // How much longer than the median member this one took, from the last
  // instant its host was known busy or released, to enqueue (host gaps),
  // or from the end of its previous op to start on its GPU (GPU gaps);
  // +inf when a gap is unknown (no filter).
  void GapLateness(const std::vector<const Gap*>& gaps, bool gpu_timed,
                   const std::vector<double>& by_gpu, std::vector<double>* late) {
    scratch_.clear();
    for (size_t r = 0; r < n_; ++r) {
      const double g = Counted(GapOf(gaps, r), gpu_timed, by_gpu[r]);
      if (g < 0) {
        late->assign(n_, HUGE_VAL);
        return;
      }
      (*late)[r] = g;
      scratch_.push_back(g);
    }
    const double med = Median(&scratch_);
    for (size_t r = 0; r < n_; ++r) (*late)[r] -= med;
  }

  void MeasureLateness(uint64_t lo, uint64_t hi) {
    late_sum_.assign(n_, 0.0);
    cpu_sum_.assign(n_, 0.0);
    wait_sum_.assign(n_, 0.0);
    late_ops_.assign(n_, 0);
    last_ops_.assign(n_, 0);
    first_start_.assign(n_, 0);
    last_end_.assign(n_, 0);
    lates_.assign(n_, {});
    ops_ = 0;
    std::vector<double> by_enqueue(n_), by_gpu(n_), by_host_gap(n_), by_gpu_gap(n_), dur(n_);
    for (uint64_t i = lo; i <= hi; ++i) {
      if (!Row(i, lo)) continue;
      Lateness(&OpRecord::t_enqueue_ns, &by_enqueue);
      const bool gpu_timed = Lateness(&OpRecord::gpu_start_ns, &by_gpu);
      GapLateness(host_gap_, gpu_timed, by_gpu, &by_host_gap);
      GapLateness(gpu_gap_, gpu_timed, by_gpu, &by_gpu_gap);
      // The last to arrive (its kernel's start; its enqueue when GPU times
      // are missing) held the others up by its lead over the next to last:
      // the op ends when it arrives. Nobody else held anyone up.
      const std::vector<double>& arrival = gpu_timed ? by_gpu : by_enqueue;
      size_t held_by = 0;
      for (size_t r = 1; r < n_; ++r) {
        if (arrival[r] > arrival[held_by]) held_by = r;
      }
      double next_to_last = -HUGE_VAL;
      for (size_t r = 0; r < n_; ++r) {
        if (r != held_by) next_to_last = std::max(next_to_last, arrival[r]);
      }
      const double lead = arrival[held_by] - next_to_last;
      ++last_ops_[held_by];
      double total_dur = 0;
      for (size_t r = 0; r < n_; ++r) {
        const OpRecord& rec = *row_[r];
        dur[r] = rec.gpu_start_ns != 0 && rec.gpu_end_ns >= rec.gpu_start_ns
                     ? static_cast<double>(rec.gpu_end_ns - rec.gpu_start_ns)
                     : 0.0;
        total_dur += dur[r];
        if (rec.gpu_start_ns != 0 && (first_start_[r] == 0 || rec.gpu_start_ns < first_start_[r])) {
          first_start_[r] = rec.gpu_start_ns;
        }
        last_end_[r] = std::max(last_end_[r], rec.gpu_end_ns);
      }
      // The physics of a collective: every member's kernel ends when the
      // last one arrived, so the one that started late ran the shortest.
      // GPU-side lateness counts only where its kernel was that much
      // shorter than the median member's: a start time that looks late
      // while the durations say nobody waited (clock offsets that moved
      // within the window, e.g. around a wall-clock step) is no straggler.
      scratch_.assign(dur.begin(), dur.end());
      const double med_dur = Median(&scratch_);
      for (size_t r = 0; r < n_; ++r) {
        // CPU-side: enqueued (or started) late after a long host pause;
        // GPU-side: started late after a long gap on its GPU. Either gap
        // must account for at least half of the lateness: a victim that
        // waited on another comm starts late by that wait, and its own gap
        // is only its wake-up (scheduling noise, which on a loaded host can
        // pass 1 ms). For the last to arrive, by a lead of min_late_ns or
        // more, the lateness that must be its own is what it held the
        // others up by, its lead: behind the median it can also be by its
        // own pauses before earlier ops of other comms (the peers there
        // waited, so it was released late), while a victim last by a lead
        // has only its wake-up to show for it.
        // What the others waited for is its kernel's start (its enqueue
        // when GPU times are missing).
        const double arrive = std::max(by_enqueue[r], by_gpu[r]);
        const double start = by_gpu[r] > 0 ? by_gpu[r] : arrive;
        const bool leads = r == held_by && lead >= static_cast<double>(options_.min_late_ns);
        // Enqueue times alone (no GPU times, and no known end to measure a
        // host gap from: PyTorch FR dumps recorded without timing): nothing
        // tells a member's own pause from a wait on another comm, after
        // which the members it waited with arrive late together. The op
        // starts when the last one arrives, so only what that one held the
        // others up by counts, its lead over the next to last; a member late
        // but not last delayed nobody.
        const bool blind = !gpu_timed && by_host_gap[r] == HUGE_VAL;
        const double cpu = blind ? (leads ? lead : 0.0)
                           : by_host_gap[r] >= 0.5 * (leads ? std::min(lead, start) : start)
                               ? std::min(arrive, by_host_gap[r])
                               : 0.0;
        const bool ran_short = dur[r] <= 0 || med_dur - dur[r] >= 0.5 * by_gpu[r];
        const double gpu =
            by_gpu_gap[r] >= 0.5 * (leads ? std::min(lead, by_gpu[r]) : by_gpu[r]) && ran_short
                ? std::min(by_gpu[r], by_gpu_gap[r])
                : 0.0;
        const double late = std::max(cpu, gpu);
        lates_[r].push_back(std::max(late, 0.0));
        if (late <= 0) continue;
        late_sum_[r] += late;
        cpu_sum_[r] += std::max(cpu, 0.0);
        // The others' GPU time beyond its own: what they spent waiting.
        wait_sum_[r] += std::max(0.0, total_dur - static_cast<double>(n_) * dur[r]);
        if (late >= static_cast<double>(options_.min_late_ns)) ++late_ops_[r];
      }
      ++ops_;
    }
  }

  void Report(std::vector<StragglerMeasure>* out) {
    if (ops_ == 0 || ops_ < options_.min_ops) return;
    const CommGroup& g = index_.groups()[group_];
    const size_t first = out->size();
    for (size_t r = 0; r < n_; ++r) {
      const double mean = late_sum_[r] / static_cast<double>(ops_);
      if (static_cast<double>(late_ops_[r]) <
              options_.min_late_fraction * static_cast<double>(ops_) ||
          mean < static_cast<double>(options_.min_late_ns)) {
        continue;
      }
      StragglerMeasure m;
      m.group = group_;
      m.rank = static_cast<int32_t>(r);
      m.process = g.members[r].process;
      m.ops = ops_;
      m.late_ops = late_ops_[r];
      m.last_ops = last_ops_[r];
      m.mean_late_ns = mean;
      m.median_late_ns = Median(&lates_[r]);
      m.sum_late_ns = late_sum_[r];
      m.caused_wait_ns = wait_sum_[r];
      m.span_ns = last_end_[r] > first_start_[r] ? last_end_[r] - first_start_[r] : 0;
      // Most of its lateness came with an on-time host: GPU-side.
      m.gpu_side = cpu_sum_[r] < 0.5 * late_sum_[r];
      out->push_back(m);
    }
    std::stable_sort(out->begin() + static_cast<std::ptrdiff_t>(first), out->end(),
                     [](const StragglerMeasure& a, const StragglerMeasure& b) {
                       return a.sum_late_ns > b.sum_late_ns;
                     });
  }

  const JobIndex& index_;
  const int32_t group_;
  const StragglerOptions& options_;
  const Gaps& host_gaps_;
  const Gaps& gpu_gaps_;
  const size_t n_;
  std::vector<const OpRecord*> row_;
  // Per member: its region's first record and its gaps (ProcessGaps).
  std::vector<const OpRecord*> base_;
  std::vector<const Gap*> host_gap_, gpu_gap_;
  bool cache_rows_ = false;
  std::vector<const OpRecord*> rows_;
  std::vector<bool> row_ok_;
  std::vector<double> scratch_, offset_, late_sum_, cpu_sum_, wait_sum_;
  std::vector<std::vector<double>> lates_;
  std::vector<uint64_t> late_ops_, last_ops_, first_start_, last_end_;
  uint64_t ops_ = 0;
};

Finding FindingOf(const JobIndex& index, const std::vector<StragglerMeasure>& group) {
  const StragglerMeasure& top = group.front();
  const CommGroup& g = index.groups()[top.group];
  Finding f;
  for (const StragglerMeasure& m : group) {
    RankNote n;
    n.rank = m.rank;
    n.process = m.process;
    n.late_ns = m.mean_late_ns;
    n.caused_wait_ns = m.sum_late_ns;
    f.ranks.push_back(n);
  }
  f.kind = FindingKind::kStraggler;
  f.group = top.group;
  f.summary = RankLabel(index, top.rank, top.process) + " arrives late at collectives on " +
              CommLabel(g) +
              (top.gpu_side ? " (GPU-side: enqueued on time, its GPU starts them late)"
                            : " (CPU-side: its host enqueues them late)") +
              ": " + Seconds(top.mean_late_ns) + " after the median on average, late in " +
              std::to_string(top.late_ops) + " of " + std::to_string(top.ops) +
              " ops; the others waited about " + Seconds(top.sum_late_ns) + " in total";
  if (group.size() > 1) {
    f.summary += "; " + std::to_string(group.size() - 1) + " more straggler(s)";
  }
  f.root_cause = true;
  f.confidence = 0.7 * DataQuality(index, top.group, false);
  return f;
}

}  // namespace

std::vector<StragglerMeasure> MeasureStragglers(const JobIndex& index,
                                                const StragglerOptions& options) {
  const size_t n = index.processes().size();
  Gaps host_gaps(n), gpu_gaps(n);
  ParallelFor(n, [&](size_t p) {
    ProcessGaps(index.processes()[p].comms, &OpRecord::t_enqueue_ns, &host_gaps[p]);
    ProcessGaps(index.processes()[p].comms, &OpRecord::gpu_start_ns, &gpu_gaps[p]);
  });
  std::vector<std::vector<StragglerMeasure>> by_group(index.groups().size());
  ParallelFor(by_group.size(), [&](size_t g) {
    GroupStragglers(index, static_cast<int32_t>(g), options, host_gaps, gpu_gaps).Run(&by_group[g]);
  });
  std::vector<StragglerMeasure> out;
  for (const std::vector<StragglerMeasure>& g : by_group) out.insert(out.end(), g.begin(), g.end());
  return out;
}

void DetectStragglers(const JobIndex& index, const StragglerOptions& options,
                      std::vector<Finding>* out) {
  const std::vector<StragglerMeasure> all = MeasureStragglers(index, options);
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].group == all[i].group) ++j;
    out->push_back(
        FindingOf(index, std::vector<StragglerMeasure>(all.begin() + i, all.begin() + j)));
    i = j;
  }
}

}  // namespace analysis
}  // namespace flightrec

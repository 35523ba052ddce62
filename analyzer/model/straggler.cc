// straggler: in a run that did not hang, members that arrive consistently
// late at collectives. Lateness is measured against the per-op median after
// removing each member's clock offset, estimated from GPU end times (a
// collective ends at about the same instant on every rank, whoever arrived
// last), so NTP skew between hosts is not mistaken for slowness.
//
// Only lateness of a member's own making counts, of two kinds:
//  - CPU-side: it enqueued late (data loader, GC, host), after a longer
//    pause since its previous op ended than the others took;
//  - GPU-side: it enqueued on time, but its stream started the collective
//    late (a slow or throttled GPU, other work on the stream), after a
//    longer gap on its GPU since its previous op ended than the others had.
// A member late only because its previous op (on another comm) ended late
// is a victim: both its gaps are the others', and it is not named.
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// Per process, per region, per record: time from the end of the process's
// previous op (any comm) to this op's `field` (enqueue: the host's pause;
// GPU start: the stream's); 0 when it came before that op ended (the
// process was ahead: nothing of its own made it late); kUnknownGap when no
// earlier op ended. A member that arrives late only because its previous op
// ended late (a victim of someone else) has normal gaps; the slow one has a
// long host gap (CPU-side) or a long GPU gap (GPU-side).
using Gaps = std::vector<std::vector<std::vector<double>>>;
constexpr double kUnknownGap = -1.0;

Gaps GapsOf(const JobIndex& index, uint64_t OpRecord::*field) {
  Gaps gaps(index.processes().size());
  struct Entry {
    uint64_t at, end;
    uint32_t comm, rec;
  };
  std::vector<Entry> entries;
  for (size_t p = 0; p < index.processes().size(); ++p) {
    const std::vector<CommSnapshot>& comms = index.processes()[p].comms;
    gaps[p].resize(comms.size());
    entries.clear();
    for (size_t c = 0; c < comms.size(); ++c) {
      gaps[p][c].assign(comms[c].records.size(), kUnknownGap);
      for (size_t i = 0; i < comms[c].records.size(); ++i) {
        const OpRecord& r = comms[c].records[i];
        if (r.*field == 0) continue;
        entries.push_back({r.*field, r.state >= format::kOpDone ? r.gpu_end_ns : 0,
                           static_cast<uint32_t>(c), static_cast<uint32_t>(i)});
      }
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.at < b.at; });
    uint64_t prev_end = 0;
    for (const Entry& e : entries) {
      if (prev_end != 0) {
        gaps[p][e.comm][e.rec] = e.at > prev_end ? static_cast<double>(e.at - prev_end) : 0.0;
      }
      prev_end = std::max(prev_end, e.end);
    }
  }
  return gaps;
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
    offset_.assign(n_, 0.0);
    EstimateOffsets(lo, hi);
    MeasureLateness(lo, hi);
    Report(out);
  }

 private:
  // All members' records of index i, all done; false when any is missing.
  bool Row(uint64_t i) {
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
      if (!Row(i)) continue;
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

  // Lateness of each member for one time field (0 = not observed).
  void Lateness(uint64_t OpRecord::*field, std::vector<double>* late) {
    scratch_.clear();
    for (size_t r = 0; r < n_; ++r) {
      if (row_[r]->*field == 0) {
        late->assign(n_, 0.0);
        return;
      }
      scratch_.push_back(static_cast<double>(row_[r]->*field) - offset_[r]);
    }
    const double med = Median(&scratch_);
    for (size_t r = 0; r < n_; ++r) {
      (*late)[r] = static_cast<double>(row_[r]->*field) - offset_[r] - med;
    }
  }

  double Gap(const Gaps& gaps, size_t r) const {
    const MemberRef& m = index_.groups()[group_].members[r];
    const OpRecord* base = index_.Comm(m).records.data();
    return gaps[m.process][m.comm][static_cast<size_t>(row_[r] - base)];
  }

  // How much longer than the median member this one took, from the end of
  // its previous op, to enqueue (host gaps) or to start on its GPU (GPU
  // gaps); +inf when a gap is unknown (no filter).
  void GapLateness(const Gaps& gaps, std::vector<double>* late) {
    scratch_.clear();
    for (size_t r = 0; r < n_; ++r) {
      const double g = Gap(gaps, r);
      if (g < 0) {
        late->assign(n_, HUGE_VAL);
        return;
      }
      scratch_.push_back(g);
    }
    const double med = Median(&scratch_);
    for (size_t r = 0; r < n_; ++r) (*late)[r] = Gap(gaps, r) - med;
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
      if (!Row(i)) continue;
      Lateness(&OpRecord::t_enqueue_ns, &by_enqueue);
      Lateness(&OpRecord::gpu_start_ns, &by_gpu);
      GapLateness(host_gaps_, &by_host_gap);
      GapLateness(gpu_gaps_, &by_gpu_gap);
      double total_dur = 0;
      size_t last = 0;
      for (size_t r = 0; r < n_; ++r) {
        const OpRecord& rec = *row_[r];
        dur[r] = rec.gpu_start_ns != 0 && rec.gpu_end_ns >= rec.gpu_start_ns
                     ? static_cast<double>(rec.gpu_end_ns - rec.gpu_start_ns)
                     : 0.0;
        total_dur += dur[r];
        if (by_gpu[r] > by_gpu[last]) last = r;
        if (rec.gpu_start_ns != 0 && (first_start_[r] == 0 || rec.gpu_start_ns < first_start_[r])) {
          first_start_[r] = rec.gpu_start_ns;
        }
        last_end_[r] = std::max(last_end_[r], rec.gpu_end_ns);
      }
      ++last_ops_[last];
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
        // pass 1 ms).
        // What the others waited for is its kernel's start (its enqueue
        // when GPU times are missing).
        const double arrive = std::max(by_enqueue[r], by_gpu[r]);
        const double start = by_gpu[r] > 0 ? by_gpu[r] : arrive;
        const double cpu = by_host_gap[r] >= 0.5 * start ? std::min(arrive, by_host_gap[r]) : 0.0;
        const bool ran_short = dur[r] <= 0 || med_dur - dur[r] >= 0.5 * by_gpu[r];
        const double gpu = by_gpu_gap[r] >= 0.5 * by_gpu[r] && ran_short
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
  const Gaps host_gaps = GapsOf(index, &OpRecord::t_enqueue_ns);
  const Gaps gpu_gaps = GapsOf(index, &OpRecord::gpu_start_ns);
  std::vector<StragglerMeasure> out;
  for (size_t g = 0; g < index.groups().size(); ++g) {
    GroupStragglers(index, static_cast<int32_t>(g), options, host_gaps, gpu_gaps).Run(&out);
  }
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

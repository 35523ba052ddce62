// straggler: in a run that did not hang, members that arrive consistently
// late at collectives. Lateness is measured against the per-op median after
// removing each member's clock offset, estimated from GPU end times (a
// collective ends at about the same instant on every rank, whoever arrived
// last), so NTP skew between hosts is not mistaken for slowness.
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
// previous op (any comm) to this op's enqueue; 0 when it was enqueued before
// that op ended (the process was ahead of its GPU: nothing of its own made
// it late); kUnknownGap when no earlier op ended. A member that arrives late
// only because its previous op ended late (a victim of someone else) has a
// normal gap; the slow one has a long gap.
using Gaps = std::vector<std::vector<std::vector<double>>>;
constexpr double kUnknownGap = -1.0;

Gaps HostGaps(const JobIndex& index) {
  Gaps gaps(index.processes().size());
  struct Entry {
    uint64_t enqueue, end;
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
        if (r.t_enqueue_ns == 0) continue;
        entries.push_back({r.t_enqueue_ns, r.state >= format::kOpDone ? r.gpu_end_ns : 0,
                           static_cast<uint32_t>(c), static_cast<uint32_t>(i)});
      }
    }
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.enqueue < b.enqueue; });
    uint64_t prev_end = 0;
    for (const Entry& e : entries) {
      if (prev_end != 0) {
        gaps[p][e.comm][e.rec] =
            e.enqueue > prev_end ? static_cast<double>(e.enqueue - prev_end) : 0.0;
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
                  const Gaps& gaps)
      : index_(index),
        group_(group),
        options_(options),
        gaps_(gaps),
        n_(index.groups()[group].members.size()) {}

  void Run(std::vector<Finding>* out) {
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

  double Gap(size_t r) const {
    const MemberRef& m = index_.groups()[group_].members[r];
    const OpRecord* base = index_.Comm(m).records.data();
    return gaps_[m.process][m.comm][static_cast<size_t>(row_[r] - base)];
  }

  // How much longer than the median member this one took, from the end of
  // its previous op, to enqueue; +inf when a gap is unknown (no filter).
  void GapLateness(std::vector<double>* late) {
    scratch_.clear();
    for (size_t r = 0; r < n_; ++r) {
      const double g = Gap(r);
      if (g < 0) {
        late->assign(n_, HUGE_VAL);
        return;
      }
      scratch_.push_back(g);
    }
    const double med = Median(&scratch_);
    for (size_t r = 0; r < n_; ++r) (*late)[r] = Gap(r) - med;
  }

  void MeasureLateness(uint64_t lo, uint64_t hi) {
    late_sum_.assign(n_, 0.0);
    late_ops_.assign(n_, 0);
    ops_ = 0;
    std::vector<double> by_enqueue(n_), by_gpu(n_), by_gap(n_);
    for (uint64_t i = lo; i <= hi; ++i) {
      if (!Row(i)) continue;
      Lateness(&OpRecord::t_enqueue_ns, &by_enqueue);
      Lateness(&OpRecord::gpu_start_ns, &by_gpu);
      GapLateness(&by_gap);
      for (size_t r = 0; r < n_; ++r) {
        const double late = std::min(std::max(by_enqueue[r], by_gpu[r]), by_gap[r]);
        if (late <= 0) continue;
        late_sum_[r] += late;
        if (late >= static_cast<double>(options_.min_late_ns)) ++late_ops_[r];
      }
      ++ops_;
    }
  }

  void Report(std::vector<Finding>* out) {
    if (ops_ == 0) return;
    const CommGroup& g = index_.groups()[group_];
    Finding f;
    for (size_t r = 0; r < n_; ++r) {
      const double mean = late_sum_[r] / static_cast<double>(ops_);
      if (static_cast<double>(late_ops_[r]) <
              options_.min_late_fraction * static_cast<double>(ops_) ||
          mean < static_cast<double>(options_.min_late_ns)) {
        continue;
      }
      RankNote n;
      n.rank = static_cast<int32_t>(r);
      n.process = g.members[r].process;
      n.late_ns = mean;
      n.caused_wait_ns = late_sum_[r];
      f.ranks.push_back(n);
    }
    if (f.ranks.empty()) return;
    std::stable_sort(f.ranks.begin(), f.ranks.end(), [](const RankNote& a, const RankNote& b) {
      return a.caused_wait_ns > b.caused_wait_ns;
    });
    const RankNote& top = f.ranks.front();
    f.kind = FindingKind::kStraggler;
    f.group = group_;
    f.summary = RankLabel(index_, top.rank, top.process) + " arrives late at collectives on " +
                CommLabel(g) + ": " + Seconds(top.late_ns) +
                " after the median on average, late in " + std::to_string(late_ops_[top.rank]) +
                " of " + std::to_string(ops_) + " ops; the others waited about " +
                Seconds(top.caused_wait_ns) + " in total";
    if (f.ranks.size() > 1) {
      f.summary += "; " + std::to_string(f.ranks.size() - 1) + " more straggler(s)";
    }
    f.root_cause = true;
    f.confidence = 0.7 * DataQuality(index_, group_, false);
    out->push_back(std::move(f));
  }

  const JobIndex& index_;
  const int32_t group_;
  const StragglerOptions& options_;
  const Gaps& gaps_;
  const size_t n_;
  std::vector<const OpRecord*> row_;
  std::vector<double> scratch_, offset_, late_sum_;
  std::vector<uint64_t> late_ops_;
  uint64_t ops_ = 0;
};

}  // namespace

void DetectStragglers(const JobIndex& index, const StragglerOptions& options,
                      std::vector<Finding>* out) {
  const Gaps gaps = HostGaps(index);
  for (size_t g = 0; g < index.groups().size(); ++g) {
    GroupStragglers(index, static_cast<int32_t>(g), options, gaps).Run(out);
  }
}

}  // namespace analysis
}  // namespace flightrec

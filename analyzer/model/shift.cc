// Members whose collectives are the others' shifted (detectors.h
// ShiftedMember): the records of a rank that skipped an op and went on.
#include <algorithm>
#include <map>

#include "analyzer/model/detectors.h"
#include "analyzer/model/parallel.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// Collectives a member may have left out in a row and still be recognized.
constexpr int64_t kMaxShift = 8;
// Ops compared per member: the newest ones of a ring are plenty.
constexpr uint64_t kMaxSpan = uint64_t{1} << 22;

// What the user asked for: CollSig::hash (NCCL's seqNumber is per function,
// so it shifts differently and is left out; so is the API-level datatype,
// which not every record has: a datatype-only difference is a mismatch, not
// a shift). Full records and a windowed load's older signatures compare alike.
uint32_t SigAt(const JobIndex& index, int32_t group, int32_t rank, uint64_t i) {
  CollSig sig;
  return index.FindCollSig(group, rank, i, &sig) ? sig.hash() : 0;
}

class GroupShifts {
 public:
  GroupShifts(const JobIndex& index, int32_t group) : index_(index), group_(group) {}

  void Run(std::vector<ShiftedMember>* out) {
    const CommGroup& g = index_.groups()[group_];
    uint64_t lo = 0, hi = UINT64_MAX;
    int32_t present = 0;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      if (!g.members[r].present()) continue;
      ++present;
      const uint64_t count = index_.Comm(g.members[r]).coll_count;
      if (count == 0) return;
      lo = std::max(lo, index_.FirstCollIndex(group_, r));
      hi = std::min(hi, count - 1);
    }
    if (present < 2 || lo == UINT64_MAX || hi < lo) return;
    if (hi - lo >= kMaxSpan) lo = hi - kMaxSpan + 1;
    uint64_t first = 0;
    if (!FirstDisagreement(lo, hi, &first)) return;
    Candidates(first, out);
  }

 private:
  // The lowest index in [lo, hi] where some member's signature differs from
  // the first member holding it; one pass per member over its own records.
  bool FirstDisagreement(uint64_t lo, uint64_t hi, uint64_t* first) {
    const CommGroup& g = index_.groups()[group_];
    std::vector<uint32_t> ref(static_cast<size_t>(hi - lo + 1), 0);  // 0: none yet
    uint64_t best = UINT64_MAX;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      index_.ForEachCollSig(group_, r, [&](uint64_t op, CollSig sig) {
        if (op < lo || op > hi || op >= best) return;
        uint32_t& k = ref[static_cast<size_t>(op - lo)];
        if (k == 0) {
          k = sig.hash();
        } else if (sig.hash() != k) {
          best = op;
        }
      });
    }
    *first = best;
    return best != UINT64_MAX;
  }

  void Candidates(uint64_t i, std::vector<ShiftedMember>* out) {
    const CommGroup& g = index_.groups()[group_];
    std::map<uint32_t, std::vector<int32_t>> by_sig;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      const uint32_t sig = SigAt(index_, group_, r, i);
      if (sig != 0) by_sig[sig].push_back(r);
    }
    if (by_sig.size() < 2) return;
    size_t most = 0, second = 0;
    const std::vector<int32_t>* normal = nullptr;
    for (const auto& [sig, ranks] : by_sig) {
      if (ranks.size() > most) {
        second = most;
        most = ranks.size();
        normal = &ranks;
      } else if (ranks.size() > second) {
        second = ranks.size();
      }
    }
    const bool majority = most > second && most >= 2;
    if (majority) {
      // The reference: the majority member holding the most ops (one that
      // stopped early may lack the ops the shifted member is compared with).
      int32_t ref = normal->front();
      for (int32_t r : *normal) {
        if (index_.Comm(g.members[r]).coll_count > index_.Comm(g.members[ref]).coll_count) ref = r;
      }
      for (const auto& [sig, ranks] : by_sig) {
        if (&ranks == normal) continue;
        for (int32_t r : ranks) Try(r, ref, i, true, out);
      }
      return;
    }
    // No majority (typically two members): whichever one's ops are the
    // other's shifted is behind. A periodic schedule (every training step
    // runs the same ops) lets both read as shifted, one by s and the other
    // by the period minus s: the one that left out fewer ops is the
    // simpler reading; equal shifts tell nothing.
    if (by_sig.size() != 2 || most != 1) return;
    const int32_t a = by_sig.begin()->second.front();
    const int32_t b = std::next(by_sig.begin())->second.front();
    // Without a majority one op compared is no evidence: a member whose
    // op i is the normal one and that stopped after it reads as the other's
    // shifted by one when the other ran op i with other arguments (a
    // mismatch, which the siblings then tell apart).
    ShiftedMember sa, sb;
    const bool a_behind = Match(a, b, i, &sa) && sa.matched >= 2;
    const bool b_behind = Match(b, a, i, &sb) && sb.matched >= 2;
    if (a_behind != b_behind) {
      out->push_back(a_behind ? sa : sb);
    } else if (a_behind && sa.shift != sb.shift) {
      out->push_back(sa.shift < sb.shift ? sa : sb);
    }
  }

  void Try(int32_t rank, int32_t ref, uint64_t i, bool majority, std::vector<ShiftedMember>* out) {
    ShiftedMember m;
    if (!Match(rank, ref, i, &m)) return;
    m.majority = majority;
    out->push_back(m);
  }

  // Whether `rank`'s ops from i on are `ref`'s from i + s on, for the
  // smallest s that fits: every op both hold matches, and at least one does
  // (a member that skipped and then blocked, or whose peers' lookahead ends
  // there, leaves one to compare). The plain reading, one odd op at i and
  // the rest aligned, must also fail at some later op both hold: in a run of
  // identical ops either member "matches" the other shifted. A member with
  // nothing after i cannot refute it and is taken as shifted.
  bool Match(int32_t rank, int32_t ref, uint64_t i, ShiftedMember* m) const {
    const CommGroup& g = index_.groups()[group_];
    const uint64_t mine_end = index_.Comm(g.members[rank]).coll_count;
    bool later = false, unshifted_fails = false;
    for (uint64_t t = i + 1; t < mine_end && !unshifted_fails; ++t) {
      const uint32_t mine = SigAt(index_, group_, rank, t);
      if (mine == 0) continue;
      later = true;
      const uint32_t theirs = SigAt(index_, group_, ref, t);
      unshifted_fails = theirs != 0 && mine != theirs;
    }
    if (later && !unshifted_fails) return false;
    for (int64_t s = 1; s <= kMaxShift; ++s) {
      uint64_t matched = 0;
      bool ok = true;
      for (uint64_t t = i; t < mine_end && ok; ++t) {
        const uint32_t mine = SigAt(index_, group_, rank, t);
        const uint32_t theirs = SigAt(index_, group_, ref, t + static_cast<uint64_t>(s));
        if (mine == 0 || theirs == 0) continue;
        ok = mine == theirs;
        matched += ok ? 1 : 0;
      }
      if (!ok || matched == 0) continue;
      m->group = group_;
      m->rank = rank;
      m->process = g.members[rank].process;
      m->index = i;
      m->shift = s;
      m->matched = matched;
      m->reference = ref;
      return true;
    }
    return false;
  }

  const JobIndex& index_;
  const int32_t group_;
};

}  // namespace

std::vector<ShiftedMember> FindShiftedMembers(const JobIndex& index) {
  std::vector<std::vector<ShiftedMember>> per_group(index.groups().size());
  ParallelFor(per_group.size(),
              [&](size_t g) { GroupShifts(index, static_cast<int32_t>(g)).Run(&per_group[g]); });
  std::vector<ShiftedMember> out;
  for (const std::vector<ShiftedMember>& found : per_group) {
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace analysis
}  // namespace flightrec

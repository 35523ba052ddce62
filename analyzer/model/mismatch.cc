// mismatch: members that enqueued the same op index with different
// arguments. Normal is decided per field by majority; the minority is named.
// A comm without a majority (two members, an even split) asks outside it:
// its siblings, then the members' other comms (docs/analyzer.md "Ties").
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "analyzer/model/coll_signature.h"
#include "analyzer/model/describe.h"
#include "analyzer/model/detectors.h"
#include "analyzer/model/parallel.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace analysis {
namespace {

enum Field { kFunc, kCount, kDatatype, kRoot, kSeq, kNumFields };
constexpr const char* kFieldNames[kNumFields] = {"func", "count", "datatype", "root", "seq"};

// AllGather and Broadcast come from NCCL's Coll event in bytes as ncclInt8:
// a count difference there may be the user's count or datatype, unless the
// records carry the call's datatype (api_datatype, from the CollApi event).
bool InBytes(const OpRecord& r) {
  return (r.func == format::kFuncAllGather || r.func == format::kFuncBroadcast) &&
         r.datatype == format::kTypeInt8;
}

// `use_api`: every record compared at this index has an api_datatype; the
// datatype compared is then the call's, else the Coll event's.
uint64_t FieldOf(const OpRecord& r, int field, bool use_api) {
  switch (field) {
    case kFunc:
      return r.func;
    case kCount:
      return r.count;
    case kDatatype:
      return use_api ? r.api_datatype : r.datatype;
    case kRoot:
      return Rooted(r.func) ? static_cast<uint64_t>(static_cast<uint32_t>(r.root_or_peer)) : 0;
    default:
      return r.nccl_seq;
  }
}

std::string ValueText(int field, uint64_t v) {
  if (field == kFunc) return format::FuncName(static_cast<uint8_t>(v));
  if (field == kDatatype) return format::DataTypeName(static_cast<uint8_t>(v));
  if (field == kRoot) return std::to_string(static_cast<int32_t>(static_cast<uint32_t>(v)));
  return std::to_string(v);
}

struct Column {
  std::vector<std::pair<uint64_t, int32_t>> values;  // (value, rank)
};

// The most common value; `tie` when two values are equally common.
uint64_t Mode(std::vector<std::pair<uint64_t, int32_t>> values, size_t* count, bool* tie) {
  std::sort(values.begin(), values.end());
  uint64_t best = 0;
  *count = 0;
  *tie = false;
  for (size_t lo = 0; lo < values.size();) {
    size_t hi = lo;
    while (hi < values.size() && values[hi].first == values[lo].first) ++hi;
    if (hi - lo > *count) {
      best = values[lo].first;
      *count = hi - lo;
      *tie = false;
    } else if (hi - lo == *count) {
      *tie = true;
    }
    lo = hi;
  }
  return best;
}

// (process, group): the process is the odd one (a mismatch minority named
// by a majority, or a member whose ops are shifted) on that comm.
using OddMembers = std::set<std::pair<int32_t, int32_t>>;

// Whether `process` is the odd one on a comm other than `group`.
bool OddElsewhere(const OddMembers* odd, int32_t process, int32_t group) {
  if (odd == nullptr || process < 0) return false;
  for (auto it = odd->lower_bound({process, INT32_MIN}); it != odd->end() && it->first == process;
       ++it) {
    if (it->second != group) return true;
  }
  return false;
}

uint64_t SigKey(const CollSig& s) { return uint64_t{s.sig} << 32 | s.seq_lo; }

// The signature key every present member of `group` holds at op i, when at
// least one holds it and all that do agree.
bool Consensus(const JobIndex& index, int32_t group, uint64_t i, uint64_t* key) {
  const CommGroup& g = index.groups()[group];
  bool any = false;
  for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
    CollSig s;
    if (!g.members[r].present() || !index.FindCollSig(group, r, i, &s)) continue;
    if (any && SigKey(s) != *key) return false;
    *key = SigKey(s);
    any = true;
  }
  return any;
}

// Siblings voting at most; the first ones by comm order (deterministic).
constexpr int kMaxSiblingVoters = 64;
// Ops compared each side of the contested one to call a comm a sibling.
constexpr uint64_t kSiblingSpan = 8;

// How a tie was broken: the normal side, and what the finding says.
struct TieBreak {
  bool resolved = false;
  std::string kind;  // Finding::tie_break
  std::string text;  // appended to the summary
  double base = 0;   // confidence before data quality
};

class CollChecker {
 public:
  // `excluded`: comm ranks left out (members whose ops are shifted). `odd`:
  // the odd members of other comms, the second tie-breaker (may be null).
  CollChecker(const JobIndex& index, int32_t group, std::vector<char> excluded,
              const OddMembers* odd)
      : index_(index), group_(group), excluded_(std::move(excluded)), odd_(odd) {
    excluded_.resize(index.groups()[group].members.size(), 0);
  }

  void Run(std::vector<Finding>* out) {
    const CommGroup& g = index_.groups()[group_];
    uint64_t lo = 0, hi = UINT64_MAX;
    int32_t present = 0;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      if (!Compared(r)) continue;
      ++present;
      const CommSnapshot& c = index_.Comm(g.members[r]);
      if (c.coll_count == 0) return;  // nothing to compare
      lo = std::max(lo, index_.FirstCollIndex(group_, r));
      hi = std::min(hi, c.coll_count - 1);
    }
    if (present < 2 || lo == UINT64_MAX || hi < lo) return;
    // Only indices every member still holds are compared: a wrapped ring
    // simply has fewer of them. Real rings hold far fewer than kMaxSpan ops;
    // a file claiming more only has its newest kMaxSpan compared.
    if (hi - lo >= kMaxSpan) lo = hi - kMaxSpan + 1;
    std::vector<uint64_t> bad_indices;
    FindDisagreements(lo, hi, &bad_indices);
    if (bad_indices.empty()) return;
    Finding first;
    if (!CompareIndex(bad_indices.front(), &first)) BySignature(bad_indices.front(), &first);
    const uint64_t bad = bad_indices.size();
    if (bad > 1) {
      first.summary += "; " + std::to_string(bad - 1) + " later op" + (bad > 2 ? "s" : "") +
                       " on this comm also differ";
    }
    out->push_back(std::move(first));
  }

 private:
  static constexpr uint64_t kMaxSpan = uint64_t{1} << 22;

  // The indices in [lo, hi] where some member disagrees with the lowest
  // rank holding that index, ascending. One sequential pass per member over
  // its own ops (not one lookup per (index, member)), so the cost is the
  // number of ops, with no cache miss per comparison. Signatures, so the
  // older ops of a windowed load compare like full records. The API-level
  // datatypes count only where every member's record has one (as in
  // CompareIndex): a record without one (an older plugin, no API event)
  // cannot be told apart on it.
  void FindDisagreements(uint64_t lo, uint64_t hi, std::vector<uint64_t>* bad_indices) {
    const CommGroup& g = index_.groups()[group_];
    std::vector<CollSig> ref(static_cast<size_t>(hi - lo + 1));
    std::vector<char> bad(ref.size(), 0);
    std::vector<char> api_differs(ref.size(), 0), api_missing(ref.size(), 0);
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      if (!Compared(r)) continue;
      index_.ForEachCollSig(group_, r, [&](uint64_t op, CollSig sig) {
        if (op < lo || op > hi) return;
        const size_t k = static_cast<size_t>(op - lo);
        api_missing[k] = api_missing[k] || sig.api_datatype() == 0;
        if (!ref[k].held()) {
          ref[k] = sig;
          return;
        }
        bad[k] = bad[k] || sig.hash() != ref[k].hash() || sig.seq_lo != ref[k].seq_lo;
        api_differs[k] = api_differs[k] || sig.api_datatype() != ref[k].api_datatype();
      });
    }
    for (size_t k = 0; k < bad.size(); ++k) {
      if (bad[k] || (api_differs[k] && !api_missing[k])) bad_indices->push_back(lo + k);
    }
  }

  // Every compared member's record of index i into rows_. An op a windowed
  // load kept as a signature is re-read once per distinct signature (one
  // file, not one per member) and given the member's own seq.
  void CollectRows(uint64_t i) {
    const CommGroup& g = index_.groups()[group_];
    rows_.clear();
    std::map<uint32_t, OpRecord> fetched;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      if (!Compared(r)) continue;
      if (const OpRecord* rec = index_.FindColl(group_, r, i)) {
        rows_.emplace_back(r, *rec);
        continue;
      }
      CollSig sig;
      if (!index_.FindCollSig(group_, r, i, &sig)) continue;
      auto it = fetched.find(sig.sig);
      if (it == fetched.end()) {
        OpRecord rec;
        if (!index_.FetchColl(group_, r, i, &rec)) continue;
        it = fetched.emplace(sig.sig, rec).first;
      }
      OpRecord rec = it->second;
      rec.nccl_seq = (rec.nccl_seq & ~uint64_t{0xffffffff}) | sig.seq_lo;
      rows_.emplace_back(r, rec);
    }
  }

  // True when members disagree at index i; fills *f for the first one.
  bool CompareIndex(uint64_t i, Finding* f) {
    CollectRows(i);
    if (rows_.size() < 2) return false;
    use_api_ = std::all_of(rows_.begin(), rows_.end(), [](const auto& row) {
      return row.second.api_datatype != format::kTypeUnknown;
    });
    bool differ = false;
    const OpRecord& ref = rows_.front().second;
    for (const auto& row : rows_) {
      for (int field = 0; field < kNumFields && !differ; ++field) {
        differ = FieldOf(row.second, field, use_api_) != FieldOf(ref, field, use_api_);
      }
      if (differ) break;
    }
    if (!differ || f == nullptr) return differ;
    Describe(i, f);
    return true;
  }

  // When the records of index i cannot be re-read (a live ring moved on, a
  // file vanished): the members whose signature is not the most common one,
  // without their values.
  void BySignature(uint64_t i, Finding* f) {
    const CommGroup& g = index_.groups()[group_];
    std::vector<std::pair<uint64_t, int32_t>> sigs;
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      CollSig sig;
      if (Compared(r) && index_.FindCollSig(group_, r, i, &sig)) {
        sigs.emplace_back(uint64_t{sig.sig} << 32 | sig.seq_lo, r);
      }
    }
    size_t count = 0;
    bool tie = false;
    const uint64_t mode = Mode(sigs, &count, &tie);
    f->kind = FindingKind::kMismatch;
    f->group = group_;
    f->op.index = i;
    f->fields.push_back("signature");
    for (const auto& [sig, r] : sigs) {
      if (sig == mode && !tie) continue;
      RankNote n;
      n.rank = r;
      n.process = g.members[r].process;
      f->ranks.push_back(n);
    }
    if (f->ranks.empty()) return;
    const RankNote& who = f->ranks.front();
    f->summary = RankLabel(index_, who.rank, who.process) +
                 (f->ranks.size() > 1 ? " and " + std::to_string(f->ranks.size() - 1) + " more"
                                      : std::string()) +
                 " enqueued op #" + std::to_string(i) + " on " + CommLabel(g) +
                 " with other arguments (func, count, datatype, root or seq) than " +
                 std::to_string(count) + " of " + std::to_string(sigs.size()) +
                 " ranks; its record could not be re-read to say which";
    f->contested = tie;
    f->root_cause = true;
    f->confidence = (tie ? 0.4 : 0.8) * DataQuality(index_, group_, true);
  }

  // Signature key of each row of rows_ (same order), for tie-breaking.
  std::vector<uint64_t> RowKeys() const {
    std::vector<uint64_t> keys;
    for (const auto& row : rows_) keys.push_back(SigKey(SigOf(row.second)));
    return keys;
  }

  // Siblings: other comms of the same size whose members agree at op i and
  // whose ops around i are this comm's (every TP group runs one schedule,
  // so does every DP group). Each votes for what it ran at i; a strict
  // majority of the voters that matches one side of the tie names it normal.
  bool SiblingVote(uint64_t i, const std::vector<uint64_t>& keys, uint64_t* normal,
                   TieBreak* tb) const {
    const CommGroup& g = index_.groups()[group_];
    std::vector<std::pair<uint64_t, uint64_t>> around;  // (op, key) this comm agrees on
    const uint64_t from = i > kSiblingSpan ? i - kSiblingSpan : 0;
    for (uint64_t t = from; t <= i + kSiblingSpan; ++t) {
      uint64_t key = 0;
      if (t != i && Consensus(index_, group_, t, &key)) around.emplace_back(t, key);
    }
    // A comm that holds no op around i (its only op, or a job that hung
    // right after it) cannot show its siblings run its schedule: then every
    // comm of its size that agrees at i votes, and the tie break says so.
    const bool unconfirmed = around.empty();
    std::map<uint64_t, int> votes;
    int voters = 0;
    std::string example;
    for (size_t s = 0; s < index_.groups().size() && voters < kMaxSiblingVoters; ++s) {
      const int32_t sg = static_cast<int32_t>(s);
      if (sg == group_ || index_.groups()[s].nranks != g.nranks) continue;
      uint64_t at_i = 0;
      if (!Consensus(index_, sg, i, &at_i)) continue;
      int same = 0;
      bool differs = false;
      for (const auto& [t, key] : around) {
        uint64_t theirs = 0;
        if (!Consensus(index_, sg, t, &theirs)) continue;
        differs = theirs != key;
        if (differs) break;
        ++same;
      }
      if (differs || (same == 0 && !unconfirmed)) continue;
      ++voters;
      ++votes[at_i];
      if (example.empty()) example = CommLabel(index_.groups()[s]);
    }
    if (voters == 0) return false;
    const auto best =
        std::max_element(votes.begin(), votes.end(),
                         [](const auto& a, const auto& b) { return a.second < b.second; });
    if (2 * best->second <= voters) return false;
    if (std::find(keys.begin(), keys.end(), best->first) == keys.end()) return false;
    *normal = best->first;
    tb->resolved = true;
    tb->kind = "siblings";
    tb->base = unconfirmed ? 0.75 : 0.85;
    tb->text = "; no majority on this comm, the tie broken by its siblings: " +
               std::to_string(best->second) + " of " + std::to_string(voters) + " comm" +
               (voters == 1 ? "" : "s") + " of " + std::to_string(g.nranks) + " ranks " +
               (unconfirmed ? "(it holds no other op to compare theirs with)"
                            : "running the same ops around it") +
               " (such as " + example + ") ran it as the others here did";
    return true;
  }

  // The members' other comms: when the members of exactly one side are all
  // the odd ones on another comm and the other side's are not, that side is
  // the odd one here too.
  bool OtherCommsVote(const std::vector<uint64_t>& keys, uint64_t* normal, TieBreak* tb) const {
    const CommGroup& g = index_.groups()[group_];
    bool any_flagged = false, have_normal = false;
    uint64_t clean = 0;
    std::string who;
    for (size_t k = 0; k < rows_.size(); ++k) {
      const int32_t p = g.members[rows_[k].first].process;
      if (OddElsewhere(odd_, p, group_)) {
        any_flagged = true;
        if (who.empty()) who = RankLabel(index_, rows_[k].first, p);
        continue;
      }
      if (have_normal && clean != keys[k]) return false;
      clean = keys[k];
      have_normal = true;
    }
    if (!any_flagged || !have_normal) return false;
    for (size_t k = 0; k < rows_.size(); ++k) {
      const int32_t p = g.members[rows_[k].first].process;
      if (OddElsewhere(odd_, p, group_) && keys[k] == clean) return false;
    }
    *normal = clean;
    tb->resolved = true;
    tb->kind = "other_comms";
    tb->base = 0.7;
    tb->text = "; no majority on this comm, the tie broken by the members' other comms: " + who +
               " is the odd one on another comm too, the others agree with theirs";
    return true;
  }

  void Describe(uint64_t i, Finding* f) {
    const CommGroup& g = index_.groups()[group_];
    bool any_tie = false;
    for (int field = 0; field < kNumFields && !any_tie; ++field) {
      Column col;
      for (const auto& row : rows_) {
        col.values.emplace_back(FieldOf(row.second, field, use_api_), row.first);
      }
      size_t count = 0;
      Mode(col.values, &count, &any_tie);
    }
    // No majority here: evidence from outside the comm may name a side.
    TieBreak tb;
    const std::vector<uint64_t> keys = RowKeys();
    uint64_t normal_key = 0;
    if (any_tie && !SiblingVote(i, keys, &normal_key, &tb)) OtherCommsVote(keys, &normal_key, &tb);
    const OpRecord* normal_row = nullptr;
    for (size_t k = 0; k < rows_.size() && tb.resolved; ++k) {
      if (keys[k] == normal_key) normal_row = &rows_[k].second;
    }
    const bool contested = any_tie && normal_row == nullptr;
    std::vector<char> minority(g.members.size(), 0);
    std::string detail;
    OpRecord normal = normal_row != nullptr ? *normal_row : rows_.front().second;
    bool count_differs = false, datatype_differs = false;
    for (int field = 0; field < kNumFields; ++field) {
      Column col;
      for (const auto& row : rows_) {
        col.values.emplace_back(FieldOf(row.second, field, use_api_), row.first);
      }
      size_t count = 0;
      bool tie = false;
      uint64_t mode = Mode(col.values, &count, &tie);
      if (normal_row != nullptr) {
        mode = FieldOf(*normal_row, field, use_api_);
        count =
            static_cast<size_t>(std::count_if(col.values.begin(), col.values.end(),
                                              [mode](const auto& v) { return v.first == mode; }));
      }
      if (count == rows_.size()) continue;
      f->fields.push_back(kFieldNames[field]);
      uint64_t odd = 0;
      for (const auto& v : col.values) {
        if (v.first != mode) {
          minority[v.second] = 1;
          odd = v.first;
        }
      }
      detail += std::string(detail.empty() ? "" : ", ") + kFieldNames[field] + " " +
                ValueText(field, odd) + " where " + std::to_string(count) + " of " +
                std::to_string(rows_.size()) + " ranks used " + ValueText(field, mode);
      if (field == kFunc) normal.func = static_cast<uint8_t>(mode);
      if (field == kSeq) normal.nccl_seq = mode;
      count_differs = count_differs || field == kCount;
      datatype_differs = datatype_differs || field == kDatatype;
      if (field == kCount && InBytes(normal) && !use_api_) {
        detail += " (bytes: NCCL gives " + std::string(format::FuncName(normal.func)) +
                  " in bytes as ncclInt8, so the call's count or its datatype differs)";
      }
    }
    // Every record carries the call's datatype (CollApi): count and datatype
    // are told apart even where the Coll event is in bytes.
    if (use_api_ && InBytes(normal) && count_differs != datatype_differs) {
      detail += count_differs
                    ? " (bytes: NCCL gives " + std::string(format::FuncName(normal.func)) +
                          " in bytes as ncclInt8; the call's datatype, from its CollApi event, "
                          "is the same on every rank, so its count differs)"
                    : " (the call's datatype, from its CollApi event; NCCL gives " +
                          std::string(format::FuncName(normal.func)) +
                          " in bytes as ncclInt8, and the byte counts agree)";
    }
    f->kind = FindingKind::kMismatch;
    f->group = group_;
    f->op = OpOf(normal);
    f->op.index = i;
    for (const auto& row : rows_) {
      // Without a majority every member is named: none can be assumed right.
      if (!minority[row.first] && !contested) continue;
      RankNote n;
      n.rank = row.first;
      n.process = g.members[row.first].process;
      f->ranks.push_back(n);
    }
    const RankNote& who = f->ranks.front();
    f->summary = RankLabel(index_, who.rank, who.process) +
                 (f->ranks.size() > 1 ? " and " + std::to_string(f->ranks.size() - 1) + " more"
                                      : std::string()) +
                 " enqueued op #" + std::to_string(i) + " on " + CommLabel(g) + " with " + detail;
    if (contested) {
      f->summary +=
          " (no majority, and neither sibling comms nor the members' other comms tell the sides "
          "apart: either may be wrong)";
    }
    f->summary += tb.text;
    f->contested = contested;
    f->tie_break = tb.kind;
    f->root_cause = true;
    const double base = contested ? 0.5 : tb.resolved ? tb.base : 0.95;
    f->confidence = base * DataQuality(index_, group_, true);
  }

  bool Compared(int32_t r) const {
    return index_.groups()[group_].members[r].present() && !excluded_[r];
  }

  const JobIndex& index_;
  const int32_t group_;
  std::vector<char> excluded_;
  const OddMembers* odd_;
  std::vector<std::pair<int32_t, OpRecord>> rows_;
  bool use_api_ = false;  // every row of rows_ has an api_datatype (CompareIndex)
};

uint64_t P2pSize(const OpRecord& r, bool by_bytes) { return by_bytes ? r.bytes : r.count; }

// The most common size of the Sends (or Recvs) #index of a comm, and how
// many of them have it; *total counts them all.
uint64_t P2pMode(const JobIndex& index, int32_t group, uint64_t op_index, uint8_t func,
                 bool by_bytes, size_t* count, size_t* total) {
  std::vector<std::pair<uint64_t, int32_t>> values;
  const CommGroup& g = index.groups()[group];
  for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
    if (!g.members[r].present()) continue;
    for (const OpRecord& rec : index.Comm(g.members[r]).records) {
      if (rec.is_p2p() && rec.func == func && rec.op_index == op_index) {
        values.emplace_back(P2pSize(rec, by_bytes), r);
      }
    }
  }
  *total = values.size();
  bool tie = false;
  const uint64_t mode = Mode(values, count, &tie);
  if (tie) *count = 0;
  return mode;
}

// Sibling comms (same size) whose Sends and Recvs #op_index all carry one
// size vote for it; *size is the size a strict majority of them carry.
bool SiblingP2pSize(const JobIndex& index, int32_t group, uint64_t op_index, bool by_bytes,
                    uint64_t* size, int* votes, int* voters, std::string* example) {
  std::map<uint64_t, int> by_size;
  *voters = 0;
  for (size_t s = 0; s < index.groups().size() && *voters < kMaxSiblingVoters; ++s) {
    const int32_t sg = static_cast<int32_t>(s);
    if (sg == group || index.groups()[s].nranks != index.groups()[group].nranks) continue;
    size_t send_n = 0, send_total = 0, recv_n = 0, recv_total = 0;
    const uint64_t send_mode =
        P2pMode(index, sg, op_index, format::kFuncSend, by_bytes, &send_n, &send_total);
    const uint64_t recv_mode =
        P2pMode(index, sg, op_index, format::kFuncRecv, by_bytes, &recv_n, &recv_total);
    if (send_total == 0 || recv_total == 0 || send_n != send_total || recv_n != recv_total ||
        send_mode != recv_mode) {
      continue;
    }
    ++*voters;
    ++by_size[send_mode];
    if (example->empty()) *example = CommLabel(index.groups()[s]);
  }
  if (*voters == 0) return false;
  const auto best =
      std::max_element(by_size.begin(), by_size.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  *size = best->first;
  *votes = best->second;
  return 2 * best->second > *voters;
}

// A Send #k from s to q must meet a Recv #k at q from s with the same size.
void CheckP2p(const JobIndex& index, int32_t group, const OddMembers* odd,
              std::vector<Finding>* out) {
  const CommGroup& g = index.groups()[group];
  uint64_t bad = 0;
  Finding f;
  for (int32_t s = 0; s < static_cast<int32_t>(g.members.size()); ++s) {
    if (!g.members[s].present()) continue;
    for (const OpRecord& send : index.Comm(g.members[s]).records) {
      if (!send.is_p2p() || send.func != format::kFuncSend) continue;
      const OpRecord* recv = index.FindP2p(group, send.root_or_peer, s, false, send.op_index);
      if (recv == nullptr) continue;
      const bool by_bytes = send.bytes != 0 && recv->bytes != 0;
      const bool same = by_bytes ? send.bytes == recv->bytes : send.count == recv->count;
      if (same) continue;
      if (bad++ > 0) continue;
      f.kind = FindingKind::kMismatch;
      f.group = group;
      f.op = OpOf(send);
      f.fields.push_back(by_bytes ? "bytes" : "count");
      RankNote a, b;
      a.rank = s;
      a.process = g.members[s].process;
      b.rank = send.root_or_peer;
      b.process = g.members[b.rank].process;
      const std::string unit = by_bytes ? " bytes" : " elements";
      const uint64_t sent = P2pSize(send, by_bytes), posted = P2pSize(*recv, by_bytes);
      f.summary = RankLabel(index, s, a.process) + " sends " + std::to_string(sent) + unit +
                  " in " + OpLabel(f.op) + " on " + CommLabel(g) + " but " +
                  RankLabel(index, b.rank, b.process) + " posted a Recv #" +
                  std::to_string(send.op_index) + " of " + std::to_string(posted);
      // Which side is odd: the other Sends and Recvs of the same index on
      // this comm (a ring or all-to-all exchange moves one size) decide.
      size_t send_n = 0, send_total = 0, recv_n = 0, recv_total = 0;
      const uint64_t send_mode =
          P2pMode(index, group, send.op_index, format::kFuncSend, by_bytes, &send_n, &send_total);
      const uint64_t recv_mode =
          P2pMode(index, group, send.op_index, format::kFuncRecv, by_bytes, &recv_n, &recv_total);
      const bool sender_odd = send_n >= 2 && sent != send_mode && recv_n >= 1 &&
                              posted == recv_mode && send_mode == recv_mode;
      const bool receiver_odd = recv_n >= 2 && posted != recv_mode && send_n >= 1 &&
                                sent == send_mode && send_mode == recv_mode;
      f.root_cause = true;
      if (sender_odd || receiver_odd) {
        f.ranks = {sender_odd ? a : b};
        const size_t n = sender_odd ? send_n : recv_n;
        const size_t total = sender_odd ? send_total : recv_total;
        f.summary += "; " + std::to_string(n) + " of " + std::to_string(total) + " " +
                     (sender_odd ? "Sends" : "Recvs") + " #" + std::to_string(send.op_index) +
                     " on this comm carry " + std::to_string(send_mode) + unit + ", so " +
                     (sender_odd ? "the sender" : "the receiver") + " is the odd one";
        f.contested = false;
        f.confidence = 0.9 * DataQuality(index, group, true);
      } else {
        // No majority on this comm: its siblings, then the two sides' other
        // comms, may tell which side is odd.
        uint64_t size = 0;
        int votes = 0, voters = 0;
        std::string example;
        const bool by_siblings = SiblingP2pSize(index, group, send.op_index, by_bytes, &size,
                                                &votes, &voters, &example) &&
                                 (size == sent) != (size == posted);
        const bool a_odd = OddElsewhere(odd, a.process, group);
        const bool b_odd = OddElsewhere(odd, b.process, group);
        if (by_siblings) {
          const bool sender = size != sent;
          f.ranks = {sender ? a : b};
          f.summary += "; no majority on this comm, the tie broken by its siblings: " +
                       std::to_string(votes) + " of " + std::to_string(voters) + " comm" +
                       (voters == 1 ? "" : "s") + " of " + std::to_string(g.nranks) +
                       " ranks (such as " + example + ") move " + std::to_string(size) + unit +
                       " in their Sends and Recvs #" + std::to_string(send.op_index) + ", so " +
                       (sender ? "the sender" : "the receiver") + " is the odd one";
          f.tie_break = "siblings";
          f.contested = false;
          f.confidence = 0.85 * DataQuality(index, group, true);
        } else if (a_odd != b_odd) {
          f.ranks = {a_odd ? a : b};
          f.summary +=
              "; no majority on this comm, the tie broken by the two sides' other comms: " +
              RankLabel(index, f.ranks[0].rank, f.ranks[0].process) +
              " is the odd one on another comm too";
          f.tie_break = "other_comms";
          f.contested = false;
          f.confidence = 0.7 * DataQuality(index, group, true);
        } else {
          f.ranks = {a, b};
          // Two parties, no majority, nothing outside tells: either may be wrong.
          f.contested = true;
          f.confidence = 0.7 * DataQuality(index, group, true);
        }
      }
    }
  }
  if (bad == 0) return;
  if (bad > 1) f.summary += "; " + std::to_string(bad - 1) + " more p2p pairs differ";
  out->push_back(std::move(f));
}

}  // namespace

void DetectMismatch(const JobIndex& index, const std::vector<ShiftedMember>& shifts,
                    std::vector<Finding>* out) {
  std::vector<std::vector<char>> excluded(index.groups().size());
  for (size_t g = 0; g < excluded.size(); ++g) {
    excluded[g].assign(index.groups()[g].members.size(), 0);
  }
  for (const ShiftedMember& m : shifts) excluded[m.group][m.rank] = 1;
  auto check = [&](size_t g, const OddMembers* odd, std::vector<Finding>* found) {
    found->clear();
    CollChecker(index, static_cast<int32_t>(g), excluded[g], odd).Run(found);
    CheckP2p(index, static_cast<int32_t>(g), odd, found);
  };
  std::vector<std::vector<Finding>> per_group(index.groups().size());
  ParallelFor(per_group.size(), [&](size_t g) { check(g, nullptr, &per_group[g]); });
  // A comm whose tie its siblings could not break asks the members' other
  // comms: who is the odd one there (named by a majority, or shifted).
  OddMembers odd;
  std::vector<size_t> contested;
  for (size_t g = 0; g < per_group.size(); ++g) {
    bool tie = false;
    for (const Finding& f : per_group[g]) {
      tie = tie || f.contested;
      if (f.contested) continue;
      for (const RankNote& n : f.ranks) odd.emplace(n.process, static_cast<int32_t>(g));
    }
    if (tie) contested.push_back(g);
  }
  for (const ShiftedMember& m : shifts) odd.emplace(m.process, m.group);
  if (!odd.empty()) {
    for (size_t g : contested) check(g, &odd, &per_group[g]);
  }
  for (std::vector<Finding>& found : per_group) {
    for (Finding& f : found) out->push_back(std::move(f));
  }
}

}  // namespace analysis
}  // namespace flightrec

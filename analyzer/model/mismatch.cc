// mismatch: members that enqueued the same op index with different
// arguments. Normal is decided per field by majority; the minority is named.
#include <algorithm>
#include <map>
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
// a count difference there may be the user's count or datatype.
bool InBytes(const OpRecord& r) {
  return (r.func == format::kFuncAllGather || r.func == format::kFuncBroadcast) &&
         r.datatype == format::kTypeInt8;
}

uint64_t FieldOf(const OpRecord& r, int field) {
  switch (field) {
    case kFunc:
      return r.func;
    case kCount:
      return r.count;
    case kDatatype:
      return r.datatype;
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

class CollChecker {
 public:
  // `excluded`: comm ranks left out (members whose ops are shifted).
  CollChecker(const JobIndex& index, int32_t group, std::vector<char> excluded)
      : index_(index), group_(group), excluded_(std::move(excluded)) {
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
  // older ops of a windowed load compare like full records.
  void FindDisagreements(uint64_t lo, uint64_t hi, std::vector<uint64_t>* bad_indices) {
    const CommGroup& g = index_.groups()[group_];
    std::vector<CollSig> ref(static_cast<size_t>(hi - lo + 1));
    std::vector<char> bad(ref.size(), 0);
    for (int32_t r = 0; r < static_cast<int32_t>(g.members.size()); ++r) {
      if (!Compared(r)) continue;
      index_.ForEachCollSig(group_, r, [&](uint64_t op, CollSig sig) {
        if (op < lo || op > hi) return;
        const size_t k = static_cast<size_t>(op - lo);
        if (!ref[k].held()) {
          ref[k] = sig;
          return;
        }
        bad[k] = bad[k] || sig.sig != ref[k].sig || sig.seq_lo != ref[k].seq_lo;
      });
    }
    for (size_t k = 0; k < bad.size(); ++k) {
      if (bad[k]) bad_indices->push_back(lo + k);
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
    bool differ = false;
    const OpRecord& ref = rows_.front().second;
    for (const auto& row : rows_) {
      for (int field = 0; field < kNumFields && !differ; ++field) {
        differ = FieldOf(row.second, field) != FieldOf(ref, field);
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

  void Describe(uint64_t i, Finding* f) {
    const CommGroup& g = index_.groups()[group_];
    std::vector<char> minority(g.members.size(), 0);
    std::string detail;
    bool any_tie = false;
    size_t majority_size = rows_.size();
    OpRecord normal = rows_.front().second;
    for (int field = 0; field < kNumFields; ++field) {
      Column col;
      for (const auto& row : rows_) col.values.emplace_back(FieldOf(row.second, field), row.first);
      size_t count = 0;
      bool tie = false;
      const uint64_t mode = Mode(col.values, &count, &tie);
      if (count == rows_.size()) continue;
      any_tie = any_tie || tie;
      majority_size = std::min(majority_size, count);
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
      if (field == kCount && InBytes(normal)) {
        detail += " (bytes: NCCL gives " + std::string(format::FuncName(normal.func)) +
                  " in bytes as ncclInt8, so the call's count or its datatype differs)";
      }
    }
    f->kind = FindingKind::kMismatch;
    f->group = group_;
    f->op = OpOf(normal);
    f->op.index = i;
    for (const auto& row : rows_) {
      // Without a majority every member is named: none can be assumed right.
      if (!minority[row.first] && !any_tie) continue;
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
    if (any_tie) f->summary += " (no majority: either side may be wrong)";
    f->contested = any_tie;
    f->root_cause = true;
    f->confidence = (any_tie ? 0.5 : 0.95) * DataQuality(index_, group_, true);
  }

  bool Compared(int32_t r) const {
    return index_.groups()[group_].members[r].present() && !excluded_[r];
  }

  const JobIndex& index_;
  const int32_t group_;
  std::vector<char> excluded_;
  std::vector<std::pair<int32_t, OpRecord>> rows_;
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

// A Send #k from s to q must meet a Recv #k at q from s with the same size.
void CheckP2p(const JobIndex& index, int32_t group, std::vector<Finding>* out) {
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
        f.ranks = {a, b};
        // Two parties, no majority: either may be wrong.
        f.contested = true;
        f.confidence = 0.7 * DataQuality(index, group, true);
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
  std::vector<std::vector<Finding>> per_group(index.groups().size());
  ParallelFor(per_group.size(), [&](size_t g) {
    std::vector<char> excluded(index.groups()[g].members.size(), 0);
    for (const ShiftedMember& m : shifts) {
      if (m.group == static_cast<int32_t>(g)) excluded[m.rank] = 1;
    }
    CollChecker(index, static_cast<int32_t>(g), std::move(excluded)).Run(&per_group[g]);
    CheckP2p(index, static_cast<int32_t>(g), &per_group[g]);
  });
  for (std::vector<Finding>& found : per_group) {
    for (Finding& f : found) out->push_back(std::move(f));
  }
}

}  // namespace analysis
}  // namespace flightrec

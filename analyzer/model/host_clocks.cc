#include "analyzer/model/host_clocks.h"

#include <algorithm>
#include <map>
#include <string>

#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// Enough to outvote outliers (an op one host finished while the other was
// descheduled); bounded so a 16k-rank world comm costs little.
constexpr size_t kSamplesPerHost = 256;
constexpr uint64_t kOpsPerPair = 32;

bool Finished(const OpRecord* r) {
  return r != nullptr && r->state >= format::kOpDone && r->gpu_end_ns != 0;
}

// GPU end of member b minus member a's, for their newest ops both finished.
void SampleOffsets(const JobIndex& index, int32_t group, int32_t a, int32_t b,
                   std::vector<int64_t>* out) {
  const uint64_t a_count = index.Comm(index.groups()[group].members[a]).coll_count;
  const uint64_t b_count = index.Comm(index.groups()[group].members[b]).coll_count;
  const uint64_t lo = std::max(index.FirstCollIndex(group, a), index.FirstCollIndex(group, b));
  uint64_t taken = 0, tried = 0;
  // Bounded: a comm that does not track completion has no finished op, and
  // a windowed load holds older ops only as signatures; neither is worth a
  // walk through the whole history of every member.
  for (uint64_t i = std::min(a_count, b_count);
       i > lo && taken < kOpsPerPair && tried < 4 * kOpsPerPair; --i, ++tried) {
    const OpRecord* ra = index.FindColl(group, a, i - 1);
    const OpRecord* rb = index.FindColl(group, b, i - 1);
    if (!Finished(ra) || !Finished(rb)) continue;
    out->push_back(static_cast<int64_t>(rb->gpu_end_ns - ra->gpu_end_ns));
    ++taken;
  }
}

}  // namespace

std::vector<int64_t> HostClockOffsets(const JobIndex& index) {
  const std::vector<ProcessSnapshot>& procs = index.processes();
  std::vector<int64_t> per_process(procs.size(), 0);
  std::map<std::string, int> host_ids;
  std::vector<int> host_of(procs.size());
  for (size_t p = 0; p < procs.size(); ++p) {
    host_of[p] = host_ids.emplace(procs[p].host, static_cast<int>(host_ids.size())).first->second;
  }
  if (host_ids.size() < 2) return per_process;
  // The first host with a communicator member (a process that died during
  // init has none, and nothing to measure against).
  int reference = host_of[0];
  for (size_t p = 0; p < procs.size(); ++p) {
    if (!procs[p].comms.empty()) {
      reference = host_of[p];
      break;
    }
  }
  std::vector<std::vector<int64_t>> samples(host_ids.size());
  for (size_t g = 0; g < index.groups().size(); ++g) {
    const std::vector<MemberRef>& members = index.groups()[g].members;
    int32_t a = -1;  // a member on the reference host
    for (size_t r = 0; r < members.size() && a < 0; ++r) {
      if (members[r].present() && host_of[members[r].process] == reference) {
        a = static_cast<int32_t>(r);
      }
    }
    if (a < 0) continue;
    for (size_t b = 0; b < members.size(); ++b) {
      if (!members[b].present()) continue;
      std::vector<int64_t>& host_samples = samples[host_of[members[b].process]];
      if (host_of[members[b].process] == reference || host_samples.size() >= kSamplesPerHost) {
        continue;
      }
      SampleOffsets(index, static_cast<int32_t>(g), a, static_cast<int32_t>(b), &host_samples);
    }
  }
  std::vector<int64_t> host_offset(host_ids.size(), 0);
  for (size_t h = 0; h < samples.size(); ++h) {
    std::vector<int64_t>& s = samples[h];
    if (s.empty()) continue;
    const auto mid = s.begin() + static_cast<std::ptrdiff_t>(s.size() / 2);
    std::nth_element(s.begin(), mid, s.end());
    if (*mid >= kSkewFloorNs || *mid <= -kSkewFloorNs) host_offset[h] = *mid;
  }
  for (size_t p = 0; p < procs.size(); ++p) per_process[p] = host_offset[host_of[p]];
  return per_process;
}

}  // namespace analysis
}  // namespace flightrec

// Straggler detection (analyzer/model/straggler.cc) on jobs whose comms run
// on streams of their own, as PyTorch's process groups do: an op of one comm
// runs on the GPU while the host enqueues the next op on another. Per step
// (10 ms) every rank of 8 (tp0 = 0-3, tp1 = 4-7, dp<g> = {g, g+4}, world):
//   D: a dp AllGather, 3 ms on the GPU;
//   T: a tp AllReduce, enqueued 10 us after D's enqueue call returned,
//      while D still runs;
//   W: a world AllReduce, enqueued once the host saw T end (it waits for
//      T's result), while D still runs.
// A collective's kernel starts on each member when that member enqueued it
// and its stream was free, and ends on all when the last member started plus
// its duration. Faults: one rank's host pauses before T on some steps.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "unit/analyzer/analyzer_test_util.h"
#include "unit/analyzer/synthetic_job.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::FindingKind;
using analysis::Verdict;

constexpr int kRanks = 8;
constexpr int kTpSize = 4;
constexpr uint64_t kStepNs = 10000 * kUs;

struct StreamsSpec {
  int steps = 60;
  int pause_rank = -1;      // the rank whose host pauses before T
  uint64_t pause_ns = 0;    // for that long
  uint64_t w_pause_ns = 0;  // and before W (every step), that long
  int pause_every = 1;      // on every pause_every-th step
  bool one_stream = false;  // every comm of a rank on one in-order stream
  int extra_regions = 0;    // empty comms per process (more regions)
};

// Op kinds, in program order.
enum Kind { kD = 0, kT = 1, kW = 2, kKinds = 3 };

class StreamsJob {
 public:
  explicit StreamsJob(const StreamsSpec& spec) : spec_(spec) {
    records_.assign(kRanks, std::vector<std::vector<OpRecord>>(kKinds));
    Simulate();
  }

  std::vector<ProcessSnapshot> Snapshots() const {
    std::vector<ProcessSnapshot> out;
    for (int r = 0; r < kRanks; ++r) out.push_back(Snapshot(r));
    return out;
  }

 private:
  // Global ranks of the members of rank r's comm of kind k, by comm rank.
  static std::vector<int> Members(Kind k, int r) {
    std::vector<int> m;
    if (k == kD) {
      for (int g = 0; g < kRanks / kTpSize; ++g) m.push_back(g * kTpSize + r % kTpSize);
    } else if (k == kT) {
      for (int i = 0; i < kTpSize; ++i) m.push_back(r / kTpSize * kTpSize + i);
    } else {
      for (int i = 0; i < kRanks; ++i) m.push_back(i);
    }
    return m;
  }
  static uint64_t CommId(Kind k, int r) {
    return k == kD ? 0xD000 + r % kTpSize : k == kT ? 0x7000 + r / kTpSize : 0x3000;
  }
  static std::string CommName(Kind k, int r) {
    return k == kD   ? "dp" + std::to_string(r % kTpSize)
           : k == kT ? "tp" + std::to_string(r / kTpSize)
                     : std::string("world");
  }
  static uint64_t Jitter(int r, int s, Kind k) {
    return static_cast<uint64_t>((r * 7 + s * 3 + k * 5) % 9) * kUs;
  }
  int Stream(Kind k) const { return spec_.one_stream ? 0 : k; }

  // Enqueues op kind k of step s on every rank at `enq[r]`, runs it.
  void Run(int s, Kind k, const std::vector<uint64_t>& enq) {
    const uint64_t dur = k == kD ? 3000 * kUs : 200 * kUs;
    std::vector<uint64_t> start(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      start[r] = std::max(enq[r] + 3 * kUs, free_[r][Stream(k)]);
    }
    std::vector<uint64_t> end(kRanks);
    for (int r = 0; r < kRanks; ++r) {
      uint64_t last = 0;
      for (int m : Members(k, r)) last = std::max(last, start[m]);
      end[r] = last + dur;
    }
    for (int r = 0; r < kRanks; ++r) {
      std::vector<OpRecord>& recs = records_[r][k];
      OpRecord rec;
      rec.slot_seq = rec.op_index = rec.nccl_seq = recs.size();
      rec.func = k == kD ? format::kFuncAllGather : format::kFuncAllReduce;
      rec.count = 1024;
      rec.datatype = format::kTypeFloat32;
      rec.bytes = rec.count * 4;
      rec.algo = format::kAlgoRing;
      rec.proto = format::kProtoSimple;
      rec.n_channels = 2;
      rec.flags = format::kFlagGpuTimed;
      rec.state = format::kOpDone;
      rec.t_enqueue_ns = enq[r];
      rec.t_enqueued_ns = enq[r] + 2 * kUs;
      rec.gpu_start_ns = rec.gpu_start_raw = start[r];
      rec.gpu_end_ns = rec.gpu_end_raw = rec.t_last_progress_ns = end[r];
      rec.channels_started = rec.channels_stopped = 2;
      recs.push_back(rec);
      free_[r][Stream(k)] = end[r];
      last_ns_ = std::max(last_ns_, end[r]);
    }
    (void)s;
  }

  void Simulate() {
    free_.assign(kRanks, std::vector<uint64_t>(kKinds, 0));
    for (int s = 0; s < spec_.steps; ++s) {
      const uint64_t t = kBaseWallNs + static_cast<uint64_t>(s + 1) * kStepNs;
      std::vector<uint64_t> enq(kRanks);
      for (int r = 0; r < kRanks; ++r) enq[r] = t + Jitter(r, s, kD);
      Run(s, kD, enq);
      for (int r = 0; r < kRanks; ++r) {
        const bool pause = r == spec_.pause_rank && s % spec_.pause_every == 0;
        enq[r] = records_[r][kD].back().t_enqueued_ns + 10 * kUs + Jitter(r, s, kT) +
                 (pause ? spec_.pause_ns : 0);
      }
      Run(s, kT, enq);
      for (int r = 0; r < kRanks; ++r) {
        enq[r] = records_[r][kT].back().gpu_end_ns + 10 * kUs + Jitter(r, s, kW) +
                 (r == spec_.pause_rank ? spec_.w_pause_ns : 0);
      }
      Run(s, kW, enq);
    }
  }

  ProcessSnapshot Snapshot(int r) const {
    ProcessSnapshot p;
    p.is_dump = true;
    p.path = "/synthetic/streams/rank" + std::to_string(r) + ".dump";
    p.version_major = format::kFormatMajor;
    p.pid = 4000 + r;
    p.host = "host-0";
    p.job_id = "job-streams";
    p.api_version = 7;
    p.process_state = format::kProcessExited;
    p.created_wall_ns = kBaseWallNs;
    p.heartbeat_wall_ns = last_ns_ + 100 * 1000 * kUs;
    p.watchdog_poll_ns = 1000 * 1000 * kUs;
    p.watchdog_timeout_ns = 10 * p.watchdog_poll_ns;
    p.dump_reason = format::kDumpExit;
    p.dump_sequence = 1;
    p.dump_wall_ns = p.heartbeat_wall_ns;
    p.region_capacity = 4096;
    uint32_t region = 0;
    for (int k = 0; k < kKinds; ++k) {
      const std::vector<int> members = Members(static_cast<Kind>(k), r);
      CommSnapshot cs =
          Comm(region++, CommId(static_cast<Kind>(k), r), CommName(static_cast<Kind>(k), r),
               static_cast<int32_t>(std::find(members.begin(), members.end(), r) - members.begin()),
               static_cast<int32_t>(members.size()));
      cs.records = records_[r][k];
      cs.head = cs.coll_count = cs.records.size();
      cs.last_enqueue_wall_ns = cs.records.empty() ? 0 : cs.records.back().t_enqueue_ns;
      p.comms.push_back(cs);
    }
    // Comms that never ran a collective: more regions to merge.
    for (int e = 0; e < spec_.extra_regions; ++e) {
      p.comms.push_back(
          Comm(region++, 0xE000 + static_cast<uint64_t>(e), "idle" + std::to_string(e), r, kRanks));
    }
    return p;
  }

  CommSnapshot Comm(uint32_t region, uint64_t id, const std::string& name, int32_t rank,
                    int32_t nranks) const {
    CommSnapshot cs;
    cs.region_index = region;
    cs.state = format::kRegionActive;
    cs.flags = format::kRegionIdentityFromInit | format::kRegionCompletionTracked;
    cs.comm_id = id;
    cs.name = name;
    cs.rank = rank;
    cs.nranks = nranks;
    cs.nnodes = 1;
    cs.generation = 1;
    cs.capacity = 4096;
    cs.init_wall_ns = kBaseWallNs;
    return cs;
  }

  StreamsSpec spec_;
  std::vector<std::vector<std::vector<OpRecord>>> records_;  // rank, kind
  std::vector<std::vector<uint64_t>> free_;                  // rank, stream
  uint64_t last_ns_ = 0;
};

// Pids of the ranks the straggler findings name, and the comms they are on.
struct Named {
  std::vector<int64_t> pids;
  std::vector<std::string> comms;
};
Named StragglersOf(const Analyzed& a) {
  Named n;
  for (const analysis::Finding* f : a.All(FindingKind::kStraggler)) {
    for (const analysis::RankNote& r : f->ranks) n.pids.push_back(a.Pid(r.process));
    n.comms.push_back(a.CommName(*f));
  }
  return n;
}

std::string Summaries(const Analyzed& a) {
  std::string s;
  for (const analysis::Finding& f : a.result.findings) s += f.summary + "\n";
  return s;
}

// Both ways a process's gaps are merged: by cursors (3 regions) and by
// sorted runs (more than 8 regions).
class StreamsStragglerTest : public ::testing::TestWithParam<int> {
 protected:
  StreamsSpec Spec() const {
    StreamsSpec s;
    s.extra_regions = GetParam();
    return s;
  }
};

INSTANTIATE_TEST_SUITE_P(Regions, StreamsStragglerTest, ::testing::Values(0, 7));

TEST_P(StreamsStragglerTest, AHealthyJobNamesNobody) {
  Analyzed a(StreamsJob(Spec()).Snapshots());
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy) << Summaries(a);
  EXPECT_TRUE(a.All(FindingKind::kStraggler).empty()) << Summaries(a);
}

// Rank 3's host pauses 2 ms before every T, while its D runs on the GPU: its
// tp0 peers wait 2 ms for it on every T. It is named, on tp0 only, CPU-side.
// Its tp0 peers then enqueue W 2 ms after tp1's ranks, while their D still
// runs: they waited for T's end, which the host gap starts from, and are not
// named.
TEST_P(StreamsStragglerTest, AHostPauseWhileAnotherCommRunsIsNamed) {
  StreamsSpec spec = Spec();
  spec.pause_rank = 3;
  spec.pause_ns = 2000 * kUs;
  Analyzed a(StreamsJob(spec).Snapshots());
  EXPECT_EQ(a.result.verdict, Verdict::kSlow) << Summaries(a);
  const Named n = StragglersOf(a);
  EXPECT_EQ(n.pids, std::vector<int64_t>{4003}) << Summaries(a);
  EXPECT_EQ(n.comms, std::vector<std::string>{"tp0"}) << Summaries(a);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4003}) << Summaries(a);
  const analysis::Finding* f = a.First(FindingKind::kStraggler);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("CPU-side"), std::string::npos) << f->summary;
  EXPECT_GT(f->ranks.at(0).late_ns, 1.5e6) << f->summary;
}

// Rank 3 pauses before T and W (the spec of the two tests below), named as
// the one straggler, on tp0 and on world.
StreamsSpec PausesBeforeTAndW(StreamsSpec spec) {
  spec.pause_rank = 3;
  spec.pause_ns = 2500 * kUs;
  spec.w_pause_ns = 1500 * kUs;
  return spec;
}
void ExpectRank3NamedOnTp0AndWorld(const Analyzed& a) {
  EXPECT_EQ(a.result.verdict, Verdict::kSlow) << Summaries(a);
  Named n = StragglersOf(a);
  std::sort(n.comms.begin(), n.comms.end());
  EXPECT_EQ(n.pids, std::vector<int64_t>(2, 4003)) << Summaries(a);
  EXPECT_EQ(n.comms, (std::vector<std::string>{"tp0", "world"})) << Summaries(a);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4003}) << Summaries(a);
}

// Rank 3's host pauses 2.5 ms before every T and 1.5 ms before every W. On
// world it arrives 4 ms behind the median: tp1's ranks enqueue W 2.5 ms
// before tp0's, whose T it held up. Its own gap before W (from its D's end,
// the latest op it may have waited for) is only 1.2 ms of that, but its
// lead over tp0's other ranks, the next to arrive, is 1.5 ms: what it held
// world up by is its own doing. It is named on world as well as on tp0, and
// tp0's other ranks, as late on world but by nobody's lead, are not.
TEST_P(StreamsStragglerTest, ThePausesBeforeEachOpAreNamedOnEveryCommTheyHoldUp) {
  ExpectRank3NamedOnTp0AndWorld(Analyzed(StreamsJob(PausesBeforeTAndW(Spec())).Snapshots()));
}

// The same job seen through enqueue times alone (GPU times unrecorded, as
// in PyTorch FR dumps without TORCH_NCCL_ENABLE_TIMING): no host gap can be
// measured. Rank 3's pause before W makes it the last to enqueue on world,
// 1.5 ms after tp0's other ranks, which arrive 2.5 ms after tp1's because
// they waited for its T: late together, and behind the median as far as it
// is. Only the last to arrive held world up, by its lead; it is named on
// tp0 and world, and tp0's other ranks on neither.
std::vector<ProcessSnapshot> EnqueueTimesOnly(std::vector<ProcessSnapshot> procs) {
  for (ProcessSnapshot& p : procs) {
    for (CommSnapshot& c : p.comms) {
      for (OpRecord& r : c.records) {
        r.gpu_start_ns = r.gpu_end_ns = r.gpu_start_raw = r.gpu_end_raw = 0;
      }
    }
  }
  return procs;
}

TEST_P(StreamsStragglerTest, FromEnqueueTimesAloneOnlyTheLastToArriveIsNamed) {
  ExpectRank3NamedOnTp0AndWorld(
      Analyzed(EnqueueTimesOnly(StreamsJob(PausesBeforeTAndW(Spec())).Snapshots())));
}

// Enqueue times alone, a healthy job: nobody is named.
TEST_P(StreamsStragglerTest, FromEnqueueTimesAloneAHealthyJobNamesNobody) {
  Analyzed a(EnqueueTimesOnly(StreamsJob(Spec()).Snapshots()));
  EXPECT_TRUE(a.All(FindingKind::kStraggler).empty()) << Summaries(a);
}

// The same pause on one step in four: late in too few ops, nobody named.
TEST_P(StreamsStragglerTest, AnOccasionalPauseIsNoStraggler) {
  StreamsSpec spec = Spec();
  spec.pause_rank = 3;
  spec.pause_ns = 2000 * kUs;
  spec.pause_every = 4;
  Analyzed a(StreamsJob(spec).Snapshots());
  EXPECT_TRUE(a.All(FindingKind::kStraggler).empty()) << Summaries(a);
}

// Every comm on one in-order stream: rank 3's 2 ms pause before T ends
// before its D (3 ms, on the same stream) does, so T starts when D ends, as
// on the others: nobody waited, nobody is named, though its host gap is long.
TEST_P(StreamsStragglerTest, APauseWhileItsOwnStreamIsBusyDelaysNobody) {
  StreamsSpec spec = Spec();
  spec.one_stream = true;
  spec.pause_rank = 3;
  spec.pause_ns = 2000 * kUs;
  Analyzed a(StreamsJob(spec).Snapshots());
  EXPECT_TRUE(a.All(FindingKind::kStraggler).empty()) << Summaries(a);
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy) << Summaries(a);
}

// One stream, a 5 ms pause: T is enqueued 2 ms after D ended, so the tp0
// peers wait 2 ms; the gap from D's end says so, and rank 3 is named.
TEST_P(StreamsStragglerTest, APauseOutlastingItsOwnStreamIsNamed) {
  StreamsSpec spec = Spec();
  spec.one_stream = true;
  spec.pause_rank = 3;
  spec.pause_ns = 5000 * kUs;
  Analyzed a(StreamsJob(spec).Snapshots());
  const Named n = StragglersOf(a);
  EXPECT_EQ(n.pids, std::vector<int64_t>{4003}) << Summaries(a);
  EXPECT_EQ(n.comms, std::vector<std::string>{"tp0"}) << Summaries(a);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

// Which file holds each process's newest state (inputs.cc ChooseFile): a
// process stops dumping after NCCL_FLIGHTREC_MAX_DUMPS, so after a few
// transient stalls its newest state exists only in its ring. Synthetic
// jobs whose every rank left mid-run dumps (a stall past the timeout each)
// and a ring with the final state.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analyzer/model/inputs.h"
#include "analyzer/reader/init_file.h"
#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::FindingKind;
using analysis::Verdict;

std::string Base(const ProcessSnapshot& p) {
  const std::string& path = p.path;
  return path.substr(0, path.rfind('.'));
}

// The process's final state as its ring holds it.
ProcessSnapshot AsRing(ProcessSnapshot p, uint32_t state) {
  p.path = Base(p) + ".ring";
  p.is_dump = false;
  p.process_state = state;
  p.dump_reason = format::kDumpNone;
  p.dump_sequence = 0;
  p.dump_wall_ns = 0;
  return p;
}

// The state `final` had at wall time `cut`, sealed as dump #seq on a
// timeout: the records enqueued by then, those not finished by then still
// running on the GPU.
ProcessSnapshot MidRunDump(const ProcessSnapshot& final, uint64_t cut, uint32_t seq) {
  ProcessSnapshot d = final;
  d.path = Base(final) + "." + std::to_string(seq) + ".dump";
  d.is_dump = true;
  d.process_state = format::kProcessRunning;
  d.dump_reason = format::kDumpTimeout;
  d.dump_sequence = seq;
  d.dump_wall_ns = cut;
  d.heartbeat_wall_ns = cut;
  for (CommSnapshot& c : d.comms) {
    std::vector<OpRecord> kept;
    for (OpRecord r : c.records) {
      if (r.t_enqueue_ns > cut) continue;
      if (r.gpu_end_ns > cut || r.state < format::kOpDone) {
        r.state = format::kOpRunning;
        r.gpu_end_ns = r.gpu_end_raw = 0;
        r.channels_stopped = 0;
      }
      kept.push_back(r);
    }
    c.records = kept;
    c.head = c.coll_count = kept.size();
    c.last_enqueue_wall_ns = kept.empty() ? 0 : kept.back().t_enqueue_ns;
  }
  return d;
}

uint64_t NewestEnqueue(const std::vector<ProcessSnapshot>& procs) {
  uint64_t t = 0;
  for (const ProcessSnapshot& p : procs) {
    for (const CommSnapshot& c : p.comms) {
      for (const OpRecord& r : c.records) t = std::max(t, r.t_enqueue_ns);
    }
  }
  return t;
}

// Every rank: `stalls` mid-run dumps (the job's dump budget spent by
// transient stalls), then its ring in its final state.
std::vector<ProcessSnapshot> StalledThen(const std::vector<ProcessSnapshot>& final, int stalls,
                                         uint32_t ring_state) {
  // Stalls in the first half of the run, before any fault, each sealed
  // while a world collective was in flight (started on rank 0's GPU).
  const std::vector<OpRecord>& world = final.front().comms.front().records;
  std::vector<uint64_t> cuts;
  for (int k = 1; k <= stalls; ++k) {
    cuts.push_back(world[world.size() * k / (2 * (stalls + 1))].gpu_start_ns + 10 * kUs);
  }
  std::vector<ProcessSnapshot> out;
  for (const ProcessSnapshot& p : final) {
    for (int k = 1; k <= stalls; ++k) out.push_back(MidRunDump(p, cuts[k - 1], k));
    out.push_back(AsRing(p, ring_state));
  }
  return out;
}

// Without the ring (what the analysis saw when dumps always won) the
// mid-run dumps alone say HANG: they are the evidence the ring overrides.
TEST(NewestEvidenceTest, MidRunDumpsAloneWouldSayHang) {
  std::vector<ProcessSnapshot> dumps;
  for (ProcessSnapshot& p : StalledThen(MakeJob(JobSpec{}), 3, format::kProcessExited)) {
    if (p.is_dump) dumps.push_back(p);
  }
  Analyzed a(analysis::SelectSnapshots(dumps, {}).processes);
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
}

// A slow job that finished: every ring says "exited", every op done.
TEST(NewestEvidenceTest, AFinishedJobWithSpentDumpsIsHealthy) {
  const analysis::Inputs in =
      analysis::SelectSnapshots(StalledThen(MakeJob(JobSpec{}), 3, format::kProcessExited), {});
  ASSERT_EQ(in.processes.size(), 8u);
  ASSERT_EQ(in.sources.size(), 8u);
  for (size_t p = 0; p < in.processes.size(); ++p) {
    EXPECT_FALSE(in.processes[p].is_dump) << in.read[p];
    EXPECT_STREQ(in.sources[p].kind, "ring");
    EXPECT_TRUE(in.sources[p].over_dump);
    EXPECT_NE(in.sources[p].reason.find("exited after its newest dump #3"), std::string::npos)
        << in.sources[p].reason;
    EXPECT_EQ(in.sources[p].path, in.read[p]);
  }
  // The dumps stay listed, each with why it was not used.
  ASSERT_EQ(in.superseded.size(), 24u);
  for (const analysis::SupersededInput& s : in.superseded) {
    EXPECT_FALSE(s.why.empty()) << s.path;
    EXPECT_NE(s.by.find(".ring"), std::string::npos);
  }
  Analyzed a(in.processes);
  EXPECT_EQ(a.result.verdict, Verdict::kHealthy)
      << (a.result.findings.empty() ? "" : a.result.findings.front().summary);
}

// The same stalls, then a real hang (rank 5 stuck outside NCCL near the
// end of the run, no dump left to seal): the rings name it.
TEST(NewestEvidenceTest, AHangAfterSpentDumpsNamesTheCulprit) {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 15;  // the TP AllReduce of step 5, after every stall
  const analysis::Inputs in =
      analysis::SelectSnapshots(StalledThen(MakeJob(spec), 3, format::kProcessRunning), {});
  for (size_t p = 0; p < in.processes.size(); ++p) {
    EXPECT_FALSE(in.processes[p].is_dump) << in.read[p];
    EXPECT_NE(in.sources[p].reason.find("moved on after its newest dump #3"), std::string::npos)
        << in.sources[p].reason;
  }
  Analyzed a(in.processes);
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
  ASSERT_FALSE(a.result.findings.empty());
  EXPECT_EQ(a.Pid(a.result.findings.front().ranks.at(0).process), 4005)
      << a.result.findings.front().summary;
}

// A dump sealed on a hang whose ops have not moved since holds what the
// ring holds, and is the evidence that they were stuck: it stays the
// source however much later the heartbeat beat. A ring that moved on after
// a dump (its process then killed) is the source, and its silence counts.
TEST(NewestEvidenceTest, AHangDumpWhoseOpsDidNotMoveStaysTheSource) {
  JobSpec spec;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 15;
  std::vector<ProcessSnapshot> files;
  for (const ProcessSnapshot& p : MakeJob(spec)) {
    files.push_back(p);  // the timeout dump at the hang
    ProcessSnapshot ring = AsRing(p, format::kProcessRunning);
    ring.heartbeat_wall_ns = p.dump_wall_ns + 60ULL * 1000000000ULL;  // beat on a minute
    files.push_back(ring);
  }
  const analysis::Inputs in = analysis::SelectSnapshots(files, {});
  for (size_t p = 0; p < in.processes.size(); ++p) {
    EXPECT_TRUE(in.processes[p].is_dump) << in.read[p];
    EXPECT_NE(in.sources[p].reason.find("the ring holds nothing newer"), std::string::npos)
        << in.sources[p].reason;
  }
  Analyzed a(in.processes);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

TEST(NewestEvidenceTest, ARingThatMovedOnAfterItsDumpsIsTheSourceOfAKilledRank) {
  JobSpec spec;
  spec.fault = Fault::kKilled;
  spec.op = 15;
  const std::vector<ProcessSnapshot> final = MakeJob(spec);
  std::vector<ProcessSnapshot> files;
  for (const ProcessSnapshot& p : final) {
    if (p.pid != 4005) {
      files.push_back(p);
      continue;
    }
    files.push_back(MidRunDump(p, kBaseWallNs + (NewestEnqueue(final) - kBaseWallNs) / 4, 1));
    files.push_back(p);  // the killed rank's ring (MakeJob gives it no dump)
  }
  const analysis::Inputs in = analysis::SelectSnapshots(files, {});
  Analyzed a(in.processes);
  const analysis::Finding* dead = a.First(FindingKind::kDeadRank);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(a.Pid(dead->ranks.at(0).process), 4005);
  EXPECT_EQ(a.CulpritPids(), std::vector<int64_t>{4005});
}

// A process that died during init (a ring left half-made, no comm) with a
// rank missing: the missing rank is explained by it.
TEST(InitDeathTest, ExplainsMissingRanks) {
  JobSpec spec;
  spec.fault = Fault::kMissingFile;
  std::vector<ProcessSnapshot> procs = MakeJob(spec);
  ProcessSnapshot init;
  init.path = "/synthetic/flightrec-job-1-host-0-4005.ring.init";
  init.host = "host-0";
  init.pid = 4005;
  init.job_id = "job-1";
  init.process_state = format::kProcessStarting;
  procs.push_back(init);
  const analysis::Inputs in = analysis::SelectSnapshots(procs, {});
  ASSERT_EQ(in.processes.size(), 8u);  // counted in the job
  EXPECT_TRUE(in.rejected.empty());
  Analyzed a(in.processes);
  const analysis::Finding* f = a.First(FindingKind::kMissingRank);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->summary.find("1 process died during init (a ring left half-made): host-0:4005"),
            std::string::npos)
      << f->summary;
}

// Died during init before any comm formed: a dead_rank finding of its own.
TEST(InitDeathTest, AloneIsADeadProcess) {
  std::vector<ProcessSnapshot> procs = MakeJob(JobSpec{});
  ProcessSnapshot init;
  init.path = "/synthetic/flightrec-job-1-host-0-4100.ring.init";
  init.host = "host-0";
  init.pid = 4100;
  init.job_id = "job-1";
  init.process_state = format::kProcessStarting;
  procs.push_back(init);
  Analyzed a(analysis::SelectSnapshots(procs, {}).processes);
  EXPECT_EQ(a.result.verdict, Verdict::kHang);
  const analysis::Finding* f = a.First(FindingKind::kDeadRank);
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(f->root_cause);
  ASSERT_EQ(f->extra_processes.size(), 1u);
  EXPECT_EQ(a.Pid(f->extra_processes[0]), 4100);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

// `flightrec analyze` on directories of PyTorch FR dumps only: the input
// stage recognizes them by content (whatever their names), rejects broken
// ones with a reason, and the analysis names the culprit of each fault with
// its Python frames in the text and JSON reports.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/inputs.h"
#include "analyzer/model/job_index.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/report/report.h"
#include "flightrec/record_format.h"
#include "support/files.h"
#include "tests/unit/reader/fr_pickle_builder.h"

namespace flightrec {
namespace {

using test_support::FrDumpBuilder;

struct Run {
  analysis::Inputs inputs;
  std::unique_ptr<analysis::JobIndex> index;
  analysis::Analysis result;
  std::string text;
  std::string json;
};

std::unique_ptr<Run> Analyze(const std::string& dir) {
  auto run = std::make_unique<Run>();
  run->inputs = analysis::LoadInputs({dir});
  run->index = std::make_unique<analysis::JobIndex>(run->inputs.processes);
  run->result = analysis::Analyze(*run->index);
  const report::ReportInput in{run->inputs, *run->index, run->result};
  run->text = report::TextReport(in);
  run->json = report::JsonReport(in);
  return run;
}

void WriteJob(const std::string& dir, const FrDumpBuilder& b, int nranks, int skip = -1) {
  for (int r = 0; r < nranks; ++r) {
    if (r == skip) continue;
    const std::vector<uint8_t> bytes = b.Build(r);
    // Names as users have them: PyTorch's prefixes, host names, no suffix.
    const std::string name = r % 3 == 0   ? "comm_lib_trace_rank_" + std::to_string(r)
                             : r % 3 == 1 ? "nccl_trace_rank_" + std::to_string(r)
                                          : "gpu-node07.cluster_rank" + std::to_string(r);
    ASSERT_TRUE(testing::WriteBytes(dir + "/" + name, bytes.data(), bytes.size()));
  }
}

// The culprit's process index, -1 when none or a rank with no file.
int64_t CulpritGlobalRank(const Run& run) {
  if (run.result.culprits.size() != 1) return -100;
  const int32_t p = run.result.culprits[0].process;
  if (p < 0) return -1;
  const ProcessSnapshot& s = run.inputs.processes[static_cast<size_t>(p)];
  return s.pytorch_fr ? s.pytorch_fr->global_rank : -200;
}

TEST(FrAnalyze, ARankOneCollectiveBehindIsTheCulpritWithItsPythonFrames) {
  const std::string dir = testing::MakeTempDir("fr_behind");
  WriteJob(dir, FrDumpBuilder(8, 4).Steps(12).Behind(6), 8);
  auto run = Analyze(dir);
  EXPECT_EQ(run->result.verdict, analysis::Verdict::kHang) << run->text;
  EXPECT_EQ(CulpritGlobalRank(*run), 6) << run->text;
  EXPECT_EQ(run->inputs.processes.size(), 8u);
  EXPECT_TRUE(run->inputs.rejected.empty());
  EXPECT_NE(run->text.find("Python stack of nccl:all_reduce #11 (completed)"), std::string::npos)
      << run->text;
  EXPECT_NE(run->text.find("eval_step (/job/train.py:97)"), std::string::npos) << run->text;
  const nlohmann::json doc = nlohmann::json::parse(run->json);
  const nlohmann::json& c = doc["culprits"][0];
  EXPECT_EQ(c["pytorch_fr"]["global_rank"], 6);
  EXPECT_EQ(c["pytorch_fr"]["python_frames"][2], "eval_step (/job/train.py:97)");
  testing::RemoveTree(dir);
}

TEST(FrAnalyze, ARankThatNeverDumpedIsNamedMissing) {
  const std::string dir = testing::MakeTempDir("fr_missing");
  WriteJob(dir, FrDumpBuilder(8, 1).Steps(10).Behind(3), 8, /*skip=*/3);
  auto run = Analyze(dir);
  EXPECT_EQ(run->result.verdict, analysis::Verdict::kHang) << run->text;
  ASSERT_EQ(run->result.culprits.size(), 1u) << run->text;
  EXPECT_EQ(run->result.culprits[0].process, -1);
  EXPECT_EQ(run->result.culprits[0].rank, 3) << run->text;
  testing::RemoveTree(dir);
}

TEST(FrAnalyze, AMismatchedSizeIsADesyncNamingTheOddRank) {
  const std::string dir = testing::MakeTempDir("fr_mismatch");
  WriteJob(dir, FrDumpBuilder(8, 1).Steps(10).Mismatch(2), 8);
  auto run = Analyze(dir);
  EXPECT_EQ(run->result.verdict, analysis::Verdict::kDesync) << run->text;
  EXPECT_EQ(CulpritGlobalRank(*run), 2) << run->text;
  testing::RemoveTree(dir);
}

TEST(FrAnalyze, TruncatedEmptyAndCorruptDumpsAreRejectedTheRestAnalyzed) {
  const std::string dir = testing::MakeTempDir("fr_bad");
  WriteJob(dir, FrDumpBuilder(4, 1).Steps(6).Behind(1), 4);
  std::vector<uint8_t> whole = FrDumpBuilder(4, 1).Steps(6).Build(0);
  std::vector<uint8_t> half(whole.begin(),
                            whole.begin() + static_cast<std::ptrdiff_t>(whole.size() / 2));
  ASSERT_TRUE(testing::WriteBytes(dir + "/truncated_rank_0", half.data(), half.size()));
  test_support::PickleWriter w;
  w.BeginDict();
  w.Str("version");
  w.Str("2.10");
  w.Str("pg_config");
  w.BeginDict();
  w.EndDict();
  w.EndDict();
  const std::vector<uint8_t> empty = w.Finish();
  ASSERT_TRUE(testing::WriteBytes(dir + "/empty_rank_2", empty.data(), empty.size()));
  std::vector<uint8_t> evil = {0x80, 0x02, 'c', 'o', 's', '\n', 's', 'y', 's', 't', 'e', 'm', '\n'};
  ASSERT_TRUE(testing::WriteBytes(dir + "/evil_rank_3", evil.data(), evil.size()));
  auto run = Analyze(dir);
  EXPECT_EQ(CulpritGlobalRank(*run), 1) << run->text;
  ASSERT_EQ(run->inputs.rejected.size(), 3u) << run->text;
  EXPECT_NE(run->inputs.rejected[0].reason.find("no process group and no entry"),
            std::string::npos);
  EXPECT_NE(run->inputs.rejected[1].reason.find("(GLOBAL) is outside"), std::string::npos);
  EXPECT_NE(run->inputs.rejected[2].reason.find("truncated"), std::string::npos);
  testing::RemoveTree(dir);
}

// A flightrec process of the job, as the reader makes it: one world comm of
// `nranks`, collectives 0..last, the last `pending` of them not done.
ProcessSnapshot OurProcess(int rank, int nranks, uint64_t last, bool pending) {
  ProcessSnapshot p;
  p.path = "/job/flightrec-j-host-" + std::to_string(100 + rank) + ".ring";
  p.host = "host";
  p.pid = 100 + rank;
  p.job_id = "j";
  p.process_state = format::kProcessRunning;
  p.heartbeat_wall_ns = 1764280000000000000ULL + 60000000000ULL;
  CommSnapshot c;
  c.comm_id = 0x1234;
  c.name = "world";
  c.state = format::kRegionActive;
  c.flags = format::kRegionCompletionTracked;
  c.rank = rank;
  c.nranks = nranks;
  for (uint64_t i = 0; i <= last; ++i) {
    OpRecord r;
    r.slot_seq = i;
    r.op_index = i;
    r.nccl_seq = i;
    r.func = format::kFuncAllReduce;
    r.count = 1024;
    r.datatype = format::kTypeFloat32;
    r.state = pending && i == last ? format::kOpEnqueued : format::kOpDone;
    r.t_enqueue_ns = 1764280000000000000ULL + i * 1000000;
    r.t_last_progress_ns = r.t_enqueue_ns + 1000;
    c.records.push_back(r);
  }
  c.head = c.coll_count = last + 1;
  c.capacity = 4096;
  p.comms.push_back(c);
  return p;
}

TEST(FrAnalyze, MixedDirectoriesUseOurRecordsAndAttachTheFrFrames) {
  // The same job seen by both: rank 2 one collective behind.
  std::vector<ProcessSnapshot> snaps;
  const FrDumpBuilder fr = FrDumpBuilder(4, 1).Steps(10).Behind(2);
  for (int r = 0; r < 4; ++r) {
    snaps.push_back(OurProcess(r, 4, r == 2 ? 8 : 9, r != 2));
    const std::vector<uint8_t> bytes = fr.Build(r);
    ReadResult rr = fr::ReadFrBytes(bytes.data(), bytes.size(),
                                    "/job/comm_lib_trace_rank_" + std::to_string(r));
    ASSERT_TRUE(rr.ok) << rr.error;
    snaps.push_back(std::move(rr.snapshot));
  }
  analysis::Inputs in = analysis::SelectSnapshots(std::move(snaps), {});
  ASSERT_EQ(in.processes.size(), 4u);
  EXPECT_EQ(in.job_id, "j");
  ASSERT_EQ(in.superseded.size(), 4u);
  EXPECT_EQ(in.superseded[0].path, "/job/comm_lib_trace_rank_0");
  EXPECT_EQ(in.superseded[0].by, "/job/flightrec-j-host-100.ring");
  analysis::JobIndex index(in.processes);
  const analysis::Analysis a = analysis::Analyze(index);
  const report::ReportInput ri{in, index, a};
  const std::string text = report::TextReport(ri);
  EXPECT_EQ(a.verdict, analysis::Verdict::kHang) << text;
  ASSERT_EQ(a.culprits.size(), 1u) << text;
  ASSERT_GE(a.culprits[0].process, 0);
  EXPECT_EQ(in.processes[static_cast<size_t>(a.culprits[0].process)].pid, 102) << text;
  EXPECT_NE(text.find("Python stack of nccl:all_reduce #9 (completed) on default_pg (PyTorch FR "
                      "dump /job/comm_lib_trace_rank_2)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("eval_step (/job/train.py:97)"), std::string::npos) << text;
  // The same FR dumps alone give the same culprit.
  std::vector<ProcessSnapshot> fr_only;
  for (int r = 0; r < 4; ++r) {
    const std::vector<uint8_t> bytes = fr.Build(r);
    fr_only.push_back(
        fr::ReadFrBytes(bytes.data(), bytes.size(), "/x/rank_" + std::to_string(r)).snapshot);
  }
  analysis::Inputs in2 = analysis::SelectSnapshots(std::move(fr_only), {});
  analysis::JobIndex index2(in2.processes);
  const analysis::Analysis a2 = analysis::Analyze(index2);
  EXPECT_EQ(a2.verdict, a.verdict);
  ASSERT_EQ(a2.culprits.size(), 1u);
  EXPECT_EQ(in2.processes[static_cast<size_t>(a2.culprits[0].process)].pytorch_fr->global_rank, 2);
}

// A communicator of two ranks added to OurProcess(rank, ...): the pair
// {rank, peer}, comm rank by global rank order, one id per pair.
void AddPair(ProcessSnapshot* p, int rank, int peer) {
  CommSnapshot c;
  c.comm_id = 0x5000 + static_cast<uint64_t>(std::min(rank, peer));
  c.name = "pair";
  c.state = format::kRegionActive;
  c.rank = rank < peer ? 0 : 1;
  c.nranks = 2;
  p->comms.push_back(c);
}

// Mixed matching uses the process groups: an FR dump joins the flightrec
// process of its global rank only when its groups agree with that process's
// communicators (members by global rank), else it stays a process of its own
// and says why.
TEST(FrAnalyze, MixedMatchingChecksProcessGroupMembership) {
  const FrDumpBuilder fr = FrDumpBuilder(4, 2).Steps(6);  // tp {0,1} {2,3}, dp {0,2} {1,3}
  for (const bool agree : {true, false}) {
    SCOPED_TRACE(agree ? "the tp pairs" : "pairs {0,3} {1,2}");
    std::vector<ProcessSnapshot> snaps;
    for (int r = 0; r < 4; ++r) {
      ProcessSnapshot ours = OurProcess(r, 4, 9, false);
      AddPair(&ours, r, agree ? (r ^ 1) : 3 - r);
      snaps.push_back(std::move(ours));
      const std::vector<uint8_t> bytes = fr.Build(r);
      ReadResult rr = fr::ReadFrBytes(bytes.data(), bytes.size(),
                                      "/job/comm_lib_trace_rank_" + std::to_string(r));
      ASSERT_TRUE(rr.ok) << rr.error;
      snaps.push_back(std::move(rr.snapshot));
    }
    analysis::Inputs in = analysis::SelectSnapshots(std::move(snaps), {});
    if (agree) {
      ASSERT_EQ(in.processes.size(), 4u);
      ASSERT_EQ(in.superseded.size(), 4u);
      for (const ProcessSnapshot& p : in.processes) {
        ASSERT_TRUE(p.pytorch_fr) << p.path;
        EXPECT_EQ(p.pytorch_fr->global_rank, p.pid - 100);
      }
      continue;
    }
    ASSERT_EQ(in.processes.size(), 8u);
    EXPECT_TRUE(in.superseded.empty());
    size_t warned = 0;
    for (const ProcessSnapshot& p : in.processes) {
      if (!p.pytorch_fr) continue;
      ASSERT_FALSE(p.warnings.empty()) << p.path;
      const std::string& w = p.warnings.back();
      EXPECT_NE(w.find("not taken as the same process as flightrec's files of global rank " +
                       std::to_string(p.pytorch_fr->global_rank)),
                std::string::npos)
          << w;
      EXPECT_NE(w.find("'s communicator pair (rank "), std::string::npos) << w;
      EXPECT_NE(w.find("matches none of the dump's 2-rank process groups"), std::string::npos) << w;
      ++warned;
    }
    EXPECT_EQ(warned, 4u);
  }
}

}  // namespace
}  // namespace flightrec

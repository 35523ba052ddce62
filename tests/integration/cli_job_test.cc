// `flightrec timeline` and `flightrec trigger` on real emulated jobs:
//  * the trace of a hung job (and of the golden files) reads as Perfetto
//    reads it (integration/trace_check.h): no partially overlapping slices on
//    a track, no backward or unbound flow;
//  * `flightrec trigger DIR` mid-run on a healthy job, with no job id: it
//    targets the one job whose rings are in DIR and says so, every rank seals
//    a dump, and `flightrec analyze` does not call the job hung (a requested
//    snapshot is no evidence of a hang);
//  * `flightrec trigger` with no job id and no file refuses; with files of
//    one job (the golden ring) it targets that job.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/trace_check.h"

namespace flightrec {
namespace itest {
namespace {

using nlohmann::json;

// No job id from the test's own environment (a CI runner may be a SLURM job).
const char kNoJobEnv[] = "env -u NCCL_FLIGHTREC_JOB_ID -u SLURM_JOB_ID -u TORCHELASTIC_RUN_ID ";

std::string Cli() { return "'" + BuildDir() + "/bin/flightrec'"; }

struct CliRun {
  int exit_code = -1;
  std::string out, err;
};

CliRun RunCli(const std::string& args) {
  const std::string dir = MakeTempDir("cli");
  CliRun run;
  run.exit_code = RunShell(std::string(kNoJobEnv) + Cli() + " " + args + " >'" + dir + "/out' 2>'" +
                           dir + "/err'");
  run.out = ReadText(dir + "/out");
  run.err = ReadText(dir + "/err");
  RunShell("rm -rf '" + dir + "'");
  return run;
}

json Timeline(const std::string& inputs, std::string* error) {
  const std::string dir = MakeTempDir("timeline");
  const CliRun run = RunCli("timeline " + inputs + " -o '" + dir + "/trace.json'");
  json trace = json::parse(ReadText(dir + "/trace.json"), nullptr, false);
  *error = "exit " + std::to_string(run.exit_code) + ": " + run.err;
  RunShell("rm -rf '" + dir + "'");
  return trace;
}

TEST(CliTimeline, AHungJobsTraceHasNoOverlappingSliceAndNoBackwardFlow) {
  EmuJob job;
  {
    JobSlot slot;
    job = RunEmu("timeline",
                 "--ranks 8 --tp 4 --ranks-per-node 4 --ops 400 --step-us 200 "
                 "--nccl-version 2.31 --fault stuck:rank=5:op=300 --until-dumps 8 "
                 "--hang-timeout-s 60",
                 {{"NCCL_FLIGHTREC_TIMEOUT_S", "2"}});
  }
  ASSERT_EQ(job.status, 4) << job.summary.dump(1).substr(0, 2000);
  std::string error;
  const json trace = Timeline("'" + job.ring_dir + "'", &error);
  ASSERT_TRUE(trace.is_object()) << error;
  const TraceCheck check = CheckTrace(trace);
  EXPECT_TRUE(check.ok()) << check.Describe();
  EXPECT_GE(check.slices, 8u * 300u);  // each rank's enqueues at least
  EXPECT_GT(check.flows, 0u);
  size_t stuck = 0;
  for (const json& e : trace["traceEvents"]) stuck += e.value("cat", "") == "stuck" ? 1 : 0;
  EXPECT_GT(stuck, 0u);
  RunShell("rm -rf '" + job.dir + "'");
}

TEST(CliTimeline, TheGoldenTraceReadsCleanly) {
  const std::string g = std::string(FLIGHTREC_SOURCE_DIR) + "/tests/golden/v1.0/";
  std::string error;
  const json trace =
      Timeline("'" + g + "rank0.frdump' '" + g + "rank0.ring' '" + g + "rank1.ring'", &error);
  ASSERT_TRUE(trace.is_object()) << error;
  const TraceCheck check = CheckTrace(trace);
  EXPECT_TRUE(check.ok()) << check.Describe();
  EXPECT_GT(check.slices, 0u);
  EXPECT_GT(check.flows, 0u);
}

constexpr int kTriggerRanks = 8;

// Runs an 8-rank job (`fault`: its --fault options, or none) whose rings and
// dumps go to `rings`, and from the background, once every rank's watchdog
// has beaten once (it took its trigger baseline before: a trigger older than
// that is old news) and `ready` (a shell condition) holds, leaves `flightrec
// trigger rings` as a user would: no job id, the rings in the directory name
// the job. What the CLI printed goes to said/out and said/err. The job would
// run for minutes (or hang); it ends once every rank has dumped.
EmuJob RunTriggered(const std::string& fault, const std::string& ready, const std::string& rings,
                    const std::string& said) {
  const std::string beaten = "n=0; for r in '" + rings + "'/*.ring; do " + Cli() +
                             " show --json --records 0 \"$r\" 2>/dev/null | grep -q "
                             "'\"heartbeat_count\": [1-9]' && n=$((n+1)); done; ";
  const std::string prefix = "( for i in $(seq 600); do " + beaten + "[ $n -ge " +
                             std::to_string(kTriggerRanks) + " ] && " + ready +
                             " && break; sleep 0.1; done; " + kNoJobEnv + Cli() + " trigger '" +
                             rings + "' >'" + said + "/out' 2>'" + said + "/err' ) & ";
  JobSlot slot;
  return RunEmu("trigger",
                "--ranks 8 --tp 4 --ranks-per-node 4 --ops 100000 --step-us 200 "
                "--job-id trigjob --until-dumps " +
                    std::to_string(kTriggerRanks) + " --hang-timeout-s 120 " + fault,
                {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"}, {"NCCL_FLIGHTREC_DIR", rings}}, prefix);
}

// The dumps of `job`, after checking the trigger named the job and every
// rank sealed one.
std::vector<std::string> TriggeredDumps(const EmuJob& job, const std::string& said) {
  // The ranks may dump before the CLI printed; wait for it (a liveness bound).
  RunShell("for i in $(seq 100); do [ -s '" + said + "/out' ] && break; sleep 0.1; done");
  const std::string err = ReadText(said + "/err");
  EXPECT_EQ(ReadText(said + "/out"), job.ring_dir + "/flightrec-trigjob.trigger\n") << err;
  EXPECT_NE(err.find("job trigjob"), std::string::npos) << err;
  EXPECT_EQ(job.status, 4) << "no dump from every rank; " << err
                           << job.summary.dump(1).substr(0, 2000);
  const std::vector<std::string> dumps = ListFiles(job.ring_dir, ".frdump");
  std::set<int> dumped;
  for (const std::string& d : dumps) {
    const FileView v = ReadFileView(d);
    EXPECT_TRUE(v.ok) << v.error;
    dumped.insert(v.pid);
  }
  EXPECT_EQ(dumped.size(), static_cast<size_t>(kTriggerRanks));
  return dumps;
}

TEST(CliTrigger, MidRunOnAHealthyJobEveryRankDumpsAndNoHangIsReported) {
  const std::string rings = MakeTempDir("trigger-rings");  // NCCL_FLIGHTREC_DIR, dumps too
  const std::string said = MakeTempDir("trigger-said");
  const EmuJob job = RunTriggered("", "true", rings, said);
  const std::vector<std::string> dumps = TriggeredDumps(job, said);
  ASSERT_FALSE(dumps.empty());
  // The dumps alone (each rank's snapshot), and with the rings beside them.
  for (const std::vector<std::string>& inputs : {dumps, std::vector<std::string>{rings}}) {
    const AnalyzeRun run = RunAnalyze(inputs);
    ASSERT_TRUE(run.report.is_object()) << run.output;
    EXPECT_NE(run.report.value("verdict", std::string()), "hang") << Describe(run);
    EXPECT_EQ(run.exit_code, 0) << Describe(run);  // healthy
  }
  RunShell("rm -rf '" + job.dir + "' '" + rings + "' '" + said + "'");
}

// The other side: a user's trigger on a job that really hangs (long before
// the watchdog's 600 s timeout) still shows the hang, by the age rule.
TEST(CliTrigger, OnAHungJobTheRequestedDumpsStillShowTheHang) {
  const std::string rings = MakeTempDir("trigger-hung-rings");
  const std::string said = MakeTempDir("trigger-hung-said");
  // Ready once the live rings already read as hung (ops pending > 1 s).
  const std::string hung =
      "{ " + Cli() + " analyze '" + rings + "' >/dev/null 2>&1; [ $? -eq 1 ]; }";
  const EmuJob job = RunTriggered("--fault stuck:rank=5:op=300", hung, rings, said);
  const std::vector<std::string> dumps = TriggeredDumps(job, said);
  ASSERT_FALSE(dumps.empty());
  const AnalyzeRun run = RunAnalyze(dumps);
  ASSERT_TRUE(run.report.is_object()) << run.output;
  EXPECT_EQ(run.report.value("verdict", std::string()), "hang") << Describe(run);
  EXPECT_EQ(run.exit_code, 1) << Describe(run);
  const std::vector<int> culprits = CulpritWorldRanks(run.report);
  EXPECT_NE(std::find(culprits.begin(), culprits.end(), 5), culprits.end()) << Describe(run);
  RunShell("rm -rf '" + job.dir + "' '" + rings + "' '" + said + "'");
}

TEST(CliTrigger, WithoutAJobAndWithoutFilesItRefuses) {
  const std::string dir = MakeTempDir("trigger-empty");
  const CliRun run = RunCli("trigger '" + dir + "'");
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_NE(run.err.find("no job id given"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("nothing written"), std::string::npos) << run.err;
  EXPECT_TRUE(ListFiles(dir, ".trigger").empty());
  RunShell("rm -rf '" + dir + "'");
}

TEST(CliTrigger, WithFilesOfOneJobItTargetsThatJobAndSaysSo) {
  const std::string dir = MakeTempDir("trigger-one");
  const std::string ring = std::string(FLIGHTREC_SOURCE_DIR) + "/tests/golden/v1.0/rank0.ring";
  ASSERT_EQ(RunShell("cp '" + ring + "' '" + dir + "/flightrec-golden-vm-5788.ring'"), 0);
  const CliRun run = RunCli("trigger '" + dir + "'");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(run.out, dir + "/flightrec-golden.trigger\n");
  EXPECT_NE(run.err.find("job golden"), std::string::npos) << run.err;
  EXPECT_EQ(ListFiles(dir, ".trigger").size(), 1u);
  // A ring dir holding no ring of the job named: refused.
  const std::string other = MakeTempDir("trigger-other");
  const CliRun refused = RunCli("trigger '" + dir + "' --job other --ring-dir '" + other + "'");
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("job other"), std::string::npos) << refused.err;
  // A job named, no way to tell: warns and says what it wrote.
  const CliRun warned = RunCli("trigger '" + other + "' --job other");
  EXPECT_EQ(warned.exit_code, 0) << warned.err;
  EXPECT_NE(warned.err.find("warning"), std::string::npos) << warned.err;
  EXPECT_NE(warned.err.find(other + "/flightrec-other.trigger"), std::string::npos) << warned.err;
  // Files of a second job beside it: no job can be chosen.
  const std::string ring1 = std::string(FLIGHTREC_SOURCE_DIR) + "/tests/golden/v1.0/rank1.ring";
  ASSERT_EQ(RunShell("cp '" + ring1 + "' '" + dir + "/flightrec-second-vm-5789.ring'"), 0);
  const CliRun two = RunCli("trigger '" + dir + "'");
  EXPECT_EQ(two.exit_code, 2) << two.err;
  EXPECT_NE(two.err.find("several jobs"), std::string::npos) << two.err;
  RunShell("rm -rf '" + dir + "' '" + other + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

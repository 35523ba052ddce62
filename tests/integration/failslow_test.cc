// Fail-slow, live (docs/monitoring.md, "Fail-slow"): emulated jobs of 8
// ranks (failslow_test) or 64 (failslow_large_test), TP 2, whose rings
// `flightrec exporter` serves to a real Prometheus (1 s scrape and
// evaluation) with the shipped rules, unchanged:
//  * one rank enqueues late before every op (a CPU-side straggler: 3 ms at
//    8 ranks, 20 ms at 64, where 64 processes on a small machine make every
//    op slower): FlightrecStraggler names it, side="cpu", by host, pid and
//    global rank, within 60 s, and names no other process (not its TP
//    partner, which arrives late on its DP comm because it waits on its TP
//    comm);
//  * another rank's GPU stream starts every launch as late, enqueued on
//    time (a GPU-side straggler): the same, side="gpu";
//  * a healthy job: no straggler and no slow link, pending or firing;
//  * every launch takes that much longer on every rank from some op on (a
//    slow link): FlightrecSlowLink, and no straggler.
// While each job runs `flightrec status` names the same rank (or none), and
// `flightrec analyze` on the finished job's files does too. At 8 ranks the
// GPU-side straggler job is watched by a second stack too, its exporter in
// node mode (--detail node), which names the same rank.
// Waits are liveness bounds; the 60 s to name a straggler is the issue's
// acceptance bound.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/prom_stack.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

const std::map<std::string, std::string> kJobEnv = {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"},
                                                    {"NCCL_FLIGHTREC_VERDICT", "0"}};

// Job sizes: each job runs 20-45 s on a 2-core machine (the rules judge a
// comm once it is 30 s old).
struct Layout {
  int ranks;
  int slow_us;       // the stragglers' delay
  int slow_ops;      // ops of the straggler jobs
  int cpu_rank;      // the CPU-side straggler (world rank)
  int gpu_rank;      // the GPU-side one
  int healthy_ops;   // ops of the healthy job
  int link_us;       // the slow link's extra time per launch
  int link_ops;      // ops of the slow-link job
  int link_from;     // the op the link turns slow at
  int link_step_us;  // the slow-link job's kernel time per op (--step-us)
};
// The slow-link rule compares the comm's transfer time per collective over
// the last minute with the run's own level (its 10th percentile). In a job
// shorter than a minute both are means over every op Prometheus counted, so
// the link job needs (1) normal ops for ~7 s after its first counted ones
// (they appear ~8-10 s after the start): the level; (2) slow ops that
// outweigh them in the mean, whatever a normal transfer takes on the
// machine. Both phases are long enough in time, not only in ops. At 8
// ranks a normal transfer takes ~0.5 ms (16,000 ops, ~8 s, the first
// counts come after ~3 s) and the link adds 3 ms; the mean doubles 9-15 s
// after the step, and the job runs on for 5-10 s more. At 64 ranks (64
// processes on 2 cores) the first counts come ~8-10 s after the start, and
// a normal transfer took 2-5 ms on a fast machine and 10-40 ms on a slow
// one: on a fast one 1,500 normal ops could end before Prometheus had
// counted any (no level, no alert). So the 64-rank link job's kernels take
// link_step_us (10 ms): its 1,600 normal ops last at least 16 s on any
// machine, and the link adds 60 ms to each of the last 500 (~35 s). A
// longer normal phase is no better: its ops stay in the rule's one-minute
// mean and the slow ones must outweigh them.
#ifndef FLIGHTREC_FAILSLOW_RANKS
#define FLIGHTREC_FAILSLOW_RANKS 8
#endif
constexpr Layout kLayout = FLIGHTREC_FAILSLOW_RANKS == 64
                               ? Layout{64, 20000, 1800, 37, 20, 6000, 60000, 2100, 1600, 10000}
                               : Layout{8, 3000, 12000, 3, 4, 30000, 3000, 22000, 16000, 200};

// `step_us`: the emulated kernel time per op.
std::string Base(int ops, const std::string& job_id, int step_us = 200) {
  return "--ranks " + std::to_string(kLayout.ranks) + " --tp 2 --ranks-per-node 8 --step-us " +
         std::to_string(step_us) + " --hang-timeout-s 60 --ops " + std::to_string(ops) +
         " --job-id " + job_id + " ";
}

std::string Us() { return std::to_string(kLayout.slow_us); }

// An alert as the test saw it first: when (seconds after the job started,
// and Unix time for Prometheus queries at that instant) and its labels.
struct Seen {
  double at_s = 0;
  double unix_s = 0;
  json labels;
};

double UnixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

class FailSlowJob : public ::testing::Test {
 protected:
  void SetUp() override {
    job_.dir = MakeTempDir("failslow");
    job_.ring_dir = job_.dir + "/rings";
    mkdir(job_.ring_dir.c_str(), 0755);
    stack_.reset(new PromStack(job_.ring_dir, ShippedRules()));
    ASSERT_TRUE(stack_->ok()) << stack_->Logs();
    ASSERT_TRUE(stack_->Ready()) << stack_->Logs();
  }
  // A second stack on the same rings, its exporter started with
  // `exporter_args`: Poll records its alerts apart (node_seen_).
  void AddNodeStack(const std::string& exporter_args) {
    node_stack_.reset(new PromStack(job_.ring_dir, ShippedRules(), exporter_args));
    ASSERT_TRUE(node_stack_->ok()) << node_stack_->Logs();
    ASSERT_TRUE(node_stack_->Ready()) << node_stack_->Logs();
  }
  // Makes the second stack (and what Poll saw of it) the one the
  // assertions read, and the first the second.
  void SwapStacks() {
    std::swap(stack_, node_stack_);
    std::swap(seen_, node_seen_);
  }
  void TearDown() override {
    launcher_.reset();
    node_stack_.reset();
    stack_.reset();
    if (!HasFailure()) RunShell("rm -rf " + Quote(job_.dir));
  }

  // Starts `flightrec-emu run ARGS` in the background, its rings in the
  // scraped directory.
  void Start(const std::string& args) {
    summary_ = job_.dir + "/summary.json";  // EmuCommand's --summary
    launcher_ = std::make_unique<Spawned>(EmuCommand(job_, args, kJobEnv) + " >" +
                                          Quote(job_.dir + "/launcher.out") + " 2>" +
                                          Quote(job_.dir + "/launcher.err"));
    started_ = Clock::now();
  }

  // Polls the alerts (pending or firing) every 0.5 s until `done()` holds
  // and `linger_s` more seconds passed, or `bound_s` after the start;
  // records every distinct (alert, pid, comm, side) the first time it is
  // seen (of the second stack too, if any). While the job runs, runs
  // `flightrec status --json` each time.
  void Poll(const std::function<bool()>& done, double linger_s, double bound_s) {
    double done_at = -1;
    while (Since(started_) < bound_s) {
      Record(*stack_, &seen_);
      if (node_stack_) Record(*node_stack_, &node_seen_);
      if (launcher_->running()) TakeStatus();
      if (done_at < 0 && done()) done_at = Since(started_);
      if (done_at >= 0 && Since(started_) >= done_at + linger_s) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }

  void Record(PromStack& stack, std::map<std::string, Seen>* seen) {
    for (const json& a : stack.Alerts()) {
      const std::string key = a.value("alertname", "") + "/" + a.value("pid", "") + "/" +
                              a.value("comm", "") + "/" + a.value("side", "");
      if (seen->count(key) == 0) (*seen)[key] = Seen{Since(started_), UnixNow(), a};
    }
  }

  // `flightrec status --json` on the running job: counted, and the latest
  // report with a straggler line kept (the widest comm is judged once it
  // has 64 collectives, after the narrow ones).
  void TakeStatus() {
    const std::string out = job_.dir + "/status.json";
    RunShell(Cli() + " status --json " + Quote(job_.ring_dir) + " >" + Quote(out) + " 2>/dev/null");
    const json j = json::parse(ReadText(out), nullptr, false);
    if (!j.is_object() || j["jobs"].empty()) return;
    ++statuses_;
    if (!j["jobs"][0]["stragglers"].empty()) status_ = j;
  }

  // Waits for the job to finish (a liveness bound) and reads its summary.
  void Finish() {
    ASSERT_EQ(launcher_->Wait(120), 0) << ReadText(job_.dir + "/launcher.err").substr(0, 2000);
    summary_json_ = json::parse(ReadText(summary_), nullptr, false);
    ASSERT_TRUE(summary_json_.is_object()) << ReadText(summary_);
  }

  std::string PidOf(int rank) const {
    for (const auto& r : summary_json_["ranks"]) {
      if (r.value("rank", -1) == rank) return std::to_string(r.value("pid", 0));
    }
    return "?";
  }

  // The alerts of one name seen, first sighting each.
  std::vector<Seen> SeenOf(const std::string& alertname) const { return SeenIn(seen_, alertname); }
  static std::vector<Seen> SeenIn(const std::map<std::string, Seen>& seen,
                                  const std::string& alertname) {
    std::vector<Seen> out;
    for (const auto& kv : seen) {
      if (kv.second.labels.value("alertname", "") == alertname) out.push_back(kv.second);
    }
    return out;
  }

  std::string Dump() const {
    std::string s;
    for (const auto& kv : seen_) {
      s += "  " + std::to_string(kv.second.at_s) + " s: " + kv.second.labels.dump() + "\n";
    }
    return "alerts seen:\n" + s + stack_->Logs();
  }

  bool Named(const std::string& alertname) const { return !SeenOf(alertname).empty(); }

  // The straggler scenario's assertions: the alert names `rank` (and only
  // it) with `side` within 60 s; status and analyze name it too.
  void ExpectStraggler(int rank, const std::string& side) {
    const std::vector<Seen> named = SeenOf("FlightrecStraggler");
    ASSERT_FALSE(named.empty()) << Dump();
    double first = 1e9;
    double world_unix = 0;  // when the alert on world was first seen
    std::set<std::string> comms;
    for (const Seen& s : named) {
      EXPECT_EQ(s.labels.value("pid", ""), PidOf(rank)) << s.labels.dump() << "\n" << Dump();
      EXPECT_EQ(s.labels.value("global_rank", ""), std::to_string(rank)) << s.labels.dump();
      EXPECT_EQ(s.labels.value("host", ""), summary_json_["ranks"][0].value("host", ""));
      EXPECT_EQ(s.labels.value("side", ""), side) << s.labels.dump();
      comms.insert(s.labels.value("comm", ""));
      if (s.labels.value("comm", "") == "world") world_unix = s.unix_s;
      first = std::min(first, s.at_s);
    }
    EXPECT_LE(first, 60.0) << Dump();  // the bound
    EXPECT_EQ(comms.count("world"), 1u) << Dump();
    std::printf(
        "[ figures ] %d ranks: %s-side straggler world rank %d named after %.1f s on %zu "
        "comms\n",
        kLayout.ranks, side.c_str(), rank, first, comms.size());

    // The dashboard's fail-slow panels show it: the wasted GPU time on
    // world, and the straggler with its side. Queried at the instant the
    // alert on world was seen: the job has ended since, and the panels'
    // 1-minute and 5-minute rates of a finished job run dry.
    const json dash = json::parse(
        ReadText(std::string(FLIGHTREC_SOURCE_DIR) + "/deploy/grafana/flightrec-dashboard.json"));
    int panels = 0;
    for (const auto& panel : dash["panels"]) {
      const std::string title = panel.value("title", "");
      if (title.rfind("Wasted GPU time", 0) != 0 && title.rfind("Stragglers", 0) != 0) continue;
      ++panels;
      std::string expr = panel["targets"][0]["expr"];
      expr = std::regex_replace(expr, std::regex("\\$job"), summary_json_.value("job_id", ""));
      char at[32];
      std::snprintf(at, sizeof(at), "%.3f", world_unix);
      const json r = stack_->Api(
          "/api/v1/query?query=" + httplib::detail::encode_query_param(expr) + "&time=" + at);
      ASSERT_TRUE(r.is_object()) << expr;
      const json& result = r["data"]["result"];
      bool shown = false;
      for (const json& row : result) {
        const json& m = row["metric"];
        shown = shown || (title[0] == 'W' ? m.value("comm", "") == "world"
                                          : m.value("global_rank", "") == std::to_string(rank) &&
                                                m.value("side", "") == side);
      }
      EXPECT_TRUE(shown) << title << ": " << result.dump();
    }
    EXPECT_EQ(panels, 2) << "the dashboard's fail-slow panels were renamed";

    ASSERT_TRUE(status_.is_object()) << statuses_ << " status reports named no straggler";
    const json& st = status_["jobs"][0]["stragglers"];
    ASSERT_EQ(st.size(), 1u) << status_["jobs"].dump(1);
    EXPECT_EQ(std::to_string(st[0].value("pid", 0)), PidOf(rank)) << st.dump(1);
    EXPECT_EQ(st[0].value("side", ""), side) << st.dump(1);
    EXPECT_EQ(st[0].value("name", ""), "world") << st.dump(1);
    EXPECT_EQ(st[0].value("waiting_ranks", 0), kLayout.ranks - 1) << st.dump(1);
    std::printf("[ figures ] status: %s\n", st[0].value("text", "").c_str());

    const AnalyzeRun run = RunAnalyze({job_.ring_dir});
    EXPECT_EQ(run.report.value("verdict", ""), "slow") << Describe(run);
    EXPECT_EQ(CulpritWorldRanks(run.report), std::vector<int>{rank}) << Describe(run);
    const std::vector<json> findings = FindingsOf(run.report, "straggler");
    ASSERT_FALSE(findings.empty()) << Describe(run);
    const std::string phrase = side == "gpu" ? "GPU-side" : "CPU-side";
    for (const json& f : findings) {
      EXPECT_TRUE(Names(f, rank)) << f.dump();
      EXPECT_NE(f.value("summary", "").find(phrase), std::string::npos) << f.dump();
    }
  }

  // No straggler anywhere: alerts, status, analyze.
  void ExpectNoStraggler() {
    EXPECT_FALSE(Named("FlightrecStraggler")) << Dump();
    EXPECT_GT(statuses_, 0) << "no flightrec status taken while the job ran";
    EXPECT_TRUE(status_.is_null()) << status_["jobs"].dump(1);
    const AnalyzeRun run = RunAnalyze({job_.ring_dir});
    EXPECT_TRUE(FindingsOf(run.report, "straggler").empty()) << Describe(run);
    EXPECT_EQ(run.report.value("verdict", ""), "healthy") << Describe(run);
  }

  EmuJob job_;
  std::string summary_;
  json summary_json_;
  std::unique_ptr<PromStack> stack_;
  std::unique_ptr<PromStack> node_stack_;  // AddNodeStack's
  std::unique_ptr<Spawned> launcher_;
  Clock::time_point started_;
  std::map<std::string, Seen> seen_;
  std::map<std::string, Seen> node_seen_;
  json status_;  // the latest status report naming a straggler
  int statuses_ = 0;
};

// One suite name per size, so ctest tells the 8- and 64-rank cases apart.
#if FLIGHTREC_FAILSLOW_RANKS == 64
using FailSlowJob64 = FailSlowJob;
#define FAILSLOW_SUITE FailSlowJob64
#else
#define FAILSLOW_SUITE FailSlowJob
#endif

TEST_F(FAILSLOW_SUITE, CpuSideStragglerIsNamedAndNotItsPartners) {
  Start(Base(kLayout.slow_ops, "fs-cpu") + "--fault slow:rank=" + std::to_string(kLayout.cpu_rank) +
        ":us=" + Us());
  Poll([this] { return Named("FlightrecStraggler") && status_.is_object(); }, 5, 75);
  Finish();
  ExpectStraggler(kLayout.cpu_rank, "cpu");
}

// At 8 ranks the same job is watched by a second stack whose exporter is in
// node mode (--detail node): the rules see the same per-rank sync counters,
// so the same rank is named there too.
TEST_F(FAILSLOW_SUITE, GpuSideStragglerIsNamedAndNotItsPartners) {
  const bool node_mode = kLayout.ranks == 8;
  if (node_mode) AddNodeStack("--detail node");
  if (HasFatalFailure()) return;
  Start(Base(kLayout.slow_ops, "fs-gpu") +
        "--fault gpu-slow:rank=" + std::to_string(kLayout.gpu_rank) + ":us=" + Us());
  Poll(
      [this, node_mode] {
        return Named("FlightrecStraggler") && status_.is_object() &&
               (!node_mode || !SeenIn(node_seen_, "FlightrecStraggler").empty());
      },
      5, 75);
  Finish();
  ExpectStraggler(kLayout.gpu_rank, "gpu");
  if (!node_mode) return;
  SCOPED_TRACE("exporter in node mode (--detail node)");
  SwapStacks();
  // Node mode: no per-rank histogram reached Prometheus.
  EXPECT_LT(stack_->Query("count(flightrec_collective_duration_seconds_count{pid!=\"\"})"), 0);
  ExpectStraggler(kLayout.gpu_rank, "gpu");
}

TEST_F(FAILSLOW_SUITE, AHealthyJobNamesNobody) {
  Start(Base(kLayout.healthy_ops, "fs-ok"));
  Poll([this] { return !launcher_->running(); }, 4, 75);
  Finish();
  EXPECT_GT(stack_->Query("sum(flightrec_sync_collectives_total{job=\"fs-ok\"})"), 0)
      << stack_->Logs();
  ExpectNoStraggler();
  EXPECT_FALSE(Named("FlightrecSlowLink")) << Dump();
}

TEST_F(FAILSLOW_SUITE, ASlowLinkIsItsOwnFindingAndNamesNoStraggler) {
  Start(Base(kLayout.link_ops, "fs-link", kLayout.link_step_us) + "--fault slow-link:us=" +
        std::to_string(kLayout.link_us) + ":op=" + std::to_string(kLayout.link_from));
  Poll([this] { return Named("FlightrecSlowLink") || !launcher_->running(); }, 4, 80);
  Finish();
  const std::vector<Seen> link = SeenOf("FlightrecSlowLink");
  ASSERT_FALSE(link.empty()) << Dump();
  for (const Seen& s : link) EXPECT_EQ(s.labels.value("job", ""), "fs-link") << Dump();
  std::printf("[ figures ] %d ranks: slow link found after %.1f s on %s (%zu comms)\n",
              kLayout.ranks, link[0].at_s, link[0].labels.value("comm", "").c_str(), link.size());
  ExpectNoStraggler();
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

// `flightrec exporter` against the real Prometheus tools (Debian's
// `prometheus` package): promtool checks the exposition of an emulated job's
// rings, and a real Prometheus server (loopback, a free port, its TSDB in a
// temp dir, killed at the end) scrapes the exporter while emulated jobs run,
// evaluating the shipped rules (deploy/prometheus/flightrec-rules.yml):
// the stuck-collective alert fires for the ranks that wait when one rank
// stops before a collective, the rank-behind alert names that rank and no
// other, and nothing fires for a healthy job.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/emu_job.h"
#include "integration/prom_stack.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {
namespace {

// The shipped rules with the stuck threshold lowered from 5 min to 2 s and
// its `for` from 1 min to none, so that a test hang of seconds trips it; the
// expression itself is the shipped one.
std::string TestRules() {
  std::string rules = ShippedRules();
  const std::string shipped = "expr: flightrec_oldest_pending_op_seconds > 300\n        for: 1m";
  const size_t at = rules.find(shipped);
  EXPECT_NE(at, std::string::npos) << "the stuck rule changed; update this test";
  if (at != std::string::npos) {
    rules.replace(at, shipped.size(),
                  "expr: flightrec_oldest_pending_op_seconds > 2\n        for: 0s");
  }
  return rules;
}

// Polls the firing alerts every 0.5 s from a thread while a job runs.
class AlertPoller {
 public:
  explicit AlertPoller(PromStack* stack)
      : thread_([this, stack] {
          while (!stop_) {
            for (const nlohmann::json& a : stack->FiringAlerts()) {
              std::lock_guard<std::mutex> lock(mu_);
              seen_.push_back(a);
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
          }
        }) {}
  ~AlertPoller() { Stop(); }
  std::vector<nlohmann::json> Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

 private:
  std::atomic<bool> stop_{false};
  std::mutex mu_;
  std::vector<nlohmann::json> seen_;
  std::thread thread_;
};

const std::map<std::string, std::string> kJobEnv = {{"NCCL_FLIGHTREC_TIMEOUT_S", "600"},
                                                    {"NCCL_FLIGHTREC_VERDICT", "0"}};

// The job tests' set-up: a ring directory, the exporter and a Prometheus
// server on it, and the firing alerts polled while an emulated job writes
// its rings there. The directories stay when a test failed.
class PrometheusJob : public ::testing::Test {
 protected:
  void SetUp() override {
    rings_ = MakeTempDir("prom-job-rings");
    stack_.reset(new PromStack(rings_, TestRules()));
    ASSERT_TRUE(stack_->ok()) << stack_->Logs();
    ASSERT_TRUE(stack_->Ready()) << stack_->Logs();
    poller_.reset(new AlertPoller(stack_.get()));
  }
  void TearDown() override {
    poller_.reset();
    stack_.reset();
    if (!HasFailure()) RunShell("rm -rf " + Quote(rings_) + " " + Quote(job_dir_));
  }
  // flightrec-emu ARGS with its rings in the scraped directory.
  EmuJob RunJob(const std::string& tag, const std::string& args) {
    std::map<std::string, std::string> env = kJobEnv;
    env["NCCL_FLIGHTREC_DIR"] = rings_;
    EmuJob job = RunEmu(tag, args, env);
    job_dir_ = job.dir;
    return job;
  }
  // The alerts seen firing since SetUp; stops polling.
  std::vector<nlohmann::json> SeenAlerts() { return poller_->Stop(); }

  std::string rings_;
  std::string job_dir_;
  std::unique_ptr<PromStack> stack_;
  std::unique_ptr<AlertPoller> poller_;
};

TEST(Prometheus, PromtoolAcceptsTheExpositionAndItCountsWhatTheRingsHold) {
  const EmuJob job = RunEmu("prom-check", "--ranks 4 --tp 2 --ops 200 --job-id promcheck", kJobEnv);
  ASSERT_EQ(job.status, 0) << job.stderr_text;
  const std::string out = job.dir + "/metrics.prom";
  ASSERT_EQ(RunShell(Cli() + " exporter --once " + Quote(job.ring_dir) + " >" + Quote(out)), 0);
  const std::string check = job.dir + "/promtool.out";
  EXPECT_EQ(RunShell("promtool check metrics <" + Quote(out) + " >" + Quote(check) + " 2>&1"), 0)
      << ReadText(check);
  // Every claimed slot of every ring is counted once: the sum of
  // flightrec_collectives_total per pid is the sum of its regions' heads.
  const std::string text = ReadText(out);
  std::map<std::string, double> counted;
  const std::regex sample("flightrec_collectives_total\\{[^}]*pid=\"([0-9]+)\"[^}]*\\} ([0-9]+)");
  for (std::sregex_iterator it(text.begin(), text.end(), sample), end; it != end; ++it) {
    counted[(*it)[1]] += std::stod((*it)[2]);
  }
  const std::vector<std::string> rings = ListFiles(job.ring_dir, ".ring");
  ASSERT_EQ(rings.size(), 4u);
  for (const std::string& r : rings) {
    const FileView v = ReadFileView(r);
    ASSERT_TRUE(v.ok) << v.error;
    double heads = 0;
    for (const CommView& c : v.comms) heads += static_cast<double>(c.head);
    EXPECT_GT(heads, 0);
    EXPECT_EQ(counted[std::to_string(v.pid)], heads) << r;
  }
  // The textfile route: written every --interval by rename (never a partial
  // file: node_exporter reads it any time), the same exposition; SIGTERM
  // ends the daemon with status 0.
  const std::string textfile = job.dir + "/textfile.prom";
  Spawned daemon(Cli() + " exporter --textfile " + Quote(textfile) + " --interval 1 " +
                 Quote(job.ring_dir));
  for (int i = 0; i < 300 && ReadText(textfile).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(RunShell("promtool check metrics <" + Quote(textfile) + " >" + Quote(check) + " 2>&1"),
            0)
      << ReadText(check);
  EXPECT_NE(ReadText(textfile).find("flightrec_collectives_total{job=\"promcheck\""),
            std::string::npos);
  EXPECT_EQ(daemon.Stop(SIGTERM, 10), 0);
  RunShell("rm -rf " + Quote(job.dir));
}

TEST_F(PrometheusJob, StuckAlertFiresForTheRanksThatWaitAndRankBehindNamesTheStoppedOne) {
  // Rank 1 stops before op 200 (a TP AllReduce): its TP partner waits in
  // op 200, ranks 2 and 3 in the DP ReduceScatter after it. The launcher
  // ends the job after 15 s without progress.
  const EmuJob job = RunJob("prom-hung",
                            "--ranks 4 --tp 2 --ops 100000 --step-us 1000 --job-id promhung "
                            "--fault stuck:rank=1:op=200 --hang-timeout-s 15");
  const std::vector<nlohmann::json> seen = SeenAlerts();
  ASSERT_EQ(job.status, 3) << job.stderr_text;
  std::map<int, std::string> pid_of_rank;
  for (const auto& r : job.summary["ranks"]) {
    pid_of_rank[r.value("rank", -1)] = std::to_string(r.value("pid", 0));
  }
  std::map<std::string, std::set<std::string>> pids_by_alert;
  for (const nlohmann::json& a : seen) {
    EXPECT_EQ(a.value("job", ""), "promhung") << a.dump();
    pids_by_alert[a.value("alertname", "")].insert(a.value("pid", ""));
  }
  const std::map<std::string, std::set<std::string>> expected = {
      {"FlightrecCollectiveStuck", {pid_of_rank[0], pid_of_rank[2], pid_of_rank[3]}},
      {"FlightrecRankBehind", {pid_of_rank[1]}}};
  EXPECT_EQ(pids_by_alert, expected)
      << "rank 1 is pid " << pid_of_rank[1] << "; " << stack_->Logs();
}

TEST_F(PrometheusJob, AHealthyJobFiresNoAlert) {
  const EmuJob job =
      RunJob("prom-healthy", "--ranks 4 --tp 2 --ops 4000 --step-us 1000 --job-id promok");
  // A few more evaluations with the finished job's rings in place.
  std::this_thread::sleep_for(std::chrono::seconds(4));
  const std::vector<nlohmann::json> seen = SeenAlerts();
  ASSERT_EQ(job.status, 0) << job.stderr_text;
  // Prometheus did scrape the job: its ops are in the TSDB.
  EXPECT_GT(stack_->Query("sum(flightrec_collectives_total{job=\"promok\"})"), 0) << stack_->Logs();
  for (const nlohmann::json& a : seen) ADD_FAILURE() << "alert fired: " << a.dump();
  // Every query of the shipped dashboard is valid PromQL for this Prometheus
  // and names only metrics the exporter serves.
  const nlohmann::json dash = nlohmann::json::parse(
      ReadText(std::string(FLIGHTREC_SOURCE_DIR) + "/deploy/grafana/flightrec-dashboard.json"));
  std::set<std::string> served;
  for (const std::string& line : {std::string("/api/v1/label/__name__/values")}) {
    const nlohmann::json names = stack_->Api(line);
    ASSERT_TRUE(names.is_object()) << stack_->Logs();
    for (const auto& n : names["data"]) served.insert(n.get<std::string>());
  }
  int queries = 0;
  for (const auto& panel : dash["panels"]) {
    for (const auto& target : panel["targets"]) {
      std::string expr = target["expr"];
      expr = std::regex_replace(expr, std::regex("\\$__rate_interval"), "1m");
      expr = std::regex_replace(expr, std::regex("\\$(job|host)"), ".*");
      const nlohmann::json r =
          stack_->Api("/api/v1/query?query=" + httplib::detail::encode_query_param(expr));
      EXPECT_TRUE(r.is_object() && r.value("status", "") == "success") << expr;
      const std::regex metric("flightrec_[a-z_]+");
      for (std::sregex_iterator it(expr.begin(), expr.end(), metric), end; it != end; ++it) {
        EXPECT_EQ(served.count(it->str()), 1u) << it->str() << " in " << expr;
      }
      ++queries;
    }
  }
  EXPECT_GT(queries, 10);
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

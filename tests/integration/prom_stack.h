// A real Prometheus server (Debian's `prometheus`) scraping `flightrec
// exporter` for the integration tests: the exporter on a ring directory
// (--listen on a free loopback port), Prometheus on another free port with
// its TSDB in a temp dir, 1 s scrape and rule evaluation, the given rules.
// Both are SIGTERMed (SIGKILLed after 10 s) and the temp dir removed when
// the stack goes.
#ifndef FLIGHTREC_TESTS_INTEGRATION_PROM_STACK_H_
#define FLIGHTREC_TESTS_INTEGRATION_PROM_STACK_H_

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {

inline std::string Cli() { return BuildDir() + "/bin/flightrec"; }

inline std::string Quote(const std::string& s) { return "'" + s + "'"; }

// A free loopback TCP port (bound, read back, closed: Prometheus binds it
// right after).
inline int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(a.sin_port);
}

// The shipped rules (deploy/prometheus/flightrec-rules.yml).
inline std::string ShippedRules() {
  return ReadText(std::string(FLIGHTREC_SOURCE_DIR) + "/deploy/prometheus/flightrec-rules.yml");
}

// The exporter on `rings` and a Prometheus server scraping it every second,
// evaluating `rules` every second.
class PromStack {
 public:
  // `exporter_args` go on the exporter's command line (e.g. "--detail node").
  PromStack(const std::string& rings, const std::string& rules,
            const std::string& exporter_args = "")
      : dir_(MakeTempDir("prom")) {
    exporter_.reset(new Spawned(Cli() + " exporter --listen 127.0.0.1:0 " + exporter_args + " " +
                                Quote(rings) + " >" + Quote(dir_ + "/exporter.out") + " 2>" +
                                Quote(dir_ + "/exporter.err")));
    const std::regex listening("listening on 127\\.0\\.0\\.1:([0-9]+)");
    std::smatch m;
    for (int i = 0; i < 300 && exporter_port_ <= 0; ++i) {
      const std::string out = ReadText(dir_ + "/exporter.out");
      if (std::regex_search(out, m, listening)) exporter_port_ = std::stoi(m[1]);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    prom_port_ = FreePort();
    std::ofstream(dir_ + "/rules.yml") << rules;
    std::ofstream(dir_ + "/prometheus.yml")
        << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
           "rule_files: ['"
        << dir_ << "/rules.yml']\n"
        << "scrape_configs:\n  - job_name: flightrec\n    honor_labels: true\n"
           "    static_configs:\n      - targets: ['127.0.0.1:"
        << exporter_port_ << "']\n";
    prometheus_.reset(new Spawned(
        "prometheus --config.file=" + Quote(dir_ + "/prometheus.yml") + " --storage.tsdb.path=" +
        Quote(dir_ + "/tsdb") + " --web.listen-address=127.0.0.1:" + std::to_string(prom_port_) +
        " --log.level=warn >" + Quote(dir_ + "/prometheus.log") + " 2>&1"));
    for (int i = 0; i < 300 && !Ready(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  ~PromStack() {
    prometheus_->Stop(SIGTERM, 10);
    exporter_->Stop(SIGTERM, 10);
    RunShell("rm -rf " + Quote(dir_));
  }
  PromStack(const PromStack&) = delete;
  PromStack& operator=(const PromStack&) = delete;
  bool Ready() {
    httplib::Client c("127.0.0.1", prom_port_);
    auto r = c.Get("/-/ready");
    return r && r->status == 200;
  }
  bool ok() const { return exporter_port_ > 0 && prom_port_ > 0; }
  std::string Logs() const {
    return "exporter: " + ReadText(dir_ + "/exporter.err").substr(0, 2000) +
           "\nprometheus: " + ReadText(dir_ + "/prometheus.log").substr(0, 2000);
  }
  // GET `path` on Prometheus' API as JSON (null on failure).
  nlohmann::json Api(const std::string& path) {
    httplib::Client c("127.0.0.1", prom_port_);
    c.set_read_timeout(5, 0);
    auto r = c.Get(path.c_str());
    if (!r || r->status != 200) return nullptr;
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  // The alerts now, pending or firing: their labels plus "state".
  std::vector<nlohmann::json> Alerts() {
    std::vector<nlohmann::json> out;
    const nlohmann::json j = Api("/api/v1/alerts");
    if (!j.is_object() || !j.contains("data")) return out;
    for (const auto& a : j["data"].value("alerts", nlohmann::json::array())) {
      nlohmann::json labels = a["labels"];
      labels["state"] = a.value("state", "");
      out.push_back(labels);
    }
    return out;
  }
  // The alerts firing now: their labels.
  std::vector<nlohmann::json> FiringAlerts() {
    std::vector<nlohmann::json> out;
    for (nlohmann::json& a : Alerts()) {
      if (a.value("state", "") != "firing") continue;
      a.erase("state");
      out.push_back(a);
    }
    return out;
  }
  // The first sample of an instant query; -1 when there is none.
  double Query(const std::string& expr) {
    const nlohmann::json j =
        Api("/api/v1/query?query=" + httplib::detail::encode_query_param(expr));
    if (!j.is_object() || j["data"]["result"].empty()) return -1;
    return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
  }

 private:
  std::string dir_;
  std::unique_ptr<Spawned> exporter_;
  std::unique_ptr<Spawned> prometheus_;
  int exporter_port_ = -1;
  int prom_port_ = -1;
};

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_PROM_STACK_H_

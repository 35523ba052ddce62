// `flightrec exporter DIR... [--listen ADDR:PORT] [--web.config.file FILE]
// [--textfile PATH] [--interval S] [--once]`: a per-node daemon that serves
// the metrics of every ring under DIR... to Prometheus (GET /metrics) and/or
// writes them to a node_exporter textfile (atomic rename), rescanning the
// directories on each scrape and each interval (docs/monitoring.md). The
// HTTP server listens on 127.0.0.1:9877 unless told otherwise, with TLS and
// basic auth from the web config file and bounded connections
// (exporter_server.h). Read-only: rings are never written, their writers
// never wait on it. A bad file is skipped with a log line on stderr and a
// metric; the exporter goes on.
//
// Exit code: 0 stopped by SIGINT, SIGTERM or SIGHUP (stop_signal.h), or
// --once done; 2 usage error, a web config file that cannot be used, the
// address cannot be bound or the textfile cannot be written (--once).
#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/cli/exporter_server.h"
#include "analyzer/cli/stop_signal.h"
#include "analyzer/cli/web_config.h"
#include "analyzer/live/collector.h"

namespace flightrec {
namespace cli {
namespace {

constexpr int kExitOk = 0;
constexpr int kExitError = 2;

constexpr const char* kDefaultListen = "127.0.0.1:9877";

struct ExporterArgs {
  std::vector<std::string> dirs;
  std::string listen;  // empty: no HTTP server
  std::string web_config_file;
  size_t max_connections = 64;
  double read_timeout_s = 5;
  std::string textfile;
  double interval_s = 15;
  bool once = false;
  std::string detail = "rank";  // --detail: rank or node (docs/monitoring.md, "Node mode")
};

uint64_t WallNowNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// One Collector shared by the HTTP handler threads and the textfile loop.
class Exporter {
 public:
  Exporter(const std::vector<std::string>& dirs, live::Detail detail) : collector_(dirs, detail) {}

  // Scans and renders the exposition; log lines go to stderr.
  std::string ScrapeText() {
    std::lock_guard<std::mutex> lock(mu_);
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::string> log;
    live::ScanStats stats = collector_.Scan(WallNowNs(), &log);
    stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const std::string& line : log)
      std::fprintf(stderr, "flightrec exporter: %s\n", line.c_str());
    std::string out;
    collector_.Render(stats, &out);
    return out;
  }

 private:
  std::mutex mu_;
  live::Collector collector_;
};

// Writes `text` to `path` through a temporary file in the same directory and
// a rename, so that a reader (node_exporter) never sees a partial file. The
// temporary is created afresh (O_EXCL|O_NOFOLLOW, after removing whatever
// has its name): never written through a symlink planted there. 0644 less
// the umask, as node_exporter (another user) reads it.
bool WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp." + std::to_string(getpid());
  unlink(tmp.c_str());
  const int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  FILE* f = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (f == nullptr) {
    if (fd >= 0) close(fd);
    std::fprintf(stderr, "flightrec exporter: %s: cannot write\n", tmp.c_str());
    return false;
  }
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "flightrec exporter: %s: cannot write\n", path.c_str());
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

bool SplitListen(const std::string& listen, std::string* host, int* port) {
  const size_t colon = listen.rfind(':');
  if (colon == std::string::npos || colon == 0) return false;
  *host = listen.substr(0, colon);
  if (host->size() > 2 && host->front() == '[' && host->back() == ']') {
    *host = host->substr(1, host->size() - 2);
  }
  try {
    size_t used = 0;
    *port = std::stoi(listen.substr(colon + 1), &used);
    return used == listen.size() - colon - 1 && *port >= 0 && *port <= 65535;
  } catch (const std::exception&) {
    return false;
  }
}

int Run(const ExporterArgs& args) {
  Exporter exporter(args.dirs, args.detail == "node" ? live::Detail::kNode : live::Detail::kRank);
  if (args.once) {
    const std::string text = exporter.ScrapeText();
    if (args.textfile.empty()) {
      std::fwrite(text.data(), 1, text.size(), stdout);
      return kExitOk;
    }
    return WriteAtomically(args.textfile, text) ? kExitOk : kExitError;
  }
  StopSignal stop;  // before the server's threads, which inherit its mask
  std::unique_ptr<ExporterServer> server;
  if (!args.listen.empty()) {
    std::string host;
    int port = 0;
    if (!SplitListen(args.listen, &host, &port)) {
      std::fprintf(stderr, "flightrec exporter: --listen %s: expected ADDR:PORT\n",
                   args.listen.c_str());
      return kExitError;
    }
    ServerLimits limits;
    limits.max_connections = args.max_connections;
    limits.request_timeout =
        std::chrono::milliseconds(static_cast<int64_t>(args.read_timeout_s * 1000));
    server.reset(new ExporterServer(limits));
    std::string mode = "http";
    if (!args.web_config_file.empty()) {
      // Owned by the running user (or --trust-group's members), as the
      // rings are: it holds the password hashes and names the key.
      WebConfig cfg;
      std::string error;
      if (!LoadWebConfig(args.web_config_file, CommandTrust(), &cfg, &error) ||
          (cfg.tls && !server->EnableTls(cfg, &error))) {
        std::fprintf(stderr, "flightrec exporter: --web.config.file: %s\n", error.c_str());
        return kExitError;
      }
      server->EnableBasicAuth(cfg.users);
      if (cfg.tls) mode = "https";
      if (!cfg.users.empty()) mode += ", basic auth";
    }
    server->Get("/metrics", [&exporter](const httplib::Request&, httplib::Response& res) {
      res.set_content(exporter.ScrapeText(), "text/plain; version=0.0.4; charset=utf-8");
    });
    server->Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("flightrec exporter: metrics at /metrics\n", "text/plain");
    });
    const int bound = server->Bind(host, port);
    if (bound < 0) {
      std::fprintf(stderr, "flightrec exporter: cannot listen on %s\n", args.listen.c_str());
      return kExitError;
    }
    std::printf("flightrec exporter: listening on %s:%d (%s)\n", host.c_str(), bound, mode.c_str());
    std::fflush(stdout);
  }
  std::thread serving;
  std::atomic<bool> served{false};
  if (server != nullptr) {
    serving = std::thread([&server, &served] {
      server->listen_after_bind();
      served.store(true, std::memory_order_release);  // pairs with the acquire load below
    });
  }
  // This thread writes the textfile every interval (or only waits) until
  // a stop signal; a write in progress is finished first, so the rename's
  // temporary file never stays behind.
  const std::chrono::milliseconds interval(static_cast<int64_t>(args.interval_s * 1000));
  do {
    if (!args.textfile.empty()) WriteAtomically(args.textfile, exporter.ScrapeText());
  } while (!stop.WaitFor(interval));
  if (server != nullptr) {
    // stop() does nothing before listen_after_bind has started running.
    // The acquire pairs with the release store in the serving thread.
    while (!server->is_running() && !served.load(std::memory_order_acquire)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    server->stop();
    serving.join();
  }
  std::fprintf(stderr, "flightrec exporter: stopped by %s\n", stop.SignalName().c_str());
  return kExitOk;
}

}  // namespace

void AddExporterCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<ExporterArgs>();
  CLI::App* cmd = app.add_subcommand(
      "exporter",
      "Serve Prometheus metrics of the rings under DIR... (--listen) and/or write them to a "
      "node_exporter textfile (--textfile); docs/monitoring.md");
  cmd->add_option("dirs", args->dirs, "directories holding ring files (and dumps)")->required();
  CLI::Option* listen = cmd->add_option(
      "--listen", args->listen,
      "serve GET /metrics on ADDR:PORT (port 0: any free port, printed on stdout); default "
      "127.0.0.1:9877 unless only --textfile or --once is given");
  cmd->add_option("--web.config.file", args->web_config_file,
                  "TLS and basic auth for --listen: a Prometheus exporter-toolkit web config "
                  "file (tls_server_config, basic_auth_users)");
  cmd->add_option("--web.max-connections", args->max_connections,
                  "connections served at once (default 64); one more evicts the one that has "
                  "waited longest for a request")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--web.read-timeout", args->read_timeout_s,
                  "seconds a request (and a TLS handshake) may take to arrive (default 5)")
      ->check(CLI::Range(0.1, 300.0));
  cmd->add_option("--textfile", args->textfile,
                  "write the metrics to this file every --interval (atomic rename); name it "
                  "*.prom for node_exporter's textfile collector");
  cmd->add_option("--interval", args->interval_s, "seconds between textfile writes (default 15)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--detail", args->detail,
                  "rank (default): every series per communicator and rank; node: per rank only "
                  "what the alert rules compare, the rest summed per node and communicator")
      ->check(CLI::IsMember({"rank", "node"}));
  cmd->add_flag("--once", args->once,
                "scan once, write the textfile (or print the metrics on stdout) and exit");
  cmd->callback([args, exit_code, listen]() {
    if (listen->count() == 0 && args->textfile.empty() && !args->once) {
      args->listen = kDefaultListen;
    }
    if (listen->count() != 0 && args->listen.empty()) {
      std::fprintf(stderr, "flightrec exporter: --listen needs ADDR:PORT\n");
      *exit_code = kExitError;
      return;
    }
    if (!args->web_config_file.empty() && args->listen.empty()) {
      std::fprintf(stderr, "flightrec exporter: --web.config.file is for --listen\n");
      *exit_code = kExitError;
      return;
    }
    signal(SIGPIPE, SIG_IGN);
    *exit_code = Run(*args);
  });
}

}  // namespace cli
}  // namespace flightrec

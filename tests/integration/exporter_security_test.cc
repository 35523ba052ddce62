// `flightrec exporter` fit to expose (docs/monitoring.md "Exposing the
// exporter"), with real clients on loopback: on its defaults it listens on
// 127.0.0.1:9877 only; 64 clients that send half a request and stall, 64
// that send nothing and a few that trickle a byte at a time do not keep a
// scrape out, and every one of them is closed by the request deadline;
// TLS and basic auth from an exporter-toolkit web config file, checked with
// curl (the right password gets the metrics, a wrong or missing one 401,
// plain HTTP on the TLS port nothing), client certificates when required;
// a web config file with an unknown key, a bad hash, a world-readable key,
// a symlink or another owner is refused with a reason naming it; a FIFO
// named *.ring and a ring of another user among the rings are skipped with
// one log line each, never hang a scrape, and SIGTERM still stops the
// exporter at once. Waits are liveness bounds; the timing assertions are
// the point of the slow-client tests: they widen with testing::TimeScale()
// (sanitizers, load) up to a cap below what a failure takes.
#include <arpa/inet.h>
#include <errno.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

using Clock = std::chrono::steady_clock;

std::string Cli() { return "'" + BuildDir() + "/bin/flightrec'"; }
std::string Q(const std::string& s) { return "'" + s + "'"; }

// A known bcrypt vector (OpenBSD's test suite): password "U*U".
const char kHash2a[] = "$2a$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";
// The same as htpasswd -B writes it ($2y$).
const char kHash2y[] = "$2y$05$CCCCCCCCCCCCCCCCCCCCC.E5YPO9kmyuRGyh0XouQYb4YMJKvyOeW";

double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// An exporter started in the background with its stdout/stderr in `dir`,
// and the port of its "listening on" line.
struct Exporter {
  Exporter(const std::string& dir, const std::string& args, bool listens = true)
      : dir(dir),
        proc(Cli() + " exporter " + args + " >" + Q(dir + "/exporter.out") + " 2>" +
             Q(dir + "/exporter.err")) {
    if (!listens) return;
    const std::regex listening("listening on ([0-9.]+):([0-9]+) \\(([^)]*)\\)");
    std::smatch m;
    for (int i = 0; i < 600 && port <= 0 && proc.running(); ++i) {
      const std::string out = ReadText(dir + "/exporter.out");
      if (std::regex_search(out, m, listening)) {
        host = m[1];
        port = std::stoi(m[2]);
        mode = m[3];
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  std::string err() const { return ReadText(dir + "/exporter.err"); }

  std::string dir;
  Spawned proc;
  std::string host;
  int port = -1;
  std::string mode;
};

// A loopback TCP connection (blocking connect), or -1.
int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

// Whether the server has closed `fd` (EOF or reset), waiting at most
// until `deadline`. Bytes it sent first (a 400 or 408 answer) are read
// past.
bool ClosedByServer(int fd, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    struct pollfd p = {fd, POLLIN, 0};
    const int r = poll(&p, 1, left > 0 ? static_cast<int>(left) : 0);
    if (r <= 0) return false;
    char buf[512];
    const ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) return true;
  }
}

struct Curl {
  int status = -1;   // curl's exit status
  std::string code;  // the HTTP status, "000" when there was none
  std::string body;
  std::string headers;
};

// curl (no proxy, 10 s at most) with `args` on `url`.
Curl RunCurl(const std::string& dir, const std::string& args, const std::string& url) {
  Curl c;
  const std::string body = dir + "/curl.body", headers = dir + "/curl.headers",
                    code = dir + "/curl.code";
  RunShell("rm -f " + Q(body) + " " + Q(headers) + " " + Q(code));
  c.status = RunShell("curl --noproxy '*' -sS --max-time 10 " + args + " -o " + Q(body) + " -D " +
                      Q(headers) + " -w '%{http_code}' " + Q(url) + " >" + Q(code) + " 2>>" +
                      Q(dir + "/curl.err"));
  c.code = ReadText(code);
  c.body = ReadText(body);
  c.headers = ReadText(headers);
  return c;
}

class ExporterSecurity : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    job_ = new EmuJob(RunEmu("exporter-security", "--ranks 2 --tp 2 --ops 100 --job-id xsec"));
  }
  static void TearDownTestSuite() {
    RunShell("rm -rf " + Q(job_->dir));
    delete job_;
    job_ = nullptr;
  }
  void SetUp() override {
    ASSERT_EQ(job_->status, 0) << job_->stderr_text;
    ASSERT_FALSE(ListFiles(job_->ring_dir, ".ring").empty());
    dir_ = MakeTempDir("exporter-security");
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    if (!HasFailure()) RunShell("rm -rf " + Q(dir_));
  }

  // A self-signed certificate for 127.0.0.1 (cert.pem, key.pem 0600).
  void MakeServerCert() {
    ASSERT_EQ(RunShell("cd " + Q(dir_) +
                       " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                       "-nodes -keyout key.pem -out cert.pem -days 2 -subj /CN=flightrec-test "
                       "-addext subjectAltName=IP:127.0.0.1 2>openssl.err && chmod 600 key.pem"),
              0)
        << ReadText(dir_ + "/openssl.err");
  }

  static EmuJob* job_;
  std::string dir_;
};

EmuJob* ExporterSecurity::job_ = nullptr;

TEST_F(ExporterSecurity, DefaultsListenOnLoopbackPort9877Only) {
  Exporter ex(dir_, Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << "no listening line (is port 9877 taken on this machine?): " << ex.err();
  EXPECT_EQ(ex.host, "127.0.0.1");
  EXPECT_EQ(ex.port, 9877);
  EXPECT_EQ(ex.mode, "http");
  // The kernel's view: one listening socket on port 9877 of this process's
  // network namespace, bound to 127.0.0.1, none on any other address.
  int loopback = 0, other = 0;
  for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
    std::ifstream in(table);
    std::string line;
    std::getline(in, line);  // header
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      std::string slot, local, remote, state;
      fields >> slot >> local >> remote >> state;
      if (state != "0A") continue;  // TCP_LISTEN
      const size_t colon = local.rfind(':');
      if (colon == std::string::npos || local.substr(colon + 1) != "2695") continue;  // 9877
      if (local.substr(0, colon) == "0100007F") {
        ++loopback;
      } else {
        ++other;
      }
    }
  }
  EXPECT_EQ(loopback, 1);
  EXPECT_EQ(other, 0) << "port 9877 listened on beyond 127.0.0.1";
  // Another address of this host does not answer.
  struct ifaddrs* ifs = nullptr;
  ASSERT_EQ(getifaddrs(&ifs), 0);
  for (struct ifaddrs* i = ifs; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    sockaddr_in a = *reinterpret_cast<sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a.sin_addr.s_addr) >> 24) == 127) continue;
    a.sin_port = htons(9877);
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    errno = 0;
    EXPECT_NE(connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0)
        << "port 9877 answers on " << inet_ntoa(a.sin_addr);
    EXPECT_EQ(errno, ECONNREFUSED) << inet_ntoa(a.sin_addr);
    close(fd);
  }
  freeifaddrs(ifs);
  httplib::Client c("127.0.0.1", 9877);
  auto res = c.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_NE(res->body.find("flightrec_build_info"), std::string::npos);
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();

  // --textfile alone opens no port.
  const std::string sub = dir_ + "/textfile";
  ASSERT_EQ(mkdir(sub.c_str(), 0700), 0);
  Exporter textfile_only(
      sub, "--textfile " + Q(sub + "/flightrec.prom") + " --interval 0.2 " + Q(job_->ring_dir),
      false);
  ASSERT_TRUE(textfile_only.proc.WaitBlocks(SIGTERM, 30)) << textfile_only.err();
  EXPECT_TRUE(ReadText(sub + "/exporter.out").empty()) << ReadText(sub + "/exporter.out");
  EXPECT_EQ(textfile_only.proc.Stop(SIGTERM, 10), 0) << textfile_only.err();
}

TEST_F(ExporterSecurity, SlowClientsNeitherKeepAScrapeOutNorHoldTheirConnections) {
  Exporter ex(dir_, "--listen 127.0.0.1:0 --web.read-timeout 1 " + Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << ex.err();
  // 64 clients send half a request line and stall, 64 send nothing.
  std::vector<int> stalled;
  for (int i = 0; i < 128; ++i) {
    const int fd = Connect(ex.port);
    ASSERT_GE(fd, 0) << "connection " << i << ": " << strerror(errno);
    if (i % 2 == 0) {
      ASSERT_EQ(send(fd, "GET /metr", 9, MSG_NOSIGNAL), 9);
    }
    stalled.push_back(fd);
  }
  // The bounds below tell "answered at once" from "waited behind the slow
  // clients" (their 1 s deadlines, a batch of the 128 at a time: many
  // seconds) and "closed at the request deadline" from "kept while it
  // sends" (30 s); they widen with testing::TimeScale() (sanitizers, load),
  // capped well below what a failure takes.
  const double scale = testing::TimeScale();
  const double answer_bound = std::min(2.0 * scale, 8.0);
  const double trickle_bound = std::min(4.0 * scale, 15.0);
  // 4 clients trickle a request, a byte every 100 ms, for as long as the
  // server takes them.
  std::atomic<bool> stop{false};
  std::vector<double> trickle_closed_after(4, -1);
  std::vector<std::thread> tricklers;
  for (int t = 0; t < 4; ++t) {
    tricklers.emplace_back([&, t] {
      const int fd = Connect(ex.port);
      if (fd < 0) return;
      const auto t0 = Clock::now();
      const std::string req = "GET /metrics HTTP/1.1\r\nX-Padding: " + std::string(4000, 'a');
      for (size_t i = 0; !stop.load() && Since(t0) < 30; ++i) {
        if (send(fd, &req[i % req.size()], 1, MSG_NOSIGNAL) != 1 ||
            ClosedByServer(fd, Clock::now() + std::chrono::milliseconds(100))) {
          trickle_closed_after[t] = Since(t0);
          break;
        }
      }
      close(fd);
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // Real scrapes, one after another: each answered at once.
  for (int i = 0; i < 3; ++i) {
    httplib::Client c("127.0.0.1", ex.port);
    c.set_connection_timeout(5);
    c.set_read_timeout(5);
    const auto t0 = Clock::now();
    auto res = c.Get("/metrics");
    const double took = Since(t0);
    ASSERT_TRUE(res) << "scrape " << i << ": " << httplib::to_string(res.error()) << "\n"
                     << ex.err();
    EXPECT_EQ(res->status, 200);
    EXPECT_NE(res->body.find("flightrec_build_info"), std::string::npos);
    EXPECT_NE(res->body.find("flightrec_exporter_rings 2"), std::string::npos) << res->body;
    EXPECT_LT(took, answer_bound) << "scrape " << i << " waited behind the slow clients";
  }
  // Every stalled client is closed by the server (evicted, or at its 1 s
  // request deadline), the tricklers too although they keep sending.
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int>(1000 * trickle_bound));
  int still_open = 0;
  for (int fd : stalled) {
    if (!ClosedByServer(fd, deadline)) ++still_open;
    close(fd);
  }
  EXPECT_EQ(still_open, 0) << "stalled connections the server kept open";
  for (std::thread& t : tricklers) t.join();
  stop = true;
  for (int t = 0; t < 4; ++t) {
    EXPECT_GE(trickle_closed_after[t], 0) << "trickler " << t << " never closed";
    EXPECT_LT(trickle_closed_after[t], trickle_bound) << "trickler " << t;
  }
  // Still serving, and stopped at once.
  httplib::Client c("127.0.0.1", ex.port);
  auto res = c.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const auto t0 = Clock::now();
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
  EXPECT_LT(Since(t0), std::min(3.0 * scale, 8.0));
}

TEST_F(ExporterSecurity, SlowTlsClientsNeitherKeepAScrapeOutNorDelaySigterm) {
  MakeServerCert();
  WriteText(dir_ + "/web.yml",
            "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
            "basic_auth_users:\n  prometheus: " +
                std::string(kHash2y) + "\n");
  // Stalled handshakes hold their connection 10 s: longer than any bound below.
  Exporter ex(dir_, "--listen 127.0.0.1:0 --web.read-timeout 10 --web.config.file " +
                        Q(dir_ + "/web.yml") + " " + Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << ex.err();
  ASSERT_TRUE(ex.proc.WaitBlocks(SIGTERM, 30));
  // 64 clients send the first bytes of a TLS ClientHello (a record header
  // announcing 512 bytes) and stall, 64 send nothing.
  std::vector<int> stalled;
  for (int i = 0; i < 128; ++i) {
    const int fd = Connect(ex.port);
    ASSERT_GE(fd, 0) << "connection " << i << ": " << strerror(errno);
    if (i % 2 == 0) {
      ASSERT_EQ(send(fd, "\x16\x03\x01\x02\x00\x01", 6, MSG_NOSIGNAL), 6);
    }
    stalled.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // As in SlowClients... above: "at once", widened under sanitizers and load.
  const double bound = std::min(3.0 * testing::TimeScale(), 8.0);
  const std::string url = "https://127.0.0.1:" + std::to_string(ex.port) + "/metrics";
  for (int i = 0; i < 3; ++i) {
    const auto t0 = Clock::now();
    const Curl ok =
        RunCurl(dir_, "--cacert " + Q(dir_ + "/cert.pem") + " -u 'prometheus:U*U'", url);
    EXPECT_EQ(ok.code, "200") << ReadText(dir_ + "/curl.err");
    EXPECT_NE(ok.body.find("flightrec_exporter_rings 2"), std::string::npos);
    EXPECT_LT(Since(t0), bound) << "scrape " << i << " waited behind the slow clients";
  }
  // Stopped at once although the stalled handshakes have seconds left.
  const auto t0 = Clock::now();
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
  EXPECT_LT(Since(t0), bound);
  for (int fd : stalled) close(fd);
}

// Sends `request` on a new connection and reads until the server closes
// it (at most 5 s): what it answered.
std::string AnswerTo(int port, const std::string& request) {
  const int fd = Connect(port);
  if (fd < 0) return "(no connection)";
  send(fd, request.data(), request.size(), MSG_NOSIGNAL);
  std::string answer;
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  for (;;) {
    struct pollfd p = {fd, POLLIN, 0};
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0 || poll(&p, 1, static_cast<int>(left)) <= 0) {
      answer += "(still open)";
      break;
    }
    char buf[4096];
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    answer.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return answer;
}

TEST_F(ExporterSecurity, OversizedRequestsAreRefusedAndTheirConnectionsClosed) {
  Exporter ex(dir_, "--listen 127.0.0.1:0 " + Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << ex.err();
  std::string headers = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 400; ++i)
    headers += "X-Pad-" + std::to_string(i) + ": " + std::string(100, 'b') + "\r\n";
  headers += "\r\n";
  const std::string big_headers = AnswerTo(ex.port, headers);
  EXPECT_EQ(big_headers.rfind("HTTP/1.1 400 ", 0), 0u) << big_headers.substr(0, 200);
  EXPECT_EQ(big_headers.find("(still open)"), std::string::npos);
  EXPECT_EQ(big_headers.find("flightrec_"), std::string::npos);
  const std::string big_body =
      AnswerTo(ex.port, "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" +
                            std::string(50000, 'x'));
  EXPECT_EQ(big_body.rfind("HTTP/1.1 413 ", 0), 0u) << big_body.substr(0, 200);
  EXPECT_EQ(big_body.find("(still open)"), std::string::npos);
  // Keep-alive still works for well-formed requests.
  const std::string two = AnswerTo(ex.port,
                                   "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"
                                   "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  size_t answers = 0;
  for (size_t at = two.find("HTTP/1.1 200 "); at != std::string::npos;
       at = two.find("HTTP/1.1 200 ", at + 1)) {
    ++answers;
  }
  EXPECT_EQ(answers, 2u) << two.substr(0, 300);
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
}

TEST_F(ExporterSecurity, ServesTlsWithBasicAuthFromAWebConfigFile) {
  MakeServerCert();
  WriteText(dir_ + "/web.yml",
            "# flightrec exporter, test\n"
            "tls_server_config:\n"
            "  cert_file: cert.pem   # relative to this file\n"
            "  key_file: '" +
                dir_ +
                "/key.pem'\n"
                "  min_version: TLS12\n"
                "basic_auth_users:\n"
                "  prometheus: " +
                std::string(kHash2y) +
                "\n"
                "  \"other\": '" +
                std::string(kHash2a) + "'\n");
  Exporter ex(dir_, "--listen 127.0.0.1:0 --web.config.file " + Q(dir_ + "/web.yml") + " " +
                        Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << ex.err();
  EXPECT_EQ(ex.mode, "https, basic auth");
  const std::string url = "https://127.0.0.1:" + std::to_string(ex.port) + "/metrics";
  const std::string ca = "--cacert " + Q(dir_ + "/cert.pem") + " ";

  for (const char* user : {"prometheus", "other", "prometheus"}) {
    SCOPED_TRACE(user);
    const Curl ok = RunCurl(dir_, ca + "-u '" + std::string(user) + ":U*U'", url);
    EXPECT_EQ(ok.status, 0) << ReadText(dir_ + "/curl.err");
    EXPECT_EQ(ok.code, "200");
    EXPECT_NE(ok.body.find("flightrec_build_info"), std::string::npos);
    EXPECT_NE(ok.body.find("flightrec_exporter_rings 2"), std::string::npos) << ok.body;
  }
  for (const std::string& auth :
       {std::string("-u 'prometheus:U*V'"), std::string("-u 'nobody:U*U'"),
        std::string("-u 'prometheus:'"), std::string("")}) {
    SCOPED_TRACE(auth);
    const Curl denied = RunCurl(dir_, ca + auth, url);
    EXPECT_EQ(denied.status, 0) << ReadText(dir_ + "/curl.err");
    EXPECT_EQ(denied.code, "401");
    EXPECT_NE(denied.headers.find("WWW-Authenticate: Basic realm="), std::string::npos)
        << denied.headers;
    EXPECT_EQ(denied.body.find("flightrec_"), std::string::npos);
  }
  // Plain HTTP on the TLS port: no HTTP answer at all.
  const Curl plain = RunCurl(dir_, "-u 'prometheus:U*U'",
                             "http://127.0.0.1:" + std::to_string(ex.port) + "/metrics");
  EXPECT_NE(plain.status, 0);
  EXPECT_EQ(plain.code, "000");
  EXPECT_EQ(plain.body.find("flightrec_"), std::string::npos);
  // A client that does not trust the certificate does not talk to it.
  const Curl untrusted = RunCurl(dir_, "-u 'prometheus:U*U'", url);
  EXPECT_NE(untrusted.status, 0);
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
}

TEST_F(ExporterSecurity, RequiresVerifiedClientCertificatesWhenConfigured) {
  MakeServerCert();
  ASSERT_EQ(RunShell("cd " + Q(dir_) +
                     " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                     "-nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=clients-ca 2>>openssl.err"
                     " && openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
                     "-keyout client.key -out client.csr -subj /CN=prometheus 2>>openssl.err"
                     " && openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key "
                     "-CAcreateserial -out client.pem -days 2 2>>openssl.err"
                     " && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 "
                     "-nodes -keyout rogue.key -out rogue.pem -days 2 -subj /CN=prometheus "
                     "2>>openssl.err"),
            0)
      << ReadText(dir_ + "/openssl.err");
  WriteText(dir_ + "/web.yml",
            "tls_server_config:\n"
            "  cert_file: cert.pem\n"
            "  key_file: key.pem\n"
            "  client_auth_type: RequireAndVerifyClientCert\n"
            "  client_ca_file: ca.pem\n");
  Exporter ex(dir_, "--listen 127.0.0.1:0 --web.config.file " + Q(dir_ + "/web.yml") + " " +
                        Q(job_->ring_dir));
  ASSERT_GT(ex.port, 0) << ex.err();
  EXPECT_EQ(ex.mode, "https");
  const std::string url = "https://127.0.0.1:" + std::to_string(ex.port) + "/metrics";
  const std::string ca = "--cacert " + Q(dir_ + "/cert.pem") + " ";
  const Curl ok = RunCurl(
      dir_, ca + "--cert " + Q(dir_ + "/client.pem") + " --key " + Q(dir_ + "/client.key"), url);
  EXPECT_EQ(ok.status, 0) << ReadText(dir_ + "/curl.err");
  EXPECT_EQ(ok.code, "200");
  EXPECT_NE(ok.body.find("flightrec_build_info"), std::string::npos);
  const Curl none = RunCurl(dir_, ca, url);
  EXPECT_NE(none.status, 0);
  EXPECT_NE(none.code, "200");
  const Curl rogue = RunCurl(
      dir_, ca + "--cert " + Q(dir_ + "/rogue.pem") + " --key " + Q(dir_ + "/rogue.key"), url);
  EXPECT_NE(rogue.status, 0);
  EXPECT_NE(rogue.code, "200");
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
}

// Runs the exporter on `config` and returns its stderr; it must exit 2
// before listening.
std::string RefusedConfig(const std::string& dir, const std::string& config,
                          const std::string& rings) {
  const std::string err = dir + "/refused.err";
  const int rc = RunShell(Cli() + " exporter --listen 127.0.0.1:0 --web.config.file " + Q(config) +
                          " " + Q(rings) + " >/dev/null 2>" + Q(err));
  EXPECT_EQ(rc, 2) << ReadText(err);
  return ReadText(err);
}

TEST_F(ExporterSecurity, RefusesAWebConfigItCannotTrustOrRead) {
  MakeServerCert();
  const std::string cfg = dir_ + "/web.yml";
  WriteText(cfg, "basic_auth_users:\n  prometheus: " + std::string(kHash2y) +
                     "\nhttp_server_config:\n  http2: true\n");
  EXPECT_NE(
      RefusedConfig(dir_, cfg, job_->ring_dir).find(cfg + ":3: unknown key 'http_server_config'"),
      std::string::npos);
  WriteText(cfg,
            "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n"
            "  cipher_suites: [TLS_AES_128_GCM_SHA256]\n");
  EXPECT_NE(RefusedConfig(dir_, cfg, job_->ring_dir)
                .find(cfg + ":4: unknown key 'cipher_suites' in tls_server_config"),
            std::string::npos);
  WriteText(cfg, "basic_auth_users:\n  prometheus: secret\n");
  EXPECT_NE(RefusedConfig(dir_, cfg, job_->ring_dir)
                .find(cfg + ":2: the password of user 'prometheus' is not a bcrypt hash"),
            std::string::npos);
  WriteText(cfg, "tls_server_config:\n\tcert_file: cert.pem\n");
  EXPECT_NE(RefusedConfig(dir_, cfg, job_->ring_dir).find(cfg + ":2: a tab in the indentation"),
            std::string::npos);
  WriteText(cfg, "tls_server_config:\n  cert_file: cert.pem\n");
  EXPECT_NE(
      RefusedConfig(dir_, cfg, job_->ring_dir).find("cert_file and key_file are both required"),
      std::string::npos);
  WriteText(cfg, "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n");
  ASSERT_EQ(chmod((dir_ + "/key.pem").c_str(), 0644), 0);
  EXPECT_NE(RefusedConfig(dir_, cfg, job_->ring_dir)
                .find("key.pem: a private key every user can read or write"),
            std::string::npos);
  ASSERT_EQ(chmod((dir_ + "/key.pem").c_str(), 0600), 0);
  // Never through a symlink.
  ASSERT_EQ(symlink(cfg.c_str(), (dir_ + "/link.yml").c_str()), 0);
  EXPECT_NE(RefusedConfig(dir_, dir_ + "/link.yml", job_->ring_dir).find("symbolic link"),
            std::string::npos);
}

TEST_F(ExporterSecurity, RefusesAWebConfigOfAnotherUser) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give the file to another user (uid 4242)";
  }
  const std::string cfg = dir_ + "/web.yml";
  WriteText(cfg, "basic_auth_users:\n  prometheus: " + std::string(kHash2y) + "\n");
  ASSERT_EQ(chown(cfg.c_str(), 4242, 4242), 0);
  EXPECT_NE(RefusedConfig(dir_, cfg, job_->ring_dir).find("not owned by you: uid 4242"),
            std::string::npos);
}

// The exporter on a copy of the job's rings plus `extra` planted there;
// three scrapes answered at once, each skipped file logged once, SIGTERM
// stops it at once.
void ScrapesPastPlantedRings(const std::string& dir, const std::string& rings,
                             const std::vector<std::pair<std::string, std::string>>& planted) {
  Exporter ex(dir, "--listen 127.0.0.1:0 " + Q(rings));
  ASSERT_GT(ex.port, 0) << ex.err();
  ASSERT_TRUE(ex.proc.WaitBlocks(SIGTERM, 30));
  for (int i = 0; i < 3; ++i) {
    httplib::Client c("127.0.0.1", ex.port);
    c.set_read_timeout(5);
    const auto t0 = Clock::now();
    auto res = c.Get("/metrics");
    ASSERT_TRUE(res) << "scrape " << i << ": " << httplib::to_string(res.error()) << "\n"
                     << ex.err();
    EXPECT_EQ(res->status, 200);
    EXPECT_LT(Since(t0), 3.0);
    EXPECT_NE(res->body.find("flightrec_exporter_rings 2"), std::string::npos) << res->body;
    EXPECT_NE(res->body.find("flightrec_exporter_skipped_files{reason=\"unreadable\"} " +
                             std::to_string(planted.size())),
              std::string::npos)
        << res->body;
  }
  const auto t0 = Clock::now();
  EXPECT_EQ(ex.proc.Stop(SIGTERM, 10), 0) << ex.err();
  EXPECT_LT(Since(t0), 3.0);
  const std::string err = ex.err();
  for (const auto& [name, reason] : planted) {
    const std::string line = "skipped (unreadable): " + rings + "/" + name + ": " + reason;
    const size_t at = err.find(line);
    EXPECT_NE(at, std::string::npos) << err;
    if (at != std::string::npos) {
      EXPECT_EQ(err.find(line, at + 1), std::string::npos) << "logged more than once:\n" << err;
    }
  }
}

TEST_F(ExporterSecurity, AFifoAmongTheRingsIsSkippedAndNeverHangs) {
  const std::string rings = dir_ + "/rings";
  ASSERT_EQ(RunShell("mkdir -p " + Q(rings) + " && cp " + Q(job_->ring_dir) + "/*.ring " +
                     Q(rings) + "/"),
            0);
  ASSERT_EQ(mkfifo((rings + "/flightrec-xsec-planted-1.ring").c_str(), 0600), 0);
  ScrapesPastPlantedRings(dir_, rings, {{"flightrec-xsec-planted-1.ring", "not a regular file"}});
}

TEST_F(ExporterSecurity, ARingOfAnotherUserIsSkipped) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "needs root to give a ring to another user (uid 4242)";
  }
  const std::string rings = dir_ + "/rings";
  const std::vector<std::string> real = ListFiles(job_->ring_dir, ".ring");
  ASSERT_FALSE(real.empty());
  ASSERT_EQ(
      RunShell("mkdir -p " + Q(rings) + " && cp " + Q(job_->ring_dir) + "/*.ring " + Q(rings) +
               "/ && cp " + Q(real[0]) + " " + Q(rings + "/flightrec-xsec-planted-2.ring") +
               " && chown 4242:4242 " + Q(rings + "/flightrec-xsec-planted-2.ring")),
      0);
  ASSERT_EQ(mkfifo((rings + "/flightrec-xsec-planted-1.ring").c_str(), 0600), 0);
  ScrapesPastPlantedRings(dir_, rings,
                          {{"flightrec-xsec-planted-1.ring", "not a regular file"},
                           {"flightrec-xsec-planted-2.ring", "not owned by you: uid 4242"}});
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

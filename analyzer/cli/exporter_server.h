// The HTTP(S) server of `flightrec exporter --listen` (docs/monitoring.md
// "Exposing the exporter"): cpp-httplib's routing and request parsing over
// connections this class runs itself, so that no client can hold the
// server:
//
//  * one thread per connection (up to 2 * max_connections + 8 threads;
//    beyond, accepted connections wait for one in order), at most
//    `max_connections` connections served; one more evicts the one that
//    has waited longest without a complete, authorized request (idle
//    keep-alive, a TLS handshake or a request still arriving, a password
//    waiting for its check), so slow clients cannot keep a scrape out; with
//    every connection answering, the newcomer gets 503 (plain HTTP) or is
//    closed (TLS);
//  * a request must arrive whole within `request_timeout` of its first
//    byte and be at most `max_request_bytes` (else the connection ends); a
//    new connection has `request_timeout` for its TLS handshake and as long
//    for its first byte; a response must be taken within `write_timeout`;
//    an idle keep-alive connection is closed after `idle_timeout`, and any
//    connection after `max_requests` requests or after an answer to a
//    request that was not read whole;
//  * TLS (OpenSSL) and HTTP basic auth (bcrypt hashes) from a web config
//    file (web_config.h).
#ifndef FLIGHTREC_ANALYZER_CLI_EXPORTER_SERVER_H_
#define FLIGHTREC_ANALYZER_CLI_EXPORTER_SERVER_H_

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "analyzer/cli/web_config.h"

typedef struct ssl_ctx_st SSL_CTX;

namespace flightrec {
namespace cli {

struct ServerLimits {
  size_t max_connections = 64;
  std::chrono::milliseconds request_timeout{5000};
  std::chrono::milliseconds write_timeout{10000};
  std::chrono::milliseconds idle_timeout{30000};
  size_t max_requests = 100;         // per connection
  size_t max_request_bytes = 16384;  // request line, headers and body
};

// Basic auth against bcrypt hashes. A password that matched once is
// remembered as its SHA-256 so that each scrape does not pay bcrypt's cost;
// at most kMaxBcrypt checks run at once (a flood of guesses takes that
// many cores, no more; one that waits 5 s for its turn is refused).
class BasicAuth {
 public:
  explicit BasicAuth(std::map<std::string, std::string> users);
  bool enabled() const { return !users_.empty(); }
  // Whether the request's `Authorization: Basic ...` names a user whose
  // password matches.
  bool Allows(const httplib::Request& req);

 private:
  static constexpr int kMaxBcrypt = 2;
  bool Bcrypt(const std::string& password, const std::string& hash);

  std::map<std::string, std::string> users_;
  std::mutex mu_;
  std::map<std::string, std::string> accepted_;  // user -> SHA-256(user, password)
  std::mutex gate_mu_;
  std::condition_variable gate_cv_;
  int bcrypt_running_ = 0;
};

class ExporterServer : public httplib::Server {
 public:
  explicit ExporterServer(const ServerLimits& limits);
  ~ExporterServer() override;

  // Serves TLS with the certificate and key (and client checks) of `cfg`.
  // False with `error` (a file that cannot be read or used).
  bool EnableTls(const WebConfig& cfg, std::string* error);
  // Requires basic auth of every request when `users` is not empty.
  void EnableBasicAuth(const std::map<std::string, std::string>& users);

  // Binds `host`:`port` (0: any free port) with SO_REUSEADDR (not
  // SO_REUSEPORT: no other process can bind it beside us) and a listen
  // backlog of kListenBacklog; the bound port, or -1.
  int Bind(const std::string& host, int port);
  static constexpr int kListenBacklog = 512;

  // Ends every connection that is not answering a request, and every other
  // one once its answer is written; new connections are closed at once.
  // listen_after_bind() does it when stop() ends it.
  void CloseConnections();

  struct Conn;
  class Stream;
  class Threads;

 private:
  bool process_and_close_socket(socket_t sock) override;
  bool Admit(Conn* c);
  void Release(Conn* c);
  void SetState(Conn* c, int state);

  ServerLimits limits_;
  SSL_CTX* ctx_ = nullptr;
  std::unique_ptr<BasicAuth> auth_;
  std::mutex mu_;
  std::list<Conn*> conns_;
  bool closing_ = false;
  int listen_fd_ = -1;  // the listening socket, once made
};

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_EXPORTER_SERVER_H_

#include "analyzer/cli/exporter_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <system_error>
#include <thread>
#include <utility>

namespace flightrec {
namespace cli {
namespace {

using Clock = std::chrono::steady_clock;

enum State : int { kIdle = 0, kReading = 1, kAnswering = 2 };

// Waits until `fd` is ready for `events` (or has an error or hang-up), at
// most until `deadline`. False on timeout.
bool WaitFd(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    struct pollfd p = {fd, events, 0};
    const int r = poll(&p, 1, left > 1000000 ? 1000000 : static_cast<int>(left));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

std::string OpenSslError() {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(e, buf, sizeof(buf));
  return buf;
}

// Reads a PEM file holding a private key: a regular file (symbolic links
// are followed: certificate tools keep keys behind them) that not every
// user can read or write.
bool ReadKeyFile(const std::string& path, std::string* out, std::string* error) {
  const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    *error = path + ": cannot open: " + std::strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = false;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    *error = path + ": not a regular file";
  } else if ((st.st_mode & (S_IROTH | S_IWOTH)) != 0) {
    *error = path + ": a private key every user can read or write (chmod o-rw)";
  } else if (st.st_size > 1024 * 1024) {
    *error = path + ": larger than 1 MiB";
  } else {
    out->assign(static_cast<size_t>(st.st_size) + 1, '\0');
    size_t got = 0;
    for (;;) {
      const ssize_t n = read(fd, &(*out)[got], out->size() - got);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        ok = n == 0;
        break;
      }
      got += static_cast<size_t>(n);
      if (got == out->size()) break;  // grew while read: taken as read so far
    }
    out->resize(got);
    if (!ok) *error = path + ": cannot read";
  }
  close(fd);
  return ok;
}

int AcceptAnyCertificate(int /*preverify_ok*/, X509_STORE_CTX* /*ctx*/) { return 1; }

// Standard base64 (RFC 4648) with padding; false on anything else.
bool Base64Decode(const std::string& in, std::string* out) {
  if (in.size() % 4 != 0) return false;
  out->clear();
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    int v;
    if (c >= 'A' && c <= 'Z') {
      v = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      v = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      v = c - '0' + 52;
    } else if (c == '+') {
      v = 62;
    } else if (c == '/') {
      v = 63;
    } else if (c == '=' && i + 2 >= in.size()) {
      ++pad;
      continue;
    } else {
      return false;
    }
    if (pad != 0) return false;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return true;
}

std::string Sha256(const std::string& a, const std::string& b) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  const char zero = '\0';
  const bool ok =
      ctx != nullptr && EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) == 1 &&
      EVP_DigestUpdate(ctx, a.data(), a.size()) == 1 && EVP_DigestUpdate(ctx, &zero, 1) == 1 &&
      EVP_DigestUpdate(ctx, b.data(), b.size()) == 1 && EVP_DigestFinal_ex(ctx, md, &len) == 1;
  EVP_MD_CTX_free(ctx);
  return ok ? std::string(reinterpret_cast<char*>(md), len) : std::string();
}

// The connection being served on this thread (a connection lives on one
// thread from accept to close).
thread_local ExporterServer::Conn* t_conn = nullptr;

}  // namespace

struct ExporterServer::Conn {
  int fd = -1;
  int state = kIdle;
  Clock::time_point since = Clock::now();  // of `state`
  bool listed = false;                     // in conns_ (not evicted)
  bool close_after = false;                // the last answer ends the connection
};

// A connection's byte stream (plain or TLS) with the deadlines and the
// request size limit of ServerLimits.
class ExporterServer::Stream : public httplib::Stream {
 public:
  Stream(ExporterServer* server, Conn* conn, SSL* ssl)
      : server_(server), conn_(conn), fd_(conn->fd), ssl_(ssl) {}

  void BeginRequest() {
    read_deadline_ = Clock::now() + server_->limits_.request_timeout;
    budget_ = server_->limits_.max_request_bytes;
    writing_ = false;
  }

  // Waits until a request starts arriving (or the peer closes), at most
  // `timeout`. False on timeout.
  bool WaitRequest(std::chrono::milliseconds timeout) {
    if (pos_ < len_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
    return WaitFd(fd_, POLLIN, Clock::now() + timeout);
  }

  bool is_readable() const override {
    if (pos_ < len_ || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) return true;
    return WaitFd(fd_, POLLIN, read_deadline_);
  }
  bool is_writable() const override {
    return WaitFd(fd_, POLLOUT,
                  writing_ ? write_deadline_ : Clock::now() + server_->limits_.write_timeout);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (pos_ == len_) {
      if (budget_ == 0) {  // the request is too large
        conn_->close_after = true;
        return -1;
      }
      const size_t want = budget_ < sizeof(buf_) ? budget_ : sizeof(buf_);
      const ssize_t n = Fill(want);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
      budget_ -= len_;
    }
    const size_t n = size < len_ - pos_ ? size : len_ - pos_;
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!writing_) {
      writing_ = true;
      write_deadline_ = Clock::now() + server_->limits_.write_timeout;
      server_->SetState(conn_, kAnswering);
    }
    size_t done = 0;
    while (done < size) {
      if (ssl_ != nullptr) {
        const int chunk = size - done > (1 << 30) ? (1 << 30) : static_cast<int>(size - done);
        const int r = SSL_write(ssl_, ptr + done, chunk);
        if (r > 0) {
          done += static_cast<size_t>(r);
          continue;
        }
        const int e = SSL_get_error(ssl_, r);
        short events = e == SSL_ERROR_WANT_WRITE ? POLLOUT : e == SSL_ERROR_WANT_READ ? POLLIN : 0;
        if (events == 0 || !WaitFd(fd_, events, write_deadline_)) return -1;
      } else {
        const ssize_t r = send(fd_, ptr + done, size - done, MSG_NOSIGNAL);
        if (r > 0) {
          done += static_cast<size_t>(r);
          continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
          if (!WaitFd(fd_, POLLOUT, write_deadline_)) return -1;
          continue;
        }
        return -1;
      }
    }
    return static_cast<ssize_t>(size);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    Address(true, &ip, &port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    Address(false, &ip, &port);
  }
  socket_t socket() const override { return fd_; }

 private:
  ssize_t Fill(size_t want) {
    for (;;) {
      if (ssl_ != nullptr) {
        ERR_clear_error();
        const int r = SSL_read(ssl_, buf_, static_cast<int>(want));
        if (r > 0) return r;
        const int e = SSL_get_error(ssl_, r);
        if (e == SSL_ERROR_ZERO_RETURN) return 0;
        short events = e == SSL_ERROR_WANT_READ ? POLLIN : e == SSL_ERROR_WANT_WRITE ? POLLOUT : 0;
        if (events == 0 || !WaitFd(fd_, events, read_deadline_)) return -1;
      } else {
        const ssize_t r = recv(fd_, buf_, want, 0);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (!WaitFd(fd_, POLLIN, read_deadline_)) return -1;
      }
    }
  }

  void Address(bool remote, std::string* ip, int* port) const {
    struct sockaddr_storage a;
    socklen_t len = sizeof(a);
    ip->clear();
    *port = 0;
    const int r = remote ? getpeername(fd_, reinterpret_cast<sockaddr*>(&a), &len)
                         : getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len);
    if (r != 0) return;
    char text[INET6_ADDRSTRLEN] = {};
    if (a.ss_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(&a);
      inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
      *port = ntohs(in->sin_port);
    } else if (a.ss_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&a);
      inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
      *port = ntohs(in6->sin6_port);
    }
    *ip = text;
  }

  ExporterServer* server_;
  Conn* conn_;
  int fd_;
  SSL* ssl_;
  char buf_[4096];
  size_t pos_ = 0;
  size_t len_ = 0;
  size_t budget_ = 0;
  bool writing_ = false;
  Clock::time_point read_deadline_ = Clock::now();
  Clock::time_point write_deadline_ = Clock::now();
};

// httplib's task queue: each accepted connection gets a thread at once (up
// to twice max_connections threads; beyond, connections wait for a thread
// in order). shutdown() ends the connections and waits for every thread.
class ExporterServer::Threads : public httplib::TaskQueue {
 public:
  Threads(ExporterServer* server, size_t max_threads)
      : server_(server), max_threads_(max_threads) {}

  void enqueue(std::function<void()> fn) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (running_ >= max_threads_) {
      waiting_.push_back(std::move(fn));
      return;
    }
    ++running_;
    try {
      std::thread([this, first = fn]() mutable { Run(std::move(first)); }).detach();
    } catch (const std::system_error&) {
      // No thread to be had now: the connection waits for a running one,
      // or (none running) is answered on the accepting thread.
      if (--running_ != 0) {
        waiting_.push_back(std::move(fn));
        return;
      }
      lock.unlock();
      fn();
    }
  }

  void shutdown() override {
    server_->CloseConnections();
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait(lock, [this] { return running_ == 0; });
  }

 private:
  void Run(std::function<void()> fn) {
    for (;;) {
      fn();
      std::lock_guard<std::mutex> lock(mu_);
      if (waiting_.empty()) {
        if (--running_ == 0) idle_.notify_all();
        return;
      }
      fn = std::move(waiting_.front());
      waiting_.pop_front();
    }
  }

  ExporterServer* server_;
  size_t max_threads_;
  std::mutex mu_;
  std::condition_variable idle_;
  size_t running_ = 0;
  std::deque<std::function<void()>> waiting_;
};

BasicAuth::BasicAuth(std::map<std::string, std::string> users) : users_(std::move(users)) {}

bool BasicAuth::Bcrypt(const std::string& password, const std::string& hash) {
  {
    std::unique_lock<std::mutex> lock(gate_mu_);
    if (!gate_cv_.wait_for(lock, std::chrono::seconds(5),
                           [this] { return bcrypt_running_ < kMaxBcrypt; })) {
      return false;  // a flood of guesses: this one is refused unchecked
    }
    ++bcrypt_running_;
  }
  const bool match = BcryptMatches(password, hash);
  std::lock_guard<std::mutex> lock(gate_mu_);
  --bcrypt_running_;
  gate_cv_.notify_one();
  return match;
}

bool BasicAuth::Allows(const httplib::Request& req) {
  if (users_.empty()) return true;
  const std::string header = req.get_header_value("Authorization");
  if (header.size() < 6 || strncasecmp(header.c_str(), "Basic ", 6) != 0) return false;
  size_t at = 6;
  while (at < header.size() && header[at] == ' ') ++at;
  std::string decoded;
  if (!Base64Decode(header.substr(at), &decoded)) return false;
  const size_t colon = decoded.find(':');
  if (colon == std::string::npos) return false;
  const std::string user = decoded.substr(0, colon);
  const std::string password = decoded.substr(colon + 1);
  const auto it = users_.find(user);
  if (it == users_.end()) {
    // As slow as a wrong password of a known user.
    Bcrypt(password, users_.begin()->second);
    return false;
  }
  const std::string digest = Sha256(user, password);
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto seen = accepted_.find(user);
    if (!digest.empty() && seen != accepted_.end() && seen->second.size() == digest.size() &&
        CRYPTO_memcmp(seen->second.data(), digest.data(), digest.size()) == 0) {
      return true;
    }
  }
  if (!Bcrypt(password, it->second)) return false;
  std::lock_guard<std::mutex> lock(mu_);
  if (!digest.empty()) accepted_[user] = digest;
  return true;
}

ExporterServer::ExporterServer(const ServerLimits& limits) : limits_(limits) {
  if (limits_.max_connections == 0) limits_.max_connections = 1;
  const size_t max_threads = 2 * limits_.max_connections + 8;
  new_task_queue = [this, max_threads] { return new Threads(this, max_threads); };
  set_payload_max_length(limits_.max_request_bytes);
  // What the Keep-Alive response header announces.
  set_keep_alive_max_count(limits_.max_requests);
  set_keep_alive_timeout(
      std::chrono::duration_cast<std::chrono::seconds>(limits_.idle_timeout).count());
  // After an answer to a request that was not read whole (400, 408, 413,
  // 414, ...), what follows on the connection is not a request: end it.
  set_logger([](const httplib::Request&, const httplib::Response& res) {
    if (t_conn != nullptr && res.status >= 400 && res.status != 401 && res.status != 404) {
      t_conn->close_after = true;
    }
  });
  set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // The request is in. Until its password is checked the connection
    // stays evictable: guesses waiting for bcrypt never hold a slot.
    if (auth_ == nullptr || auth_->Allows(req)) {
      if (t_conn != nullptr) SetState(t_conn, kAnswering);
      return HandlerResponse::Unhandled;
    }
    res.status = 401;
    res.set_header("WWW-Authenticate", "Basic realm=\"flightrec exporter\"");
    res.set_content("Unauthorized\n", "text/plain");
    return HandlerResponse::Handled;
  });
}

ExporterServer::~ExporterServer() {
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
}

void ExporterServer::EnableBasicAuth(const std::map<std::string, std::string>& users) {
  if (!users.empty()) auth_.reset(new BasicAuth(users));
}

bool ExporterServer::EnableTls(const WebConfig& cfg, std::string* error) {
  ERR_clear_error();
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) {
    *error = "TLS: " + OpenSslError();
    return false;
  }
  auto fail = [&](const std::string& what) {
    *error = what;
    SSL_CTX_free(ctx);
    return false;
  };
  SSL_CTX_set_min_proto_version(ctx, cfg.min_version != 0 ? cfg.min_version : TLS1_2_VERSION);
  if (cfg.max_version != 0) SSL_CTX_set_max_proto_version(ctx, cfg.max_version);
  SSL_CTX_set_options(
      ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  SSL_CTX_set_mode(ctx, SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_CTX_use_certificate_chain_file(ctx, cfg.cert_file.c_str()) != 1) {
    return fail(cfg.cert_file + ": cannot use the certificate: " + OpenSslError());
  }
  std::string pem;
  if (!ReadKeyFile(cfg.key_file, &pem, error)) return fail(*error);
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  EVP_PKEY* key =
      bio != nullptr ? PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr) : nullptr;
  BIO_free(bio);
  OPENSSL_cleanse(&pem[0], pem.size());
  if (key == nullptr) return fail(cfg.key_file + ": not a PEM private key: " + OpenSslError());
  const bool used = SSL_CTX_use_PrivateKey(ctx, key) == 1;
  EVP_PKEY_free(key);
  if (!used || SSL_CTX_check_private_key(ctx) != 1) {
    return fail(cfg.key_file + ": does not match " + cfg.cert_file + ": " + OpenSslError());
  }
  if (!cfg.client_ca_file.empty()) {
    if (SSL_CTX_load_verify_locations(ctx, cfg.client_ca_file.c_str(), nullptr) != 1) {
      return fail(cfg.client_ca_file + ": cannot use the CA certificates: " + OpenSslError());
    }
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(cfg.client_ca_file.c_str());
    if (names != nullptr) SSL_CTX_set_client_CA_list(ctx, names);
  }
  switch (cfg.client_auth) {
    case ClientAuth::kNoClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nullptr);
      break;
    case ClientAuth::kRequestClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, AcceptAnyCertificate);
      break;
    case ClientAuth::kRequireAnyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                         AcceptAnyCertificate);
      break;
    case ClientAuth::kVerifyClientCertIfGiven:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
      break;
    case ClientAuth::kRequireAndVerifyClientCert:
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
      break;
  }
  if (ctx_ != nullptr) SSL_CTX_free(ctx_);
  ctx_ = ctx;
  return true;
}

int ExporterServer::Bind(const std::string& host, int port) {
  set_socket_options([this](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    listen_fd_ = sock;  // the last one tried is the one bound
  });
  const int bound = port == 0 ? bind_to_any_port(host) : (bind_to_port(host, port) ? port : -1);
  // httplib listens with a backlog of 5: a burst of connections would wait
  // for SYN retransmissions. listen() again only sets the backlog.
  if (bound >= 0 && listen_fd_ >= 0) ::listen(listen_fd_, kListenBacklog);
  return bound;
}

void ExporterServer::SetState(Conn* c, int state) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c->state != state) {
    c->state = state;
    c->since = Clock::now();
  }
}

bool ExporterServer::Admit(Conn* c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closing_) return false;
  if (conns_.size() >= limits_.max_connections) {
    // Evict the connection that has waited longest for a request.
    auto victim = conns_.end();
    for (auto it = conns_.begin(); it != conns_.end(); ++it) {
      if ((*it)->state == kAnswering) continue;
      if (victim == conns_.end() || (*it)->since < (*victim)->since) victim = it;
    }
    if (victim == conns_.end()) return false;
    shutdown((*victim)->fd, SHUT_RDWR);  // its thread sees the end and closes it
    (*victim)->listed = false;
    conns_.erase(victim);
  }
  c->listed = true;
  conns_.push_back(c);
  return true;
}

void ExporterServer::Release(Conn* c) {
  std::lock_guard<std::mutex> lock(mu_);
  if (c->listed) conns_.remove(c);
  c->listed = false;
}

void ExporterServer::CloseConnections() {
  std::lock_guard<std::mutex> lock(mu_);
  closing_ = true;
  for (Conn* c : conns_) {
    if (c->state != kAnswering) shutdown(c->fd, SHUT_RDWR);
  }
}

bool ExporterServer::process_and_close_socket(socket_t sock) {
  Conn conn;
  conn.fd = sock;
  const int flags = fcntl(sock, F_GETFL);
  if (flags < 0 || fcntl(sock, F_SETFL, flags | O_NONBLOCK) != 0 || !Admit(&conn)) {
    bool closing;
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing = closing_;
    }
    if (ctx_ == nullptr && !closing) {
      static const char kBusy[] =
          "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
      (void)!send(sock, kBusy, sizeof(kBusy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    shutdown(sock, SHUT_RDWR);
    close(sock);
    return false;
  }
  t_conn = &conn;
  bool ok = false;
  SSL* ssl = nullptr;
  bool handshake = true;
  if (ctx_ != nullptr) {
    ssl = SSL_new(ctx_);
    handshake = ssl != nullptr && SSL_set_fd(ssl, sock) == 1;
    const auto deadline = Clock::now() + limits_.request_timeout;
    while (handshake) {
      ERR_clear_error();
      const int r = SSL_accept(ssl);
      if (r == 1) break;
      const int e = SSL_get_error(ssl, r);
      const short events = e == SSL_ERROR_WANT_READ    ? POLLIN
                           : e == SSL_ERROR_WANT_WRITE ? POLLOUT
                                                       : 0;
      handshake = events != 0 && WaitFd(sock, events, deadline);
    }
  }
  if (handshake) {
    Stream strm(this, &conn, ssl);
    for (size_t n = 0; n < limits_.max_requests; ++n) {
      SetState(&conn, kIdle);
      bool closing;
      {
        std::lock_guard<std::mutex> lock(mu_);
        closing = closing_ || !conn.listed;
      }
      if (closing) break;
      if (!strm.WaitRequest(n == 0 ? limits_.request_timeout : limits_.idle_timeout)) break;
      SetState(&conn, kReading);
      strm.BeginRequest();
      bool closed = false;
      ok = process_request(strm, n + 1 == limits_.max_requests, closed, nullptr);
      if (!ok || closed || conn.close_after) break;
    }
  }
  if (ssl != nullptr) {
    if (handshake && ok) SSL_shutdown(ssl);  // one try: a close_notify, never a wait
    SSL_free(ssl);
  }
  Release(&conn);
  t_conn = nullptr;
  shutdown(sock, SHUT_RDWR);
  close(sock);
  return ok;
}

}  // namespace cli
}  // namespace flightrec

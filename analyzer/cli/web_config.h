// `flightrec exporter --web.config.file FILE`: the web configuration file
// Prometheus exporters share (prometheus/exporter-toolkit, "web
// configuration"), the subset flightrec serves (docs/monitoring.md
// "Exposing the exporter"):
//
//   tls_server_config:
//     cert_file: /etc/flightrec/exporter.crt   # relative: to FILE's directory
//     key_file: /etc/flightrec/exporter.key
//     client_auth_type: RequireAndVerifyClientCert   # optional
//     client_ca_file: /etc/flightrec/clients-ca.crt  # optional
//     min_version: TLS12                              # optional (TLS12, TLS13)
//     max_version: TLS13                              # optional
//   basic_auth_users:
//     prometheus: $2y$10$...   # bcrypt hash (htpasswd -nBC 10 "" | tr -d ':\n')
//
// The parser is strict: block mappings of plain or quoted scalars, two
// levels, `#` comments; any other key or YAML construct is an error naming
// the file and line. The file holds password hashes and key paths: it is
// read only when it is a regular file owned by the running user, root, or
// a member of the trusted group (--trust-group, NCCL_FLIGHTREC_GROUP),
// never through a symlink.
#ifndef FLIGHTREC_ANALYZER_CLI_WEB_CONFIG_H_
#define FLIGHTREC_ANALYZER_CLI_WEB_CONFIG_H_

#include <map>
#include <string>

#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace cli {

// exporter-toolkit's client_auth_type values (Go's tls.ClientAuthType).
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,
  kRequireAnyClientCert,
  kVerifyClientCertIfGiven,
  kRequireAndVerifyClientCert,
};

struct WebConfig {
  bool tls = false;  // tls_server_config given
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;
  ClientAuth client_auth = ClientAuth::kNoClientCert;
  int min_version = 0;                       // OpenSSL's TLS1_x_VERSION; 0: TLS 1.2
  int max_version = 0;                       // 0: the newest OpenSSL has
  std::map<std::string, std::string> users;  // basic_auth_users: name -> bcrypt hash
};

// Parses `text` (the contents of `name`, for messages; relative paths are
// taken relative to `base_dir`). False with `error` ("FILE:LINE: ...").
bool ParseWebConfig(const std::string& text, const std::string& name, const std::string& base_dir,
                    WebConfig* out, std::string* error);

// Reads `path` with fileio::OpenForRead under `trust` (or as a file of
// root's) and parses it.
bool LoadWebConfig(const std::string& path, const fileio::Trust& trust, WebConfig* out,
                   std::string* error);

// Whether `hash` has the form of a bcrypt hash: $2a$, $2b$ or $2y$, a
// cost from 04 to 31, 53 characters of bcrypt's base64.
bool IsBcryptHash(const std::string& hash);

// Whether `password` matches the bcrypt `hash` (libcrypt's crypt_r; the
// comparison takes the same time wherever the first difference is).
bool BcryptMatches(const std::string& password, const std::string& hash);

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_WEB_CONFIG_H_

#include "analyzer/cli/web_config.h"

#include <crypt.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/tls1.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <set>
#include <vector>

namespace flightrec {
namespace cli {
namespace {

// A web config is a few hundred bytes; this bounds what a wrong path reads.
constexpr size_t kMaxConfigBytes = 64 * 1024;

struct Line {
  int number = 0;
  size_t indent = 0;
  std::string key;
  std::string value;
  bool has_value = false;   // something after the colon
  std::string value_error;  // the value cannot be read: reported once the key is known
};

class Parser {
 public:
  explicit Parser(const std::string& name) : name_(name) {}

  bool Fail(int line, const std::string& what) {
    error_ = name_ + ":" + std::to_string(line) + ": " + what;
    return false;
  }
  const std::string& error() const { return error_; }

  // A plain, single- or double-quoted scalar starting at s[*i]; stops at the
  // end of the scalar (after its closing quote, or before ": " / " #" / end
  // for a plain one when `key`).
  bool Scalar(const std::string& s, size_t* i, bool key, int line, std::string* out) {
    out->clear();
    if (*i >= s.size()) return true;
    const char c = s[*i];
    if (c == '"') {
      for (size_t j = *i + 1; j < s.size(); ++j) {
        if (s[j] == '"') {
          *i = j + 1;
          return true;
        }
        if (s[j] == '\\') {
          if (j + 1 >= s.size() || (s[j + 1] != '"' && s[j + 1] != '\\')) {
            return Fail(line, "unsupported escape in a double-quoted string (only \\\" and \\\\)");
          }
          ++j;
        }
        out->push_back(s[j]);
      }
      return Fail(line, "unterminated double-quoted string");
    }
    if (c == '\'') {
      for (size_t j = *i + 1; j < s.size(); ++j) {
        if (s[j] == '\'') {
          if (j + 1 < s.size() && s[j + 1] == '\'') {
            out->push_back('\'');
            ++j;
            continue;
          }
          *i = j + 1;
          return true;
        }
        out->push_back(s[j]);
      }
      return Fail(line, "unterminated single-quoted string");
    }
    if (std::strchr("[]{}&*!|>%@`,?", c) != nullptr ||
        (c == '-' && (*i + 1 >= s.size() || s[*i + 1] == ' '))) {
      return Fail(line, std::string("unsupported YAML (flow collections, anchors, tags, block "
                                    "scalars and sequences are not read): '") +
                            c + "'");
    }
    size_t j = *i;
    for (; j < s.size(); ++j) {
      if (key && s[j] == ':' && (j + 1 == s.size() || s[j + 1] == ' ')) break;
      if (s[j] == '#' && j > *i && s[j - 1] == ' ') break;
    }
    size_t end = j;
    while (end > *i && s[end - 1] == ' ') --end;
    *out = s.substr(*i, end - *i);
    *i = j;
    return true;
  }

  // Splits one non-blank, non-comment line into key and value.
  bool ParseLine(const std::string& raw, int number, Line* out) {
    out->number = number;
    size_t i = 0;
    while (i < raw.size() && raw[i] == ' ') ++i;
    if (i < raw.size() && raw[i] == '\t') return Fail(number, "a tab in the indentation");
    out->indent = i;
    if (!Scalar(raw, &i, true, number, &out->key)) return false;
    if (out->key.empty()) return Fail(number, "expected 'key: value'");
    while (i < raw.size() && raw[i] == ' ') ++i;
    if (i >= raw.size() || raw[i] != ':') return Fail(number, "expected 'key: value'");
    ++i;
    if (i < raw.size() && raw[i] != ' ') return Fail(number, "expected a space after ':'");
    while (i < raw.size() && raw[i] == ' ') ++i;
    if (i < raw.size() && raw[i] != '#') {
      out->has_value = true;
      if (!Scalar(raw, &i, false, number, &out->value)) {
        out->value_error = error_;
        return true;
      }
      while (i < raw.size() && raw[i] == ' ') ++i;
      if (i < raw.size() && raw[i] != '#') {
        Fail(number, "unexpected text after the value");
        out->value_error = error_;
      }
    }
    return true;
  }

 private:
  std::string name_;
  std::string error_;
};

std::string Resolve(const std::string& base_dir, const std::string& path) {
  if (path.empty() || path[0] == '/' || base_dir.empty()) return path;
  return base_dir + "/" + path;
}

bool TlsVersion(const std::string& v, int* out) {
  if (v == "TLS12") {
    *out = TLS1_2_VERSION;
  } else if (v == "TLS13") {
    *out = TLS1_3_VERSION;
  } else {
    return false;
  }
  return true;
}

bool ClientAuthOf(const std::string& v, ClientAuth* out) {
  if (v.empty() || v == "NoClientCert") {
    *out = ClientAuth::kNoClientCert;
  } else if (v == "RequestClientCert") {
    *out = ClientAuth::kRequestClientCert;
  } else if (v == "RequireAnyClientCert" || v == "RequireClientCert") {
    *out = ClientAuth::kRequireAnyClientCert;
  } else if (v == "VerifyClientCertIfGiven") {
    *out = ClientAuth::kVerifyClientCertIfGiven;
  } else if (v == "RequireAndVerifyClientCert") {
    *out = ClientAuth::kRequireAndVerifyClientCert;
  } else {
    return false;
  }
  return true;
}

}  // namespace

bool IsBcryptHash(const std::string& hash) {
  if (hash.size() != 60 || hash[0] != '$' || hash[1] != '2' || hash[3] != '$' ||
      (hash[2] != 'a' && hash[2] != 'b' && hash[2] != 'y') || hash[6] != '$') {
    return false;
  }
  if (hash[4] < '0' || hash[4] > '3' || hash[5] < '0' || hash[5] > '9') return false;
  const int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > 31) return false;
  for (size_t i = 7; i < hash.size(); ++i) {
    const char c = hash[i];
    const bool b64 = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                     c == '.' || c == '/';
    if (!b64) return false;
  }
  return true;
}

bool BcryptMatches(const std::string& password, const std::string& hash) {
  // crypt_data is 32 KiB: on the heap, not on a server thread's stack.
  std::unique_ptr<crypt_data> data(new crypt_data);
  std::memset(data.get(), 0, sizeof(*data));
  const char* out = crypt_r(password.c_str(), hash.c_str(), data.get());
  if (out == nullptr || out[0] != '$') return false;
  const size_t n = std::strlen(out);
  const bool same_length = n == hash.size();
  // Compares as many bytes as the stored hash has either way.
  const std::string padded = same_length ? std::string(out, n) : std::string(hash.size(), '\0');
  const bool same = CRYPTO_memcmp(padded.data(), hash.data(), hash.size()) == 0;
  return same_length && same;
}

bool ParseWebConfig(const std::string& text, const std::string& name, const std::string& base_dir,
                    WebConfig* out, std::string* error) {
  *out = WebConfig{};
  Parser p(name);
  std::vector<Line> lines;
  size_t start = 0;
  int number = 0;
  bool any = false;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string raw = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    size_t first = raw.find_first_not_of(' ');
    if (first == std::string::npos || raw[first] == '#') {
      if (end == text.size()) break;
      continue;
    }
    if (!any && raw == "---") {
      any = true;
      continue;
    }
    any = true;
    if (raw.compare(0, 3, "---") == 0 || raw.compare(0, 3, "...") == 0) {
      *error = name + ":" + std::to_string(number) + ": only one YAML document is read";
      return false;
    }
    Line line;
    if (!p.ParseLine(raw, number, &line)) {
      *error = p.error();
      return false;
    }
    lines.push_back(line);
    if (end == text.size()) break;
  }
  auto fail = [&](const Line& l, const std::string& what) {
    *error = name + ":" + std::to_string(l.number) + ": " + what;
    return false;
  };
  std::set<std::string> sections;
  std::string client_auth_text;
  bool client_auth_given = false;
  int tls_line = 0;
  for (size_t i = 0; i < lines.size();) {
    const Line& top = lines[i];
    if (top.indent != 0) return fail(top, "unexpected indentation");
    if (!sections.insert(top.key).second) return fail(top, "'" + top.key + "' given twice");
    const bool tls = top.key == "tls_server_config";
    const bool users = top.key == "basic_auth_users";
    if (!tls && !users) {
      return fail(top, "unknown key '" + top.key +
                           "' (flightrec reads tls_server_config and basic_auth_users)");
    }
    if (top.has_value) {
      return fail(top, "'" + top.key + "' takes an indented block of 'key: value' lines");
    }
    if (tls) {
      out->tls = true;
      tls_line = top.number;
    }
    ++i;
    size_t indent = 0;
    std::set<std::string> keys;
    for (; i < lines.size() && lines[i].indent > 0; ++i) {
      const Line& l = lines[i];
      if (indent == 0) indent = l.indent;
      if (l.indent != indent) return fail(l, "inconsistent indentation");
      if (!keys.insert(l.key).second) return fail(l, "'" + l.key + "' given twice");
      if (!l.has_value) {
        return fail(l, "'" + l.key +
                           "' needs a value on the same line (nested blocks are not "
                           "read)");
      }
      const bool known = users || l.key == "cert_file" || l.key == "key_file" ||
                         l.key == "client_ca_file" || l.key == "client_auth_type" ||
                         l.key == "min_version" || l.key == "max_version";
      if (known && !l.value_error.empty()) {
        *error = l.value_error;
        return false;
      }
      if (users) {
        if (!IsBcryptHash(l.value)) {
          return fail(l, "the password of user '" + l.key +
                             "' is not a bcrypt hash ($2y$..., 60 characters)");
        }
        out->users[l.key] = l.value;
        continue;
      }
      if (l.key == "cert_file") {
        out->cert_file = Resolve(base_dir, l.value);
      } else if (l.key == "key_file") {
        out->key_file = Resolve(base_dir, l.value);
      } else if (l.key == "client_ca_file") {
        out->client_ca_file = Resolve(base_dir, l.value);
      } else if (l.key == "client_auth_type") {
        client_auth_given = true;
        client_auth_text = l.value;
        if (!ClientAuthOf(l.value, &out->client_auth)) {
          return fail(l, "unknown client_auth_type '" + l.value +
                             "' (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                             "VerifyClientCertIfGiven, RequireAndVerifyClientCert)");
        }
      } else if (l.key == "min_version" || l.key == "max_version") {
        if (!TlsVersion(l.value, l.key == "min_version" ? &out->min_version : &out->max_version)) {
          return fail(l, l.key + " '" + l.value + "': TLS12 or TLS13");
        }
      } else {
        return fail(l, "unknown key '" + l.key +
                           "' in tls_server_config (flightrec reads cert_file, key_file, "
                           "client_auth_type, client_ca_file, min_version, max_version)");
      }
    }
  }
  if (out->tls) {
    const std::string where = name + ":" + std::to_string(tls_line) + ": tls_server_config: ";
    if (out->cert_file.empty() || out->key_file.empty()) {
      *error = where + "cert_file and key_file are both required";
      return false;
    }
    if (!out->client_ca_file.empty() && out->client_auth == ClientAuth::kNoClientCert) {
      *error = where + "client_ca_file is given but client_auth_type is " +
               (client_auth_given ? client_auth_text : std::string("not")) +
               " (give one that checks client certificates)";
      return false;
    }
    if (out->client_ca_file.empty() &&
        (out->client_auth == ClientAuth::kVerifyClientCertIfGiven ||
         out->client_auth == ClientAuth::kRequireAndVerifyClientCert)) {
      *error = where + "client_auth_type " + client_auth_text + " needs client_ca_file";
      return false;
    }
    if (out->min_version != 0 && out->max_version != 0 && out->min_version > out->max_version) {
      *error = where + "min_version is newer than max_version";
      return false;
    }
  }
  return true;
}

bool LoadWebConfig(const std::string& path, const fileio::Trust& trust, WebConfig* out,
                   std::string* error) {
  struct stat st;
  fileio::OpenStatus status;
  char why[fileio::kWhyMax] = {};
  int fd = fileio::OpenForRead(AT_FDCWD, path.c_str(), trust, &st, &status, why, sizeof(why));
  if (fd < 0 && status == fileio::OpenStatus::kRefused && trust.uid != 0) {
    // A file of root's is as good as one's own (root can change anything).
    fileio::Trust root;
    root.uid = 0;
    fileio::OpenStatus root_status;
    char root_why[fileio::kWhyMax] = {};
    fd = fileio::OpenForRead(AT_FDCWD, path.c_str(), root, &st, &root_status, root_why,
                             sizeof(root_why));
  }
  if (fd < 0) {
    *error = path + ": " + why;
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) > kMaxConfigBytes) {
    close(fd);
    *error = path + ": larger than " + std::to_string(kMaxConfigBytes) + " bytes";
    return false;
  }
  std::string text(kMaxConfigBytes + 1, '\0');
  const ssize_t n = fileio::ReadSmall(fd, &text[0], text.size());
  close(fd);
  if (n < 0) {
    *error = path + ": cannot read";
    return false;
  }
  text.resize(static_cast<size_t>(n));
  const size_t slash = path.rfind('/');
  const std::string base_dir = slash == std::string::npos ? "." : path.substr(0, slash);
  return ParseWebConfig(text, path, slash == 0 ? "/" : base_dir, out, error);
}

}  // namespace cli
}  // namespace flightrec

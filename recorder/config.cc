#include "recorder/config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flightrec/record_format.h"
#include "recorder/log.h"

namespace flightrec {
namespace rec {
namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;
constexpr uint64_t kNsPerMs = 1000000ULL;
constexpr uint64_t kMinRecords = 64;
constexpr uint64_t kMaxRecords = 1ULL << 22;
// Ring files larger than this are refused up front (the reader's limit).
constexpr uint64_t kMaxRingBytes = format::kMaxFileSize / 2;

void WarnBad(LogFn log, const char* var, const char* value, const char* why) {
  Logf(log, kLogWarn, "ignoring %s=\"%s\" (%s); using the default", var, value, why);
}

// Strict unsigned integer: digits only, no sign, no trailing junk.
bool ParseU64(const char* s, uint64_t* out) {
  if (s == nullptr || *s < '0' || *s > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0') return false;
  *out = v;
  return true;
}

bool ParseSeconds(const char* s, double* out) {
  if (s == nullptr || *s == '\0') return false;
  errno = 0;
  char* end = nullptr;
  double v = strtod(s, &end);
  if (errno != 0 || end == s || *end != '\0' || !isfinite(v)) return false;
  *out = v;
  return true;
}

bool ParseBool(const char* s, bool* out) {
  if (strcmp(s, "1") == 0 || strcmp(s, "true") == 0 || strcmp(s, "yes") == 0 ||
      strcmp(s, "on") == 0) {
    *out = true;
    return true;
  }
  if (strcmp(s, "0") == 0 || strcmp(s, "false") == 0 || strcmp(s, "no") == 0 ||
      strcmp(s, "off") == 0) {
    *out = false;
    return true;
  }
  return false;
}

uint64_t RoundUpPow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

void ReadBool(const char* var, bool* field, LogFn log) {
  const char* v = getenv(var);
  if (v == nullptr) return;
  if (!ParseBool(v, field)) WarnBad(log, var, v, "expected 0 or 1");
}

bool ReadRangedU64(const char* var, uint64_t lo, uint64_t hi, uint64_t* field, LogFn log) {
  const char* v = getenv(var);
  if (v == nullptr) return false;
  uint64_t n = 0;
  if (!ParseU64(v, &n) || n < lo || n > hi) {
    char why[96];
    snprintf(why, sizeof(why), "expected an integer in [%llu, %llu]",
             static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
    WarnBad(log, var, v, why);
    return false;
  }
  *field = n;
  return true;
}

void ReadDirs(Config* cfg, LogFn log) {
  const char* tmp = getenv("TMPDIR");
  if (tmp == nullptr || tmp[0] == '\0') tmp = "/tmp";
  // Per user: a directory another user created first can neither take our
  // rings nor stop them (a foreign one is refused when the ring is made).
  snprintf(cfg->dir, sizeof(cfg->dir), "%s/flightrec-%u", tmp, static_cast<unsigned>(geteuid()));
  const char* dir = getenv("NCCL_FLIGHTREC_DIR");
  if (dir != nullptr) {
    if (dir[0] == '\0' || strlen(dir) + 80 >= sizeof(cfg->dir)) {
      WarnBad(log, "NCCL_FLIGHTREC_DIR", dir, "empty or too long");
    } else {
      snprintf(cfg->dir, sizeof(cfg->dir), "%s", dir);
    }
  }
  snprintf(cfg->dump_dir, sizeof(cfg->dump_dir), "%s", cfg->dir);
  const char* dump = getenv("NCCL_FLIGHTREC_DUMP_DIR");
  if (dump != nullptr) {
    if (dump[0] == '\0' || strlen(dump) + 80 >= sizeof(cfg->dump_dir)) {
      WarnBad(log, "NCCL_FLIGHTREC_DUMP_DIR", dump, "empty or too long");
    } else {
      snprintf(cfg->dump_dir, sizeof(cfg->dump_dir), "%s", dump);
    }
  }
}

void ReadTimes(Config* cfg, LogFn log) {
  const char* t = getenv("NCCL_FLIGHTREC_TIMEOUT_S");
  if (t != nullptr) {
    double s = 0;
    // Upper bound keeps the ns value far from overflow (about 31 years).
    if (!ParseSeconds(t, &s) || s <= 0 || s > 1e9) {
      WarnBad(log, "NCCL_FLIGHTREC_TIMEOUT_S", t, "expected seconds > 0, e.g. 120 or 0.5");
    } else {
      cfg->timeout_ns = static_cast<uint64_t>(s * static_cast<double>(kNsPerSec));
      if (cfg->timeout_ns == 0) cfg->timeout_ns = 1;
    }
  }
  uint64_t poll_ms = cfg->timeout_ns / 4 / kNsPerMs;
  if (poll_ms > 1000) poll_ms = 1000;
  ReadRangedU64("NCCL_FLIGHTREC_POLL_MS", 1, 3600 * 1000, &poll_ms, log);
  if (poll_ms < 10) poll_ms = 10;
  cfg->poll_ns = poll_ms * kNsPerMs;
}

void ReadSizes(Config* cfg, LogFn log) {
  uint64_t records = cfg->records;
  if (ReadRangedU64("NCCL_FLIGHTREC_RECORDS", kMinRecords, kMaxRecords, &records, log)) {
    cfg->records = RoundUpPow2(records);
  }
  uint64_t comms = cfg->max_comms;
  if (ReadRangedU64("NCCL_FLIGHTREC_MAX_COMMS", 1, format::kMaxRegions, &comms, log)) {
    cfg->max_comms = static_cast<uint32_t>(comms);
  }
  // Both in range can still multiply to an absurd file: shrink the per-comm
  // capacity rather than refusing to record at all.
  while (cfg->records > kMinRecords &&
         cfg->records * cfg->max_comms * format::kRecordSize > kMaxRingBytes) {
    cfg->records >>= 1;
  }
  uint64_t dumps = cfg->max_dumps;
  if (ReadRangedU64("NCCL_FLIGHTREC_MAX_DUMPS", 0, 1000000, &dumps, log)) {
    cfg->max_dumps = static_cast<uint32_t>(dumps);
  }
}

void ReadClockAndSignal(Config* cfg, LogFn log) {
  const char* c = getenv("NCCL_FLIGHTREC_CLOCK");
  if (c != nullptr) {
    if (strcmp(c, "auto") == 0) {
      cfg->clock = kClockRequestAuto;
    } else if (strcmp(c, "tsc") == 0) {
      cfg->clock = kClockRequestTsc;
    } else if (strcmp(c, "monotonic") == 0) {
      cfg->clock = kClockRequestMonotonic;
    } else {
      WarnBad(log, "NCCL_FLIGHTREC_CLOCK", c, "expected auto, tsc or monotonic");
    }
  }
  const char* s = getenv("NCCL_FLIGHTREC_DUMP_SIGNAL");
  if (s != nullptr && s[0] != '\0') {
    int signo = ParseSignal(s);
    if (signo == 0) {
      WarnBad(log, "NCCL_FLIGHTREC_DUMP_SIGNAL", s, "expected a catchable signal, e.g. SIGUSR2");
    }
    cfg->dump_signal = signo;
  }
}

// A string variable copied as is; empty or too long keeps the default ("").
void ReadString(const char* var, char* field, size_t field_len, LogFn log) {
  const char* v = getenv(var);
  if (v == nullptr) return;
  if (v[0] == '\0' || strlen(v) >= field_len) {
    WarnBad(log, var, v, "empty or too long");
    return;
  }
  snprintf(field, field_len, "%s", v);
}

void ReadTrust(Config* cfg, LogFn log) {
  char why[fileio::kWhyMax];
  if (!fileio::TrustFromEnv(&cfg->trust, why, sizeof(why))) {
    WarnBad(log, "NCCL_FLIGHTREC_GROUP", getenv("NCCL_FLIGHTREC_GROUP"), why);
  }
}

void ReadVerdict(Config* cfg, LogFn log) {
  ReadBool("NCCL_FLIGHTREC_VERDICT", &cfg->verdict, log);
  ReadString("NCCL_FLIGHTREC_ANALYZER", cfg->analyzer, sizeof(cfg->analyzer), log);
  ReadString("NCCL_FLIGHTREC_ON_VERDICT", cfg->on_verdict, sizeof(cfg->on_verdict), log);
}

}  // namespace

int ParseSignal(const char* text) {
  if (text == nullptr) return 0;
  uint64_t n = 0;
  int signo = 0;
  if (ParseU64(text, &n)) {
    signo = n < 1 || n > 64 ? 0 : static_cast<int>(n);
  } else {
    const char* name = strncmp(text, "SIG", 3) == 0 ? text + 3 : text;
    static const struct {
      const char* name;
      int signo;
    } kNames[] = {{"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT},   {"USR1", SIGUSR1},
                  {"USR2", SIGUSR2}, {"TERM", SIGTERM}, {"WINCH", SIGWINCH}, {"URG", SIGURG}};
    for (const auto& e : kNames) {
      if (strcmp(name, e.name) == 0) signo = e.signo;
    }
  }
  if (signo == SIGKILL || signo == SIGSTOP) return 0;
  return signo;
}

void LoadConfig(Config* cfg, LogFn log) {
  *cfg = Config();
  ReadBool("NCCL_FLIGHTREC_ENABLE", &cfg->enable, log);
  ReadDirs(cfg, log);
  ReadTimes(cfg, log);
  ReadSizes(cfg, log);
  ReadBool("NCCL_FLIGHTREC_DUMP_ON_EXIT", &cfg->dump_on_exit, log);
  ResolveJobId(cfg->job_id, sizeof(cfg->job_id));
  ReadBool("NCCL_FLIGHTREC_TRIGGER", &cfg->trigger, log);
  ReadClockAndSignal(cfg, log);
  ReadVerdict(cfg, log);
  ReadTrust(cfg, log);
}

}  // namespace rec
}  // namespace flightrec

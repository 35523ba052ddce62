// The job-directory protocol: every name flightrec gives a file in a ring or
// dump directory, and the text of the small files processes use to talk to
// each other there (the trigger, the verdict locks, the done marker). The
// recorder (plugin) and the CLI include this one header; the I/O that goes
// with it (who owns a file, how it is created) is recorder/fileio/. Pure:
// names, parsing, formatting and constants; no I/O, libc string functions
// only. Who may write each file: docs/security.md.
//
//   <ringdir>/flightrec-<job>-<host>-<pid>.ring        a process's live ring
//   <ringdir>/flightrec-<job>-<host>-<pid>.ring.init   the same, being built
//   <dumpdir>/flightrec-<job>-<host>-<pid>-<n>.frdump  its n-th sealed dump
//   <dumpdir>/flightrec-<job>.trigger                  "host pid reason\n"
//   <dumpdir>/flightrec-<job>.u<uid>[.r<random>].trigger   the same, when a
//        stranger's file holds the name before it (a sticky directory;
//        recorder/fileio/trigger_io.h); likewise .u<uid>[.r<random>].verdict.*
//   <dumpdir>/flightrec-<job>.verdict.{txt,md,html,json} the verdict reports
//   <dumpdir>/flightrec-<job>.verdict.done             TextDone() below
//   <dumpdir>/flightrec-<job>.u<uid>.verdict.{txt,...,done} the same, per user,
//                                                      when another user's file
//                                                      holds the shared name
//   <dumpdir>/flightrec-<job>.verdict-<g>.lock         "host pid[ released]\n"
//   <dumpdir>/flightrec-<job>.verdict-spawned          "pid\n" (a hint)
//   <dumpdir>/flightrec-<job>.hook.log                 the hook's output
//   <any>/.<name>.<random>.tmp                         a file being written
#ifndef FLIGHTREC_JOB_DIR_H_
#define FLIGHTREC_JOB_DIR_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

namespace flightrec {
namespace format {

// Longest job id or host name, with its NUL.
constexpr size_t kNameMax = 64;
// Longest path flightrec writes (a directory from the environment plus a
// file name).
constexpr size_t kPathMax = 512;
// Longest file name flightrec gives (a name fits NAME_MAX with room).
constexpr size_t kFileNameMax = 200;

// A verdict lock whose mtime nobody refreshed for this long is stale.
constexpr uint64_t kVerdictLockStaleS = 5;

// The characters the plugin writes into job ids and host names (in file
// names and in file headers): [A-Za-z0-9._-].
inline bool NameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

// Whether `s` (of at most `max_len` bytes before its NUL) is a name the
// plugin could have written: non-empty, only NameChar, shorter than
// kNameMax. A header or trigger that carries anything else was not written
// by flightrec.
inline bool IsSanitizedName(const char* s, size_t max_len = kNameMax) {
  if (s == nullptr || s[0] == '\0') return false;
  size_t n = 0;
  for (; n < max_len && s[n] != '\0'; ++n) {
    if (!NameChar(s[n])) return false;
  }
  return n < max_len && n < kNameMax;
}

// Copies `in` to `out` keeping NameChar and mapping anything else to '_';
// an empty result becomes `fallback`.
inline void SanitizeName(const char* in, const char* fallback, char* out, size_t out_len) {
  if (out_len == 0) return;
  size_t n = 0;
  const size_t cap = out_len < kNameMax ? out_len : kNameMax;
  for (size_t i = 0; in != nullptr && in[i] != '\0' && n + 1 < cap; ++i) {
    out[n++] = NameChar(in[i]) ? in[i] : '_';
  }
  out[n] = '\0';
  if (n == 0) snprintf(out, out_len, "%s", fallback);
}

// ---- names -----------------------------------------------------------------
// Each Name function writes a file name (no directory) and returns false
// when it does not fit. The writers are not inlined: GCC would warn about
// truncation at call sites whose buffer sizes it can see.

// Copies a string already checked to fit (IsSanitizedName, a known word)
// into `out` of `out_len` bytes; cut at out_len - 1 all the same.
inline void CopyChecked(const char* in, char* out, size_t out_len) {
  const size_t n = strnlen(in, out_len - 1);
  memcpy(out, in, n);
  out[n] = '\0';
}

inline bool NameFits(int n, size_t out_len) { return n > 0 && static_cast<size_t>(n) < out_len; }

__attribute__((noinline)) inline bool RingName(const char* job, const char* host, int64_t pid,
                                               char* out, size_t out_len) {
  return NameFits(
      snprintf(out, out_len, "flightrec-%s-%s-%lld.ring", job, host, static_cast<long long>(pid)),
      out_len);
}
__attribute__((noinline)) inline bool RingInitName(const char* job, const char* host, int64_t pid,
                                                   char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s-%s-%lld.ring.init", job, host,
                           static_cast<long long>(pid)),
                  out_len);
}
__attribute__((noinline)) inline bool DumpName(const char* job, const char* host, int64_t pid,
                                               uint32_t n, char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s-%s-%lld-%u.frdump", job, host,
                           static_cast<long long>(pid), n),
                  out_len);
}
__attribute__((noinline)) inline bool TriggerName(const char* job, char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.trigger", job), out_len);
}
// `ext` is one of "txt", "md", "html", "json".
__attribute__((noinline)) inline bool VerdictReportName(const char* job, const char* ext, char* out,
                                                        size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.verdict.%s", job, ext), out_len);
}
__attribute__((noinline)) inline bool DoneName(const char* job, char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.verdict.done", job), out_len);
}
// Per-user names of the reports and the done marker
// (`flightrec-<job>.u<uid>.verdict.<ext>`, `flightrec-<job>.u<uid>.verdict.done`):
// where another user's file holds the shared name in a sticky directory
// (there it cannot be replaced), `watch` writes under these instead, and a
// reader of the done marker looks at the shared name and its own user's.
__attribute__((noinline)) inline bool UserVerdictReportName(const char* job, uint32_t uid,
                                                            const char* ext, char* out,
                                                            size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.u%u.verdict.%s", job, uid, ext), out_len);
}
__attribute__((noinline)) inline bool UserDoneName(const char* job, uint32_t uid, char* out,
                                                   size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.u%u.verdict.done", job, uid), out_len);
}
__attribute__((noinline)) inline bool LockName(const char* job, uint64_t generation, char* out,
                                               size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.verdict-%llu.lock", job,
                           static_cast<unsigned long long>(generation)),
                  out_len);
}
__attribute__((noinline)) inline bool SpawnHintName(const char* job, char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.verdict-spawned", job), out_len);
}
__attribute__((noinline)) inline bool HookLogName(const char* job, char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "flightrec-%s.hook.log", job), out_len);
}

inline bool EndsWith(const char* s, const char* suffix) {
  const size_t n = strlen(s), m = strlen(suffix);
  return n >= m && memcmp(s + n - m, suffix, m) == 0;
}

// The generation of `name` when it is `flightrec-<job>.verdict-<g>.lock`
// (g: 1 to 18 digits, > 0), else 0.
inline uint64_t LockGeneration(const char* name, const char* job) {
  char prefix[kNameMax + 32];
  const int p = snprintf(prefix, sizeof(prefix), "flightrec-%s.verdict-", job);
  if (p <= 0 || static_cast<size_t>(p) >= sizeof(prefix)) return 0;
  if (strncmp(name, prefix, static_cast<size_t>(p)) != 0) return 0;
  const char* d = name + p;
  uint64_t g = 0;
  size_t digits = 0;
  for (; d[digits] >= '0' && d[digits] <= '9'; ++digits) {
    if (digits == 18) return 0;
    g = g * 10 + static_cast<uint64_t>(d[digits] - '0');
  }
  if (digits == 0 || strcmp(d + digits, ".lock") != 0) return 0;
  return g;
}

// A temporary: `.<name>.<random>.tmp`, or any `*.tmp` (older writers).
inline bool IsTempName(const char* name) { return EndsWith(name, ".tmp"); }

// Files of ours in a job directory that are never analysis inputs: a file
// still being written, the trigger, and what `flightrec watch` writes beside
// the dumps (reports, done marker, locks, spawn hint, hook log).
inline bool IsCompanionName(const char* name) {
  if (IsTempName(name) || EndsWith(name, ".trigger") || EndsWith(name, ".ring.init")) return true;
  if (strncmp(name, "flightrec-", 10) != 0) return false;
  return EndsWith(name, ".hook.log") || strstr(name, ".verdict.") != nullptr ||
         strstr(name, ".verdict-") != nullptr;
}

// ---- the trigger: "host pid reason\n" ----------------------------------------

// The reasons a trigger may carry. Only these words are ever read back: a
// trigger carries no free text, so nothing from it reaches a dump but a
// sanitized host, a number and one of these.
constexpr const char* kTriggerReasonTimeout = "timeout";  // a rank's op timed out: a hang
constexpr const char* kTriggerReasonUser = "user";        // `flightrec trigger`: a snapshot

inline bool IsTriggerReason(const char* r) {
  return r != nullptr &&
         (strcmp(r, kTriggerReasonTimeout) == 0 || strcmp(r, kTriggerReasonUser) == 0);
}

struct TriggerLine {
  char host[kNameMax] = {};
  int64_t pid = 0;
  char reason[16] = {};
  // Whether the trigger says the job hangs (reason "timeout").
  bool FromTimeout() const { return strcmp(reason, kTriggerReasonTimeout) == 0; }
};

// Formats the trigger's text; false when a field is not one the protocol
// allows (a host that is not a sanitized name, a pid <= 0, another reason).
__attribute__((noinline)) inline bool FormatTrigger(const char* host, int64_t pid,
                                                    const char* reason, char* out, size_t out_len) {
  if (!IsSanitizedName(host) || pid <= 0 || !IsTriggerReason(reason)) return false;
  return NameFits(snprintf(out, out_len, "%s %lld %s\n", host, static_cast<long long>(pid), reason),
                  out_len);
}

// Parses a trigger's text (up to its first newline). False for anything
// but "host pid reason" with a sanitized host, a positive pid and a known
// reason: such a trigger was not written by flightrec.
inline bool ParseTrigger(const char* text, TriggerLine* out) {
  char host[kNameMax + 1] = {}, reason[17] = {}, pid_text[21] = {};
  int end = 0;
  if (sscanf(text, "%64s %20s %16s%n", host, pid_text, reason, &end) != 3) return false;
  if (text[end] != '\0' && text[end] != '\n') return false;
  if (!IsSanitizedName(host) || !IsTriggerReason(reason)) return false;
  int64_t pid = 0;
  for (size_t i = 0; pid_text[i] != '\0'; ++i) {
    if (pid_text[i] < '0' || pid_text[i] > '9' || i >= 10) return false;
    pid = pid * 10 + (pid_text[i] - '0');
  }
  if (pid <= 0) return false;
  CopyChecked(host, out->host, sizeof(out->host));
  out->pid = pid;
  CopyChecked(reason, out->reason, sizeof(out->reason));
  return true;
}

// ---- the verdict lock: "host pid\n" or "host pid released\n" ------------------

constexpr const char* kLockReleasedWord = "released";

__attribute__((noinline)) inline bool FormatLock(const char* host, int64_t pid, bool released,
                                                 char* out, size_t out_len) {
  return NameFits(snprintf(out, out_len, "%s %lld%s\n", host, static_cast<long long>(pid),
                           released ? " released" : ""),
                  out_len);
}

struct LockText {
  char host[kNameMax] = {};
  int64_t pid = 0;
  bool released = false;
};

inline bool ParseLock(const char* text, LockText* out) {
  char host[kNameMax + 1] = {}, word[16] = {};
  long long pid = 0;
  const int n = sscanf(text, "%64s %lld %15s", host, &pid, word);
  if (n < 2 || pid <= 0 || !IsSanitizedName(host)) return false;
  CopyChecked(host, out->host, sizeof(out->host));
  out->pid = pid;
  out->released = n == 3 && strcmp(word, kLockReleasedWord) == 0;
  return true;
}

// ---- the done marker ---------------------------------------------------------
// "generation=<g> incident_start_ns=<t> covered_until_ns=<c> host=<h> pid=<p>\n",
// written by the watcher that gave the verdict, after the reports. Hang
// dumps sealed up to c plus their watchdog timeout belong to the incident it
// judged.

struct DoneText {
  uint64_t generation = 0;
  uint64_t incident_start_ns = 0;
  uint64_t covered_until_ns = 0;
};

__attribute__((noinline)) inline bool FormatDone(uint64_t generation, uint64_t start_ns,
                                                 uint64_t until_ns, const char* host, int64_t pid,
                                                 char* out, size_t out_len) {
  return NameFits(
      snprintf(out, out_len,
               "generation=%llu incident_start_ns=%llu covered_until_ns=%llu "
               "host=%s pid=%lld\n",
               static_cast<unsigned long long>(generation),
               static_cast<unsigned long long>(start_ns), static_cast<unsigned long long>(until_ns),
               host, static_cast<long long>(pid)),
      out_len);
}

inline bool ParseDone(const char* text, DoneText* out) {
  unsigned long long g = 0, start = 0, until = 0;
  if (sscanf(text, "generation=%llu incident_start_ns=%llu covered_until_ns=%llu", &g, &start,
             &until) != 3 ||
      g == 0 || until < start) {
    return false;
  }
  out->generation = g;
  out->incident_start_ns = start;
  out->covered_until_ns = until;
  return true;
}

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_JOB_DIR_H_

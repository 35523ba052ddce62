// Runs the user's verdict hook (`flightrec watch`, docs/design/verdict.md):
// `/bin/sh -c CMD` in a process group of its own, with extra environment
// variables, stdin from /dev/null, stdout and stderr into a log file capped
// in size (the rest is read and discarded, so a flooding hook neither fills
// the disk nor blocks on a full pipe), and the whole group killed (SIGTERM,
// then SIGKILL two seconds later) once the timeout has passed or the caller
// is asked to stop. Nothing the hook does is fatal to the caller.
//
// What reaches the hook is held to what flightrec itself writes: culprit
// hosts that are not sanitized names are left out of FLIGHTREC_CULPRITS,
// and the headline loses control characters and the shell's quoting and
// expansion characters (CulpritsVariable, HeadlineVariable). The hook log
// is written through recorder/fileio: a unique temporary in the dump
// directory, published under its name when the hook has ended, so a
// symlink or file planted at that name is replaced, never written through.
#ifndef FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_
#define FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace cli {

// The environment variable `flightrec watch` takes the hook command from
// when neither --on-verdict nor --on-verdict-file is given (the in-job
// spawn inherits it from the job).
constexpr const char* kHookCommandEnv = "NCCL_FLIGHTREC_ON_VERDICT";
// Longest hook command read from --on-verdict-file.
constexpr size_t kHookCommandFileMax = 64 * 1024;

struct HookSpec {
  std::string command;
  std::vector<std::pair<std::string, std::string>> env;  // added to (or replacing in) ours
  // The log: `log_name` in the directory `log_dir_fd` (opened by
  // fileio::OpenDir), created with `trust`'s mode and group. `log_path`
  // names it in messages. With log_dir_fd < 0 the output is discarded.
  int log_dir_fd = -1;
  std::string log_name;
  std::string log_path;
  fileio::Trust trust;
  double timeout_s = 60;
  uint64_t log_cap_bytes = 1 << 20;
  // When readable (StopSignal::fd()), the hook is ended as at its timeout.
  int stop_fd = -1;
};

struct HookResult {
  bool started = false;
  bool exited = false;     // exited by itself (status valid)
  int status = -1;         // exit status, or 128 + signal
  bool timed_out = false;  // killed after the timeout
  bool stopped = false;    // killed because stop_fd became readable
  bool truncated = false;  // output beyond the cap was discarded
  uint64_t output_bytes = 0;
  std::string error;             // why it could not run, or the log could not be written
  std::string Describe() const;  // one line for stderr and the log
};

HookResult RunHook(const HookSpec& spec);

// The hook log's directory for one run, for a caller that holds no
// descriptor of it (`flightrec watch` hands RunHook its own): opens `dir`
// with fileio::OpenDir(kShared) and points `hook`'s log at
// `flightrec-<job>.hook.log` there, created with `trust`. Closes the
// directory when destroyed. When the directory cannot be opened, error()
// says why and the hook's output is discarded.
class HookLogDir {
 public:
  HookLogDir(const std::string& dir, const std::string& job, const fileio::Trust& trust,
             HookSpec* hook);
  ~HookLogDir();
  HookLogDir(const HookLogDir&) = delete;
  HookLogDir& operator=(const HookLogDir&) = delete;
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  std::string error_;
};

// A culprit process as the analysis names it.
struct CulpritId {
  std::string host;
  int64_t pid = 0;
};

// FLIGHTREC_CULPRITS: "host:pid" of each culprit, space-separated, keeping
// only those whose host is a name the plugin writes
// (format::IsSanitizedName: [A-Za-z0-9._-], shorter than kNameMax) and
// whose pid is positive. Each one left out gets a line in `dropped` saying
// why (the host shown with its odd bytes escaped).
std::string CulpritsVariable(const std::vector<CulpritId>& culprits,
                             std::vector<std::string>* dropped);

// FLIGHTREC_HEADLINE: the headline with control characters (newlines
// included) turned into spaces, backquotes and quotes removed, and every
// other byte outside [A-Za-z0-9 .,:;()#_+=/@%-] (the shell's `$ \ & | < >
// * ? [ ] { } ~ !`, non-ASCII bytes) turned into '_'; at most 1024 bytes.
std::string HeadlineVariable(const std::string& headline);

// FLIGHTREC_JOB_ID: the job id held to the name characters
// (format::SanitizeName: anything else becomes '_').
std::string JobIdVariable(const std::string& job);

// Reads the hook command from `path` (--on-verdict-file): the file must be
// a regular file (not a symlink), owned by the running user, neither
// readable nor writable by group or others, at most kHookCommandFileMax
// bytes, without NUL bytes and not blank. Trailing newlines and spaces are
// dropped. False with `error` otherwise.
bool ReadHookCommandFile(const std::string& path, std::string* command, std::string* error);

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_HOOK_RUNNER_H_

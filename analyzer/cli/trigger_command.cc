// `flightrec trigger DIR [--job ID] [--ring-dir RDIR]... [--reason user|timeout]`:
// leaves the trigger file `DIR/flightrec-<job>.trigger` that every rank's
// watchdog watches (DIR is their NCCL_FLIGHTREC_DUMP_DIR); each one then
// seals a dump: a request (kDumpRequest, judged by the analyzer's age rule)
// unless the reason is "timeout", the word a rank that saw its own op time
// out writes. The file holds "host pid reason" only (flightrec/job_dir.h,
// FormatTrigger: the reason is one of the protocol's words, never free
// text) and is written by fileio::WriteTrigger: a unique temporary renamed
// into place on the directory's descriptor, so a symlink planted at the
// name is replaced, never followed; where another user's file occupies the
// name in a sticky directory, under the per-user name
// `flightrec-<job>.u<uid>.trigger` the ranks also watch.
//
// The job: --job, else the rank's own rule (NCCL_FLIGHTREC_JOB_ID,
// SLURM_JOB_ID, TORCHELASTIC_RUN_ID), else the one job whose rings or dumps
// are in DIR and the ring dirs. Before writing, it looks for that job's
// files (`flightrec-<job>-*.ring|.frdump`) in DIR and every --ring-dir, and
// says on stderr which job it targets and what it found. Refuses (exit 2)
// when no job is given and the directories hold none or several, and when
// ring dirs were given but hold no ring of the job (no rank of it runs
// there). Only files owned by the running user (or the trusted group,
// --trust-group) count; others are named on stderr and ignored. With no ring dir and no file of the
// job in DIR (rings often live elsewhere, NCCL_FLIGHTREC_DIR, and dumps appear only after the first
// one) it cannot tell, so it warns and writes.
// Prints the path it wrote on stdout. Exit code: 0 written, 2 usage error,
// refused, or the file could not be written.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/cli/verdict_lock.h"
#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/job_dir.h"
#include "recorder/fileio/safe_file.h"
#include "recorder/fileio/trigger_io.h"

namespace flightrec {
namespace cli {
namespace {

struct TriggerArgs {
  std::string dir;
  std::string job;
  std::vector<std::string> ring_dirs;
  std::string reason = format::kTriggerReasonUser;
};

// The job id as every flightrec process resolves it (recorder/config.cc):
// NCCL_FLIGHTREC_JOB_ID, else SLURM_JOB_ID, else TORCHELASTIC_RUN_ID, else
// "nojob"; sanitized.
void ResolveJobId(char* out, size_t out_len) {
  const char* job = nullptr;
  for (const char* var : {"NCCL_FLIGHTREC_JOB_ID", "SLURM_JOB_ID", "TORCHELASTIC_RUN_ID"}) {
    const char* v = getenv(var);
    if (v != nullptr && v[0] != '\0') {
      job = v;
      break;
    }
  }
  format::SanitizeName(job, "nojob", out, out_len);
}

bool IsDir(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Rings and dumps (by name) directly in `dir` that are regular files owned
// by the running user (or the trusted group); the others are named on
// stderr and left out.
std::vector<std::string> JobFiles(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.rfind("flightrec-", 0) != 0 ||
        (!EndsWith(name, ".ring") && !EndsWith(name, ".frdump"))) {
      continue;
    }
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone meanwhile
    char why[fileio::kWhyMax] = "not a regular file";
    if (!S_ISREG(st.st_mode) || !fileio::Believed(st, CommandTrust(), why, sizeof(why))) {
      std::fprintf(stderr, "flightrec trigger: ignoring %s/%s: %s\n", dir.c_str(), e->d_name, why);
      continue;
    }
    out.push_back(dir + "/" + name);
  }
  closedir(d);
  return out;
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

// A file of job `job` by its name: flightrec-<job>-<host>-<pid>[-<seq>].
bool OfJob(const std::string& path, const std::string& job) {
  return BaseName(path).rfind("flightrec-" + job + "-", 0) == 0;
}

// The one job `files` belong to: the job id in the header of one of them
// (names cannot be split: jobs and hosts may hold '-'), provided every name
// carries it. "" when there is none or more than one; `*why` says which.
std::string OnlyJob(const std::vector<std::string>& files, std::string* why) {
  if (files.empty()) {
    *why = "holds no ring or dump of any job";
    return "";
  }
  std::string job;
  for (const std::string& f : files) {  // the first readable one names it
    const ReadResult r = ReadSnapshotFile(f);
    if (r.ok) {
      char clean[format::kNameMax];
      format::SanitizeName(r.snapshot.job_id.c_str(), "nojob", clean, sizeof(clean));
      job = clean;
      break;
    }
  }
  if (job.empty()) {
    *why = "holds " + std::to_string(files.size()) + " flight-recorder files, none readable";
    return "";
  }
  for (const std::string& f : files) {
    if (!OfJob(f, job)) {
      *why = "holds files of several jobs (" + BaseName(f) + " is not of job " + job + ")";
      return "";
    }
  }
  return job;
}

int RunTrigger(const TriggerArgs& args) {
  std::vector<std::string> dirs = {args.dir};
  for (const std::string& d : args.ring_dirs) {
    if (std::find(dirs.begin(), dirs.end(), d) == dirs.end()) dirs.push_back(d);
  }
  std::vector<std::string> files;
  for (const std::string& d : dirs) {
    if (!IsDir(d)) {
      std::fprintf(stderr, "flightrec trigger: %s: not a directory\n", d.c_str());
      return 2;
    }
    for (std::string& f : JobFiles(d)) files.push_back(std::move(f));
  }
  char job[format::kNameMax];
  std::string source = "--job";
  if (args.job.empty()) {
    ResolveJobId(job, sizeof(job));  // the same rule the ranks used
    source = "the environment";
    if (std::string(job) == "nojob") {  // none set: the files must say
      std::string why;
      const std::string only = OnlyJob(files, &why);
      if (only.empty()) {
        std::fprintf(stderr,
                     "flightrec trigger: no job id given (--job, NCCL_FLIGHTREC_JOB_ID, "
                     "SLURM_JOB_ID, TORCHELASTIC_RUN_ID) and %s%s %s; nothing written: pass "
                     "--job\n",
                     args.dir.c_str(), args.ring_dirs.empty() ? "" : " with the ring dirs",
                     why.c_str());
        return 2;
      }
      format::SanitizeName(only.c_str(), "nojob", job, sizeof(job));
      source = "the only job whose files are there";
    }
  } else {
    format::SanitizeName(args.job.c_str(), "nojob", job, sizeof(job));
  }
  size_t job_dumps = 0, job_rings = 0;
  for (const std::string& f : files) {
    if (OfJob(f, job)) ++(EndsWith(f, ".ring") ? job_rings : job_dumps);
  }
  if (!args.ring_dirs.empty() && job_rings == 0) {
    std::fprintf(stderr,
                 "flightrec trigger: job %s (from %s): no ring of it in %s or the ring dirs "
                 "given, so no rank of it runs there; nothing written\n",
                 job, source.c_str(), args.dir.c_str());
    return 2;
  }
  char name[format::kFileNameMax], user_name[format::kFileNameMax];
  if (!format::TriggerName(job, name, sizeof(name)) ||
      !fileio::UserTriggerName(job, CommandTrust().uid, user_name, sizeof(user_name))) {
    std::fprintf(stderr, "flightrec trigger: job id %s too long\n", job);
    return 2;
  }
  const std::string host = LocalHostName();
  char why[fileio::kWhyMax * 2 + format::kPathMax] = {};
  if (!fileio::WriteTrigger(args.dir.c_str(), job, host.c_str(), getpid(), args.reason.c_str(),
                            CommandTrust(), why, sizeof(why))) {
    std::fprintf(stderr, "flightrec trigger: %s\n", why);
    return 2;
  }
  // Which of the two names holds it: ours under the trigger's name, else
  // the per-user one.
  struct stat st;
  const std::string dir_slash = args.dir + "/";
  const bool first = lstat((dir_slash + name).c_str(), &st) == 0 && S_ISREG(st.st_mode) &&
                     fileio::Believed(st, CommandTrust(), nullptr, 0);
  const std::string written = dir_slash + (first ? name : user_name);
  const char* path = written.c_str();
  if (job_dumps + job_rings == 0) {
    const std::string others = files.empty()
                                   ? std::string()
                                   : " (it holds " + std::to_string(files.size()) +
                                         " files of other jobs, e.g. " + BaseName(files[0]) + ")";
    std::fprintf(stderr,
                 "flightrec trigger: warning: job %s (from %s): no ring or dump of it in %s%s, "
                 "so nothing says a rank watches this file; if the ranks' rings live elsewhere "
                 "(NCCL_FLIGHTREC_DIR), pass --ring-dir to check. Wrote %s\n",
                 job, source.c_str(), args.dir.c_str(), others.c_str(), path);
  } else {
    std::fprintf(stderr,
                 "flightrec trigger: job %s (from %s): %zu rings, %zu dumps seen; wrote %s\n", job,
                 source.c_str(), job_rings, job_dumps, path);
  }
  std::printf("%s\n", path);
  return 0;
}

}  // namespace

void AddTriggerCommand(CLI::App& app, int* exit_code) {
  auto args = std::make_shared<TriggerArgs>();
  CLI::App* cmd = app.add_subcommand(
      "trigger", "Ask every watching rank of a job to seal a dump (writes the trigger file)");
  cmd->add_option("DIR", args->dir, "The ranks' dump directory (NCCL_FLIGHTREC_DUMP_DIR)")
      ->required();
  cmd->add_option("--job", args->job,
                  "Job id (default: NCCL_FLIGHTREC_JOB_ID, SLURM_JOB_ID, "
                  "TORCHELASTIC_RUN_ID, else the only job with files in DIR and the ring dirs)");
  cmd->add_option("--ring-dir", args->ring_dirs,
                  "The ranks' ring directory (NCCL_FLIGHTREC_DIR) when not DIR; repeatable. "
                  "Refuses when none holds a ring of the job");
  cmd->add_option("--reason", args->reason,
                  "user (a snapshot: the ranks seal request dumps) or timeout (the ranks seal "
                  "hang dumps, as when a rank's own op timed out)")
      ->check(CLI::Validator(
          [](const std::string& reason) -> std::string {
            if (format::IsTriggerReason(reason.c_str())) return "";
            return "'" + reason + "' is not a trigger reason: use " + format::kTriggerReasonUser +
                   " or " + format::kTriggerReasonTimeout;
          },
          "user|timeout"))
      ->capture_default_str();
  cmd->callback([args, exit_code]() { *exit_code = RunTrigger(*args); });
}

}  // namespace cli
}  // namespace flightrec

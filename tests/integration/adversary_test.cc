// flightrec tried as another user of the job's group would (issue 25,
// docs/security.md). The job runs as uid 4343 with its own private ring
// directory; its dumps go to a project directory `2775 root:4444` (group
// writable, setgid, not sticky: the usual shared project directory), which
// uid 4242, a stranger in the same group 4444, can write too. The stranger
// plants files there (symlinks, a forged trigger, forged dumps, a forged
// done marker, verdict locks it keeps fresh) before and while the job runs.
// Each test asserts what the acceptance demands: the files of the
// job's user are untouched, nothing secret reaches a dump, the real verdict
// still comes, a healthy job gets no verdict and no hook run; and, at the
// end, the modes of what flightrec creates and the directories it refuses
// (a stranger's at the default ring directory's name, a world-writable dump
// directory without the sticky bit).
//
// Root is needed to become those users (setresuid in forked children):
// without it every test here is skipped with that reason.
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "flightrec/job_dir.h"
#include "flightrec/record_format.h"
#include "integration/adversary.h"
#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kUntilLog = 7;     // flightrec-emu: --until-log reached
constexpr int kUntilDumps = 4;   // flightrec-emu: --until-dumps reached
constexpr int kInterrupted = 6;  // flightrec-emu: SIGTERM, ranks killed

// The private file of the job's user that the stranger wants: its first
// line is a well-formed trigger, so a reader that followed a symlinked
// trigger would take it and copy it along.
constexpr char kToken[] = "tok3n-SECRET-4343 1 timeout\nsecond-line-SECRET pw=hunter2\n";
const char* const kTokenMarks[] = {"tok3n", "SECRET", "hunter2"};

// The host a forged dump names: a Slurm hostlist expression, which the
// plugin (sanitizing to [A-Za-z0-9._-]) never writes.
constexpr char kForgedHost[] = "gpu[001-064]";

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Entries of `dir` (names only, "." and ".." left out), sorted.
std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string n = e->d_name;
      if (n != "." && n != "..") out.push_back(n);
    }
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Octal(mode_t m) {
  char buf[16];
  snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(m & 07777));
  return buf;
}

bool WaitFor(const std::function<bool()>& done, int bound_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (!done()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return true;
}

// Sets a file's times to 2001-01-01 (without following a symlink), so that
// a write through it shows.
void MakeOld(const std::string& path) {
  const struct timespec t[2] = {{978307200, 0}, {978307200, 0}};
  utimensat(AT_FDCWD, path.c_str(), t, AT_SYMLINK_NOFOLLOW);
}

std::string Name(bool ok, const char* buf) { return ok ? std::string(buf) : std::string(); }

std::string TriggerName(const std::string& job) {
  char b[format::kFileNameMax];
  return Name(format::TriggerName(job.c_str(), b, sizeof(b)), b);
}
std::string ReportName(const std::string& job, const char* ext) {
  char b[format::kFileNameMax];
  return Name(format::VerdictReportName(job.c_str(), ext, b, sizeof(b)), b);
}
std::string DoneName(const std::string& job) {
  char b[format::kFileNameMax];
  return Name(format::DoneName(job.c_str(), b, sizeof(b)), b);
}
std::string LockName(const std::string& job, uint64_t g) {
  char b[format::kFileNameMax];
  return Name(format::LockName(job.c_str(), g, b, sizeof(b)), b);
}
std::string SpawnHintName(const std::string& job) {
  char b[format::kFileNameMax];
  return Name(format::SpawnHintName(job.c_str(), b, sizeof(b)), b);
}
std::string HookLogName(const std::string& job) {
  char b[format::kFileNameMax];
  return Name(format::HookLogName(job.c_str(), b, sizeof(b)), b);
}
std::string DumpName(const std::string& job, const std::string& host, pid_t pid, uint32_t n) {
  char b[format::kFileNameMax];
  return Name(format::DumpName(job.c_str(), host.c_str(), pid, n, b, sizeof(b)), b);
}

// The job user's own names (`flightrec-<job>.u<uid>.*`): the trigger, the
// reports and the done marker, which flightrec uses where another user's
// file holds the shared name in a sticky directory.
std::vector<std::string> UserNames(const std::string& job) {
  std::vector<std::string> names = {"flightrec-" + job + ".u" + std::to_string(kJobUid) +
                                    ".trigger"};
  char b[format::kFileNameMax];
  for (const char* ext : {"txt", "md", "html", "json"}) {
    names.push_back(
        Name(format::UserVerdictReportName(job.c_str(), kJobUid, ext, b, sizeof(b)), b));
  }
  names.push_back(Name(format::UserDoneName(job.c_str(), kJobUid, b, sizeof(b)), b));
  return names;
}

// The fixed names flightrec writes in a dump directory for `job`, and the
// fixed temporaries its writers used (`<name>.tmp`).
std::vector<std::string> FixedNames(const std::string& job) {
  std::vector<std::string> names;
  for (const char* ext : {"txt", "md", "html", "json"}) names.push_back(ReportName(job, ext));
  names.push_back(DoneName(job));
  for (uint64_t g = 1; g <= 3; ++g) names.push_back(LockName(job, g));
  names.push_back(SpawnHintName(job));
  names.push_back(HookLogName(job));
  for (const std::string& u : UserNames(job)) names.push_back(u);
  const size_t n = names.size();
  for (size_t i = 0; i < n; ++i) names.push_back(names[i] + ".tmp");
  names.push_back(TriggerName(job) + ".tmp");
  return names;
}

// The names whose place the stranger can only guess once it sees a pid of
// the job's user in /proc: that process's dumps and the temporaries its
// writers named after their pid.
std::vector<std::string> PidNames(const std::string& job, const std::string& host, pid_t pid) {
  std::vector<std::string> names;
  const std::string p = "." + std::to_string(pid) + ".tmp";
  for (uint32_t n = 1; n <= 3; ++n) {
    const std::string dump = DumpName(job, host, pid, n);
    names.push_back(dump);
    names.push_back(dump + p);
  }
  names.push_back(TriggerName(job) + p);
  names.push_back(DoneName(job) + p);
  names.push_back(SpawnHintName(job) + p);
  names.push_back(".flightrec-watch-probe-" + std::to_string(pid) + ".tmp");
  return names;
}

class Adversary : public ::testing::Test {
 protected:
  // The stranger's forgery for `job`: dumps of its own emulated job (4 ranks,
  // one stuck), their host field rewritten to kForgedHost, recompressed, its
  // files. Fills `forged` with their paths (in the stranger's home).
  void ForgeDumpsInto(const std::string& job, std::vector<std::string>* forged_out) {
    std::vector<std::string>& forged = *forged_out;
    const std::string own = stranger_home_ + "/own";
    ASSERT_TRUE(MakeDirAs(own, kStrangerUid, kStrangerGid, 0700));
    ASSERT_TRUE(MakeDirAs(stranger_home_ + "/tmp", kStrangerUid, kStrangerGid, 0700));
    {
      JobSlot slot;
      auto forger = StartJob(Stranger(), stranger_home_, job,
                             "--ranks 4 --tp 2 --ranks-per-node 4 --ops 600 --step-us 20 "
                             "--fault stuck:rank=1:op=41 --until-dumps 4 --hang-timeout-s 60",
                             {{"NCCL_FLIGHTREC_DIR", own},
                              {"NCCL_FLIGHTREC_DUMP_DIR", own},
                              {"TMPDIR", stranger_home_ + "/tmp"},
                              {"NCCL_FLIGHTREC_TIMEOUT_S", "1"},
                              {"NCCL_FLIGHTREC_VERDICT", "0"},
                              {"NCCL_FLIGHTREC_ON_VERDICT", ""}});
      ASSERT_EQ(forger->Wait(120), kUntilDumps) << "the stranger's own job sealed no 4 dumps";
    }
    // The forgery: the same images, their host field rewritten.
    const std::vector<std::string> sources = ListFiles(own, ".frdump");
    ASSERT_GE(sources.size(), 4u);
    for (size_t i = 0; i < sources.size(); ++i) {
      std::string image = DecompressedDump(sources[i]);
      ASSERT_GT(image.size(), offsetof(format::FileHeader, host) + 64) << sources[i];
      char* host = &image[offsetof(format::FileHeader, host)];
      memset(host, 0, 64);
      memcpy(host, kForgedHost, sizeof(kForgedHost) - 1);
      const std::string raw = stranger_home_ + "/forged-" + std::to_string(i) + ".raw";
      const std::string out = stranger_home_ + "/forged-" + std::to_string(i) + ".frdump";
      ASSERT_TRUE(testing::WriteBytes(raw, image.data(), image.size()));
      ASSERT_EQ(RunShell("zstd -q -f -c '" + raw + "' > '" + out + "'"), 0);
      ASSERT_EQ(chown(out.c_str(), kStrangerUid, kStrangerGid), 0);
      forged.push_back(out);
    }
  }
  std::vector<std::string> ForgeDumps(const std::string& job) {
    std::vector<std::string> forged;
    ForgeDumpsInto(job, &forged);
    return forged;
  }
  void SetUp() override {
    if (geteuid() != 0) {
      GTEST_SKIP() << "needs root: these tests act as uid 4343 (the job's user) and uid 4242 "
                      "(a stranger in its group 4444) through setresuid";
    }
    // The scratch dir is root's (0700): let the two users through to theirs.
    ASSERT_EQ(chmod(testing::TempRoot().c_str(), 0711), 0);
    base_ = MakeTempDir("adversary");
    ASSERT_FALSE(base_.empty());
    ASSERT_EQ(chmod(base_.c_str(), 0755), 0);
    home_ = base_ + "/home-job";
    stranger_home_ = base_ + "/home-stranger";
    project_ = base_ + "/project";
    rings_ = home_ + "/rings";
    token_ = home_ + "/token";
    hook_out_ = home_ + "/hook-runs.txt";
    ASSERT_TRUE(MakeDirAs(home_, kJobUid, kJobGid, 0700));
    ASSERT_TRUE(MakeDirAs(home_ + "/tmp", kJobUid, kJobGid, 0700));
    ASSERT_TRUE(MakeDirAs(rings_, kJobUid, kJobGid, 0700));
    ASSERT_TRUE(MakeDirAs(stranger_home_, kStrangerUid, kStrangerGid, 0700));
    ASSERT_TRUE(MakeDirAs(project_, 0, kProjectGid, 02775));
    ASSERT_TRUE(MakeFileAs(token_, kToken, kJobUid, kJobGid, 0600));
    MakeOld(token_);
    token_before_ = FingerprintOf(token_);
    const std::string home = home_;
    ASSERT_EQ(DoAs(JobUser(), [&] { return access(home.c_str(), W_OK | X_OK) == 0 ? 0 : 1; }), 0)
        << "uid 4343 cannot reach " << home_ << ": a directory above it is closed to others";
    host_ = PluginHostName();
    products_ = BuildDir();
    const std::vector<std::string> used = {"bin/flightrec-emu", "bin/flightrec",
                                           "lib/libnccl-profiler-flightrec.so"};
    const std::string dir = products_;
    for (const std::string& f : used) {
      ASSERT_EQ(access((dir + "/" + f).c_str(), R_OK), 0) << dir << "/" << f << " is not built";
    }
    const int reach = DoAs(JobUser(), [&] {
      for (const std::string& f : used) {
        if (access((dir + "/" + f).c_str(), R_OK | X_OK) != 0) return 1;
      }
      return 0;
    });
    if (reach != 0) {
      // The build dir is out of the other users' reach (under /root, say):
      // they run a copy of the three products, which link nothing of it.
      products_ = base_ + "/products";
      ASSERT_EQ(RunShell("mkdir -p '" + products_ + "/bin' '" + products_ +
                         "/lib' && chmod -R 755 '" + products_ + "'"),
                0);
      for (const std::string& f : used) {
        ASSERT_EQ(RunShell("cp '" + dir + "/" + f + "' '" + products_ + "/" + f + "'"), 0) << f;
      }
    }
  }

  std::string Cli() const { return products_ + "/bin/flightrec"; }

  // The environment of the job's processes: the real plugin, its private
  // ring dir, the project dir for dumps, a 2 s watchdog, a hook that
  // appends one line per run to hook_out_.
  std::map<std::string, std::string> JobEnv(const std::string& job) const {
    return {{"NCCL_PROFILER_PLUGIN", "flightrec"},
            {"NCCL_DEBUG", "INFO"},
            {"LD_LIBRARY_PATH", products_ + "/lib"},
            {"TMPDIR", home_ + "/tmp"},
            {"NCCL_FLIGHTREC_DIR", rings_},
            {"NCCL_FLIGHTREC_DUMP_DIR", project_},
            {"NCCL_FLIGHTREC_JOB_ID", job},
            {"NCCL_FLIGHTREC_TIMEOUT_S", "2"},
            {"NCCL_FLIGHTREC_POLL_MS", "100"},
            {"NCCL_FLIGHTREC_ON_VERDICT",
             "printf '%s|%s\\n' \"$FLIGHTREC_VERDICT\" \"$FLIGHTREC_CULPRITS\" >> " + hook_out_}};
  }

  // Starts `flightrec-emu run` as `who`; `env` entries override JobEnv's
  // (an empty value unsets one). Files of the run: <home>/<job>.*.
  std::unique_ptr<UserProcess> StartJob(const Identity& who, const std::string& home,
                                        const std::string& job, const std::string& args,
                                        const std::map<std::string, std::string>& env) const {
    std::map<std::string, std::string> all = JobEnv(job);
    for (const auto& [k, v] : env) all[k] = v;
    const std::string cmd = "'" + products_ + "/bin/flightrec-emu' run --job-dir '" + home + "/" +
                            job + ".job' --summary '" + home + "/" + job +
                            ".summary.json' --log-file '" + home + "/" + job +
                            ".nccl.log' --job-id " + job + " " + args;
    return std::make_unique<UserProcess>(who, cmd, UserEnv(home, all), home,
                                         home + "/" + job + ".out");
  }

  // A job of the job's user whose rank 3 (of 8) hangs outside NCCL: the
  // in-job verdict names it, and the job ends a little after the plugin
  // logged how the verdict's hook ended.
  int RunHungJob(const std::string& job, const std::map<std::string, std::string>& env = {},
                 const std::string& ranks = "--ranks 8 --tp 2 --ranks-per-node 8",
                 const std::string& fault = "stuck:rank=3:op=121",
                 const std::string& until_log = kHookTag) {
    JobSlot slot;
    auto p = StartJob(JobUser(), home_, job,
                      ranks + " --ops 600 --step-us 20 --fault " + fault + " --until-log '" +
                          until_log + "' --linger-s 2 --hang-timeout-s 60",
                      env);
    return p->Wait(150);
  }

  std::string JobLog(const std::string& job) const {
    return ReadText(home_ + "/" + job + ".nccl.log") + ReadText(home_ + "/" + job + ".out");
  }

  nlohmann::json Verdict(const std::string& job) const {
    std::ifstream in(project_ + "/" + ReportName(job, "json"));
    return nlohmann::json::parse(in, nullptr, false);
  }

  // Every dump in the project dir; with `ours`, only those of the job's user.
  std::vector<std::string> Dumps(bool ours) const {
    std::vector<std::string> out;
    for (const std::string& f : ListFiles(project_, ".frdump")) {
      struct stat st;
      if (lstat(f.c_str(), &st) == 0 && (!ours || st.st_uid == kJobUid)) out.push_back(f);
    }
    return out;
  }

  // The job user's view of a dump (`flightrec show --json`, run as that
  // user), its decompressed image and its raw bytes: none may hold a byte
  // of the token.
  void ExpectNoTokenIn(const std::string& dump) {
    std::string shown;
    RunAs(JobUser(), "'" + Cli() + "' show --json '" + dump + "'", UserEnv(home_, {}), home_, 60,
          &shown);
    const std::string raw = ReadText(dump);
    const std::string image = DecompressedDump(dump);
    EXPECT_FALSE(image.empty()) << dump << " is no zstd frame";
    for (const char* mark : kTokenMarks) {
      EXPECT_EQ(shown.find(mark), std::string::npos)
          << "`flightrec show --json " << dump << "` shows the token's '" << mark << "'";
      EXPECT_EQ(image.find(mark), std::string::npos)
          << dump << " (decompressed) holds the token's '" << mark << "'";
      EXPECT_EQ(raw.find(mark), std::string::npos) << dump << " holds the token's '" << mark << "'";
    }
  }

  // Rings of `job` in `dir`.
  static size_t RingsOf(const std::string& dir, const std::string& job) {
    size_t n = 0;
    for (const std::string& f : ListFiles(dir, ".ring")) {
      if (f.find("/flightrec-" + job + "-") != std::string::npos) ++n;
    }
    return n;
  }

  // A pid of a rank of the job's user (a `flightrec-emu` process that is
  // not the launcher `launcher`), or 0.
  static pid_t SomeRankPid(pid_t launcher) {
    for (const auto& [pid, comm] : ProcessesOf(kJobUid)) {
      if (pid != launcher && comm == "flightrec-emu") return pid;
    }
    return 0;
  }

  std::string products_, base_, home_, stranger_home_, project_, rings_, token_, hook_out_, host_;
  Fingerprint token_before_;
};

// Symlinks planted by the stranger at every name flightrec writes in the
// dump directory: the fixed ones (verdict reports, done marker, locks,
// spawn hint, hook log, their old fixed temporaries) before the job starts,
// the trigger pointing at the job user's token, and each process's dump
// names and pid-named temporaries as soon as its pid shows in /proc. Each
// fixed one points at a private file of the job's user (0600, dated 2001),
// each pid-named one at a path in the user's home that does not exist. A
// real hang follows, with its in-job verdict: every target is unchanged,
// nothing was created behind a dangling link, no dump holds a byte of the
// token, and the verdict names the real culprit.
TEST_F(Adversary, PlantedSymlinksAtEveryNameLeaveTheJobUsersFilesUnchanged) {
  const std::string job = "adv-links";
  const std::string targets = home_ + "/targets";
  ASSERT_TRUE(MakeDirAs(targets, kJobUid, kJobGid, 0700));
  std::map<std::string, Fingerprint> before;
  const std::vector<std::string> fixed = FixedNames(job);
  for (const std::string& name : fixed) {
    ASSERT_FALSE(name.empty());
    const std::string t = targets + "/" + name;
    ASSERT_TRUE(
        MakeFileAs(t, "private file of uid 4343 behind " + name + "\n", kJobUid, kJobGid, 0600));
    MakeOld(t);
    before[t] = FingerprintOf(t);
  }
  const std::string planted_log = stranger_home_ + "/planted-pids.txt";
  const std::string project = project_, host = host_, token = token_;
  const std::string trigger = TriggerName(job);
  std::set<pid_t> seen;
  StrangerLoop stranger(
      [&, fixed]() mutable {
        symlink(token.c_str(), (project + "/" + trigger).c_str());
        for (const std::string& n : fixed) {
          symlink((targets + "/" + n).c_str(), (project + "/" + n).c_str());
        }
        for (const auto& [pid, comm] : ProcessesOf(kJobUid)) {
          if (!seen.insert(pid).second) continue;
          for (const std::string& n : PidNames(job, host, pid)) {
            symlink((targets + "/" + n).c_str(), (project + "/" + n).c_str());
          }
          std::ofstream(planted_log, std::ios::app) << pid << "\n";
        }
      },
      10);
  // The stranger's first round is in place before the job starts.
  ASSERT_TRUE(WaitFor(
      [&] {
        struct stat st;
        return lstat((project_ + "/" + fixed.back()).c_str(), &st) == 0 && S_ISLNK(st.st_mode);
      },
      10));
  const int status = RunHungJob(job);
  stranger.Stop();

  const std::string log = JobLog(job);
  EXPECT_EQ(status, kUntilLog) << "no verdict and hook lines in the job's log:\n"
                               << log.substr(0, 4000);
  const nlohmann::json verdict = Verdict(job);
  ASSERT_TRUE(verdict.is_object()) << "no verdict JSON in " << project_;
  EXPECT_EQ(CulpritWorldRanks(verdict), std::vector<int>{3}) << verdict.value("headline", "");
  EXPECT_EQ(Lines(ReadText(hook_out_)).size(), 1u) << ReadText(hook_out_);

  // The scenario happened: the stranger saw every rank's pid while it ran.
  std::set<std::string> planted;
  for (const std::string& l : Lines(ReadText(planted_log))) planted.insert(l);
  std::ifstream s(home_ + "/" + job + ".summary.json");
  const nlohmann::json summary = nlohmann::json::parse(s, nullptr, false);
  ASSERT_TRUE(summary.is_object());
  for (const auto& r : summary["ranks"]) {
    EXPECT_EQ(planted.count(std::to_string(r.value("pid", 0))), 1u)
        << "the stranger never saw rank " << r.value("rank", -1)
        << "'s pid: its names were not planted";
  }

  // The job user's files: unchanged, and nothing new behind a dangling link.
  EXPECT_EQ(FingerprintOf(token_), token_before_) << token_ << " changed";
  for (const auto& [path, fp] : before) {
    const Fingerprint now = FingerprintOf(path);
    EXPECT_TRUE(now == fp) << path << " changed (a write through the planted symlink): now "
                           << now.content.size() << " bytes, mode " << Octal(now.mode);
  }
  std::vector<std::string> expected;
  for (const std::string& n : fixed) expected.push_back(n);
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Entries(targets), expected) << "a file was created behind a dangling planted symlink";

  // What the job wrote in place of the links is its own, and holds no token.
  for (const std::string& d : Dumps(false)) {
    struct stat st;
    ASSERT_EQ(lstat(d.c_str(), &st), 0);
    if (S_ISLNK(st.st_mode)) continue;  // a planted name no process used
    EXPECT_EQ(st.st_uid, kJobUid) << d;
    ExpectNoTokenIn(d);
  }
  EXPECT_GE(Dumps(true).size(), 8u) << "every rank seals a dump";
}

// A healthy job; once its ranks run, the stranger makes the trigger a
// symlink to the job user's token (whose first line is a well-formed
// trigger). Nothing is sealed for it. Then the job's user triggers a
// snapshot for real (`flightrec trigger`): every rank dumps, and no dump
// holds a byte of the token, as `flightrec show --json`, the decompressed
// image and the raw file.
TEST_F(Adversary, SymlinkedTriggerPutsNoByteOfItsTargetInAnyDump) {
  const std::string job = "adv-trigger";
  JobSlot slot;
  auto p = StartJob(JobUser(), home_, job,
                    "--ranks 4 --tp 2 --ranks-per-node 4 --ops 100000 --step-us 2000 "
                    "--hang-timeout-s 60",
                    {});
  ASSERT_TRUE(WaitFor([&] { return RingsOf(rings_, job) == 4; }, 60))
      << "the job's 4 rings never appeared:\n"
      << JobLog(job).substr(0, 3000);
  const std::string link = project_ + "/" + TriggerName(job);
  EXPECT_EQ(DoAs(Stranger(), [&] { return symlink(token_.c_str(), link.c_str()) == 0 ? 0 : 1; }),
            0);
  // 20 watchdog polls with the stranger's trigger in place.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  EXPECT_TRUE(Dumps(false).empty()) << "a stranger's symlinked trigger sealed dumps";

  std::string out;
  EXPECT_EQ(RunAs(JobUser(), "'" + Cli() + "' trigger '" + project_ + "' --job " + job,
                  UserEnv(home_, {}), home_, 60, &out),
            0)
      << out;
  EXPECT_TRUE(WaitFor([&] { return Dumps(true).size() >= 4; }, 20))
      << "the user's own trigger sealed " << Dumps(true).size() << " dumps of 4";
  EXPECT_EQ(p->Stop(SIGTERM, 30), kInterrupted);
  EXPECT_EQ(FingerprintOf(token_), token_before_);
  for (const std::string& d : Dumps(false)) ExpectNoTokenIn(d);
}

// The stranger runs a hung job of its own under the victim's job id,
// rewrites its dumps' host to "gpu[001-064]" and, while the victim's job
// runs healthy, puts them in the project dir with a trigger claiming a
// timeout of one of the victim's ranks. The victim's job seals nothing, no
// verdict is written, its hook never runs; the job user's own analysis of
// the directory names nobody, and says whose the refused files are.
TEST_F(Adversary, ForgedDumpsAndTriggerOnAHealthyJobGiveNoVerdictAndNoHook) {
  const std::string job = "adv-forged";
  const std::vector<std::string> forged = ForgeDumps(job);
  ASSERT_GE(forged.size(), 4u);

  JobSlot slot;
  auto p = StartJob(JobUser(), home_, job,
                    "--ranks 4 --tp 2 --ranks-per-node 4 --ops 100000 --step-us 2000 "
                    "--hang-timeout-s 60",
                    {});
  ASSERT_TRUE(WaitFor([&] { return RingsOf(rings_, job) == 4; }, 60))
      << "the job's 4 rings never appeared:\n"
      << JobLog(job).substr(0, 3000);
  const pid_t victim = SomeRankPid(p->pid());
  ASSERT_GT(victim, 0);
  const std::string project = project_, host = host_;
  EXPECT_EQ(DoAs(Stranger(),
                 [&] {
                   for (size_t i = 0; i < forged.size(); ++i) {
                     std::ifstream in(forged[i], std::ios::binary);
                     std::ofstream(project + "/" +
                                       DumpName(job, kForgedHost, 90000 + static_cast<pid_t>(i), 1),
                                   std::ios::binary)
                         << in.rdbuf();
                   }
                   std::ofstream(project + "/" + TriggerName(job))
                       << host << " " << victim << " timeout\n";
                   return 0;
                 }),
            0);
  // Time for every rank to see the trigger, seal, spawn the analysis and
  // for that to write a verdict and run the hook, had it believed them.
  std::this_thread::sleep_for(std::chrono::seconds(6));
  EXPECT_EQ(p->Stop(SIGTERM, 30), kInterrupted);
  std::this_thread::sleep_for(std::chrono::seconds(2));

  EXPECT_TRUE(Dumps(true).empty()) << "the stranger's trigger sealed the job's ranks' dumps";
  for (const char* ext : {"txt", "md", "html", "json"}) {
    struct stat st;
    EXPECT_NE(lstat((project_ + "/" + ReportName(job, ext)).c_str(), &st), 0)
        << "a verdict was written on forged evidence: " << ReportName(job, ext);
  }
  struct stat st;
  EXPECT_NE(stat(hook_out_.c_str(), &st), 0) << "the hook ran:\n" << ReadText(hook_out_);

  // The job user's own analysis of the directory and its rings.
  std::string out;
  RunAs(JobUser(), "'" + Cli() + "' analyze --format json '" + project_ + "' '" + rings_ + "'",
        UserEnv(home_, {}), home_, 120, &out);
  const size_t brace = out.find('{');
  const nlohmann::json report = nlohmann::json::parse(
      brace == std::string::npos ? std::string() : out.substr(brace), nullptr, false);
  ASSERT_TRUE(report.is_object()) << out.substr(0, 3000);
  for (const auto& c : report["culprits"]) {
    EXPECT_EQ(c.value("host", "").find("gpu["), std::string::npos) << c.dump();
  }
  EXPECT_EQ(report.value("headline", "").find(kForgedHost), std::string::npos)
      << report.value("headline", "");
  EXPECT_NE(out.find("uid 4242"), std::string::npos)
      << "the refused files' reason does not name their owner:\n"
      << out.substr(0, 3000);
}

// Before a real hang, the stranger plants forged dumps of the job naming
// an odd host (gpu[001-064]), and writes a done marker whose
// covered_until_ns is far in the future, verdict locks of generations 1 to
// 4 naming a live process (its own) that it touches every 200 ms, and a
// spawn hint naming the same process. The verdict still comes, names the
// real culprit, and the hook runs once.
TEST_F(Adversary, ForgedDoneMarkerAndFreshLocksDoNotSilenceARealHang) {
  const std::string job = "adv-silence";
  const std::string project = project_, host = host_;
  // Forged dumps of this job naming an odd host, planted before the hang.
  const std::vector<std::string> forged = ForgeDumps(job);
  ASSERT_GE(forged.size(), 4u);
  EXPECT_EQ(DoAs(Stranger(),
                 [&] {
                   for (size_t i = 0; i < forged.size(); ++i) {
                     std::ifstream in(forged[i], std::ios::binary);
                     std::ofstream(project + "/" +
                                       DumpName(job, kForgedHost, 90000 + static_cast<pid_t>(i), 1),
                                   std::ios::binary)
                         << in.rdbuf();
                   }
                   return 0;
                 }),
            0);
  StrangerLoop stranger(
      [&]() {
        const pid_t me = getpid();
        char text[256];
        if (format::FormatDone(1, 1, 9000000000000000000ull, host.c_str(), me, text,
                               sizeof(text))) {
          const std::string done = project + "/" + DoneName(job);
          if (access(done.c_str(), F_OK) != 0) std::ofstream(done) << text;
        }
        for (uint64_t g = 1; g <= 4; ++g) {
          const std::string lock = project + "/" + LockName(job, g);
          if (access(lock.c_str(), F_OK) != 0) std::ofstream(lock) << host << " " << me << "\n";
          utimensat(AT_FDCWD, lock.c_str(), nullptr, AT_SYMLINK_NOFOLLOW);
        }
        const std::string hint = project + "/" + SpawnHintName(job);
        if (access(hint.c_str(), F_OK) != 0) std::ofstream(hint) << me << "\n";
      },
      200);
  ASSERT_TRUE(WaitFor(
      [&] {
        struct stat st;
        return stat((project_ + "/" + LockName(job, 4)).c_str(), &st) == 0 &&
               st.st_uid == kStrangerUid;
      },
      10));
  const int status = RunHungJob(job);
  stranger.Stop();
  const std::string log = JobLog(job);
  EXPECT_EQ(status, kUntilLog) << "no verdict and hook lines in the job's log:\n"
                               << log.substr(0, 4000);
  const nlohmann::json verdict = Verdict(job);
  ASSERT_TRUE(verdict.is_object()) << "no verdict JSON in " << project_;
  EXPECT_EQ(CulpritWorldRanks(verdict), std::vector<int>{3}) << verdict.value("headline", "");
  EXPECT_EQ(verdict.value("headline", "").find("gpu["), std::string::npos)
      << verdict.value("headline", "");
  const std::vector<std::string> runs = Lines(ReadText(hook_out_));
  ASSERT_EQ(runs.size(), 1u) << ReadText(hook_out_);
  EXPECT_EQ(runs[0].rfind("hang|", 0), 0u) << runs[0];
  struct stat st;
  ASSERT_EQ(lstat((project_ + "/" + ReportName(job, "json")).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kJobUid);
}

// Every file and directory flightrec creates in `dir` (itself included):
// regular files `file_mode`, directories `dir_mode`, owned by the job's
// user and carrying group `gid` (0: any). Returns how many files it saw.
size_t ExpectModes(const std::string& dir, mode_t file_mode, mode_t dir_mode, gid_t gid) {
  size_t files = 0;
  struct stat st;
  EXPECT_EQ(lstat(dir.c_str(), &st), 0) << dir << " was not created";
  if (lstat(dir.c_str(), &st) != 0) return 0;
  EXPECT_TRUE(S_ISDIR(st.st_mode)) << dir;
  EXPECT_EQ(Octal(st.st_mode), Octal(dir_mode)) << dir;
  EXPECT_EQ(st.st_uid, kJobUid) << dir;
  if (gid != 0) {
    EXPECT_EQ(st.st_gid, gid) << dir;
  }
  for (const std::string& n : Entries(dir)) {
    const std::string path = dir + "/" + n;
    if (lstat(path.c_str(), &st) != 0) continue;  // removed meanwhile
    if (S_ISDIR(st.st_mode)) {
      files += ExpectModes(path, file_mode, dir_mode, gid);
      continue;
    }
    ++files;
    EXPECT_TRUE(S_ISREG(st.st_mode)) << path;
    EXPECT_EQ(Octal(st.st_mode), Octal(file_mode)) << path;
    EXPECT_EQ(st.st_uid, kJobUid) << path;
    if (gid != 0) {
      EXPECT_EQ(st.st_gid, gid) << path;
    }
  }
  return files;
}

// With umask 022 and no NCCL_FLIGHTREC_DIR, a hung job with its verdict and
// hook: the rings go to a directory of the job's user alone,
// $XDG_RUNTIME_DIR/flightrec or $TMPDIR/flightrec-4343 (both are set), and
// every file flightrec made there and in the dump directory it created is
// 0600, every directory 0700.
TEST_F(Adversary, FilesAreTheJobUsersAloneByDefault) {
  const std::string job = "adv-private";
  const std::string run = home_ + "/run", out = home_ + "/out";
  ASSERT_TRUE(MakeDirAs(run, kJobUid, kJobGid, 0700));
  ASSERT_TRUE(MakeDirAs(out, kJobUid, kJobGid, 0755));
  const int status = RunHungJob(job,
                                {{"NCCL_FLIGHTREC_DIR", ""},
                                 {"XDG_RUNTIME_DIR", run},
                                 {"NCCL_FLIGHTREC_DUMP_DIR", out + "/dumps"}},
                                "--ranks 4 --tp 2 --ranks-per-node 4", "stuck:rank=1:op=121");
  EXPECT_EQ(status, kUntilLog) << JobLog(job).substr(0, 4000);
  const std::string xdg = run + "/flightrec";
  const std::string tmp = home_ + "/tmp/flightrec-" + std::to_string(kJobUid);
  const std::string rings = RingsOf(xdg, job) > 0 ? xdg : tmp;
  EXPECT_EQ(RingsOf(rings, job), 4u)
      << "the rings are in neither per-user default directory, " << xdg << " nor " << tmp;
  ExpectModes(rings, 0600, 0700, 0);
  EXPECT_GE(ExpectModes(out + "/dumps", 0600, 0700, 0), 4u + 4u)
      << "dumps and the verdict's reports";
  EXPECT_EQ(Lines(ReadText(hook_out_)).size(), 1u);
}

// The same with NCCL_FLIGHTREC_GROUP=4444 and neither XDG_RUNTIME_DIR nor
// TMPDIR: the ring directory is /tmp/flightrec-4343, files are 0640 and
// directories 0750, all of group 4444 (the on-call team may read them).
TEST_F(Adversary, WithTheGroupOptionTheGroupMayRead) {
  const std::string job = "adv-group";
  const std::string rings = "/tmp/flightrec-" + std::to_string(kJobUid);
  testing::RemoveTree(rings);
  const std::string out = home_ + "/out";
  ASSERT_TRUE(MakeDirAs(out, kJobUid, kJobGid, 0755));
  const int status = RunHungJob(job,
                                {{"NCCL_FLIGHTREC_DIR", ""},
                                 {"TMPDIR", ""},
                                 {"NCCL_FLIGHTREC_GROUP", std::to_string(kProjectGid)},
                                 {"NCCL_FLIGHTREC_DUMP_DIR", out + "/dumps"}},
                                "--ranks 4 --tp 2 --ranks-per-node 4", "stuck:rank=1:op=121");
  EXPECT_EQ(status, kUntilLog) << JobLog(job).substr(0, 4000);
  EXPECT_EQ(RingsOf(rings, job), 4u) << "the default ring directory is not " << rings;
  ExpectModes(rings, 0640, 0750, kProjectGid);
  EXPECT_GE(ExpectModes(out + "/dumps", 0640, 0750, kProjectGid), 4u + 4u)
      << "dumps and the verdict's reports";
  EXPECT_EQ(Lines(ReadText(hook_out_)).size(), 1u);
  testing::RemoveTree(rings);
}

// The default ring directory's name is predictable: the stranger creates
// /tmp/flightrec-4343 first, mode 0755 (the job could not write it) or 0777
// (the stranger could replace the rings). The job's processes refuse it,
// say so once each in the log, record nothing and run to their end; the
// stranger's directory gets no file of theirs.
TEST_F(Adversary, AStrangersDefaultRingDirectoryIsRefused) {
  const std::string rings = "/tmp/flightrec-" + std::to_string(kJobUid);
  const std::string out = home_ + "/out";
  ASSERT_TRUE(MakeDirAs(out, kJobUid, kJobGid, 0700));
  for (const mode_t mode : {0755, 0777}) {
    SCOPED_TRACE("the stranger's directory has mode " + Octal(mode));
    const std::string job = "adv-ringdir-" + Octal(mode);
    testing::RemoveTree(rings);
    ASSERT_EQ(DoAs(Stranger(),
                   [&] {
                     return mkdir(rings.c_str(), 0700) == 0 && chmod(rings.c_str(), mode) == 0 ? 0
                                                                                               : 1;
                   }),
              0);
    int status = -1;
    {
      JobSlot slot;
      auto p =
          StartJob(JobUser(), home_, job,
                   "--ranks 4 --tp 2 --ranks-per-node 4 --ops 200 --step-us 20 "
                   "--hang-timeout-s 60",
                   {{"NCCL_FLIGHTREC_DIR", ""}, {"TMPDIR", ""}, {"NCCL_FLIGHTREC_DUMP_DIR", out}});
      status = p->Wait(120);
    }
    const std::string log = JobLog(job);
    EXPECT_EQ(status, 0) << "the job did not run to its end:\n" << log.substr(0, 3000);
    size_t refusals = 0;
    for (const std::string& l : Lines(log)) {
      if (l.find("flightrec: disabled") != std::string::npos &&
          l.find(rings) != std::string::npos) {
        ++refusals;
      }
    }
    EXPECT_EQ(refusals, 4u) << "one line per process naming the directory:\n"
                            << log.substr(0, 3000);
    EXPECT_EQ(Entries(rings), std::vector<std::string>{})
        << "the job wrote into a stranger's directory";
  }
  testing::RemoveTree(rings);
}

// A dump directory every user can write without the sticky bit (0777) is
// refused for everything: a hung job seals no dump there, logs why, and
// gets no verdict; it runs on until the emulator ends it.
TEST_F(Adversary, AWorldWritableDumpDirectoryWithoutTheStickyBitIsRefused) {
  const std::string job = "adv-open";
  const std::string open_dir = base_ + "/open";
  ASSERT_TRUE(MakeDirAs(open_dir, 0, 0, 0777));
  const int status = RunHungJob(job, {{"NCCL_FLIGHTREC_DUMP_DIR", open_dir}},
                                "--ranks 4 --tp 2 --ranks-per-node 4", "stuck:rank=1:op=121",
                                "writable by every user");
  const std::string log = JobLog(job);
  EXPECT_EQ(status, kUntilLog) << "no line says the directory is writable by every user:\n"
                               << log.substr(0, 3000);
  EXPECT_EQ(Entries(open_dir), std::vector<std::string>{});
  EXPECT_EQ(log.find(kHeadlineTag), std::string::npos) << "a verdict on a refused directory";
  struct stat st;
  EXPECT_NE(stat(hook_out_.c_str(), &st), 0) << ReadText(hook_out_);
}

// In a sticky world-writable dump directory (1777) the stranger cannot
// replace the job's files, but can take names first: it creates the
// trigger, the verdict reports, the done marker, the hook log and the job
// user's own names for the trigger, reports and marker (`.u4343.*`) as its
// own files, mode 0666, before a real hang. None of them is written into
// (the stranger reads nothing of the verdict through them), and the
// verdict's headline still reaches the job's log, naming the real culprit.
TEST_F(Adversary, NamesTakenFirstInAStickyDirectoryLeakNothingAndTheVerdictComes) {
  const std::string job = "adv-sticky";
  const std::string sticky = base_ + "/sticky";
  ASSERT_TRUE(MakeDirAs(sticky, 0, 0, 01777));
  std::vector<std::string> names = {TriggerName(job), DoneName(job), HookLogName(job)};
  for (const char* ext : {"txt", "md", "html", "json"}) names.push_back(ReportName(job, ext));
  for (const std::string& u : UserNames(job)) names.push_back(u);
  std::map<std::string, Fingerprint> before;
  for (const std::string& n : names) {
    const std::string path = sticky + "/" + n;
    ASSERT_TRUE(MakeFileAs(path, "", kStrangerUid, kStrangerGid, 0666)) << path;
    MakeOld(path);
    before[path] = FingerprintOf(path);
  }
  const int status = RunHungJob(job, {{"NCCL_FLIGHTREC_DUMP_DIR", sticky}});
  const std::string log = JobLog(job);
  for (const auto& [path, fp] : before) {
    const Fingerprint now = FingerprintOf(path);
    EXPECT_TRUE(now == fp) << path << ": the job wrote into the stranger's file ("
                           << now.content.size() << " bytes now)";
  }
  EXPECT_EQ(status, kUntilLog) << "no verdict and hook lines in the job's log:\n"
                               << log.substr(0, 4000);
  std::string headline;
  for (const std::string& l : Lines(log)) {
    if (l.find(kHeadlineTag) != std::string::npos) headline = l;
  }
  EXPECT_NE(headline.find("(world rank 3)"), std::string::npos) << headline;
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

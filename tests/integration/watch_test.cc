// Acceptance tests of `flightrec watch` (issue 12, the verdict without a
// human): real dumps from the real plugin through flightrec-emu (a rank stuck
// outside NCCL, 8 ranks, 2 s watchdog), then the real CLI: the four verdict
// files, the same culprits as `flightrec analyze --format json`, the hook's
// environment and log, one verdict among several watchers, takeover of a
// frozen or killed holder, a hanging and a flooding hook, an unwritable
// directory, two jobs in one directory, a sidecar watching a live job, a
// watcher whose parent dies, and a watcher stopped by SIGTERM, SIGINT or
// SIGHUP (holding the lock, idle, in its hook). Every watcher runs under a
// bound (a hung one fails the test instead of hanging it).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {
namespace {

// The stuck ranks of the two jobs (TP ops: their peers lag in other comms).
constexpr int kStuckA = 6;
constexpr int kStuckB = 1;

std::string Flightrec() { return "'" + BuildDir() + "/bin/flightrec'"; }

struct WatchRun {
  int exit_code = -1;
  std::string out, err;
  // The last line of stdout.
  std::string LastLine() const {
    std::string s = out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    const size_t nl = s.rfind('\n');
    return nl == std::string::npos ? s : s.substr(nl + 1);
  }
};

// `flightrec watch ARGS`, bounded: a watcher still running after 120 s is
// killed and the run reports exit code 124.
WatchRun Watch(const std::string& args, const std::string& prefix = "") {
  WatchRun run;
  const std::string dir = MakeTempDir("watchrun");
  run.exit_code = RunShell(prefix + "timeout -k 5 120 " + Flightrec() + " watch " + args + " >'" +
                           dir + "/out' 2>'" + dir + "/err'");
  run.out = ReadText(dir + "/out");
  run.err = ReadText(dir + "/err");
  RunShell("rm -rf '" + dir + "'");
  return run;
}

std::string Describe(const WatchRun& r) {
  return "exit " + std::to_string(r.exit_code) + "\nstdout:\n" + r.out + "\nstderr:\n" + r.err;
}

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

uint64_t SizeOf(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

// Waits (bounded) until `path` exists.
bool WaitForFile(const std::string& path, int bound_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (!Exists(path)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

// Whether `pid` still runs (a zombie does not).
bool Running(pid_t pid) {
  const std::string stat = ReadText("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// An HTTP endpoint on 127.0.0.1 that takes one request, keeps its body and
// answers 200 (a chat webhook, for the shipped hook). Gives up after 120 s.
class OneRequestServer {
 public:
  OneRequestServer() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        listen(fd_, 4) != 0 || getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      return;
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneRequestServer() {
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/hook"; }
  // The request (headers and body); waits for the server to finish.
  std::string request() {
    if (thread_.joinable()) thread_.join();
    return request_;
  }

 private:
  void Serve() {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 120000) != 1) return;
    const int c = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (c < 0) return;
    char buf[65536];
    size_t want = std::string::npos;
    pollfd pc{c, POLLIN, 0};
    while (request_.size() < want && poll(&pc, 1, 30000) == 1) {
      const ssize_t n = read(c, buf, sizeof(buf));
      if (n <= 0) break;
      request_.append(buf, static_cast<size_t>(n));
      const size_t end = request_.find("\r\n\r\n");
      const size_t cl = request_.find("Content-Length: ");
      if (end != std::string::npos && cl != std::string::npos && cl < end) {
        want = end + 4 + std::strtoull(request_.c_str() + cl + 16, nullptr, 10);
      }
    }
    const char reply[] = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
    if (write(c, reply, sizeof(reply) - 1) < 0) request_ += "\n(reply failed)";
    close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::string request_;
};

// KEY=VALUE lines of `env` output.
std::map<std::string, std::string> ParseEnv(const std::string& text) {
  std::map<std::string, std::string> env;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    const std::string line = text.substr(pos, nl - pos);
    const size_t eq = line.find('=');
    if (eq != std::string::npos) env[line.substr(0, eq)] = line.substr(eq + 1);
    pos = nl + 1;
  }
  return env;
}

// "host:pid" of a report's culprits, in order.
std::string CulpritIds(const nlohmann::json& report) {
  std::string out;
  for (const auto& c : report["culprits"]) {
    if (!c["host"].is_string()) continue;
    if (!out.empty()) out += ' ';
    out += c["host"].get<std::string>() + ":" + std::to_string(c["pid"].get<int64_t>());
  }
  return out;
}

class WatchTest : public ::testing::Test {
 protected:
  // One stuck job per job id, run at most once per test process (ctest runs
  // each test in a process of its own) and only by the tests that need it.
  static const EmuJob& JobA() {
    if (job_a_ == nullptr) job_a_ = new EmuJob(HangJob("watcha", "wa", kStuckA, 8 * 23 + 1));
    return *job_a_;
  }
  static const EmuJob& JobB() {
    if (job_b_ == nullptr) job_b_ = new EmuJob(HangJob("watchb", "wb", kStuckB, 8 * 19 + 1));
    return *job_b_;
  }
  static void TearDownTestSuite() {
    for (EmuJob* j : {job_a_, job_b_}) {
      if (j == nullptr) continue;
      RunShell("rm -rf '" + j->dir + "'");
      delete j;
    }
    job_a_ = job_b_ = nullptr;
  }

  // The jobs' own in-job verdict is off: the watcher under test is the
  // only one (with it on, the job's watcher may win the lock, correctly,
  // and the one under test stands by).
  static std::map<std::string, std::string> JobEnv(const std::string& job_id) {
    return {{"NCCL_FLIGHTREC_TIMEOUT_S", "2"},
            {"NCCL_FLIGHTREC_VERDICT", "0"},
            {"NCCL_FLIGHTREC_MAX_COMMS", "4"},
            {"NCCL_FLIGHTREC_RECORDS", "1024"},
            {"NCCL_FLIGHTREC_JOB_ID", job_id}};
  }
  static std::string HangArgs(int rank, int op) {
    return "--ranks 8 --tp 4 --ranks-per-node 8 --ops " + std::to_string(op + 48) +
           " --step-us 20 --fault stuck:rank=" + std::to_string(rank) +
           ":op=" + std::to_string(op) + " --until-dumps 8 --hang-timeout-s 20";
  }
  static EmuJob HangJob(const std::string& tag, const std::string& job_id, int rank, int op) {
    JobSlot slot;
    return RunEmu(tag, HangArgs(rank, op), JobEnv(job_id));
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const std::string& d : dirs_) std::printf("kept %s\n", d.c_str());
      return;
    }
    for (const std::string& d : dirs_) RunShell("rm -rf '" + d + "'");
  }

  // A fresh directory (readable by anyone) for one test.
  std::string NewDir(const std::string& tag) {
    const std::string dir = MakeTempDir(tag);
    chmod(dir.c_str(), 0755);
    dirs_.push_back(dir);
    return dir;
  }

  // A copy of a job's rings and dumps, as a dump directory beside a job.
  std::string CopyOf(const EmuJob& job, const std::string& tag) {
    EXPECT_FALSE(ListFiles(job.ring_dir, ".frdump").empty()) << "the job sealed no dump";
    const std::string dir = NewDir(tag);
    RunShell("cp '" + job.ring_dir + "'/*.ring '" + job.ring_dir + "'/*.frdump '" + dir + "'/");
    return dir;
  }

  // A copy without one process's files: the world communicator still says
  // 8 ranks, so the set is never complete and the watcher holds its lock
  // until its grace period ends.
  std::string IncompleteCopyOf(const EmuJob& job, const std::string& tag) {
    const std::string dir = CopyOf(job, tag);
    const std::vector<std::string> rings = ListFiles(dir, ".ring");
    EXPECT_FALSE(rings.empty());
    if (rings.empty()) return dir;
    std::string stem = rings.front().substr(0, rings.front().size() - 5);  // "...-<pid>"
    RunShell("rm -f '" + stem + ".ring' '" + stem + "'-*.frdump");
    return dir;
  }

  static std::string Verdict(const std::string& dir, const std::string& job,
                             const std::string& ext) {
    return dir + "/flightrec-" + job + ".verdict." + ext;
  }

  static std::string DoneLine(const std::string& dir, const std::string& job) {
    return ReadText(dir + "/flightrec-" + job + ".verdict.done");
  }

  static EmuJob* job_a_;
  static EmuJob* job_b_;
  std::vector<std::string> dirs_;
};

EmuJob* WatchTest::job_a_ = nullptr;
EmuJob* WatchTest::job_b_ = nullptr;

// The four files, the JSON of `analyze --format json` (same culprits), the
// last stdout line, the hook's environment and log; garbage beside the
// dumps is skipped with a message.
TEST_F(WatchTest, WritesTheVerdictAndRunsTheHook) {
  const std::string dir = CopyOf(JobA(), "watch-verdict");
  const std::string out = NewDir("watch-hookout");
  RunShell("head -c 5000 /dev/urandom > '" + dir + "/flightrec-wa-garbage-1-1.frdump'");
  RunShell("head -c 100 /dev/urandom > '" + dir + "/notes.bin'");
  const WatchRun run = Watch("'" + dir + "' --once --on-verdict 'env > \"" + out +
                             "/hook.env\"; echo hook-ran; echo to-stderr >&2'");
  ASSERT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_NE(run.err.find("flightrec-wa-garbage-1-1.frdump"), std::string::npos) << Describe(run);
  for (const char* ext : {"json", "md", "html", "txt"}) {
    EXPECT_GT(SizeOf(Verdict(dir, "wa", ext)), 0u) << ext << "\n" << Describe(run);
  }
  EXPECT_TRUE(ListFiles(dir, ".tmp").empty()) << "temporary files left behind";

  const nlohmann::json verdict =
      nlohmann::json::parse(ReadText(Verdict(dir, "wa", "json")), nullptr, false);
  ASSERT_TRUE(verdict.is_object()) << ReadText(Verdict(dir, "wa", "json")).substr(0, 500);
  EXPECT_EQ(verdict.value("schema", ""), "flightrec.report/1");
  EXPECT_EQ(verdict.value("verdict", ""), "hang");
  EXPECT_EQ(verdict.value("job_id", ""), "wa");
  EXPECT_EQ(CulpritWorldRanks(verdict), std::vector<int>{kStuckA});
  const AnalyzeRun analyzed = RunAnalyze({dir});
  ASSERT_TRUE(analyzed.report.is_object()) << analyzed.output.substr(0, 2000);
  EXPECT_EQ(CulpritIds(verdict), CulpritIds(analyzed.report));
  EXPECT_EQ(CulpritWorldRanks(verdict), CulpritWorldRanks(analyzed.report));
  EXPECT_EQ(verdict.value("headline", ""), analyzed.report.value("headline", "x"));

  const std::string headline = verdict.value("headline", "");
  EXPECT_EQ(run.LastLine(),
            "flightrec verdict: " + headline + " (report: " + Verdict(dir, "wa", "txt") + ")");
  EXPECT_NE(ReadText(Verdict(dir, "wa", "txt")).find(headline), std::string::npos);

  const std::map<std::string, std::string> env = ParseEnv(ReadText(out + "/hook.env"));
  ASSERT_FALSE(env.empty()) << "the hook did not run\n" << Describe(run);
  EXPECT_EQ(env.at("FLIGHTREC_VERDICT"), "hang");
  EXPECT_EQ(env.at("FLIGHTREC_REPORT"), Verdict(dir, "wa", "json"));
  EXPECT_EQ(env.at("FLIGHTREC_REPORT_MD"), Verdict(dir, "wa", "md"));
  EXPECT_EQ(env.at("FLIGHTREC_JOB_ID"), "wa");
  EXPECT_EQ(env.at("FLIGHTREC_CULPRITS"), CulpritIds(verdict));
  EXPECT_FALSE(env.at("FLIGHTREC_CULPRITS").empty());
  EXPECT_TRUE(env.count("PATH")) << "the hook lost the watcher's environment";

  const std::string log = ReadText(dir + "/flightrec-wa.hook.log");
  EXPECT_NE(log.find("hook-ran"), std::string::npos) << log;
  EXPECT_NE(log.find("to-stderr"), std::string::npos) << log;
  EXPECT_NE(log.find("exited with status 0"), std::string::npos) << log;

  // The incident has its verdict: another --once watcher does nothing.
  const WatchRun again =
      Watch("'" + dir + "' --once --on-verdict 'echo again >> \"" + out + "/again.txt\"'");
  EXPECT_EQ(again.exit_code, 3) << Describe(again);
  EXPECT_FALSE(Exists(out + "/again.txt"));
  EXPECT_EQ(again.out, "");
}

// Two watchers at once: exactly one verdict and one hook run.
TEST_F(WatchTest, TwoWatchersWriteOneVerdict) {
  const std::string dir = CopyOf(JobA(), "watch-two");
  const std::string out = NewDir("watch-twoout");
  const std::string hook = " --once --on-verdict 'echo $$ >> \"" + out + "/hooks.txt\"'";
  Spawned first(Flightrec() + " watch '" + dir + "'" + hook + " >'" + out + "/1.out' 2>'" + out +
                "/1.err'");
  Spawned second(Flightrec() + " watch '" + dir + "'" + hook + " >'" + out + "/2.out' 2>'" + out +
                 "/2.err'");
  const std::multiset<int> codes = {first.Wait(120), second.Wait(120)};
  EXPECT_EQ(codes, (std::multiset<int>{0, 3})) << ReadText(out + "/1.err") << "\n---\n"
                                               << ReadText(out + "/2.err");
  const std::string hooks = ReadText(out + "/hooks.txt");
  EXPECT_EQ(std::count(hooks.begin(), hooks.end(), '\n'), 1) << "hook runs:\n" << hooks;
  EXPECT_EQ(ReadText(out + "/1.out").empty() + ReadText(out + "/2.out").empty(), 1)
      << "one verdict line in all";
  EXPECT_EQ(DoneLine(dir, "wa").rfind("generation=1 ", 0), 0u) << DoneLine(dir, "wa");
}

// The holder is frozen (SIGSTOP) while it waits for the set: its lock goes
// stale, a second watcher takes over and writes the verdict, and the first,
// thawed, sees the newer generation and gives up without writing.
TEST_F(WatchTest, FrozenHolderIsTakenOverAndGivesUp) {
  const std::string dir = IncompleteCopyOf(JobA(), "watch-frozen");
  const std::string out = NewDir("watch-frozenout");
  Spawned holder(Flightrec() + " watch '" + dir +
                 "' --once --grace 300 --on-verdict 'echo A >> \"" + out + "/hooks.txt\"' >'" +
                 out + "/a.out' 2>'" + out + "/a.err'");
  ASSERT_TRUE(WaitForFile(dir + "/flightrec-wa.verdict-1.lock", 60)) << ReadText(out + "/a.err");
  kill(holder.pid(), SIGSTOP);
  const WatchRun taker =
      Watch("'" + dir + "' --once --grace 1 --on-verdict 'echo B >> \"" + out + "/hooks.txt\"'");
  kill(holder.pid(), SIGCONT);
  EXPECT_EQ(taker.exit_code, 0) << Describe(taker);
  EXPECT_NE(taker.err.find("taking over"), std::string::npos) << Describe(taker);
  EXPECT_EQ(holder.Wait(60), 3) << ReadText(out + "/a.err");
  EXPECT_EQ(ReadText(out + "/a.out"), "");
  EXPECT_EQ(ReadText(out + "/hooks.txt"), "B\n");
  EXPECT_EQ(DoneLine(dir, "wa").rfind("generation=2 ", 0), 0u) << DoneLine(dir, "wa");
  EXPECT_EQ(CulpritWorldRanks(
                nlohmann::json::parse(ReadText(Verdict(dir, "wa", "json")), nullptr, false)),
            std::vector<int>{kStuckA});
}

// The holder is SIGKILLed mid-work: its lock stays behind and the next
// watcher takes it over.
TEST_F(WatchTest, StaleLockOfAKilledWatcherIsTakenOver) {
  const std::string dir = IncompleteCopyOf(JobA(), "watch-killed");
  const std::string out = NewDir("watch-killedout");
  {
    Spawned holder(Flightrec() + " watch '" + dir + "' --once --grace 300 >'" + out +
                   "/a.out' 2>'" + out + "/a.err'");
    ASSERT_TRUE(WaitForFile(dir + "/flightrec-wa.verdict-1.lock", 60)) << ReadText(out + "/a.err");
    kill(holder.pid(), SIGKILL);
    EXPECT_EQ(holder.Wait(60), 128 + SIGKILL);
  }
  EXPECT_FALSE(Exists(Verdict(dir, "wa", "json")));
  const WatchRun taker = Watch("'" + dir + "' --once --grace 1");
  EXPECT_EQ(taker.exit_code, 0) << Describe(taker);
  EXPECT_NE(taker.err.find("taking over"), std::string::npos) << Describe(taker);
  EXPECT_EQ(DoneLine(dir, "wa").rfind("generation=2 ", 0), 0u) << DoneLine(dir, "wa");
  EXPECT_TRUE(Exists(Verdict(dir, "wa", "txt")));
}

// SIGTERM while it holds the lock (waiting for a dump that never comes): it
// exits by itself with 128 + 15 and one line saying why, writes nothing,
// leaves no temporary file, and marks its lock released, so the next
// watcher takes the verdict over at once, not after the 5 s a stale lock
// needs (from another host, where the holder's pid cannot be checked,
// staleness would be the only way).
TEST_F(WatchTest, StopSignalReleasesTheLockForTheNextWatcher) {
  const std::string dir = IncompleteCopyOf(JobA(), "watch-sigterm");
  const std::string out = NewDir("watch-sigtermout");
  const std::string lock = dir + "/flightrec-wa.verdict-1.lock";
  Spawned holder(Flightrec() + " watch '" + dir + "' --once --grace 300 >'" + out + "/a.out' 2>'" +
                 out + "/a.err'");
  ASSERT_TRUE(WaitForFile(lock, 60)) << ReadText(out + "/a.err");
  EXPECT_EQ(holder.Stop(SIGTERM, 60), 128 + SIGTERM) << ReadText(out + "/a.err");
  EXPECT_FALSE(holder.signaled()) << "killed by the signal instead of exiting";
  const std::string err = ReadText(out + "/a.err");
  EXPECT_NE(err.find("stopped by SIGTERM: no verdict written; released the verdict lock " + lock),
            std::string::npos)
      << err;
  EXPECT_EQ(ReadText(out + "/a.out"), "");
  EXPECT_NE(ReadText(lock).find(" released"), std::string::npos) << ReadText(lock);
  EXPECT_FALSE(Exists(Verdict(dir, "wa", "json")));
  EXPECT_TRUE(ListFiles(dir, ".tmp").empty());
  const WatchRun taker = Watch("'" + dir + "' --once --grace 1");
  EXPECT_EQ(taker.exit_code, 0) << Describe(taker);
  EXPECT_NE(taker.err.find("taking over from released verdict lock " + lock), std::string::npos)
      << Describe(taker);
  EXPECT_EQ(DoneLine(dir, "wa").rfind("generation=2 ", 0), 0u) << DoneLine(dir, "wa");
  EXPECT_TRUE(Exists(Verdict(dir, "wa", "txt")));
}

// SIGINT and SIGHUP end a watcher that holds no lock (nothing to watch
// yet) the same way: 128 + signal, one line, no lock file made.
TEST_F(WatchTest, StopSignalEndsAnIdleWatcher) {
  const std::string dir = NewDir("watch-idle");
  const std::string out = NewDir("watch-idleout");
  for (const auto& [sig, name] : {std::make_pair(SIGINT, "SIGINT"), {SIGHUP, "SIGHUP"}}) {
    SCOPED_TRACE(name);
    Spawned watcher(Flightrec() + " watch '" + dir + "' --poll-ms 50 >'" + out + "/w.out' 2>'" +
                    out + "/w.err'");
    ASSERT_TRUE(watcher.WaitBlocks(sig, 60)) << ReadText(out + "/w.err");
    EXPECT_EQ(watcher.Stop(sig, 60), 128 + sig) << ReadText(out + "/w.err");
    EXPECT_FALSE(watcher.signaled());
    EXPECT_NE(
        ReadText(out + "/w.err").find(std::string("stopped by ") + name + ": no verdict lock held"),
        std::string::npos)
        << ReadText(out + "/w.err");
  }
  EXPECT_TRUE(ListFiles(dir, ".lock").empty());
}

// SIGTERM during the hook: the verdict and its done marker stand (exit 0
// with --once, the headline printed), the hook's process group is ended as
// at its timeout, and the log says why.
TEST_F(WatchTest, StopSignalDuringTheHookEndsTheHookTheVerdictStands) {
  const std::string dir = CopyOf(JobA(), "watch-hookstop");
  const std::string out = NewDir("watch-hookstopout");
  Spawned watcher(Flightrec() + " watch '" + dir +
                  "' --once --on-verdict 'sleep 300 & echo $! > \"" + out +
                  "/sleep.pid\"; wait' >'" + out + "/w.out' 2>'" + out + "/w.err'");
  ASSERT_TRUE(WaitForFile(out + "/sleep.pid", 60)) << ReadText(out + "/w.err");
  EXPECT_EQ(watcher.Stop(SIGTERM, 60), 0) << ReadText(out + "/w.err");
  EXPECT_FALSE(watcher.signaled());
  EXPECT_TRUE(Exists(Verdict(dir, "wa", "json")));
  EXPECT_EQ(DoneLine(dir, "wa").rfind("generation=1 ", 0), 0u) << DoneLine(dir, "wa");
  EXPECT_EQ(ReadText(out + "/w.out").rfind("flightrec verdict: ", 0), 0u)
      << ReadText(out + "/w.out");
  const std::string log = ReadText(dir + "/flightrec-wa.hook.log");
  EXPECT_NE(log.find("hook killed: flightrec watch was asked to stop"), std::string::npos) << log;
  const pid_t sleeper = static_cast<pid_t>(std::atoi(ReadText(out + "/sleep.pid").c_str()));
  ASSERT_GT(sleeper, 0);
  for (int i = 0; i < 100 && Running(sleeper); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a liveness bound
  }
  EXPECT_FALSE(Running(sleeper)) << "the hook's background child survived";
  EXPECT_TRUE(ListFiles(dir, ".tmp").empty());
}

// A hook that hangs is killed with its process group after --hook-timeout;
// the verdict stands.
TEST_F(WatchTest, HangingHookIsKilled) {
  const std::string dir = CopyOf(JobA(), "watch-hanghook");
  const std::string out = NewDir("watch-hanghookout");
  const WatchRun run =
      Watch("'" + dir + "' --once --hook-timeout 1 --on-verdict 'sleep 300 & echo $! > \"" + out +
            "/sleep.pid\"; echo started; wait; echo never'");
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_TRUE(Exists(Verdict(dir, "wa", "json")));
  const std::string log = ReadText(dir + "/flightrec-wa.hook.log");
  EXPECT_NE(log.find("started"), std::string::npos) << log;
  EXPECT_EQ(log.find("never"), std::string::npos) << log;
  EXPECT_NE(log.find("killed after its timeout"), std::string::npos) << log;
  EXPECT_NE(run.err.find("killed after its timeout"), std::string::npos) << Describe(run);
  const pid_t sleeper = static_cast<pid_t>(std::atoi(ReadText(out + "/sleep.pid").c_str()));
  ASSERT_GT(sleeper, 0);
  EXPECT_FALSE(Running(sleeper)) << "the hook's background child survived";
}

// A hook that floods its output: the log stops at 1 MiB, the rest is read
// and dropped (the hook runs to its end), and the watcher says so.
TEST_F(WatchTest, FloodingHookLogIsCapped) {
  const std::string dir = CopyOf(JobA(), "watch-flood");
  const WatchRun run = Watch("'" + dir +
                             "' --once --on-verdict 'head -c 20000000 /dev/zero | tr \"\\\\0\" x; "
                             "echo done-flooding >&2'");
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  const uint64_t size = SizeOf(dir + "/flightrec-wa.hook.log");
  EXPECT_GE(size, 1u << 20);
  EXPECT_LE(size, (1u << 20) + 4096);
  const std::string log = ReadText(dir + "/flightrec-wa.hook.log");
  EXPECT_NE(log.find("exited with status 0, 20000014 bytes of output (log capped"),
            std::string::npos)
      << log.substr(log.size() > 300 ? log.size() - 300 : 0);
}

// A hook that fails: logged on stderr and in the hook log; the verdict
// stands and the watcher exits 0.
TEST_F(WatchTest, FailingHookIsLoggedNotFatal) {
  const std::string dir = CopyOf(JobA(), "watch-failhook");
  const WatchRun run = Watch("'" + dir + "' --once --on-verdict 'echo about to fail; exit 7'");
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  EXPECT_TRUE(Exists(Verdict(dir, "wa", "json")));
  EXPECT_NE(run.err.find("hook exited with status 7"), std::string::npos) << Describe(run);
  EXPECT_NE(run.err.find("the verdict stands"), std::string::npos) << Describe(run);
  const std::string log = ReadText(dir + "/flightrec-wa.hook.log");
  EXPECT_NE(log.find("about to fail"), std::string::npos) << log;
  EXPECT_NE(log.find("hook exited with status 7"), std::string::npos) << log;
  EXPECT_EQ(run.LastLine().rfind("flightrec verdict: HANG: ", 0), 0u) << Describe(run);

  // Started by a process that ignores SIGCHLD, as a framework that reaps
  // its children itself may (bash passes the ignore on through exec; dash
  // does not): the status is still the hook's.
  const std::string again = CopyOf(JobA(), "watch-failhook-ign");
  const std::string out = NewDir("watch-failhookout");
  {
    std::FILE* f = std::fopen((out + "/run.sh").c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fprintf(f, "trap '' CHLD\nexec %s watch '%s' --once --on-verdict 'exit 7'\n",
                 Flightrec().c_str(), again.c_str());
    std::fclose(f);
  }
  Spawned ignoring("/bin/bash '" + out + "/run.sh' >/dev/null 2>'" + out + "/err'");
  EXPECT_EQ(ignoring.Wait(120), 0) << ReadText(out + "/err");
  EXPECT_NE(ReadText(out + "/err").find("hook exited with status 7"), std::string::npos)
      << ReadText(out + "/err");
}

// The dump directory vanishes under a watcher: exit 2, naming it.
TEST_F(WatchTest, VanishedDirectoryIsAnError) {
  const std::string dir = NewDir("watch-vanish");
  const std::string out = NewDir("watch-vanishout");
  // The directory goes once the watcher has probed it (its probe file is
  // created and deleted): earlier, it would be missing at the start.
  const int fd = inotify_init1(IN_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(inotify_add_watch(fd, dir.c_str(), IN_DELETE), 0) << std::strerror(errno);
  Spawned watcher(Flightrec() + " watch '" + dir + "' --poll-ms 50 >'" + out + "/w.out' 2>'" + out +
                  "/w.err'");
  struct pollfd p = {fd, POLLIN, 0};
  ASSERT_EQ(poll(&p, 1, 60000), 1) << "no probe deleted in 60 s: " << ReadText(out + "/w.err");
  close(fd);
  RunShell("rm -rf '" + dir + "'");
  EXPECT_EQ(watcher.Wait(60), 2) << ReadText(out + "/w.err");
  EXPECT_NE(ReadText(out + "/w.err").find(dir + ": not a readable directory"), std::string::npos)
      << ReadText(out + "/w.err");
}

// A first directory the watcher cannot write to (or that does not exist):
// exit 2 and a line naming it.
TEST_F(WatchTest, UnwritableDirectoryIsAnError) {
  const std::string dir = CopyOf(JobA(), "watch-readonly");
  // Root writes anywhere a mode allows nothing: run the watcher as nobody.
  const std::string as =
      geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  chmod(dir.c_str(), 0555);
  const WatchRun run = Watch("'" + dir + "' --once", as);
  chmod(dir.c_str(), 0755);
  EXPECT_EQ(run.exit_code, 2) << Describe(run);
  EXPECT_NE(run.err.find(dir + ": cannot write verdicts there"), std::string::npos)
      << Describe(run);
  EXPECT_FALSE(Exists(Verdict(dir, "wa", "json")));

  const WatchRun missing = Watch("'" + dir + "/gone' --once");
  EXPECT_EQ(missing.exit_code, 2) << Describe(missing);
  EXPECT_NE(missing.err.find(dir + "/gone"), std::string::npos) << Describe(missing);
}

// Two jobs dump into one directory: one verdict per job, each naming its own
// culprit from its own files, locks never mixed.
TEST_F(WatchTest, TwoJobsShareOneDirectory) {
  const std::string dir = CopyOf(JobA(), "watch-twojobs");
  RunShell("cp '" + JobB().ring_dir + "'/*.ring '" + JobB().ring_dir + "'/*.frdump '" + dir + "'/");
  Spawned a(Flightrec() + " watch '" + dir + "' --once --job wa >/dev/null 2>&1");
  Spawned b(Flightrec() + " watch '" + dir + "' --once --job wb >/dev/null 2>&1");
  EXPECT_EQ(a.Wait(120), 0);
  EXPECT_EQ(b.Wait(120), 0);
  for (const auto& [job, rank] : std::map<std::string, int>{{"wa", kStuckA}, {"wb", kStuckB}}) {
    const nlohmann::json v =
        nlohmann::json::parse(ReadText(Verdict(dir, job, "json")), nullptr, false);
    ASSERT_TRUE(v.is_object()) << job;
    EXPECT_EQ(v.value("job_id", ""), job);
    EXPECT_EQ(CulpritWorldRanks(v), std::vector<int>{rank}) << job;
    EXPECT_TRUE(v["inputs"]["rejected"].empty()) << job << ": " << v["inputs"]["rejected"].dump();
    EXPECT_EQ(DoneLine(dir, job).rfind("generation=1 ", 0), 0u) << DoneLine(dir, job);
  }
}

// Every name a watcher creates in its directory is one that another
// watcher's or an analysis's listing of the same directory skips, even
// caught empty mid-write: a writability probe named like an input made a
// second job's verdict list it as a rejected input (two watchers, one
// directory).
TEST_F(WatchTest, NamesAWatcherCreatesAreNeverInputs) {
  const std::string dir = CopyOf(JobA(), "watch-names");
  const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  ASSERT_GE(fd, 0) << std::strerror(errno);
  ASSERT_GE(inotify_add_watch(fd, dir.c_str(), IN_CREATE | IN_MOVED_TO), 0) << std::strerror(errno);
  const WatchRun run = Watch("'" + dir + "' --once");
  EXPECT_EQ(run.exit_code, 0) << Describe(run);
  std::set<std::string> created;
  alignas(struct inotify_event) char buf[64 * 1024];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) {
    for (ssize_t off = 0; off < n;) {
      const auto* e = reinterpret_cast<const struct inotify_event*>(buf + off);
      if (e->len > 0) created.insert(e->name);
      off += static_cast<ssize_t>(sizeof(struct inotify_event) + e->len);
    }
  }
  close(fd);
  EXPECT_NE(created.count("flightrec-wa.verdict.json"), 0u) << "inotify saw no verdict";
  const std::string beside = CopyOf(JobA(), "watch-names-analyze");
  for (const std::string& name : created) RunShell(": > '" + beside + "/" + name + "'");
  const AnalyzeRun analyzed = RunAnalyze({beside});
  ASSERT_TRUE(analyzed.report.is_object()) << analyzed.output;
  EXPECT_TRUE(analyzed.report["inputs"]["rejected"].empty())
      << analyzed.report["inputs"]["rejected"].dump();
}

// A sidecar started before the job: it sees the dumps appear, waits for the
// set and writes the verdict the analyzer gives for the same directory.
TEST_F(WatchTest, SidecarJudgesALiveJob) {
  const std::string dir = NewDir("watch-live");
  const std::string out = NewDir("watch-liveout");
  Spawned watcher(Flightrec() + " watch '" + dir + "' --job live --once --poll-ms 100 >'" + out +
                  "/w.out' 2>'" + out + "/w.err'");
  std::map<std::string, std::string> env = JobEnv("live");
  env["NCCL_FLIGHTREC_DIR"] = dir;
  EmuJob job;
  {
    JobSlot slot;
    job = RunEmu("watchlive", HangArgs(kStuckA, 8 * 23 + 1), env);
  }
  dirs_.push_back(job.dir);
  EXPECT_EQ(watcher.Wait(120), 0) << ReadText(out + "/w.err");
  const nlohmann::json v =
      nlohmann::json::parse(ReadText(Verdict(dir, "live", "json")), nullptr, false);
  ASSERT_TRUE(v.is_object()) << ReadText(out + "/w.err");
  EXPECT_EQ(CulpritWorldRanks(v), std::vector<int>{kStuckA});
  const AnalyzeRun analyzed = RunAnalyze({dir});
  EXPECT_EQ(CulpritIds(v), CulpritIds(analyzed.report));
  EXPECT_EQ(ReadText(out + "/w.out").rfind("flightrec verdict: HANG: ", 0), 0u)
      << ReadText(out + "/w.out");
}

// The shipped hook examples, for real: the chat hook posts the verdict to a
// webhook (a local endpoint here), the Slurm hook drains the culprit's node
// and requeues the job (through an `scontrol` that records its arguments).
TEST_F(WatchTest, ShippedHooksWork) {
  const std::string hooks = std::string(FLIGHTREC_SOURCE_DIR) + "/scripts/hooks";
  const std::string dir = CopyOf(JobA(), "watch-chat");
  OneRequestServer chat;
  const WatchRun posted =
      Watch("'" + dir +
            "' --once --on-verdict 'no_proxy=127.0.0.1 NO_PROXY=127.0.0.1 FLIGHTREC_CHAT_WEBHOOK=" +
            chat.url() + " " + hooks + "/post-to-chat.sh'");
  EXPECT_EQ(posted.exit_code, 0) << Describe(posted);
  const std::string request = chat.request();
  EXPECT_EQ(request.rfind("POST /hook ", 0), 0u) << request.substr(0, 500);
  const size_t body = request.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos) << request.substr(0, 500);
  const nlohmann::json message = nlohmann::json::parse(request.substr(body + 4), nullptr, false);
  ASSERT_TRUE(message.is_object()) << request.substr(body + 4, 500);
  const nlohmann::json verdict =
      nlohmann::json::parse(ReadText(Verdict(dir, "wa", "json")), nullptr, false);
  EXPECT_NE(message.value("text", "").find(verdict.value("headline", "?")), std::string::npos)
      << message.value("text", "");
  EXPECT_NE(ReadText(dir + "/flightrec-wa.hook.log").find("posted the verdict"), std::string::npos)
      << ReadText(dir + "/flightrec-wa.hook.log");

  // The job's node list holds the culprit's host (from the chat run's
  // verdict: the same dumps); the fake `scontrol show hostnames` expands a
  // comma-separated list.
  const std::string culprit_host =
      verdict["culprits"].empty() ? "?" : verdict["culprits"][0].value("host", "?");
  const std::string slurm_dir = CopyOf(JobA(), "watch-slurm");
  const std::string bin = NewDir("watch-fakebin");
  RunShell(
      "printf '#!/bin/sh\\necho \"$*\" >> \"%s/calls.txt\"\\n"
      "[ \"$1 $2\" != \"show hostnames\" ] || printf \"%%s\\\\n\" \"$3\" | tr , \"\\\\n\"\\n' '" +
      bin + "' > '" + bin + "/scontrol' && chmod +x '" + bin + "/scontrol'");
  const WatchRun slurm = Watch("'" + slurm_dir + "' --once --on-verdict 'PATH=\"" + bin +
                               ":$PATH\" SLURM_JOB_ID=4242 SLURM_JOB_NODELIST=othernode," +
                               culprit_host + " " + hooks + "/slurm-hold-and-requeue.sh'");
  EXPECT_EQ(slurm.exit_code, 0) << Describe(slurm);
  const nlohmann::json slurm_verdict =
      nlohmann::json::parse(ReadText(Verdict(slurm_dir, "wa", "json")), nullptr, false);
  ASSERT_TRUE(slurm_verdict.is_object());
  ASSERT_EQ(slurm_verdict["culprits"].size(), 1u);
  const std::string host = slurm_verdict["culprits"][0].value("host", "?");
  const std::string calls = ReadText(bin + "/calls.txt");
  EXPECT_EQ(calls.rfind("show hostnames othernode," + host + "\nupdate NodeName=" + host +
                            " State=DRAIN Reason=flightrec: job 4242 hung",
                        0),
            0u)
      << calls << "\n"
      << ReadText(slurm_dir + "/flightrec-wa.hook.log");
  EXPECT_NE(calls.find("\nrequeue 4242\n"), std::string::npos) << calls;
}

// Without --once, on a live job that goes on sealing dumps after the verdict
// (here: a trigger left a timeout after it, as a victim whose op got stuck
// later leaves one with its timeout dump): those dumps belong to the judged
// hang, and the hook runs once.
TEST_F(WatchTest, LateDumpsOfTheSameHangMakeNoSecondVerdict) {
  const std::string dir = NewDir("watch-loop");
  const std::string out = NewDir("watch-loopout");
  Spawned watcher(Flightrec() + " watch '" + dir + "' --job loop --poll-ms 100 --on-verdict " +
                  "'echo $FLIGHTREC_VERDICT >> \"" + out + "/hooks.txt\"' >'" + out +
                  "/w.out' 2>'" + out + "/w.err'");
  std::map<std::string, std::string> env = JobEnv("loop");
  env["NCCL_FLIGHTREC_DIR"] = dir;
  // No --until-dumps: the job stays hung for 10 s, every rank's watchdog
  // running, before the launcher ends it.
  std::string args = HangArgs(kStuckA, 8 * 23 + 1);
  args = args.substr(0, args.find(" --until-dumps")) + " --hang-timeout-s 10";
  EmuJob job;
  std::thread run([&] {
    JobSlot slot;
    job = RunEmu("watchloop", args, env);
  });
  const bool judged = WaitForFile(dir + "/flightrec-loop.verdict.done", 60);
  if (judged) {
    // A rank ignores a trigger within its timeout (2 s) of its own last
    // dump, all sealed before the verdict: this one is answered.
    std::this_thread::sleep_for(std::chrono::milliseconds(2100));
    // The trigger a timed-out rank leaves (a user's plain trigger seals
    // request dumps, which are no hang evidence).
    RunShell(Flightrec() + " trigger '" + dir + "' --job loop --reason timeout >/dev/null");
  }
  run.join();
  dirs_.push_back(job.dir);
  ASSERT_TRUE(judged) << ReadText(out + "/w.err");
  std::this_thread::sleep_for(std::chrono::seconds(1));  // a few polls after the last dump
  kill(watcher.pid(), SIGTERM);
  watcher.Wait(30);
  const std::string done = DoneLine(dir, "loop");
  EXPECT_EQ(done.rfind("generation=1 ", 0), 0u) << done << ReadText(out + "/w.err");
  EXPECT_EQ(ReadText(out + "/hooks.txt"), "hang\n") << ReadText(out + "/w.err");
  const std::string lines = ReadText(out + "/w.out");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 1) << lines;
  // The point of the test: hang dumps did arrive after the verdict.
  const uint64_t written =
      std::strtoull(done.substr(done.find("covered_until_ns=") + 17).c_str(), nullptr, 10);
  int later = 0;
  for (const std::string& f : ListFiles(dir, ".frdump")) {
    struct stat st;
    if (stat(f.c_str(), &st) == 0 && static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                                             static_cast<uint64_t>(st.st_mtim.tv_nsec) >
                                         written) {
      ++later;
    }
  }
  EXPECT_GT(later, 0) << "no dump was sealed after the verdict: the test proves nothing";
}

// --parent-pid: when the spawning process dies, the watcher leaves without
// writing anything (its lock goes stale for another to take over).
TEST_F(WatchTest, WatcherExitsWhenItsParentDies) {
  const std::string dir = IncompleteCopyOf(JobA(), "watch-orphan");
  const std::string out = NewDir("watch-orphanout");
  Spawned parent("sleep 300");
  Spawned watcher(Flightrec() + " watch '" + dir + "' --once --grace 300 --parent-pid " +
                  std::to_string(parent.pid()) + " >'" + out + "/w.out' 2>'" + out + "/w.err'");
  ASSERT_TRUE(WaitForFile(dir + "/flightrec-wa.verdict-1.lock", 60)) << ReadText(out + "/w.err");
  kill(parent.pid(), SIGKILL);
  parent.Wait(10);
  EXPECT_EQ(watcher.Wait(60), 2) << ReadText(out + "/w.err");
  EXPECT_NE(ReadText(out + "/w.err").find("parent process"), std::string::npos)
      << ReadText(out + "/w.err");
  EXPECT_FALSE(Exists(Verdict(dir, "wa", "json")));
  EXPECT_EQ(ReadText(out + "/w.out"), "");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

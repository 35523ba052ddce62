// The in-job verdict (issue 12, docs/design/verdict.md) through the real
// plugin in flightrec-emu jobs, with the build's `flightrec` found beside the
// plugin (build/lib -> build/bin) unless a test sets NCCL_FLIGHTREC_ANALYZER.
//
// Each hung job runs with a 2 s watchdog and ends (flightrec-emu
// --until-log, exit 7) a few seconds after the headline first appears in
// the job's NCCL log, so that a second verdict, had one been spawned, would
// have had time to show. Faults run at 16 ranks (--tp 4, 8 per node), one
// job each; the bad-input cases at 8 ranks.
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <utime.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kUntilLog = 7;  // flightrec-emu: --until-log reached

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

std::vector<std::string> LinesWith(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  for (const std::string& l : Lines(text)) {
    if (l.find(needle) != std::string::npos) out.push_back(l);
  }
  return out;
}

// The pid in an emulator log line "<host>:<pid>:<tid> NCCL WARN ...".
int LogPid(const std::string& line) {
  const size_t a = line.find(':');
  return a == std::string::npos ? -1 : std::atoi(line.c_str() + a + 1);
}

int RankOfPid(const EmuJob& job, int pid) {
  for (const auto& r : job.summary["ranks"]) {
    if (r["pid"].get<int>() == pid) return r["rank"].get<int>();
  }
  return -1;
}

std::string WriteScript(const std::string& path, const std::string& body) {
  std::ofstream(path) << "#!/bin/sh\n" << body;
  chmod(path.c_str(), 0755);
  return path;
}

// The hook: one line per run with the variables it was given.
std::string HookCommand(const std::string& out) {
  // No single quote: RunEmu passes it inside one.
  return "printf \"%s|%s|%s|%s|%s\\n\" \"$FLIGHTREC_VERDICT\" \"$FLIGHTREC_REPORT\" "
         "\"$FLIGHTREC_REPORT_MD\" \"$FLIGHTREC_JOB_ID\" \"$FLIGHTREC_CULPRITS\" >> " +
         out;
}

struct VerdictJob {
  EmuJob job;
  std::string job_id;
  std::string hook_out;
};

VerdictJob RunHung(const std::string& tag, int ranks, const std::string& fault,
                   std::map<std::string, std::string> env = {}, const std::string& extra = "",
                   const std::string& until = kHookTag, const std::string& prefix = "") {
  VerdictJob v;
  v.job_id = "vd-" + tag;
  const std::string tp = ranks >= 16 ? "4" : "2";
  env.emplace("NCCL_FLIGHTREC_TIMEOUT_S", "2");
  env.emplace("NCCL_FLIGHTREC_POLL_MS", "100");
  env.emplace("NCCL_FLIGHTREC_JOB_ID", v.job_id);
  // The hook file lives beside the job dir, which RunEmu creates: use a
  // fixed name in the test's scratch dir made unique by the tag and our pid.
  v.hook_out = testing::TempRoot() + "/flightrec-verdict-hook-" + tag + "-" +
               std::to_string(getpid()) + ".txt";
  std::remove(v.hook_out.c_str());
  env.emplace("NCCL_FLIGHTREC_ON_VERDICT", HookCommand(v.hook_out));
  JobSlot slot;
  // Bounded by a load-scaled time without progress: the watchdog, then the
  // analysis and its hook at nice 19 on a busy machine.
  v.job = RunEmu(tag,
                 "--ranks " + std::to_string(ranks) + " --tp " + tp +
                     " --ranks-per-node 8 --ops 600 --step-us 20 --job-id " + v.job_id + " " +
                     fault + " --until-log '" + until + "' --linger-s 3 --hang-timeout-s " +
                     std::to_string(std::min(testing::ScaledSeconds(60), 400)) + " " + extra,
                 env, prefix);
  return v;
}

std::string VerdictStem(const VerdictJob& v) {
  return v.job.ring_dir + "/flightrec-" + v.job_id + ".verdict";
}

// Exactly one verdict, logged once, hook run once with its variables, and
// the same culprits as a later `flightrec analyze` of the directory.
// Returns the verdict's culprit world ranks.
std::vector<int> ExpectOneVerdict(const VerdictJob& v) {
  const EmuJob& job = v.job;
  EXPECT_EQ(job.status, kUntilLog) << "no headline in the job's log:\n"
                                   << job.log.substr(0, 4000) << job.stderr_text;
  const std::string stem = VerdictStem(v);
  EXPECT_EQ(ListFiles(job.ring_dir, ".verdict.json").size(), 1u);
  for (const char* ext : {".json", ".md", ".html", ".txt"}) {
    struct stat st;
    EXPECT_EQ(stat((stem + ext).c_str(), &st), 0) << stem << ext;
  }
  const std::vector<std::string> headlines = LinesWith(job.log, kHeadlineTag);
  EXPECT_EQ(headlines.size(), 1u) << job.log.substr(0, 4000);
  if (!headlines.empty()) {
    EXPECT_NE(headlines[0].find(" NCCL WARN "), std::string::npos) << headlines[0];
    EXPECT_NE(headlines[0].find("(report: " + stem + ".txt)"), std::string::npos) << headlines[0];
  }
  std::ifstream in(stem + ".json");
  const nlohmann::json verdict = nlohmann::json::parse(in, nullptr, false);
  EXPECT_TRUE(verdict.is_object()) << stem << ".json does not parse";
  if (!verdict.is_object()) return {};
  if (!headlines.empty()) {
    EXPECT_NE(headlines[0].find(verdict.value("headline", std::string("?"))), std::string::npos)
        << headlines[0];
  }

  // The hook: once, with the verdict's variables, and said in the log.
  const std::vector<std::string> hook_lines = LinesWith(job.log, kHookTag);
  EXPECT_EQ(hook_lines.size(), 1u) << job.log.substr(0, 4000);
  if (!hook_lines.empty()) {
    EXPECT_NE(hook_lines[0].find("hook exited with status 0"), std::string::npos) << hook_lines[0];
  }
  const std::vector<std::string> runs = Lines(ReadText(v.hook_out));
  EXPECT_EQ(runs.size(), 1u) << ReadText(v.hook_out);
  std::string culprits;
  for (const auto& c : verdict["culprits"]) {
    if (!culprits.empty()) culprits += ' ';
    culprits += c.value("host", "") + ":" + std::to_string(c.value("pid", 0));
  }
  if (!runs.empty()) {
    EXPECT_EQ(runs[0], verdict.value("verdict", "") + "|" + stem + ".json|" + stem + ".md|" +
                           v.job_id + "|" + culprits);
  }
  std::remove(v.hook_out.c_str());

  // A later `flightrec analyze` of the same files names the same culprits.
  const AnalyzeRun later = RunAnalyze({job.ring_dir});
  EXPECT_EQ(CulpritWorldRanks(later.report), CulpritWorldRanks(verdict)) << Describe(later);
  return CulpritWorldRanks(verdict);
}

bool Contains(const std::vector<int>& v, int x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

struct FaultCase {
  const char* name;
  const char* spec;
  int culprit;
  // GPU hang: every member is inside the kernel, nobody is to blame; the
  // all_stuck finding names the rank instead.
  bool all_stuck;
  // Count mismatch: the emulated job does not hang (launches pair by order,
  // as in NCCL); the trigger file a timed-out rank would leave in a real
  // job is written with `flightrec trigger --reason timeout` once the op is
  // long past (a plain user trigger seals request dumps, which are no hang
  // evidence and start no verdict), and those trigger dumps bring it.
  bool user_trigger;
};

// How gtest (and ctest's test names) show the parameter.
void PrintTo(const FaultCase& f, std::ostream* os) { *os << f.name << ": " << f.spec; }

class VerdictPerFault : public ::testing::TestWithParam<FaultCase> {};

TEST_P(VerdictPerFault, OneVerdictInTheJobsLogNamingTheCulprit) {
  const FaultCase& f = GetParam();
  std::string spec = std::string("--fault ") + f.spec;
  std::map<std::string, std::string> env;
  std::string prefix;
  if (f.user_trigger) {
    const std::string rings = MakeTempDir(std::string("verdict-") + f.name);
    env["NCCL_FLIGHTREC_DIR"] = rings;
    // The job runs on for seconds with 16 ranks: under a sanitizer on a
    // loaded machine one of them can be starved past a 2 s watchdog, seal a
    // timeout dump of its own and be judged the hang's culprit (CI's TSan
    // run named world rank 15 beside 12). The watchdog is scaled by the
    // machine's load, as a rank merely slowed down is not a stuck one.
    env["NCCL_FLIGHTREC_TIMEOUT_S"] = testing::ScaledSecondsText(2);
    // Runs until the verdict ends it, 20 ms per op (the mismatch at 0.9 s,
    // the trigger at 4 s): the 16 running ranks leave the CPU to the
    // analysis (nice 19), and the live rings it reads one after the other
    // move little meanwhile. The faster a running job moves, the older a
    // ring read first is beside one read last, and the analyzer takes a
    // member whose early ring has not reached an op its peers were seen
    // waiting in for a second for a laggard (docs/analyzer.md, "Limit:
    // live rings are read one after the other").
    spec += " --ops 100000 --step-us 20000";
    prefix = "(sleep 4; '" + BuildDir() + "/bin/flightrec' trigger '" + rings + "' --job vd-" +
             f.name + " --reason timeout >/dev/null) & ";
  }
  VerdictJob v = RunHung(f.name, 16, spec, env, "", kHookTag, prefix);
  const std::vector<int> culprits = ExpectOneVerdict(v);
  if (f.all_stuck) {
    std::ifstream in(VerdictStem(v) + ".json");
    const nlohmann::json verdict = nlohmann::json::parse(in, nullptr, false);
    const auto stuck = FindingsOf(verdict, "all_stuck");
    EXPECT_TRUE(std::any_of(stuck.begin(), stuck.end(),
                            [&](const nlohmann::json& s) { return Names(s, f.culprit); }))
        << "no all_stuck finding names world rank " << f.culprit;
  } else {
    EXPECT_TRUE(Contains(culprits, f.culprit))
        << "culprits do not include world rank " << f.culprit;
  }
}

// Op numbers by schedule position (i % 8): 1 TP AllGather, 2 DP
// ReduceScatter, 3 world AllReduce, 4 TP Broadcast, 5 TP grouped.
INSTANTIATE_TEST_SUITE_P(
    Faults, VerdictPerFault,
    ::testing::Values(FaultCase{"stuck", "stuck:rank=5:op=241", 5, false, false},
                      FaultCase{"skip", "skip:rank=3:op=164", 3, false, false},
                      FaultCase{"kill", "kill:rank=9:op=205", 9, false, false},
                      FaultCase{"count", "mismatch:rank=12:op=43:field=count", 12, false, true},
                      FaultCase{"gpuhang", "gpu-hang:rank=14:op=146", 14, true, false}),
    [](const ::testing::TestParamInfo<FaultCase>& i) { return std::string(i.param.name); });

// Only the culprit may spawn (NCCL_FLIGHTREC_VERDICT=1 on rank 5 alone): a
// process whose user thread is stuck still gives the verdict, from its
// watchdog thread.
TEST(Verdict, TheCulpritItselfGivesTheVerdict) {
  VerdictJob v =
      RunHung("culprit", 16, "--fault stuck:rank=5:op=241 --rank-env 5:NCCL_FLIGHTREC_VERDICT=1",
              {{"NCCL_FLIGHTREC_VERDICT", "0"}});
  const std::vector<int> culprits = ExpectOneVerdict(v);
  EXPECT_EQ(culprits, std::vector<int>{5});
  const std::vector<std::string> headlines = LinesWith(v.job.log, kHeadlineTag);
  ASSERT_EQ(headlines.size(), 1u);
  EXPECT_EQ(RankOfPid(v.job, LogPid(headlines[0])), 5) << headlines[0];
}

// The chosen process dies (SIGKILL, with its `watch`) while its analysis
// holds the verdict lock: another rank's watchdog sees the lock go stale and
// spawns again; one verdict still comes out, in a survivor's log. The
// analyzer is a wrapper around the real binary: the first call runs it,
// waits for its lock to hold "host pid" (the lock is created empty, then
// written), freezes it (the analysis is mid-way), then kills it
// and its parent rank; calls made before that wait for it (so the first is
// surely the lock's holder), later ones run the real binary.
TEST(Verdict, AnotherRankTakesOverWhenTheChosenOneIsKilled) {
  const std::string dir = MakeTempDir("verdict-wrap");
  const std::string real = BuildDir() + "/bin/flightrec";
  const std::string wrapper = WriteScript(
      dir + "/flightrec-wrapper",
      "marks='" + dir +
          "'\n"
          "dumps=$2\n"
          "if mkdir \"$marks/first\" 2>/dev/null; then\n"
          "  echo $PPID > \"$marks/first/rank_pid\"\n"
          "  '" +
          real +
          "' \"$@\" & w=$!\n"
          "  while :; do\n"
          "    for f in \"$dumps\"/flightrec-*.verdict-*.lock; do [ -s \"$f\" ] && break 2; done\n"
          "    sleep 0.02\n"
          "  done\n"
          "  kill -STOP $w\n"
          "  grep -q \" $w\\$\" \"$f\" || touch \"$marks/not-ours\"\n"
          "  for d in \"$dumps\"/flightrec-*.verdict.done; do [ -e \"$d\" ] && touch "
          "\"$marks/late\"; done\n"
          "  kill -9 $w $PPID\n"
          "  touch \"$marks/killed\"\n"
          "  exit 137\n"
          "fi\n"
          "i=0\n"
          "while [ ! -e \"$marks/killed\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
          "echo $PPID >> \"$marks/others\"\n"
          "exec '" +
          real + "' \"$@\"\n");
  VerdictJob v =
      RunHung("takeover", 16, "--fault kill:rank=9:op=205", {{"NCCL_FLIGHTREC_ANALYZER", wrapper}});
  struct stat st;
  ASSERT_NE(stat((dir + "/first/rank_pid").c_str(), &st), -1) << "the analyzer never ran";
  ASSERT_NE(stat((dir + "/late").c_str(), &st), 0)
      << "the first analysis finished before it could be killed; scenario not exercised";
  ASSERT_NE(stat((dir + "/not-ours").c_str(), &st), 0)
      << "the first analysis did not hold the lock; scenario not exercised";
  const int chosen = std::atoi(ReadText(dir + "/first/rank_pid").c_str());
  const std::vector<int> culprits = ExpectOneVerdict(v);
  EXPECT_TRUE(Contains(culprits, 9));
  EXPECT_FALSE(ReadText(dir + "/others").empty()) << "nobody took over";
  const std::vector<std::string> headlines = LinesWith(v.job.log, kHeadlineTag);
  ASSERT_EQ(headlines.size(), 1u);
  EXPECT_NE(LogPid(headlines[0]), chosen) << "the killed process cannot have logged it";
  for (const auto& r : v.job.summary["ranks"]) {
    if (r["pid"].get<int>() == chosen) {
      EXPECT_EQ(r["signal"], SIGKILL);
      EXPECT_FALSE(r["killed_by_launcher"].get<bool>()) << "the chosen rank was alive to the end";
    }
  }
  // The verdict came from a later lock generation than the dead one's.
  const std::string done = ReadText(VerdictStem(v) + ".done");
  EXPECT_EQ(done.find("generation=1 "), std::string::npos) << done;
  RunShell("rm -rf '" + dir + "'");
}

// Hosts that ignore SIGCHLD (the kernel reaps) or reap every child
// themselves take the exit status away; the verdict is still logged once,
// and the host's disposition is left as it was.
TEST(Verdict, HostThatIgnoresSigchld) {
  ExpectOneVerdict(RunHung("sigign", 8, "--fault stuck:rank=3:op=121 --sigchld ignore"));
}

TEST(Verdict, HostThatReapsEveryChild) {
  ExpectOneVerdict(RunHung("sigreap", 8, "--fault stuck:rank=3:op=121 --sigchld reap"));
}

// A lock left by a process killed during an earlier analysis (its mtime an
// hour old) does not block the verdict: the next generation takes over.
TEST(Verdict, StaleLockOfAKilledProcessIsTakenOver) {
  const std::string rings = MakeTempDir("verdict-stale");
  const std::string lock = rings + "/flightrec-vd-stale.verdict-1.lock";
  std::ofstream(lock) << "otherhost 4242\n";
  struct utimbuf old = {time(nullptr) - 3600, time(nullptr) - 3600};
  utime(lock.c_str(), &old);
  VerdictJob v =
      RunHung("stale", 8, "--fault stuck:rank=3:op=121", {{"NCCL_FLIGHTREC_DIR", rings}});
  EXPECT_TRUE(Contains(ExpectOneVerdict(v), 3));
  const std::string done = ReadText(VerdictStem(v) + ".done");
  EXPECT_NE(done.find("generation=2 "), std::string::npos) << done;
  RunShell("rm -rf '" + rings + "'");
}

// Two jobs hang at once in one directory: each gets its own verdict naming
// its own culprit, logged in its own log.
TEST(Verdict, TwoJobsSharingOneDirectory) {
  const std::string rings = MakeTempDir("verdict-shared");
  std::map<std::string, std::string> env = {{"NCCL_FLIGHTREC_TIMEOUT_S", "2"},
                                            {"NCCL_FLIGHTREC_POLL_MS", "100"}};
  EmuJob a, b;
  a.dir = MakeTempDir("verdict-a");
  b.dir = MakeTempDir("verdict-b");
  a.ring_dir = b.ring_dir = rings;
  const std::string common =
      "--ranks 8 --tp 2 --ranks-per-node 8 --ops 600 --step-us 20 "
      "--until-log '" +
      std::string(kHeadlineTag) + "' --linger-s 3 --hang-timeout-s 60 ";
  std::map<std::string, std::string> env_a = env, env_b = env;
  env_a["NCCL_FLIGHTREC_JOB_ID"] = "vd-shared-a";
  env_b["NCCL_FLIGHTREC_JOB_ID"] = "vd-shared-b";
  {
    JobSlot slot;
    RunShell("(" +
             EmuCommand(a, common + "--job-id vd-shared-a --fault stuck:rank=2:op=121", env_a) +
             " >/dev/null 2>&1 & " +
             EmuCommand(b, common + "--job-id vd-shared-b --fault stuck:rank=6:op=97", env_b) +
             " >/dev/null 2>&1; wait)");
  }
  for (auto [job, id, culprit] :
       {std::tuple<EmuJob*, std::string, int>{&a, "vd-shared-a", 2}, {&b, "vd-shared-b", 6}}) {
    std::ifstream s(job->dir + "/summary.json");
    job->summary = nlohmann::json::parse(s, nullptr, false);
    ASSERT_TRUE(job->summary.is_object()) << id;
    EXPECT_EQ(job->summary["status"], kUntilLog) << id;
    job->log = ReadText(job->dir + "/nccl.log");
    const std::vector<std::string> headlines = LinesWith(job->log, kHeadlineTag);
    ASSERT_EQ(headlines.size(), 1u) << id;
    const std::string stem = rings + "/flightrec-" + id + ".verdict";
    EXPECT_NE(headlines[0].find("(report: " + stem + ".txt)"), std::string::npos) << headlines[0];
    std::ifstream in(stem + ".json");
    const nlohmann::json verdict = nlohmann::json::parse(in, nullptr, false);
    EXPECT_EQ(CulpritWorldRanks(verdict), std::vector<int>{culprit}) << id;
    EXPECT_EQ(verdict.value("job_id", ""), id);
  }
  EXPECT_EQ(ListFiles(rings, ".verdict.json").size(), 2u);
  RunShell("rm -rf '" + rings + "' '" + a.dir + "' '" + b.dir + "'");
}

// An unknown NCCL_FLIGHTREC_GROUP: the plugin warns and believes only the
// job user's files, and so does the `flightrec watch` it spawns with the
// job's environment, which still gives the verdict, naming the culprit.
TEST(Verdict, AnUnknownTrustGroupIsIgnoredByThePluginAndTheWatchAlike) {
  VerdictJob v = RunHung("badgroup", 8, "--fault stuck:rank=3:op=121",
                         {{"NCCL_FLIGHTREC_GROUP", "no-such-group-fr"}});
  EXPECT_FALSE(LinesWith(v.job.log, "NCCL_FLIGHTREC_GROUP").empty()) << v.job.log.substr(0, 3000);
  EXPECT_EQ(ExpectOneVerdict(v), std::vector<int>{3});
}

// A missing analyzer: one clear line per candidate process, no verdict, and
// the job goes on exactly as it was (still hung, every rank alive).
TEST(Verdict, MissingAnalyzerIsLoggedAndTheJobGoesOn) {
  VerdictJob v = RunHung("missing", 8, "--fault stuck:rank=3:op=121",
                         {{"NCCL_FLIGHTREC_ANALYZER", "/nonexistent/bin/flightrec"}}, "",
                         "the analyzer is not safe to run: /nonexistent/bin/flightrec is not an "
                         "executable file");
  EXPECT_EQ(v.job.status, kUntilLog) << v.job.log.substr(0, 3000);
  EXPECT_TRUE(LinesWith(v.job.log, kHeadlineTag).empty());
  EXPECT_TRUE(ListFiles(v.job.ring_dir, ".verdict.json").empty());
  for (const auto& r : v.job.summary["ranks"]) {
    EXPECT_TRUE(r["killed_by_launcher"].get<bool>()) << "rank " << r["rank"] << " did not survive";
  }
}

// An analyzer that others could have replaced (its directory is writable
// by every user, as a shared working directory is) is never run: logged,
// no verdict, the job goes on.
TEST(Verdict, AnAnalyzerOthersCouldReplaceIsNeverRun) {
  const std::string dir = MakeTempDir("verdict-open-dir");
  const std::string ran = dir + "/ran";
  const std::string planted = WriteScript(dir + "/flightrec", "touch '" + ran + "'\n");
  ASSERT_EQ(chmod(dir.c_str(), 0777), 0);
  VerdictJob v = RunHung("planted", 8, "--fault stuck:rank=3:op=121",
                         {{"NCCL_FLIGHTREC_ANALYZER", planted}}, "", "can be written by others");
  EXPECT_EQ(v.job.status, kUntilLog) << v.job.log.substr(0, 3000);
  EXPECT_TRUE(LinesWith(v.job.log, kHeadlineTag).empty());
  EXPECT_NE(access(ran.c_str(), F_OK), 0) << "the planted analyzer ran";
  RunShell("rm -rf '" + dir + "'");
}

// A broken analyzer (crashes at once): logged with how it died, no verdict,
// the job goes on.
TEST(Verdict, BrokenAnalyzerIsLoggedAndTheJobGoesOn) {
  const std::string dir = MakeTempDir("verdict-broken");
  const std::string broken =
      WriteScript(dir + "/flightrec", "echo 'flightrec: corrupt install' >&2\nkill -SEGV $$\n");
  VerdictJob v = RunHung("broken", 8, "--fault stuck:rank=3:op=121",
                         {{"NCCL_FLIGHTREC_ANALYZER", broken}}, "", "no verdict: the analysis");
  EXPECT_EQ(v.job.status, kUntilLog) << v.job.log.substr(0, 3000);
  const std::vector<std::string> lines = LinesWith(v.job.log, "no verdict: the analysis");
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("killed by signal 11"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("corrupt install"), std::string::npos) << lines[0];
  EXPECT_TRUE(ListFiles(v.job.ring_dir, ".verdict.json").empty());
  for (const auto& r : v.job.summary["ranks"]) {
    EXPECT_TRUE(r["killed_by_launcher"].get<bool>()) << "rank " << r["rank"] << " did not survive";
  }
  RunShell("rm -rf '" + dir + "'");
}

// An unwritable dump directory: no dump can be sealed, so no process is a
// candidate; the failure is logged and the job goes on.
TEST(Verdict, UnwritableDumpDirIsLoggedAndTheJobGoesOn) {
  VerdictJob v =
      RunHung("unwritable", 8, "--fault stuck:rank=3:op=121",
              {{"NCCL_FLIGHTREC_DUMP_DIR", "/dev/null/dumps"}}, "", "timeout dump failed");
  EXPECT_EQ(v.job.status, kUntilLog) << v.job.log.substr(0, 3000);
  EXPECT_FALSE(LinesWith(v.job.log, "/dev/null/dumps").empty());
  EXPECT_TRUE(LinesWith(v.job.log, "gives the verdict").empty());
  EXPECT_TRUE(LinesWith(v.job.log, kHeadlineTag).empty());
  for (const auto& r : v.job.summary["ranks"]) {
    EXPECT_TRUE(r["killed_by_launcher"].get<bool>()) << "rank " << r["rank"] << " did not survive";
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

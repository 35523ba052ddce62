// Hooks that cannot be steered (issue 25, point 4): the real shipped hooks
// run with a fake `scontrol` and a fake `curl` first on PATH that record
// their arguments; the hook runner's sanitized variables, its log written
// through recorder/fileio (a planted symlink, planted by another user in a
// group-writable dump directory, leaves its target unchanged), and the hook
// command read from a private file or the environment, never from a command
// line `ps` shows. One emulated hung job checks the same through the real
// `flightrec watch`.
#include <fcntl.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer/cli/hook_runner.h"
#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr uid_t kOtherUid = 4242;
constexpr gid_t kOtherGid = 4242;

std::string Hooks() { return std::string(FLIGHTREC_SOURCE_DIR) + "/scripts/hooks"; }

// `s` as one single-quoted shell word.
std::string Quote(const std::string& s) {
  std::string out = "'";
  for (const char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool WriteText(const std::string& path, const std::string& text, mode_t mode = 0644) {
  if (!testing::WriteBytes(path, text.data(), text.size())) return false;
  return chmod(path.c_str(), mode) == 0;
}

// The absolute path of a tool on our PATH; "" when there is none.
std::string Which(const std::string& tool, const std::string& scratch) {
  const std::string out = scratch + "/which.txt";
  if (RunShell("command -v " + tool + " > " + Quote(out)) != 0) return "";
  std::string path = ReadText(out);
  while (!path.empty() && path.back() == '\n') path.pop_back();
  return path;
}

struct ScriptRun {
  int exit_code = -1;
  std::string out, err;
  std::string Describe() const {
    return "exit " + std::to_string(exit_code) + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
};

// Runs `script` with exactly `env` (env -i: nothing of ours, no SLURM_*
// of a CI runner leaks in), bounded to 60 s.
ScriptRun RunScript(const std::string& script, const std::map<std::string, std::string>& env,
                    const std::string& scratch) {
  std::string cmd = "timeout -k 5 60 env -i";
  for (const auto& [k, v] : env) cmd += " " + Quote(k + "=" + v);
  cmd += " /bin/sh " + Quote(script) + " >" + Quote(scratch + "/run.out") + " 2>" +
         Quote(scratch + "/run.err");
  ScriptRun run;
  run.exit_code = RunShell(cmd);
  run.out = ReadText(scratch + "/run.out");
  run.err = ReadText(scratch + "/run.err");
  return run;
}

// Runs `fn` in a child with another user's ids (kOtherUid/kOtherGid, no
// supplementary groups); true when it returned true there. `fn` reaches
// files through descriptors opened before (the test's scratch directories
// are private to us).
template <typename Fn>
bool AsOtherUser(Fn fn) {
  const pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    if (setgroups(0, nullptr) != 0 || setresgid(kOtherGid, kOtherGid, kOtherGid) != 0 ||
        setresuid(kOtherUid, kOtherUid, kOtherUid) != 0) {
      _exit(2);
    }
    _exit(fn() ? 0 : 1);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

class HookSafetyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ = MakeTempDir("hooksafety");
    ASSERT_FALSE(scratch_.empty());
    chmod(scratch_.c_str(), 0755);
    bin_ = scratch_ + "/bin";
    ASSERT_EQ(mkdir(bin_.c_str(), 0755), 0);
  }
  void TearDown() override {
    if (HasFailure()) {
      std::printf("kept %s\n", scratch_.c_str());
      return;
    }
    testing::RemoveTree(scratch_);
  }

  // A fake `scontrol` in bin_: appends each call to calls.txt (one argument
  // per line, then a line "--"); `show hostnames X` prints hostnames.txt
  // (the test's stand-in for Slurm's expansion of the job's node list).
  void FakeScontrol(const std::string& hostnames) {
    ASSERT_TRUE(WriteText(bin_ + "/hostnames.txt", hostnames));
    ASSERT_TRUE(WriteText(bin_ + "/scontrol",
                          "#!/bin/sh\n"
                          "for a in \"$@\"; do printf '%s\\n' \"$a\" >> " +
                              Quote(bin_ + "/calls.txt") +
                              "; done\n"
                              "printf -- '--\\n' >> " +
                              Quote(bin_ + "/calls.txt") +
                              "\n"
                              "if [ \"$1\" = show ] && [ \"$2\" = hostnames ]; then cat " +
                              Quote(bin_ + "/hostnames.txt") + "; fi\n",
                          0755));
  }

  // The calls the fake scontrol recorded, each as its arguments.
  std::vector<std::vector<std::string>> ScontrolCalls() const {
    std::vector<std::vector<std::string>> calls(1);
    const std::string text = ReadText(bin_ + "/calls.txt");
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      const std::string line = text.substr(pos, nl - pos);
      if (line == "--") {
        calls.emplace_back();
      } else {
        calls.back().push_back(line);
      }
      pos = nl + 1;
    }
    calls.pop_back();
    return calls;
  }

  // Calls other than `show hostnames`: what the hook did to the cluster.
  std::vector<std::vector<std::string>> Actions() const {
    std::vector<std::vector<std::string>> out;
    for (const auto& c : ScontrolCalls()) {
      if (c.size() >= 2 && c[0] == "show" && c[1] == "hostnames") continue;
      out.push_back(c);
    }
    return out;
  }

  static std::string Join(const std::vector<std::vector<std::string>>& calls) {
    std::string s;
    for (const auto& c : calls) {
      for (const std::string& a : c) s += "[" + a + "] ";
      s += "\n";
    }
    return s;
  }

  ScriptRun Slurm(const std::string& culprits, std::map<std::string, std::string> extra = {}) {
    std::map<std::string, std::string> env = {
        {"PATH", bin_ + ":/usr/bin:/bin"},
        {"FLIGHTREC_VERDICT", "hang"},
        {"FLIGHTREC_CULPRITS", culprits},
        {"FLIGHTREC_JOB_ID", "4242"},
        {"FLIGHTREC_REPORT", "/d/flightrec-4242.verdict.json"},
        {"SLURM_JOB_ID", "4242"},
        {"SLURM_JOB_NODELIST", "gpu[001-003]"}};
    for (const auto& [k, v] : extra) {
      if (v.empty()) {
        env.erase(k);
      } else {
        env[k] = v;
      }
    }
    unlink((bin_ + "/calls.txt").c_str());
    return RunScript(Hooks() + "/slurm-hold-and-requeue.sh", env, scratch_);
  }

  std::string scratch_, bin_;
};

// ---- the Slurm hook -----------------------------------------------------------

// Planted culprits drain nothing and requeue nothing: a hostlist
// expression (even the job's own), a host outside the job's node list, a
// glob, an option, and one bad culprit beside a good one (all or nothing).
TEST_F(HookSafetyTest, SlurmHookDrainsNothingOutsideTheJobsNodeList) {
  FakeScontrol("gpu001\ngpu002\ngpu003\n");
  for (const std::string culprits :
       {"gpu[001-064]:123", "gpu[001-003]:7", "gpu004:99", "gpu00?:5", "gpu*:5", "-gpu001:5",
        "gpu002:77 gpu[001-064]:5", "gpu002:77 gpu999:5", "gpu002:x", "gpu002", "gpu002;reboot:5",
        "gpu002$(id):5", "GPU002:5", " : "}) {
    SCOPED_TRACE("FLIGHTREC_CULPRITS=" + culprits);
    const ScriptRun run = Slurm(culprits);
    EXPECT_NE(run.exit_code, 0) << run.Describe();
    EXPECT_TRUE(Actions().empty()) << Join(ScontrolCalls()) << run.Describe();
    EXPECT_NE(run.err.find("not draining any node"), std::string::npos) << run.Describe();
  }
}

// Without the job's node list (a sidecar without SLURM_JOB_NODELIST) or
// when scontrol cannot expand it, nothing is drained; a job id that is not
// Slurm's is never requeued.
TEST_F(HookSafetyTest, SlurmHookActsOnlyWhenItCanCheck) {
  FakeScontrol("gpu001\ngpu002\ngpu003\n");
  ScriptRun run = Slurm("gpu002:77", {{"SLURM_JOB_NODELIST", ""}});
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(ScontrolCalls().empty()) << Join(ScontrolCalls());

  FakeScontrol("");
  run = Slurm("gpu002:77");
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(Actions().empty()) << Join(ScontrolCalls());

  FakeScontrol("gpu001\ngpu002\ngpu003\n");
  run = Slurm("gpu002:77", {{"SLURM_JOB_ID", "4242;scancel"}});
  EXPECT_NE(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(Actions().empty()) << Join(ScontrolCalls());

  // The job id of the evidence is never the one requeued.
  run = Slurm("gpu002:77", {{"SLURM_JOB_ID", ""}, {"FLIGHTREC_JOB_ID", "777"}});
  const auto actions = Actions();
  ASSERT_EQ(actions.size(), 1u) << Join(ScontrolCalls()) << run.Describe();
  EXPECT_EQ(actions[0][0], "update");
  EXPECT_NE(run.exit_code, 0) << "no job to requeue is an error\n" << run.Describe();
}

// A real culprit in the node list: its node drained once (exact
// arguments), the job requeued; the node list reached scontrol as one
// argument.
TEST_F(HookSafetyTest, SlurmHookDrainsARealCulpritExactly) {
  FakeScontrol("gpu001\ngpu002\ngpu003\n");
  const ScriptRun run = Slurm("gpu002:77 gpu002:78");
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const auto calls = ScontrolCalls();
  ASSERT_EQ(calls.size(), 3u) << Join(calls);
  EXPECT_EQ(calls[0], (std::vector<std::string>{"show", "hostnames", "gpu[001-003]"}));
  EXPECT_EQ(calls[1], (std::vector<std::string>{"update", "NodeName=gpu002", "State=DRAIN",
                                                "Reason=flightrec: job 4242 hung on this node "
                                                "(/d/flightrec-4242.verdict.json)"}));
  EXPECT_EQ(calls[2], (std::vector<std::string>{"requeue", "4242"}));

  // Two culprit nodes: both drained, each once; the requeue only with
  // FLIGHTREC_SLURM_REQUEUE unset.
  const ScriptRun two = Slurm("gpu003:1 gpu001:2 gpu003:3", {{"FLIGHTREC_SLURM_REQUEUE", "0"}});
  EXPECT_EQ(two.exit_code, 0) << two.Describe();
  const auto actions = Actions();
  ASSERT_EQ(actions.size(), 2u) << Join(actions);
  EXPECT_EQ(actions[0][1], "NodeName=gpu001");
  EXPECT_EQ(actions[1][1], "NodeName=gpu003");

  // Dry run: nothing run, the commands printed.
  const ScriptRun dry = Slurm("gpu002:77", {{"FLIGHTREC_HOOK_DRY_RUN", "1"}});
  EXPECT_EQ(dry.exit_code, 0) << dry.Describe();
  EXPECT_TRUE(Actions().empty()) << Join(ScontrolCalls());
  EXPECT_NE(dry.out.find("dry run: scontrol update NodeName=gpu002 State=DRAIN"), std::string::npos)
      << dry.Describe();
}

// ---- the chat hook -------------------------------------------------------------

class ChatHookTest : public HookSafetyTest {
 protected:
  // A fake `curl` in `dir`: its arguments to curl.args (one per line), its
  // stdin (the config carrying the URL) to curl.stdin, the @file it posts
  // to curl.payload.
  void FakeCurl(const std::string& dir) {
    ASSERT_TRUE(WriteText(dir + "/curl",
                          "#!/bin/sh\n"
                          "printf '%s\\n' \"$@\" > " +
                              Quote(bin_ + "/curl.args") + "\ncat > " +
                              Quote(bin_ + "/curl.stdin") +
                              "\n"
                              "for a in \"$@\"; do case $a in @*) cp \"${a#@}\" " +
                              Quote(bin_ + "/curl.payload") + " ;; esac; done\n",
                          0755));
  }

  ScriptRun Chat(const std::string& path, const std::string& headline,
                 const std::string& report_md = "") {
    tmp_ = scratch_ + "/tmp-" + std::to_string(++runs_);
    EXPECT_EQ(mkdir(tmp_.c_str(), 0700), 0);
    unlink((bin_ + "/curl.payload").c_str());
    std::map<std::string, std::string> env = {
        {"PATH", path},
        {"TMPDIR", tmp_},
        {"FLIGHTREC_VERDICT", "hang"},
        {"FLIGHTREC_JOB_ID", "4242"},
        {"FLIGHTREC_CULPRITS", "gpu002:77"},
        {"FLIGHTREC_HEADLINE", headline},
        {"FLIGHTREC_CHAT_WEBHOOK", "https://chat.example/hooks/SECRET\"x\\y"}};
    if (!report_md.empty()) env["FLIGHTREC_REPORT_MD"] = report_md;
    return RunScript(Hooks() + "/post-to-chat.sh", env, scratch_);
  }

  // The posted text, after checking the payload is valid JSON for Python.
  std::string PostedText() {
    const std::string payload = bin_ + "/curl.payload";
    EXPECT_EQ(RunShell("python3 -c 'import json,sys; json.load(open(sys.argv[1], "
                       "encoding=\"utf-8\"))' " +
                       Quote(payload)),
              0)
        << "not valid JSON: " << ReadText(payload);
    const nlohmann::json j = nlohmann::json::parse(ReadText(payload), nullptr, false);
    EXPECT_TRUE(j.is_object()) << ReadText(payload);
    return j.is_object() ? j.value("text", std::string()) : std::string();
  }

  void ExpectNoSecretInArgsAndNoTempLeft() {
    const std::string args = ReadText(bin_ + "/curl.args");
    EXPECT_EQ(args.find("SECRET"), std::string::npos) << "the webhook URL is in curl's argv:\n"
                                                      << args;
    EXPECT_NE(ReadText(bin_ + "/curl.stdin")
                  .find("url = \"https://chat.example/hooks/SECRET\\\"x\\\\y\""),
              std::string::npos)
        << ReadText(bin_ + "/curl.stdin");
    EXPECT_EQ(RunShell("[ -z \"$(ls -A " + Quote(tmp_) + ")\" ]"), 0)
        << "temporary files left in TMPDIR";
  }

  std::string tmp_;
  int runs_ = 0;
};

// A headline with backslashes, quotes, a tab, a control character, a
// newline and UTF-8: valid JSON that carries it exactly, with jq and with
// the awk escaper (a PATH without jq).
TEST_F(ChatHookTest, BackslashesAndQuotesMakeValidJson) {
  const std::string headline =
      "HANG: rank 3 (gpu\\002 pid \"77\") 'x' \\\" \\\\u0041 \ttab \x01 ctl \xc3\xa9t\xc3\xa9";
  FakeCurl(bin_);
  ScriptRun run = Chat(bin_ + ":/usr/bin:/bin", headline);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  ASSERT_FALSE(Which("jq", scratch_).empty()) << "jq is needed for the jq half of this test";
  EXPECT_NE(PostedText().find(headline + "\n"), std::string::npos)
      << ReadText(bin_ + "/curl.payload");
  ExpectNoSecretInArgsAndNoTempLeft();

  // No jq: a PATH holding only what the hook needs (and the fake curl's cat
  // and cp).
  const std::string nojq = scratch_ + "/nojq";
  ASSERT_EQ(mkdir(nojq.c_str(), 0755), 0);
  for (const char* tool : {"sh", "awk", "cat", "cp", "mktemp", "rm", "tr", "sed"}) {
    const std::string path = Which(tool, scratch_);
    ASSERT_FALSE(path.empty()) << tool;
    ASSERT_EQ(symlink(path.c_str(), (nojq + "/" + tool).c_str()), 0) << tool;
  }
  FakeCurl(nojq);
  run = Chat(nojq, headline);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(PostedText().find(headline + "\n"), std::string::npos)
      << ReadText(bin_ + "/curl.payload");
  ExpectNoSecretInArgsAndNoTempLeft();

  // Cut at every length around a multi-byte character: still valid JSON.
  for (int max = 100; max < 200; max += 7) {
    run = RunScript(Hooks() + "/post-to-chat.sh",
                    {{"PATH", nojq},
                     {"TMPDIR", tmp_},
                     {"FLIGHTREC_VERDICT", "hang"},
                     {"FLIGHTREC_CHAT_MAX_CHARS", std::to_string(max)},
                     {"FLIGHTREC_HEADLINE", "\xe2\x82\xac\xc3\xa9\xf0\x9d\x84\x9e" + headline},
                     {"FLIGHTREC_CHAT_WEBHOOK", "https://chat.example/x"}},
                    scratch_);
    EXPECT_EQ(run.exit_code, 0) << run.Describe();
    EXPECT_FALSE(PostedText().empty()) << "max " << max;
  }
}

// The Markdown report is read only when it is a regular file of ours: a
// symlink planted at its name (to a private file) puts no byte of its
// target into the post; the headline goes instead.
TEST_F(ChatHookTest, APlantedReportSymlinkIsNotFollowed) {
  FakeCurl(bin_);
  const std::string secret = scratch_ + "/secret.txt";
  ASSERT_TRUE(WriteText(secret, "TOKEN-12345\n", 0600));
  const std::string report = scratch_ + "/flightrec-4242.verdict.md";
  ASSERT_EQ(symlink(secret.c_str(), report.c_str()), 0);
  const ScriptRun run = Chat(bin_ + ":/usr/bin:/bin", "HANG: the headline", report);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string text = PostedText();
  EXPECT_EQ(text.find("TOKEN-12345"), std::string::npos) << text;
  EXPECT_NE(text.find("HANG: the headline"), std::string::npos) << text;

  // A real report of ours is posted.
  ASSERT_EQ(unlink(report.c_str()), 0);
  ASSERT_TRUE(WriteText(report, "**HANG: from the report**\n", 0600));
  Chat(bin_ + ":/usr/bin:/bin", "HANG: the headline", report);
  EXPECT_NE(PostedText().find("**HANG: from the report**"), std::string::npos);

  // One owned by another user is not.
  if (geteuid() == 0) {
    ASSERT_EQ(chown(report.c_str(), kOtherUid, kOtherGid), 0);
    Chat(bin_ + ":/usr/bin:/bin", "HANG: the headline", report);
    const std::string other = PostedText();
    EXPECT_EQ(other.find("from the report"), std::string::npos) << other;
  }
}

// ---- the hook runner -------------------------------------------------------------

TEST(HookVariables, CulpritsHoldOnlySanitizedHosts) {
  std::vector<std::string> dropped;
  const std::string v = cli::CulpritsVariable({{"gpu001", 12},
                                               {"gpu[001-064]", 5},
                                               {"a b", 3},
                                               {"$(id)", 4},
                                               {"", 1},
                                               {"gpu002", 0},
                                               {std::string(70, 'a'), 1},
                                               {std::string("gpu\0x", 5), 6},
                                               {"n-1.cluster_x", 7}},
                                              &dropped);
  EXPECT_EQ(v, "gpu001:12 n-1.cluster_x:7");
  ASSERT_EQ(dropped.size(), 7u);
  EXPECT_NE(dropped[0].find("\"gpu[001-064]\" pid 5 left out of FLIGHTREC_CULPRITS"),
            std::string::npos)
      << dropped[0];
  EXPECT_NE(dropped[6].find("gpu\\x00x"), std::string::npos) << dropped[6];
}

TEST(HookVariables, HeadlineLosesControlAndShellCharacters) {
  const std::string h = cli::HeadlineVariable(
      "HANG: rank 3 (gpu001 pid 12, comm `x$(id)` rank 0) #42; 2 ranks waiting 3.5 s\n"
      "`rm -rf ~` | a > b & c * ? [x] {y} ! \\ \"q\" 'r' \x01\x7f \xc3\xa9");
  EXPECT_EQ(h,
            "HANG: rank 3 (gpu001 pid 12, comm x_(id) rank 0) #42; 2 ranks waiting 3.5 s "
            "rm -rf _ _ a _ b _ c _ _ _x_ _y_ _ _ q r    __");
  EXPECT_EQ(cli::HeadlineVariable(std::string(5000, 'a')).size(), 1024u);
  EXPECT_EQ(cli::JobIdVariable("12$(id)"), "12__id_");
  EXPECT_EQ(cli::JobIdVariable("4242_7"), "4242_7");
}

TEST_F(HookSafetyTest, HookCommandFileMustBePrivate) {
  std::string cmd, error;
  const std::string file = scratch_ + "/hook.cmd";
  ASSERT_TRUE(WriteText(file, "echo one \"$FLIGHTREC_VERDICT\"\n\n  \n", 0600));
  EXPECT_TRUE(cli::ReadHookCommandFile(file, &cmd, &error)) << error;
  EXPECT_EQ(cmd, "echo one \"$FLIGHTREC_VERDICT\"");

  for (const mode_t mode : {0640, 0604, 0620, 0602, 0660}) {
    ASSERT_EQ(chmod(file.c_str(), mode), 0);
    error.clear();
    EXPECT_FALSE(cli::ReadHookCommandFile(file, &cmd, &error)) << std::oct << mode;
    EXPECT_NE(error.find("group or others can read or write it"), std::string::npos) << error;
  }
  ASSERT_EQ(chmod(file.c_str(), 0600), 0);

  const std::string link = scratch_ + "/hook.link";
  ASSERT_EQ(symlink(file.c_str(), link.c_str()), 0);
  EXPECT_FALSE(cli::ReadHookCommandFile(link, &cmd, &error));
  EXPECT_FALSE(cli::ReadHookCommandFile(scratch_ + "/missing", &cmd, &error));
  EXPECT_NE(error.find("no such file"), std::string::npos) << error;
  EXPECT_FALSE(cli::ReadHookCommandFile(scratch_, &cmd, &error)) << "a directory";

  const std::string blank = scratch_ + "/blank.cmd";
  ASSERT_TRUE(WriteText(blank, " \n\t\n", 0600));
  EXPECT_FALSE(cli::ReadHookCommandFile(blank, &cmd, &error));
  EXPECT_NE(error.find("holds no command"), std::string::npos) << error;

  const std::string big = scratch_ + "/big.cmd";
  ASSERT_TRUE(WriteText(big, std::string(cli::kHookCommandFileMax + 1, 'x'), 0600));
  EXPECT_FALSE(cli::ReadHookCommandFile(big, &cmd, &error));

  const std::string nul = scratch_ + "/nul.cmd";
  ASSERT_TRUE(WriteText(nul, std::string("echo a\0b", 8), 0600));
  EXPECT_FALSE(cli::ReadHookCommandFile(nul, &cmd, &error));
}

TEST_F(HookSafetyTest, HookCommandFileOfAnotherUserIsRefused) {
  if (geteuid() != 0)
    GTEST_SKIP() << "needs root to give the file to another user (CI runs as root)";
  std::string cmd, error;
  const std::string file = scratch_ + "/hook.cmd";
  ASSERT_TRUE(WriteText(file, "echo theirs\n", 0600));
  ASSERT_EQ(chown(file.c_str(), kOtherUid, kOtherGid), 0);
  EXPECT_FALSE(cli::ReadHookCommandFile(file, &cmd, &error));
  EXPECT_NE(error.find("not owned by you"), std::string::npos) << error;
}

// The dump directory as a project directory: group-writable (2770, group
// kOtherGid when root) so that another user can plant entries in it.
std::string SharedDumpDir(const std::string& scratch) {
  const std::string dir = scratch + "/dumps";
  if (mkdir(dir.c_str(), 0700) != 0) return "";
  if (geteuid() == 0) {
    if (chown(dir.c_str(), 0, kOtherGid) != 0 || chmod(dir.c_str(), 02770) != 0) return "";
  }
  return dir;
}

// A symlink planted at the hook log's name (by another user, in a
// group-writable dump directory) leaves its target unchanged: the log is a
// new regular file of ours with mode fileio::FileMode, and no temporary
// is left.
TEST_F(HookSafetyTest, HookLogNeverWritesThroughAPlantedSymlink) {
  const std::string dir = SharedDumpDir(scratch_);
  ASSERT_FALSE(dir.empty());
  const std::string target = scratch_ + "/precious.txt";
  ASSERT_TRUE(WriteText(target, "precious\n", 0666));
  const std::string log = dir + "/flightrec-j1.hook.log";
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  ASSERT_GE(dir_fd, 0);
  auto plant = [&] { return symlinkat(target.c_str(), dir_fd, "flightrec-j1.hook.log") == 0; };
  if (geteuid() == 0) {
    ASSERT_TRUE(AsOtherUser(plant)) << "could not plant the symlink as uid " << kOtherUid;
  } else {
    ASSERT_TRUE(plant());
  }

  cli::HookSpec spec;
  spec.command = "echo to-stdout; echo to-stderr >&2";
  spec.timeout_s = 30;
  const fileio::Trust self = fileio::TrustSelf();
  cli::HookResult result;
  {
    cli::HookLogDir log_dir(dir, "j1", self, &spec);
    ASSERT_EQ(log_dir.error(), "");
    EXPECT_EQ(spec.log_path, log);
    result = cli::RunHook(spec);
  }
  EXPECT_TRUE(result.exited) << result.Describe();
  EXPECT_EQ(result.error, "") << result.Describe();
  EXPECT_EQ(ReadText(target), "precious\n") << "the hook log was written through the symlink";

  struct stat st = {};
  ASSERT_EQ(lstat(log.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode)) << "the hook log is not a regular file";
  EXPECT_EQ(st.st_uid, geteuid());
  const mode_t mask = umask(0);
  umask(mask);
  EXPECT_EQ(st.st_mode & 07777, fileio::FileMode(self) & ~mask);
  const std::string text = ReadText(log);
  EXPECT_NE(text.find("to-stdout"), std::string::npos) << text;
  EXPECT_NE(text.find("to-stderr"), std::string::npos) << text;
  EXPECT_NE(text.find("[flightrec watch: hook exited with status 0"), std::string::npos) << text;
  EXPECT_TRUE(ListFiles(dir, ".tmp").empty()) << "a temporary was left";
  EXPECT_EQ(RunShell("[ -z \"$(ls -A " + Quote(dir) + " | grep -v '^flightrec-j1.hook.log$')\" ]"),
            0)
      << "files left beside the log";

  // A regular file planted by another user is replaced, not appended to.
  if (geteuid() == 0) {
    ASSERT_EQ(unlink(log.c_str()), 0);
    ASSERT_TRUE(AsOtherUser([&] {
      const int fd =
          openat(dir_fd, "flightrec-j1.hook.log", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      const bool ok = fd >= 0 && write(fd, "planted\n", 8) == 8 && fchmod(fd, 0666) == 0;
      if (fd >= 0) close(fd);
      return ok;
    }));
    ASSERT_EQ(lstat(log.c_str(), &st), 0);
    ASSERT_EQ(st.st_uid, kOtherUid);
    cli::HookLogDir log_dir(dir, "j1", self, &spec);
    result = cli::RunHook(spec);
    EXPECT_EQ(result.error, "") << result.Describe();
    ASSERT_EQ(lstat(log.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, 0u);
    EXPECT_EQ(ReadText(log).find("planted"), std::string::npos) << ReadText(log);
  }
  close(dir_fd);
}

// ---- through `flightrec watch` -----------------------------------------------------

std::string Flightrec() { return Quote(BuildDir() + "/bin/flightrec"); }

struct WatchRun {
  int exit_code = -1;
  std::string out, err;
  std::string Describe() const {
    return "exit " + std::to_string(exit_code) + "\nstdout:\n" + out + "\nstderr:\n" + err;
  }
};

WatchRun Watch(const std::string& prefix, const std::string& args, const std::string& scratch) {
  WatchRun run;
  run.exit_code = RunShell(prefix + " timeout -k 5 120 " + Flightrec() + " watch " + args + " >" +
                           Quote(scratch + "/w.out") + " 2>" + Quote(scratch + "/w.err"));
  run.out = ReadText(scratch + "/w.out");
  run.err = ReadText(scratch + "/w.err");
  return run;
}

// One hung job (8 ranks, a rank stuck outside NCCL) judged by the real
// `flightrec watch`, its hook command from the environment or a private
// file; a symlink planted at the hook log leaves its target unchanged.
TEST_F(HookSafetyTest, WatchTakesTheHookFromTheEnvironmentOrAPrivateFile) {
  // The file is checked before anything else: a readable one is refused.
  const std::string cmd_file = scratch_ + "/hook.cmd";
  ASSERT_TRUE(WriteText(cmd_file, "env > " + Quote(scratch_ + "/file-hook.env") + "\n", 0644));
  WatchRun run =
      Watch("", Quote(scratch_) + " --once --on-verdict-file " + Quote(cmd_file), scratch_);
  EXPECT_EQ(run.exit_code, 2) << run.Describe();
  EXPECT_NE(run.err.find("group or others can read or write it"), std::string::npos)
      << run.Describe();
  run = Watch("", Quote(scratch_) + " --once --on-verdict x --on-verdict-file " + Quote(cmd_file),
              scratch_);
  EXPECT_NE(run.exit_code, 0) << "both options at once\n" << run.Describe();
  ASSERT_EQ(chmod(cmd_file.c_str(), 0600), 0);

  EmuJob job;
  {
    JobSlot slot;
    job = RunEmu("hooksafety",
                 "--ranks 8 --tp 4 --ranks-per-node 8 --ops 233 --step-us 20 "
                 "--fault stuck:rank=6:op=185 --until-dumps 8 --hang-timeout-s 20",
                 {{"NCCL_FLIGHTREC_TIMEOUT_S", "2"},
                  {"NCCL_FLIGHTREC_VERDICT", "0"},
                  {"NCCL_FLIGHTREC_MAX_COMMS", "4"},
                  {"NCCL_FLIGHTREC_RECORDS", "1024"},
                  {"NCCL_FLIGHTREC_JOB_ID", "hs"}});
  }
  ASSERT_FALSE(ListFiles(job.ring_dir, ".frdump").empty()) << "the job sealed no dump\n"
                                                           << job.stderr_text;
  auto copy = [&](const std::string& name) {
    const std::string dir = scratch_ + "/" + name;
    EXPECT_EQ(mkdir(dir.c_str(), 0700), 0);
    EXPECT_EQ(RunShell("cp " + Quote(job.ring_dir) + "/*.ring " + Quote(job.ring_dir) +
                       "/*.frdump " + Quote(dir) + "/"),
              0);
    return dir;
  };

  // From the environment (the in-job spawn's way), with a symlink planted
  // at the hook log.
  const std::string env_dir = copy("env");
  const std::string target = scratch_ + "/precious.txt";
  ASSERT_TRUE(WriteText(target, "precious\n", 0666));
  ASSERT_EQ(symlink(target.c_str(), (env_dir + "/flightrec-hs.hook.log").c_str()), 0);
  run = Watch("NCCL_FLIGHTREC_ON_VERDICT=" +
                  Quote("env > " + Quote(scratch_ + "/env-hook.env") + "; echo env-hook-ran"),
              Quote(env_dir) + " --once", scratch_);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  const std::string env = ReadText(scratch_ + "/env-hook.env");
  EXPECT_NE(env.find("FLIGHTREC_VERDICT=hang\n"), std::string::npos) << env;
  EXPECT_EQ(ReadText(target), "precious\n");
  struct stat st = {};
  ASSERT_EQ(lstat((env_dir + "/flightrec-hs.hook.log").c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_NE(ReadText(env_dir + "/flightrec-hs.hook.log").find("env-hook-ran"), std::string::npos);
  // Every culprit host in the variable is a plain name.
  const size_t at = env.find("FLIGHTREC_CULPRITS=");
  ASSERT_NE(at, std::string::npos) << env;
  const std::string culprits = env.substr(at + 19, env.find('\n', at) - at - 19);
  EXPECT_FALSE(culprits.empty());
  EXPECT_EQ(culprits.find_first_not_of(
                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-: "),
            std::string::npos)
      << culprits;

  // From a private file; the environment's command is not run beside it.
  const std::string file_dir = copy("file");
  run = Watch("NCCL_FLIGHTREC_ON_VERDICT=" + Quote("echo env > " + Quote(scratch_ + "/not-run")),
              Quote(file_dir) + " --once --on-verdict-file " + Quote(cmd_file), scratch_);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_NE(ReadText(scratch_ + "/file-hook.env").find("FLIGHTREC_VERDICT=hang\n"),
            std::string::npos);
  EXPECT_EQ(access((scratch_ + "/not-run").c_str(), F_OK), -1);

  // --on-verdict '' turns the environment's hook off.
  const std::string off_dir = copy("off");
  run = Watch("NCCL_FLIGHTREC_ON_VERDICT=" + Quote("echo env > " + Quote(scratch_ + "/not-run")),
              Quote(off_dir) + " --once --on-verdict ''", scratch_);
  EXPECT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_EQ(access((scratch_ + "/not-run").c_str(), F_OK), -1);
  EXPECT_EQ(access((off_dir + "/flightrec-hs.hook.log").c_str(), F_OK), -1);
  RunShell("rm -rf " + Quote(job.dir));
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

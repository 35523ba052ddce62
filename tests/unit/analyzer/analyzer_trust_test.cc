// What the watcher believes in a dump directory others can write: locks and
// done markers of another user are ignored (a forged `.done` or a foreign
// lock kept fresh neither covers nor holds up a verdict), foreign files at a
// lock generation's name are skipped, a symlink planted at the done marker
// is replaced, not followed; a forged or foreign hang dump opens no
// incident. Other users' files are made by chown as root (CI runs tests as
// root); without root those tests skip with a message.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "analyzer/cli/commands.h"
#include "analyzer/cli/dump_scan.h"
#include "analyzer/cli/verdict_lock.h"
#include "analyzer/model/inputs.h"
#include "flightrec/job_dir.h"
#include "recorder/fileio/safe_file.h"
#include "support/files.h"
#include "tests/unit/reader/image_builder.h"

namespace flightrec {
namespace cli {
namespace {

using std::chrono::milliseconds;

constexpr uint32_t kOther = 4242;  // another user: no passwd entry needed

class TrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTempDir("trust");
    ASSERT_FALSE(dir_.empty());
    char why[fileio::kWhyMax] = {};
    dirfd_ = fileio::OpenDir(dir_.c_str(), fileio::DirRole::kShared, trust_, false, why,
                             sizeof(why), nullptr, 0);
    ASSERT_GE(dirfd_, 0) << why;
  }
  void TearDown() override {
    if (dirfd_ >= 0) close(dirfd_);
    testing::RemoveTree(dir_);
  }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }
  void Write(const std::string& name, const std::string& text, bool foreign = false) const {
    ASSERT_TRUE(testing::WriteBytes(Path(name), text.data(), text.size()));
    if (foreign) {
      ASSERT_EQ(chown(Path(name).c_str(), kOther, kOther), 0);
    }
  }
  static std::string LockName(uint64_t g) {
    char name[format::kFileNameMax];
    EXPECT_TRUE(format::LockName("job", g, name, sizeof(name)));
    return name;
  }
  static std::string DoneName() {
    char name[format::kFileNameMax];
    EXPECT_TRUE(format::DoneName("job", name, sizeof(name)));
    return name;
  }
  std::unique_ptr<VerdictLock> Lock(milliseconds stale = milliseconds(5000)) const {
    return std::make_unique<VerdictLock>(dirfd_, dir_, "job", trust_, stale);
  }
  static bool Root() { return geteuid() == 0; }

  std::string dir_;
  int dirfd_ = -1;
  fileio::Trust trust_ = fileio::TrustSelf();
};

#define NEED_ROOT() \
  if (!Root()) GTEST_SKIP() << "files of another user are made with chown, which needs root"

// Far in the future: would cover every hang dump ever sealed.
const char kForgedDone[] =
    "generation=1 incident_start_ns=1 covered_until_ns=9000000000000000000 host=x pid=1\n";

TEST_F(TrustTest, ADoneMarkerOfAnotherUserCoversNothing) {
  Write(DoneName(), kForgedDone);
  EXPECT_TRUE(Lock()->ReadDone().valid) << "the same text, ours, is believed";
  NEED_ROOT();
  ASSERT_EQ(chown(Path(DoneName()).c_str(), kOther, kOther), 0);
  const DoneMark mark = Lock()->ReadDone();
  EXPECT_FALSE(mark.valid);
  EXPECT_FALSE(mark.coverage().valid);
}

TEST_F(TrustTest, ASymlinkAtTheDoneMarkerIsReplacedNotFollowed) {
  const std::string target = Path("precious");
  Write("precious", "keep me\n");
  ASSERT_EQ(symlink(target.c_str(), Path(DoneName()).c_str()), 0);
  auto lock = Lock();
  std::string error;
  ASSERT_EQ(lock->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  ASSERT_TRUE(lock->MarkDone(10, 20, &error)) << error;
  EXPECT_EQ(testing::ReadText(target), "keep me\n");
  struct stat st;
  ASSERT_EQ(lstat(Path(DoneName()).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const DoneMark mark = Lock()->ReadDone();
  EXPECT_TRUE(mark.valid);
  EXPECT_EQ(mark.generation, 1u);
  EXPECT_EQ(mark.covered_until_ns, 20u);
  // No temporary left behind.
  EXPECT_TRUE(testing::ListFiles(dir_, ".tmp").empty());
}

TEST_F(TrustTest, AForeignLockKeptFreshNeitherHoldsNorTakesTheVerdict) {
  NEED_ROOT();
  // Another user's "holder" at generation 1, and names 2 and 3 occupied too.
  Write(LockName(1), "evil 1\n", true);
  Write(LockName(2), "evil 1\n", true);
  ASSERT_EQ(mkfifo(Path(LockName(3)).c_str(), 0666), 0);
  auto lock = Lock();
  std::string error;
  // Acquired at once, past the occupied names: nothing to wait for.
  ASSERT_EQ(lock->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  EXPECT_EQ(lock->generation(), 4u);
  EXPECT_TRUE(lock->StillOurs());
  // A newer foreign "generation", kept fresh, does not take it from us.
  Write(LockName(9), "evil 1\n", true);
  EXPECT_TRUE(lock->StillOurs());
  // Another watcher (a believed file) does.
  auto rival = Lock(milliseconds(0));
  ASSERT_EQ(rival->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  EXPECT_EQ(rival->generation(), 5u);
  EXPECT_FALSE(lock->StillOurs());
  // The foreign files are never removed by us.
  ASSERT_TRUE(rival->MarkDone(1, 2, &error)) << error;
  struct stat st;
  EXPECT_EQ(lstat(Path(LockName(1)).c_str(), &st), 0);
  EXPECT_EQ(lstat(Path(LockName(9)).c_str(), &st), 0);
  EXPECT_NE(lstat(Path(LockName(4)).c_str(), &st), 0) << "our older generation is cleaned up";
}

TEST_F(TrustTest, AForeignFileTakingTheNextNameAfterTheListingIsSkipped) {
  NEED_ROOT();
  auto first = Lock();
  std::string error;
  ASSERT_EQ(first->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  first->Release();  // generation 1, released: the next watcher takes over at once
  // Planted at the next name, where a takeover would create its lock.
  Write(LockName(2), "evil 1\n", true);
  auto next = Lock();
  ASSERT_EQ(next->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  EXPECT_EQ(next->generation(), 3u);
}

TEST_F(TrustTest, ABelievedHolderIsWaitedForUntilStaleThenTakenOver) {
  auto holder = Lock();
  std::string error;
  ASSERT_EQ(holder->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  auto waiter = Lock(milliseconds(200));
  EXPECT_EQ(waiter->TryAcquire(&error), VerdictLock::Attempt::kBusy);
  EXPECT_NE(waiter->holder().find(LocalHostName()), std::string::npos) << waiter->holder();
  std::this_thread::sleep_for(milliseconds(250));
  ASSERT_EQ(waiter->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  EXPECT_EQ(waiter->generation(), 2u);
  EXPECT_FALSE(holder->StillOurs());
}

TEST_F(TrustTest, AReleasedLockIsTakenOverAtOnce) {
  auto holder = Lock();
  std::string error;
  ASSERT_EQ(holder->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  const std::string path = holder->Release();
  EXPECT_EQ(path, Path(LockName(1)));
  const std::string text = testing::ReadText(path);
  format::LockText parsed;
  ASSERT_TRUE(format::ParseLock(text.c_str(), &parsed)) << text;
  EXPECT_TRUE(parsed.released);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mtim.tv_sec, 0);
  auto next = Lock();
  ASSERT_EQ(next->TryAcquire(&error), VerdictLock::Attempt::kAcquired) << error;
  EXPECT_EQ(next->generation(), 2u);
}

// In a sticky world-writable directory another user can take a name first
// and we cannot replace its file: the done marker (and any report) goes to
// our user's own name, which ReadDone reads too; the stranger's file is
// never written. Acted out by uid 4343 in a child (root may replace
// anything).
TEST_F(TrustTest, ANameTakenFirstInAStickyDirectoryGivesWayToOurUsersName) {
  NEED_ROOT();
  ASSERT_EQ(chmod(testing::TempRoot().c_str(), 0711), 0);  // the child must reach dir_
  ASSERT_EQ(chmod(dir_.c_str(), 01777), 0);
  Write(DoneName(), "stranger's\n", true);
  ASSERT_EQ(chmod(Path(DoneName()).c_str(), 0666), 0);
  constexpr uint32_t kJob = 4343;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setresgid(kJob, kJob, kJob) != 0 || setresuid(kJob, kJob, kJob) != 0) _exit(10);
    const fileio::Trust self = fileio::TrustSelf();
    VerdictLock lock(dirfd_, dir_, "job", self, milliseconds(5000));
    std::string error;
    if (lock.TryAcquire(&error) != VerdictLock::Attempt::kAcquired) _exit(11);
    if (!lock.MarkDone(5, 7, &error)) _exit(12);
    const DoneMark mark = VerdictLock(dirfd_, dir_, "job", self, milliseconds(5000)).ReadDone();
    if (!mark.valid || mark.generation != 1 || mark.covered_until_ns != 7) _exit(13);
    const std::string written = WriteShared(dirfd_, DoneName(), "mine", "x", self, &error);
    if (written != "mine") _exit(14);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 setresuid, 11 acquire, 12 mark, 13 read, 14 report";
  EXPECT_EQ(testing::ReadText(Path(DoneName())), "stranger's\n");
  char user_done[format::kFileNameMax];
  ASSERT_TRUE(format::UserDoneName("job", kJob, user_done, sizeof(user_done)));
  format::DoneText done;
  ASSERT_TRUE(format::ParseDone(testing::ReadText(Path(user_done)).c_str(), &done));
  EXPECT_EQ(done.covered_until_ns, 7u);
  struct stat st;
  ASSERT_EQ(lstat(Path(user_done).c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, kJob);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // Root (this process) believes neither the stranger's marker nor 4343's.
  EXPECT_FALSE(Lock()->ReadDone().valid);
}

// A hang dump: what a rank seals when its op times out.
std::vector<uint8_t> HangDump(const char* host, int64_t pid) {
  test_support::ImageBuilder b(1, 4);
  b.header().pid = pid;
  test_support::CopyStr(b.header().host, sizeof(b.header().host), host);
  test_support::CopyStr(b.header().job_id, sizeof(b.header().job_id), "job");
  b.header().watchdog_timeout_ns = 1000000000;
  b.header().watchdog_poll_ns = 100000000;
  b.Claim(0, 7, 0, 1, "c");
  b.Append(0, test_support::ImageBuilder::Coll(0, 1));
  return b.DumpBytes(1);
}

TEST_F(TrustTest, AForgedOrForeignHangDumpOpensNoIncidentAndIsListedWithItsReason) {
  const std::vector<uint8_t> forged = HangDump("gpu[001-064]", 11);
  const std::string forged_path = Path("flightrec-job-gpu001-11-1.frdump");
  ASSERT_TRUE(testing::WriteBytes(forged_path, forged.data(), forged.size()));
  const std::string fifo = Path("flightrec-job-node-12-1.frdump");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0666), 0);
  const std::string link = Path("flightrec-job-node-13-1.frdump");
  ASSERT_EQ(symlink(forged_path.c_str(), link.c_str()), 0);
  std::string foreign;
  if (Root()) {
    const std::vector<uint8_t> real = HangDump("node-b", 14);
    foreign = Path("flightrec-job-node-b-14-1.frdump");
    ASSERT_TRUE(testing::WriteBytes(foreign, real.data(), real.size()));
    ASSERT_EQ(chown(foreign.c_str(), kOther, kOther), 0);
  }
  // A ring that is a FIFO, and a half-made ring whose header names a host
  // the plugin never writes (the init reader judges both too).
  const std::string ring_fifo = Path("flightrec-job-node-15.ring");
  ASSERT_EQ(mkfifo(ring_fifo.c_str(), 0666), 0);
  test_support::ImageBuilder init(1, 4);
  test_support::CopyStr(init.header().host, sizeof(init.header().host), "gpu[002]");
  test_support::CopyStr(init.header().job_id, sizeof(init.header().job_id), "job");
  init.header().process_state = format::kProcessStarting;
  const std::vector<uint8_t> init_bytes = init.Bytes();
  const std::string forged_init = Path("flightrec-job-gpu002-16.ring.init");
  ASSERT_TRUE(testing::WriteBytes(forged_init, init_bytes.data(), init_bytes.size()));
  // A companion of ours (the trigger) is never an input; a `.ring.init` is.
  Write("flightrec-job.trigger", "node 1 timeout\n");

  DumpScanner scanner({dir_});
  std::string error;
  ASSERT_TRUE(scanner.Scan(&error)) << error;  // the FIFO does not block the scan
  EXPECT_TRUE(scanner.files().empty());
  const Incident in =
      AssessIncident(scanner.files(), "job", Coverage{}, std::chrono::steady_clock::now());
  EXPECT_FALSE(in.open);
  EXPECT_FALSE(in.any_hang);

  // The analysis of the job's inputs lists each with its reason.
  const analysis::Inputs inputs = analysis::LoadInputs(scanner.InputsOf("job"));
  std::map<std::string, std::string> why;
  for (const analysis::RejectedInput& r : inputs.rejected) why[r.path] = r.reason;
  EXPECT_EQ(why[forged_path],
            forged_path + ": host name has characters flightrec never writes: forged or corrupt");
  EXPECT_EQ(why[fifo], fifo + ": not a regular file");
  EXPECT_EQ(why[link], link + ": a symbolic link: never followed");
  if (!foreign.empty()) {
    EXPECT_EQ(why[foreign], foreign + ": not owned by you: uid 4242");
  }
  EXPECT_EQ(why[ring_fifo], ring_fifo + ": not a regular file");
  EXPECT_EQ(why[forged_init],
            forged_init + ": host name has characters flightrec never writes: forged or corrupt");
  EXPECT_EQ(why.count(Path("flightrec-job.trigger")), 0u);
  EXPECT_EQ(inputs.rejected.size(), foreign.empty() ? 5u : 6u);
  EXPECT_TRUE(inputs.processes.empty());
}

// `flightrec trigger`, in-process through its CLI11 registration (with the
// shared --trust-group option): only the protocol's reasons are accepted,
// and the trigger replaces a symlink planted at its name.
int RunTrigger(const std::vector<std::string>& args, std::string* usage_error) {
  CLI::App app{"flightrec"};
  int exit_code = -1;
  AddTriggerCommand(app, &exit_code);
  AddTrustGroupOption(app);
  std::vector<const char*> argv = {"flightrec", "trigger"};
  for (const std::string& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    *usage_error = e.what();
    return 2;
  }
  return exit_code;
}

TEST_F(TrustTest, TriggerTakesOnlyTheProtocolsReasonsAndNeverFollowsASymlink) {
  std::string usage;
  EXPECT_EQ(RunTrigger({dir_, "--job", "job", "--reason", "see /etc/passwd"}, &usage), 2);
  EXPECT_NE(usage.find("is not a trigger reason: use user or timeout"), std::string::npos) << usage;
  EXPECT_EQ(RunTrigger({dir_, "--job", "job", "--trust-group", "no-such-group-x"}, &usage), 2);
  EXPECT_NE(usage.find("no such group: no-such-group-x"), std::string::npos) << usage;
  char name[format::kFileNameMax];
  ASSERT_TRUE(format::TriggerName("job", name, sizeof(name)));
  Write("precious", "keep me\n");
  ASSERT_EQ(symlink(Path("precious").c_str(), Path(name).c_str()), 0);
  usage.clear();
  EXPECT_EQ(RunTrigger({dir_, "--job", "job", "--reason", "timeout"}, &usage), 0) << usage;
  EXPECT_EQ(testing::ReadText(Path("precious")), "keep me\n");
  format::TriggerLine line;
  ASSERT_TRUE(format::ParseTrigger(testing::ReadText(Path(name)).c_str(), &line));
  EXPECT_TRUE(line.FromTimeout());
  EXPECT_EQ(line.host, LocalHostName());
  EXPECT_EQ(line.pid, getpid());
  struct stat st;
  ASSERT_EQ(lstat(Path(name).c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
}

}  // namespace
}  // namespace cli
}  // namespace flightrec

// recorder/fileio/safe_file.h against real files: what is created and how,
// what is refused on reading, and which directories are refused. Cases that
// need another user's files chown them (the tests run as root in CI).
#include "recorder/fileio/safe_file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

constexpr uid_t kStranger = 4242;

std::string Slurp(const std::string& path) {
  auto bytes = test::ReadFile(path);
  return std::string(bytes.begin(), bytes.end());
}

void Put(const std::string& path, const std::string& text, mode_t mode = 0600) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, mode);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  close(fd);
}

int OpenDirOf(const std::string& path) { return open(path.c_str(), O_RDONLY | O_DIRECTORY); }

class SafeFile : public ::testing::Test {
 protected:
  void SetUp() override {
    old_umask_ = umask(022);
    fd_ = OpenDirOf(dir_.path());
    ASSERT_GE(fd_, 0);
  }
  void TearDown() override {
    close(fd_);
    umask(old_umask_);
  }
  test::TempDir dir_;
  int fd_ = -1;
  mode_t old_umask_ = 0;
  fileio::Trust me_ = fileio::TrustSelf();
  char why_[fileio::kWhyMax] = {};
};

TEST_F(SafeFile, WrittenFilesArePrivateAndNoTemporaryIsLeft) {
  ASSERT_TRUE(fileio::WriteFileAt(fd_, "report.txt", "hello\n", 6, me_, true, why_, sizeof(why_)))
      << why_;
  struct stat st;
  ASSERT_EQ(stat((dir_.path() + "/report.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(Slurp(dir_.path() + "/report.txt"), "hello\n");
  EXPECT_TRUE(test::ListDir(dir_.path(), ".tmp").empty());
}

TEST_F(SafeFile, APlantedSymlinkIsReplacedAndItsTargetUntouched) {
  const std::string secret = dir_.path() + "/secret";
  Put(secret, "token\n");
  const std::string name = dir_.path() + "/report.txt";
  ASSERT_EQ(symlink(secret.c_str(), name.c_str()), 0);
  ASSERT_TRUE(fileio::WriteFileAt(fd_, "report.txt", "new\n", 4, me_, false, why_, sizeof(why_)))
      << why_;
  EXPECT_EQ(Slurp(secret), "token\n");
  struct stat st;
  ASSERT_EQ(lstat(name.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(Slurp(name), "new\n");
}

TEST_F(SafeFile, TemporariesAreUniqueAndNeverFollowed) {
  fileio::TempFile a, b;
  ASSERT_TRUE(fileio::CreateTemp(fd_, "x", me_, &a, why_, sizeof(why_))) << why_;
  ASSERT_TRUE(fileio::CreateTemp(fd_, "x", me_, &b, why_, sizeof(why_))) << why_;
  EXPECT_STRNE(a.name, b.name);
  EXPECT_EQ(a.name[0], '.');
  fileio::Discard(fd_, &a);
  fileio::Discard(fd_, &b);
  EXPECT_TRUE(test::ListDir(dir_.path(), ".tmp").empty());
}

TEST_F(SafeFile, CreateExclusiveRefusesAnExistingNameOrSymlink) {
  const std::string secret = dir_.path() + "/secret";
  Put(secret, "token\n");
  ASSERT_EQ(symlink(secret.c_str(), (dir_.path() + "/lock").c_str()), 0);
  EXPECT_LT(fileio::CreateExclusive(fd_, "lock", me_, why_, sizeof(why_)), 0);
  EXPECT_EQ(Slurp(secret), "token\n");
  const int fd = fileio::CreateExclusive(fd_, "lock2", me_, why_, sizeof(why_));
  ASSERT_GE(fd, 0) << why_;
  close(fd);
  EXPECT_LT(fileio::CreateExclusive(fd_, "lock2", me_, why_, sizeof(why_)), 0);
  EXPECT_EQ(errno, EEXIST);
}

TEST_F(SafeFile, ReadingRefusesSymlinksAndNonRegularFilesWithoutBlocking) {
  Put(dir_.path() + "/real", "x");
  ASSERT_EQ(symlink((dir_.path() + "/real").c_str(), (dir_.path() + "/link").c_str()), 0);
  ASSERT_EQ(mkfifo((dir_.path() + "/fifo").c_str(), 0600), 0);
  fileio::OpenStatus status;
  struct stat st;
  int fd = fileio::OpenForRead(fd_, "real", me_, &st, &status, why_, sizeof(why_));
  ASSERT_GE(fd, 0) << why_;
  EXPECT_EQ(status, fileio::OpenStatus::kOk);
  // The descriptor is blocking again once judged.
  EXPECT_EQ(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
  close(fd);
  EXPECT_LT(fileio::OpenForRead(fd_, "link", me_, &st, &status, why_, sizeof(why_)), 0);
  EXPECT_EQ(status, fileio::OpenStatus::kRefused);
  EXPECT_NE(std::string(why_).find("symbolic link"), std::string::npos) << why_;
  // A FIFO with no writer: refused at once, never waited on.
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_LT(fileio::OpenForRead(fd_, "fifo", me_, &st, &status, why_, sizeof(why_)), 0);
  EXPECT_EQ(status, fileio::OpenStatus::kRefused);
  EXPECT_NE(std::string(why_).find("not a regular file"), std::string::npos) << why_;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  EXPECT_LT(fileio::OpenForRead(fd_, "absent", me_, &st, &status, why_, sizeof(why_)), 0);
  EXPECT_EQ(status, fileio::OpenStatus::kMissing);
}

TEST_F(SafeFile, AnotherUsersFileIsRefusedWithItsUid) {
  if (geteuid() != 0) GTEST_SKIP() << "chown to another user needs root (CI runs as root)";
  Put(dir_.path() + "/theirs", "x");
  ASSERT_EQ(chown((dir_.path() + "/theirs").c_str(), kStranger, kStranger), 0);
  fileio::OpenStatus status;
  struct stat st;
  EXPECT_LT(fileio::OpenForRead(fd_, "theirs", me_, &st, &status, why_, sizeof(why_)), 0);
  EXPECT_EQ(status, fileio::OpenStatus::kRefused);
  EXPECT_STREQ(why_, "not owned by you: uid 4242");
  // RemoveOurs leaves it alone.
  EXPECT_FALSE(fileio::RemoveOurs(fd_, "theirs", me_));
  EXPECT_EQ(access((dir_.path() + "/theirs").c_str(), F_OK), 0);
  Put(dir_.path() + "/mine", "x");
  EXPECT_TRUE(fileio::RemoveOurs(fd_, "mine", me_));
  EXPECT_TRUE(fileio::RemoveOurs(fd_, "mine", me_));  // missing counts as removed
}

TEST_F(SafeFile, ATrustedGroupSharesFilesAndDirectories) {
  fileio::Trust group;
  // The running user's own primary group is one it belongs to.
  const std::string gid = std::to_string(getegid());
  ASSERT_TRUE(fileio::TrustGroup(gid.c_str(), &group, why_, sizeof(why_))) << why_;
  EXPECT_TRUE(group.group_set);
  ASSERT_TRUE(fileio::WriteFileAt(fd_, "shared", "x", 1, group, false, why_, sizeof(why_)));
  struct stat st;
  ASSERT_EQ(stat((dir_.path() + "/shared").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_EQ(st.st_gid, getegid());
  const std::string sub = dir_.path() + "/a/b";
  const int d = fileio::OpenDir(sub.c_str(), fileio::DirRole::kPrivate, group, true, why_,
                                sizeof(why_), nullptr, 0);
  ASSERT_GE(d, 0) << why_;
  close(d);
  ASSERT_EQ(stat(sub.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0750u);
  fileio::Trust none;
  EXPECT_FALSE(fileio::TrustGroup("no-such-group-flightrec", &none, why_, sizeof(why_)));
  EXPECT_NE(std::string(why_).find("no such group"), std::string::npos) << why_;
}

TEST_F(SafeFile, PrivateDirectoriesMustBeOursAlone) {
  const std::string ours = dir_.path() + "/rings";
  int d = fileio::OpenDir(ours.c_str(), fileio::DirRole::kPrivate, me_, true, why_, sizeof(why_),
                          nullptr, 0);
  ASSERT_GE(d, 0) << why_;
  close(d);
  struct stat st;
  ASSERT_EQ(stat(ours.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0700u);
  ASSERT_EQ(chmod(ours.c_str(), 0770), 0);
  EXPECT_LT(fileio::OpenDir(ours.c_str(), fileio::DirRole::kPrivate, me_, true, why_, sizeof(why_),
                            nullptr, 0),
            0);
  EXPECT_NE(std::string(why_).find("can be written by its group"), std::string::npos) << why_;
  if (geteuid() != 0) return;
  ASSERT_EQ(chmod(ours.c_str(), 0755), 0);
  ASSERT_EQ(chown(ours.c_str(), kStranger, kStranger), 0);
  EXPECT_LT(fileio::OpenDir(ours.c_str(), fileio::DirRole::kPrivate, me_, true, why_, sizeof(why_),
                            nullptr, 0),
            0);
  EXPECT_NE(std::string(why_).find("is not yours (uid 4242"), std::string::npos) << why_;
}

TEST_F(SafeFile, SharedDirectoriesAreUsedWithANoteUnlessWorldWritableWithoutSticky) {
  const std::string shared = dir_.path() + "/dumps";
  ASSERT_EQ(mkdir(shared.c_str(), 0700), 0);
  ASSERT_EQ(chmod(shared.c_str(), 02775), 0);
  char note[512];
  int d = fileio::OpenDir(shared.c_str(), fileio::DirRole::kShared, me_, false, why_, sizeof(why_),
                          note, sizeof(note));
  ASSERT_GE(d, 0) << why_;
  close(d);
  EXPECT_NE(std::string(note).find("can be written by its group"), std::string::npos) << note;
  ASSERT_EQ(chmod(shared.c_str(), 0777), 0);
  EXPECT_LT(fileio::OpenDir(shared.c_str(), fileio::DirRole::kShared, me_, false, why_,
                            sizeof(why_), note, sizeof(note)),
            0);
  EXPECT_NE(std::string(why_).find("not sticky"), std::string::npos) << why_;
  ASSERT_EQ(chmod(shared.c_str(), 01777), 0);
  d = fileio::OpenDir(shared.c_str(), fileio::DirRole::kShared, me_, false, why_, sizeof(why_),
                      note, sizeof(note));
  ASSERT_GE(d, 0) << why_;
  close(d);
  EXPECT_NE(std::string(note).find("every user"), std::string::npos) << note;
  ASSERT_EQ(chmod(shared.c_str(), 0700), 0);
  d = fileio::OpenDir(shared.c_str(), fileio::DirRole::kShared, me_, false, why_, sizeof(why_),
                      note, sizeof(note));
  ASSERT_GE(d, 0) << why_;
  close(d);
  EXPECT_STREQ(note, "");
}

}  // namespace
}  // namespace flightrec

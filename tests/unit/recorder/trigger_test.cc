// The trigger file (recorder/fileio/trigger_io.h): names, the one line it
// carries, identity changes, and what is never believed.
#include "recorder/fileio/trigger_io.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

fileio::TriggerPaths Paths(const std::string& dir, const char* job) {
  fileio::TriggerPaths p;
  EXPECT_TRUE(fileio::MakeTriggerPaths(dir.c_str(), job, fileio::TrustSelf().uid, &p));
  return p;
}

TEST(Trigger, NamesTheJobAndTheUser) {
  char name[64];
  ASSERT_TRUE(format::TriggerName("job7", name, sizeof(name)));
  EXPECT_STREQ(name, "flightrec-job7.trigger");
  ASSERT_TRUE(fileio::UserTriggerName("job7", 1002, name, sizeof(name)));
  EXPECT_STREQ(name, "flightrec-job7.u1002.trigger");
  char tiny[8];
  EXPECT_FALSE(format::TriggerName("job7", tiny, sizeof(tiny)));
}

TEST(Trigger, WriteIsOneLineAndChangesIdentity) {
  test::TempDir dir;
  const fileio::Trust me = fileio::TrustSelf();
  const fileio::TriggerPaths p = Paths(dir.path(), "j");
  EXPECT_FALSE(fileio::ReadTriggerState(p, me).any());
  char err[256] = {};
  ASSERT_TRUE(
      fileio::WriteTrigger(dir.path().c_str(), "j", "hostA", 123, "timeout", me, err, sizeof(err)))
      << err;
  auto bytes = test::ReadFile(dir.path() + "/flightrec-j.trigger");
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "hostA 123 timeout\n");
  const fileio::TriggerState first = fileio::ReadTriggerState(p, me);
  EXPECT_TRUE(first.any());
  ASSERT_TRUE(
      fileio::WriteTrigger(dir.path().c_str(), "j", "hostA", 123, "timeout", me, err, sizeof(err)));
  // Same content, but a new inode (tmp + rename): watchers notice.
  EXPECT_NE(fileio::ReadTriggerState(p, me), first);
  format::TriggerLine line;
  ASSERT_TRUE(fileio::ReadTrigger(p, me, &line));
  EXPECT_STREQ(line.host, "hostA");
  EXPECT_EQ(line.pid, 123);
  EXPECT_TRUE(line.FromTimeout());
  EXPECT_TRUE(test::ListDir(dir.path(), ".tmp").empty());
}

TEST(Trigger, OnlyTheProtocolsFieldsAreWritten) {
  test::TempDir dir;
  const fileio::Trust me = fileio::TrustSelf();
  char err[256] = {};
  for (const char* reason : {"", "a\tb", "mid-run request", "timeouts"}) {
    EXPECT_FALSE(
        fileio::WriteTrigger(dir.path().c_str(), "j", "h", 1, reason, me, err, sizeof(err)))
        << reason;
  }
  EXPECT_FALSE(fileio::WriteTrigger(dir.path().c_str(), "j", "gpu[001-064]", 1, "timeout", me, err,
                                    sizeof(err)));
  EXPECT_FALSE(fileio::WriteTrigger(dir.path().c_str(), "j", "h", 0, "user", me, err, sizeof(err)));
  EXPECT_EQ(test::ListDir(dir.path(), "").size(), 2u);  // "." and ".." only
}

TEST(Trigger, TextThatFlightrecNeverWritesIsNotATrigger) {
  format::TriggerLine line;
  EXPECT_TRUE(format::ParseTrigger("hostA 123 timeout\n", &line));
  EXPECT_TRUE(line.FromTimeout());
  EXPECT_TRUE(format::ParseTrigger("hostA 123 user", &line));
  EXPECT_FALSE(line.FromTimeout());
  for (const char* text :
       {"", "timeout", "h timeout", "h 1 timeout now", "h 1 timeouts", "h 1 mid-run request",
        "gpu[001-064] 1 timeout", "h -1 timeout", "h 0 timeout", "h 12345678901 timeout",
        "h 1x timeout", "ghp_secret_token_value"}) {
    EXPECT_FALSE(format::ParseTrigger(text, &line)) << text;
  }
}

TEST(Trigger, ASymlinkOrAForeignFileIsNeverRead) {
  test::TempDir dir;
  const fileio::Trust me = fileio::TrustSelf();
  const fileio::TriggerPaths p = Paths(dir.path(), "j");
  // A private file of the user, and a symlink to it where the trigger goes.
  const std::string secret = dir.path() + "/token";
  {
    const int fd = open(secret.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, "h 7 timeout\n", 12), 12);
    close(fd);
  }
  ASSERT_EQ(symlink(secret.c_str(), p.path[0]), 0);
  EXPECT_FALSE(fileio::ReadTriggerState(p, me).any());
  format::TriggerLine line;
  EXPECT_FALSE(fileio::ReadTrigger(p, me, &line));
  // Writing replaces the symlink; its target is untouched.
  char err[256] = {};
  ASSERT_TRUE(fileio::WriteTrigger(dir.path().c_str(), "j", "h", 9, "user", me, err, sizeof(err)))
      << err;
  auto bytes = test::ReadFile(secret);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "h 7 timeout\n");
  struct stat st;
  ASSERT_EQ(lstat(p.path[0], &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  if (geteuid() != 0) return;  // the foreign-owner half needs chown
  // Owned by another user: present, parsable, and still not believed.
  ASSERT_EQ(chown(p.path[0], 4242, 4242), 0);
  EXPECT_FALSE(fileio::ReadTriggerState(p, me).any());
  EXPECT_FALSE(fileio::ReadTrigger(p, me, &line));
}

TEST(Trigger, UnwritableDirectoryNamesTheDirectory) {
  char err[512] = {};
  EXPECT_FALSE(fileio::WriteTrigger("/nonexistent-dir-x", "j", "h", 1, "user", fileio::TrustSelf(),
                                    err, sizeof(err)));
  EXPECT_NE(std::string(err).find("/nonexistent-dir-x"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("No such file"), std::string::npos) << err;
}

}  // namespace
}  // namespace flightrec

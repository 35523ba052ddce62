// The trigger file: name, atomic content, identity changes, bad input.
#include "recorder/trigger.h"

#include <gtest/gtest.h>

#include <string>

#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

TEST(Trigger, PathNamesTheJob) {
  char path[64];
  ASSERT_TRUE(rec::TriggerPath("/d", "job7", path, sizeof(path)));
  EXPECT_STREQ(path, "/d/flightrec-job7.trigger");
  char tiny[8];
  EXPECT_FALSE(rec::TriggerPath("/d", "job7", tiny, sizeof(tiny)));
}

TEST(Trigger, WriteIsOneLineAndChangesIdentity) {
  test::TempDir dir;
  const std::string path = dir.path() + "/flightrec-j.trigger";
  EXPECT_FALSE(rec::ReadTriggerIdentity(path.c_str()).exists);
  char err[256] = {};
  ASSERT_TRUE(rec::WriteTrigger(path.c_str(), "hostA", 123, "timeout", err, sizeof(err))) << err;
  auto bytes = test::ReadFile(path);
  EXPECT_EQ(std::string(bytes.begin(), bytes.end()), "hostA 123 timeout\n");
  const rec::TriggerIdentity first = rec::ReadTriggerIdentity(path.c_str());
  EXPECT_TRUE(first.exists);
  EXPECT_EQ(first.size, bytes.size());
  ASSERT_TRUE(rec::WriteTrigger(path.c_str(), "hostA", 123, "timeout", err, sizeof(err)));
  // Same content, but a new inode (tmp + rename): watchers notice.
  EXPECT_NE(rec::ReadTriggerIdentity(path.c_str()), first);
  char line[64];
  rec::ReadTriggerLine(path.c_str(), line, sizeof(line));
  EXPECT_STREQ(line, "hostA 123 timeout");
  EXPECT_TRUE(test::ListDir(dir.path(), ".tmp").empty());
}

TEST(Trigger, EmptyReasonAndControlBytes) {
  test::TempDir dir;
  const std::string path = dir.path() + "/t";
  char err[256] = {};
  ASSERT_TRUE(rec::WriteTrigger(path.c_str(), "h", 1, "", err, sizeof(err)));
  char line[64];
  rec::ReadTriggerLine(path.c_str(), line, sizeof(line));
  EXPECT_STREQ(line, "h 1 trigger");
  ASSERT_TRUE(rec::WriteTrigger(path.c_str(), "h", 1, "a\tb", err, sizeof(err)));
  rec::ReadTriggerLine(path.c_str(), line, sizeof(line));
  EXPECT_STREQ(line, "h 1 a?b");
  rec::ReadTriggerLine((dir.path() + "/missing").c_str(), line, sizeof(line));
  EXPECT_STREQ(line, "");
}

TEST(Trigger, OnlyATimedOutRankSaysTheJobHangs) {
  EXPECT_TRUE(rec::TriggerFromTimeout("hostA 123 timeout"));
  for (const char* line : {"hostA 123 user", "h 1 trigger", "", "timeout", "h timeout",
                           "h 1 timeout now", "h 1 timeouts", "h 1 mid-run request"}) {
    EXPECT_FALSE(rec::TriggerFromTimeout(line)) << line;
  }
}

TEST(Trigger, UnwritableDirectoryNamesTheFile) {
  char err[512] = {};
  EXPECT_FALSE(
      rec::WriteTrigger("/nonexistent-dir-x/flightrec-j.trigger", "h", 1, "r", err, sizeof(err)));
  EXPECT_NE(std::string(err).find("/nonexistent-dir-x/flightrec-j.trigger"), std::string::npos)
      << err;
  EXPECT_NE(std::string(err).find("No such file"), std::string::npos) << err;
}

}  // namespace
}  // namespace flightrec

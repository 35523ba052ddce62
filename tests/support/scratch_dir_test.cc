// tests/support/gtest_main.cc: every test process works in a scratch $TMPDIR
// of its own, removed when its tests pass and kept, named on stderr, when
// one fails.
#include <dirent.h>

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/files.h"

namespace flightrec {
namespace testing {
namespace {

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") out.push_back(name);
  }
  closedir(d);
  return out;
}

struct ProbeRun {
  int status = -1;
  std::string err;
};

ProbeRun RunProbe(const std::string& tmpdir, const std::string& env) {
  ProbeRun r;
  r.status = RunShell("env -u FLIGHTREC_KEEP_TEST_FILES TMPDIR='" + tmpdir + "' " + env + " '" +
                      SCRATCH_PROBE + "' >/dev/null 2>'" + tmpdir + ".err'");
  r.err = ReadText(tmpdir + ".err");
  return r;
}

TEST(ScratchDir, ThisProcessRunsInItsOwn) {
  const std::string root = TempRoot();
  EXPECT_NE(root, "/tmp");
  EXPECT_NE(root.find("/flightrec-test-"), std::string::npos) << root;
}

TEST(ScratchDir, APassingTestLeavesNothingBehind) {
  const std::string dir = MakeTempDir("scratch-pass");
  ASSERT_FALSE(dir.empty());
  const ProbeRun r = RunProbe(dir, "");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> left = Entries(dir);
  EXPECT_TRUE(left.empty()) << left.size() << " left behind, the first: " << left[0];
}

TEST(ScratchDir, AFailingTestKeepsItsFilesAndSaysWhere) {
  const std::string dir = MakeTempDir("scratch-fail");
  ASSERT_FALSE(dir.empty());
  const ProbeRun r = RunProbe(dir, "FLIGHTREC_PROBE_FAIL=1");
  EXPECT_EQ(r.status, 1);
  const std::vector<std::string> kept = Entries(dir);
  ASSERT_EQ(kept.size(), 1u);
  const std::string path = dir + "/" + kept[0];
  EXPECT_EQ(ReadText(path + "/left-behind.txt"), "probe\n");
  EXPECT_NE(r.err.find("files are kept in " + path), std::string::npos) << r.err;
}

TEST(ScratchDir, KeepTestFilesKeepsThemAfterAPass) {
  const std::string dir = MakeTempDir("scratch-keep");
  ASSERT_FALSE(dir.empty());
  const ProbeRun r = RunProbe(dir, "FLIGHTREC_KEEP_TEST_FILES=1");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(Entries(dir).size(), 1u);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

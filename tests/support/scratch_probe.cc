// A gtest binary for scratch_dir_test.cc: its one test leaves a file in
// $TMPDIR, and fails when FLIGHTREC_PROBE_FAIL is set.
#include <stdlib.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

TEST(ScratchProbe, LeavesAFileAndFailsOnRequest) {
  const char* tmp = getenv("TMPDIR");
  ASSERT_NE(tmp, nullptr);
  std::ofstream(std::string(tmp) + "/left-behind.txt") << "probe\n";
  EXPECT_EQ(getenv("FLIGHTREC_PROBE_FAIL"), nullptr) << "failing on request";
}

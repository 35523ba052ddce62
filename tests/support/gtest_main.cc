// The main() of every gtest binary (flightrec_gtest in tests/CMakeLists.txt).
//
// Each test process works in a scratch directory of its own, exported as
// $TMPDIR, so every temporary file it or a process it starts makes (emulated
// jobs' rings, dumps, reports) lands in one place with one owner. When every
// test passed the directory is removed; when one failed it is kept and its
// path printed, for the post-mortem. FLIGHTREC_KEEP_TEST_FILES=1 keeps it
// always. ctest runs one test per process, so this is one directory a test.
#include <stdio.h>
#include <stdlib.h>

#include <string>

#include <gtest/gtest.h>

#include "support/files.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const std::string scratch = flightrec::testing::MakeTempDir("test");
  if (scratch.empty()) {
    fprintf(stderr, "flightrec-test: cannot make a scratch directory under %s\n",
            flightrec::testing::TempRoot().c_str());
    return 1;
  }
  setenv("TMPDIR", scratch.c_str(), 1);
  const int rc = RUN_ALL_TESTS();
  const char* keep = getenv("FLIGHTREC_KEEP_TEST_FILES");
  if (rc != 0 || (keep != nullptr && keep[0] != '\0' && keep[0] != '0')) {
    fprintf(stderr, "flightrec-test: this test's files are kept in %s\n", scratch.c_str());
  } else {
    flightrec::testing::RemoveTree(scratch);
  }
  return rc;
}

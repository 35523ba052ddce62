// Runs every fuzz harness over every committed corpus and regression file
// (tests/fuzz/corpus/**), so that they keep passing under gcc in every CI
// run, not only in the clang fuzz job.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/harnesses.h"

namespace flightrec {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> CorpusFiles() {
  std::vector<fs::path> files;
  for (const auto& entry : fs::recursive_directory_iterator(FLIGHTREC_FUZZ_CORPUS)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> Slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), {});
}

TEST(FuzzReplayTest, CorpusIsPresent) {
  // Seeds for both harnesses are committed (make_fuzz_corpus writes them).
  EXPECT_GE(CorpusFiles().size(), 8u);
}

TEST(FuzzReplayTest, SnapshotReaderHarnessAcceptsEveryCorpusFile) {
  for (const fs::path& p : CorpusFiles()) {
    std::vector<uint8_t> bytes = Slurp(p);
    EXPECT_EQ(fuzz::FuzzSnapshotReader(bytes.data(), bytes.size()), "") << p;
  }
}

TEST(FuzzReplayTest, RingLayoutHarnessAcceptsEveryCorpusFile) {
  for (const fs::path& p : CorpusFiles()) {
    std::vector<uint8_t> bytes = Slurp(p);
    EXPECT_EQ(fuzz::FuzzRingLayout(bytes.data(), bytes.size()), "") << p;
  }
}

TEST(FuzzReplayTest, EmptyInputIsHandled) {
  EXPECT_EQ(fuzz::FuzzSnapshotReader(nullptr, 0), "");
  EXPECT_EQ(fuzz::FuzzRingLayout(nullptr, 0), "");
}

}  // namespace
}  // namespace flightrec

// Runs every fuzz harness over its committed corpus and regression files, so
// that they keep passing under gcc in every CI run, not only in the clang
// fuzz job: the reader harnesses over tests/fuzz/corpus/** but for the
// analyzer harness's inputs, and the analyzer harness over
// corpus/fuzz_analyzer_inputs/ (seeds made from real rings and dumps, and
// every crash found, kept as a regression file).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/harnesses.h"

namespace flightrec {
namespace {

namespace fs = std::filesystem;

const fs::path kAnalyzerCorpus = fs::path(FLIGHTREC_FUZZ_CORPUS) / "fuzz_analyzer_inputs";

// Every file below `root`, sorted; `skip` and what is below it left out.
std::vector<fs::path> FilesBelow(const fs::path& root, const fs::path& skip = {}) {
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    if (!skip.empty() && it->path() == skip) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file()) files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The reader harnesses' corpus.
std::vector<fs::path> CorpusFiles() { return FilesBelow(FLIGHTREC_FUZZ_CORPUS, kAnalyzerCorpus); }

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

TEST(FuzzReplayTest, FrPickleHarnessAcceptsEveryCorpusFile) {
  const std::vector<fs::path> files = CorpusFiles();
  size_t seeds = 0;
  for (const fs::path& p : files) {
    seeds += p.parent_path().filename() == "fuzz_fr_pickle" ? 1 : 0;
    std::vector<uint8_t> bytes = Slurp(p);
    EXPECT_EQ(fuzz::FuzzFrPickle(bytes.data(), bytes.size()), "") << p;
  }
  EXPECT_GE(seeds, 4u);
  EXPECT_EQ(fuzz::FuzzFrPickle(nullptr, 0), "");
}

TEST(FuzzReplayTest, EmptyInputIsHandled) {
  EXPECT_EQ(fuzz::FuzzSnapshotReader(nullptr, 0), "");
  EXPECT_EQ(fuzz::FuzzRingLayout(nullptr, 0), "");
}

TEST(ReliabilityFuzzReplay, SeedCorpusIsPresent) {
  EXPECT_GE(FilesBelow(kAnalyzerCorpus).size(), 6u);
}

TEST(ReliabilityFuzzReplay, EveryCorpusFilePassesTheHarness) {
  for (const fs::path& p : FilesBelow(kAnalyzerCorpus)) {
    std::vector<uint8_t> bytes = Slurp(p);
    EXPECT_EQ(fuzz::FuzzAnalyzerInputs(bytes.data(), bytes.size()), "") << p;
  }
}

TEST(ReliabilityFuzzReplay, EmptyAndSeparatorOnlyInputs) {
  EXPECT_EQ(fuzz::FuzzAnalyzerInputs(nullptr, 0), "");
  const std::string seps = std::string(fuzz::kFileSeparator) + fuzz::kFileSeparator +
                           fuzz::kFileSeparator + fuzz::kFileSeparator + fuzz::kFileSeparator;
  EXPECT_EQ(fuzz::FuzzAnalyzerInputs(reinterpret_cast<const uint8_t*>(seps.data()), seps.size()),
            "");
}

TEST(ReliabilityFuzzReplay, SplitKeepsAtMostFourFiles) {
  const std::string in = std::string("a") + fuzz::kFileSeparator + "b" + fuzz::kFileSeparator +
                         "c" + fuzz::kFileSeparator + "d" + fuzz::kFileSeparator + "e";
  std::vector<std::string> files =
      fuzz::SplitFiles(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files[0], "a");
  EXPECT_EQ(files[3], std::string("d") + fuzz::kFileSeparator + "e");
}

}  // namespace
}  // namespace flightrec

// Runs the fuzz_analyzer_inputs harness over its committed corpus (seeds made
// from real rings and dumps, and every crash found, kept as a regression
// file) in every gcc build, so the fuzz findings stay fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "reliability/analyzer_inputs_harness.h"
#include "reliability/rel_util.h"

namespace flightrec {
namespace {

std::vector<std::string> CorpusFiles() {
  return rel::ListFiles(FLIGHTREC_REL_CORPUS "/fuzz_analyzer_inputs", "");
}

TEST(ReliabilityFuzzReplay, SeedCorpusIsPresent) { EXPECT_GE(CorpusFiles().size(), 6u); }

TEST(ReliabilityFuzzReplay, EveryCorpusFilePassesTheHarness) {
  for (const std::string& p : CorpusFiles()) {
    std::vector<uint8_t> bytes = rel::ReadBytes(p);
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

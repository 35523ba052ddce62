// `flightrec analyze` on everything the fuzzers and the matrix produce
// (issue item 5): every corpus and regression file of every harness, split
// into the files the harness would write, analyzed by the real CLI in every
// report format: exit 0, 1 or 2 with a report, never a signal. Plus the
// leftover of a dump killed mid-write (a .tmp) is ignored.
#include <stdio.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include <filesystem>

#include "analyzer/model/inputs.h"
#include "reliability/rel_util.h"
#include "tests/fuzz/harnesses.h"

namespace flightrec {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> AllCorpusFiles() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(FLIGHTREC_FUZZ_CORPUS)) {
    if (e.is_regular_file()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(AnalyzerRobustnessTest, EveryCorpusInputGivesAReportAndAnExitCode) {
  std::vector<std::string> files = AllCorpusFiles();
  ASSERT_GE(files.size(), 15u);
  for (const std::string& f : files) {
    SCOPED_TRACE(f);
    const std::string dir = rel::MakeTempDir("robust");
    std::vector<uint8_t> bytes = rel::ReadBytes(f);
    std::vector<std::string> parts = fuzz::SplitFiles(bytes.data(), bytes.size());
    std::vector<std::string> paths;
    for (size_t i = 0; i < parts.size(); ++i) {
      paths.push_back(dir + "/rank" + std::to_string(i));
      ASSERT_TRUE(rel::WriteBytes(paths.back(), parts[i].data(), parts[i].size()));
    }
    for (const char* format : {"text", "json", "markdown", "html"}) {
      // Both ways in: the directory walk and files named explicitly.
      for (const std::vector<std::string>& args : {std::vector<std::string>{dir}, paths}) {
        rel::AnalyzeRun run = rel::RunAnalyze(args, format);
        ASSERT_TRUE(run.exited) << format << ": killed by signal " << run.signal;
        EXPECT_GE(run.code, 0);
        EXPECT_LE(run.code, 2) << format << ": " << run.errors;
        EXPECT_FALSE(run.report.empty()) << format;
      }
    }
    rel::RemoveTree(dir);
  }
}

// A dump written as `<final>.<pid>.tmp` and renamed when complete: a process
// killed before the rename leaves the partial .tmp. Analysis must not count
// it as an input of the job, and must reach the same verdict without it.
TEST(AnalyzerRobustnessTest, LeftoverDumpTmpIsIgnored) {
  const std::string dir = rel::MakeTempDir("tmpleft");
  std::vector<uint8_t> seed =
      rel::ReadBytes(std::string(FLIGHTREC_FUZZ_CORPUS) + "/fuzz_analyzer_inputs/hang_dumps");
  std::vector<std::string> parts = fuzz::SplitFiles(seed.data(), seed.size());
  ASSERT_GE(parts.size(), 2u);
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string p = dir + "/d" + std::to_string(i) + ".frdump";
    ASSERT_TRUE(rel::WriteBytes(p, parts[i].data(), parts[i].size()));
  }
  rel::AnalyzeRun clean = rel::RunAnalyze({dir}, "text");
  ASSERT_TRUE(clean.exited);
  const std::string tmp = dir + "/d0.frdump.4242.tmp";
  ASSERT_TRUE(rel::WriteBytes(tmp, parts[0].data(), parts[0].size() / 2));
  analysis::Inputs in = analysis::LoadInputs({dir});
  for (const std::string& r : in.read) EXPECT_NE(r, tmp);
  for (const analysis::RejectedInput& r : in.rejected) {
    EXPECT_NE(r.path, tmp) << "a leftover .tmp is reported as a bad input: " << r.reason;
  }
  rel::AnalyzeRun with_tmp = rel::RunAnalyze({dir}, "text");
  ASSERT_TRUE(with_tmp.exited);
  EXPECT_EQ(with_tmp.code, clean.code);
  rel::RemoveTree(dir);
}

}  // namespace
}  // namespace flightrec

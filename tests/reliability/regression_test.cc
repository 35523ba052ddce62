// Fuzz findings, one test each, kept after the fix so they stay fixed. Each
// runs the harness in a forked child under a 3 GiB address-space limit, so a
// regression to a runaway allocation fails fast instead of swapping the
// machine (which is also why these files are not in the seed corpus: the
// corpus replay runs unlimited, under the sanitizers).
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <new>

#include "reliability/rel_util.h"
#include "tests/fuzz/harnesses.h"

namespace flightrec {
namespace {

// Exit status of the harness run in a child: 0 clean, 1 invariant violated,
// 2 std::bad_alloc, else 128 + the signal that killed it.
int RunHarnessLimited(const std::string& file) {
  pid_t pid = fork();
  if (pid == 0) {
    struct rlimit lim = {3ULL << 30, 3ULL << 30};
    setrlimit(RLIMIT_AS, &lim);
    std::vector<uint8_t> bytes = rel::ReadBytes(file);
    try {
      _exit(fuzz::FuzzAnalyzerInputs(bytes.data(), bytes.size()).empty() ? 0 : 1);
    } catch (const std::bad_alloc&) {
      _exit(2);  // what the CLI would die of (std::terminate)
    }
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// JobIndex::BuildGroups sizes a dense member table from the nranks (or the
// largest rank) a file declares: ~5e8 here, a 4 GB allocation before the
// kMaxPlausibleRanks cap.
TEST(FuzzRegressionTest, HugeDeclaredNranksDoesNotExhaustMemory) {
  EXPECT_EQ(RunHarnessLimited(FLIGHTREC_FUZZ_REGRESSIONS "/oom_job_index_huge_nranks.bin"), 0);
}

// A comm whose nranks is near the 2^20 plausibility cap with few files
// read: the missing_rank finding lists at most 4,096 absent ranks; listing
// every one would put ~1M Process objects in the JSON report (a timeout,
// then out of memory).
TEST(FuzzRegressionTest, AMillionMissingRanksKeepTheReportSmall) {
  EXPECT_EQ(
      RunHarnessLimited(FLIGHTREC_FUZZ_REGRESSIONS "/oom_missing_rank_report_million_ranks.bin"),
      0);
}

}  // namespace
}  // namespace flightrec

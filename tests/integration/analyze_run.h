// Runs `flightrec analyze --format json` (the CLI binary of the build) on an
// emulated job's files and reads the verdict (docs/report-schema.md) back by
// world rank: findings and culprits name processes with their rank in every
// communicator, and `world` is the one every emulated rank belongs to.
#ifndef FLIGHTREC_TESTS_INTEGRATION_ANALYZE_RUN_H_
#define FLIGHTREC_TESTS_INTEGRATION_ANALYZE_RUN_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flightrec {
namespace itest {

struct AnalyzeRun {
  int exit_code = -1;     // the CLI's exit status
  nlohmann::json report;  // the parsed JSON (discarded when none was printed)
  std::string output;     // stdout + stderr, for failure messages
};

// `options` go on the command line before the paths (e.g. "--window 0").
AnalyzeRun RunAnalyze(const std::vector<std::string>& paths, const std::string& options = "");

// World rank of a Process object of the report; -1 when it has none.
int WorldRank(const nlohmann::json& process);
// World ranks of the report's culprits, in order.
std::vector<int> CulpritWorldRanks(const nlohmann::json& report);
// Findings of one kind, in report order.
std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& kind);
// Whether any process a finding names has world rank `rank`.
bool Names(const nlohmann::json& finding, int rank);
// Headline and one line per finding, for assertion messages.
std::string Describe(const AnalyzeRun& run);

// Bounds the emulated jobs that run at once on this machine, across the
// processes of every test binary and ctest run: FLIGHTREC_TEST_JOB_SLOTS of
// them (default: 2, whose ranks mostly wait on timeouts, in a release and an
// ASan build; 1 under TSan, whose ranks run 5-15x slower). A job
// of kWholeMachineRanks ranks or more takes every slot: two 64-rank jobs at
// once on a small machine starve each other's watchdogs. Held while in scope.
class JobSlot {
 public:
  static constexpr int kWholeMachineRanks = 32;
  // `ranks`: the job's size (0: a small job).
  explicit JobSlot(int ranks = 0);
  ~JobSlot();
  JobSlot(const JobSlot&) = delete;
  JobSlot& operator=(const JobSlot&) = delete;

 private:
  std::vector<int> fds_;
};

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_ANALYZE_RUN_H_

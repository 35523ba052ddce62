// Runs the build's `flightrec analyze` as a child process: the one way tests
// run the analyzer CLI (integration/analyze_run.h reads its JSON verdict,
// the reliability tests its exit codes and reports in every format).
#ifndef FLIGHTREC_TESTS_SUPPORT_ANALYZE_RUNNER_H_
#define FLIGHTREC_TESTS_SUPPORT_ANALYZE_RUNNER_H_

#include <string>
#include <vector>

namespace flightrec {
namespace testing {

struct CliRun {
  bool exited = false;  // false: killed by a signal (a crash)
  int code = -1;        // exit status when exited
  int signal = 0;       // the signal otherwise
  std::string report;   // stdout
  std::string errors;   // stderr
};

// `flightrec analyze OPTIONS PATH...`: `options` is split by the shell
// (e.g. "--format json --window 0"), each path is passed as one argument.
CliRun RunAnalyzeCli(const std::string& options, const std::vector<std::string>& paths);

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_ANALYZE_RUNNER_H_

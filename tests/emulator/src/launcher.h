// `flightrec-emu run`: forks and execs one process per rank, watches their
// progress through the coordination file, ends hung jobs, and reports a JSON
// summary. Exit statuses are listed in options.cc (UsageText) and README.md.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_LAUNCHER_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_LAUNCHER_H_

#include <stdint.h>

#include <string>
#include <utility>
#include <vector>

#include "emulator/src/options.h"

namespace flightrec {
namespace emu {

enum ExitStatus : int {
  kExitOk = 0,
  kExitInternal = 1,
  kExitUsage = 2,
  kExitHang = 3,
  kExitUntilDumps = 4,
  kExitRankFailed = 5,
  kExitInterrupted = 6,
  kExitUntilLog = 7,
  kExitOnlyStuckLeft = 8,
};

const char* ExitStatusName(int status);

// Runs the job. `raw_args` are passed on to every rank process.
int RunLauncher(Options opts, const std::vector<std::string>& raw_args);

// Counts regular files named *.frdump in `dir` (0 if it cannot be read).
int CountDumps(const std::string& dir);

// --until-log: reads the log file incrementally for one text.
class LogWatch {
 public:
  LogWatch(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}
  // True once the text has appeared (read from where the last call stopped).
  bool Poll();
  // CLOCK_REALTIME ns of the Poll that found it, 0 before.
  uint64_t found_wall_ns() const { return found_wall_ns_; }

 private:
  std::string path_;
  std::string text_;
  std::string tail_;
  uint64_t offset_ = 0;
  bool found_ = false;
  uint64_t found_wall_ns_ = 0;
};

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_LAUNCHER_H_

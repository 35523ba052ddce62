// Helpers of the reliability tests: process resource counters and the
// analyzer run in every format, on top of tests/support (files, paths,
// shell commands, the analyze runner), whose names it brings into rel::.
#ifndef FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_
#define FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "support/analyze_runner.h"
#include "support/files.h"

namespace flightrec {
namespace rel {

using testing::BuildDir;
using testing::CliPath;
using testing::EmuPath;
using testing::ListFiles;
using testing::MakeTempDir;
using testing::PluginPath;
using testing::ReadBytes;
using testing::ReadText;
using testing::RemoveTree;
using testing::RunShellStatus;
using testing::WriteBytes;

// Lines of `text` that contain `needle`.
int CountLines(const std::string& text, const std::string& needle);

// Open descriptors of this process (entries of /proc/self/fd).
int CountOpenFds();
// Resident set size of this process in KiB (VmRSS).
long ResidentKib();

// Result of `flightrec analyze --format F PATH...` run as a child process.
using AnalyzeRun = testing::CliRun;
// `extra` are more options (e.g. "--stuck-after", "60").
AnalyzeRun RunAnalyze(const std::vector<std::string>& paths, const std::string& format,
                      const std::vector<std::string>& extra = {});

}  // namespace rel
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_

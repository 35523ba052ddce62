// Small helpers shared by the reliability tests: temp dirs, files, shell
// commands, process resource counters, and the paths of the built products.
#ifndef FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_
#define FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_

#include <stdint.h>

#include <string>
#include <vector>

namespace flightrec {
namespace rel {

// $FLIGHTREC_BUILD_DIR (set by ctest) or the build dir baked in by CMake.
std::string BuildDir();
std::string PluginPath();  // <build>/lib/libnccl-profiler-flightrec.so
std::string CliPath();     // <build>/bin/flightrec
std::string EmuPath();     // <build>/bin/flightrec-emu

// A fresh directory under $TMPDIR (or /tmp); removed by RemoveTree.
std::string MakeTempDir(const std::string& tag);
void RemoveTree(const std::string& dir);

std::string ReadText(const std::string& path);
std::vector<uint8_t> ReadBytes(const std::string& path);
bool WriteBytes(const std::string& path, const void* data, size_t size);
// Regular files directly in `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> ListFiles(const std::string& dir, const std::string& suffix);
// Lines of `text` that contain `needle`.
int CountLines(const std::string& text, const std::string& needle);

// Runs `cmd` through /bin/sh -c. Returns the raw wait status.
int RunShellStatus(const std::string& cmd);

// Open descriptors of this process (entries of /proc/self/fd).
int CountOpenFds();
// Resident set size of this process in KiB (VmRSS).
long ResidentKib();

// Result of `flightrec analyze --format F PATH...` run as a child process.
struct AnalyzeRun {
  bool exited = false;  // false: killed by a signal (a crash)
  int code = -1;        // exit status when exited
  int signal = 0;       // the signal otherwise
  std::string report;   // stdout (the report)
  std::string errors;   // stderr
};
// `extra` are more options (e.g. "--stuck-after", "60").
AnalyzeRun RunAnalyze(const std::vector<std::string>& paths, const std::string& format,
                      const std::vector<std::string>& extra = {});

}  // namespace rel
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_RELIABILITY_REL_UTIL_H_

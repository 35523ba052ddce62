// Files, directories, shell commands and the paths of the built products,
// for every test that runs the real binaries or reads what they wrote.
#ifndef FLIGHTREC_TESTS_SUPPORT_FILES_H_
#define FLIGHTREC_TESTS_SUPPORT_FILES_H_

#include <stddef.h>
#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

namespace flightrec {
namespace testing {

// $FLIGHTREC_BUILD_DIR (set by ctest) or the build dir baked in by CMake.
std::string BuildDir();
std::string PluginPath();  // <build>/lib/libnccl-profiler-flightrec.so
std::string CliPath();     // <build>/bin/flightrec
std::string EmuPath();     // <build>/bin/flightrec-emu

// $TMPDIR, or /tmp when it is unset or empty. In a test process it is the
// test's own scratch directory (tests/support/gtest_main.cc).
std::string TempRoot();
// A fresh directory TempRoot()/flightrec-TAG-XXXXXX; "" when none could be made.
std::string MakeTempDir(const std::string& tag);
// Removes `dir` and everything below it, read-only parts included.
void RemoveTree(const std::string& dir);

std::string ReadText(const std::string& path);
// Polls `path` (every 50 ms, a liveness bound of `bound_s`) until `ready`
// accepts its text; false when the bound passed first.
bool WaitForText(const std::string& path, int bound_s,
                 const std::function<bool(const std::string&)>& ready);
std::vector<uint8_t> ReadBytes(const std::string& path);
bool WriteBytes(const std::string& path, const void* data, size_t size);
// Regular files directly in `dir` whose name ends with `suffix`, sorted.
std::vector<std::string> ListFiles(const std::string& dir, const std::string& suffix);

// Runs `cmd` through /bin/sh -c. Returns the raw wait status.
int RunShellStatus(const std::string& cmd);
// The same; returns the exit status, or -1 when the shell did not exit.
int RunShell(const std::string& cmd);

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_FILES_H_

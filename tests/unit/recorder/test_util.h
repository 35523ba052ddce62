// Helpers for the recorder tests. Process-global state (the process
// recorder, env vars, the watchdog) matters, so each scenario runs in a
// forked child that reports through its exit code.
#ifndef FLIGHTREC_TESTS_UNIT_RECORDER_TEST_UTIL_H_
#define FLIGHTREC_TESTS_UNIT_RECORDER_TEST_UTIL_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <vector>

#include "flightrec/record_format.h"

namespace flightrec {
namespace test {

// Fails the child scenario (returns 1 from the enclosing int function).
#define CHILD_CHECK(cond)                                                            \
  do {                                                                               \
    if (!(cond)) {                                                                   \
      fprintf(stderr, "%s:%d: child check failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// Runs `fn` in a forked child; returns its exit status (0 = passed), or
// 128+signal when it died from a signal.
int RunInChild(const std::function<int()>& fn);

// A fresh directory under $TMPDIR (or /tmp), removed with its content.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Sets every NCCL_FLIGHTREC_* variable the recorder reads back to unset,
// then sets DIR to `dir`, DUMP_ON_EXIT=0 and a fixed job id.
void ResetEnv(const std::string& dir);

std::vector<unsigned char> ReadFile(const std::string& path);
// Names (not paths) of entries in `dir` ending with `suffix`, sorted.
std::vector<std::string> ListDir(const std::string& dir, const std::string& suffix);
// Decompresses one zstd frame; empty on error.
std::vector<unsigned char> Decompress(const std::vector<unsigned char>& frame);

// The single ring file in `dir` ("" if not exactly one).
std::string RingPath(const std::string& dir);

// Typed views into an image read from disk (bounds are the caller's job).
inline const format::FileHeader* Header(const std::vector<unsigned char>& img) {
  return reinterpret_cast<const format::FileHeader*>(img.data());
}
const format::RegionDesc* Region(const std::vector<unsigned char>& img, uint32_t r);
const format::Record* Slot(const std::vector<unsigned char>& img, uint32_t r, uint64_t seq);
// True when slot `seq` of region r is committed for `seq` and verifies.
bool SlotValid(const std::vector<unsigned char>& img, uint32_t r, uint64_t seq);

// Log capture: a LogFn that appends each line to CapturedLog().
void CaptureLog(int level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
std::string CapturedLog();  // a copy, taken under the capture lock

// Polls `pred` every 5 ms for up to `seconds` x the time scale
// (support/time_scale.h): a bound on waiting for another thread, not a
// timing assertion.
bool WaitFor(const std::function<bool()>& pred, double seconds = 30);

// Waits (WaitFor) until the watchdog of the single ring in `dir` has polled
// `n` more times (its heartbeat_count).
bool WaitPolls(const std::string& dir, uint64_t n);

}  // namespace test
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_RECORDER_TEST_UTIL_H_

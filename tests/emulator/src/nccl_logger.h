// NCCL's debug logger as the emulator passes it to the plugin's init (v4+):
// lines "<host>:<pid>:<tid> NCCL INFO|WARN <msg>" on stderr or --log-file,
// filtered by NCCL_DEBUG (unset: nothing, as in NCCL; WARN; INFO; TRACE).
// One write(2) per line, so lines of concurrent ranks never interleave.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_LOGGER_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_LOGGER_H_

#include <string>

namespace flightrec {
namespace emu {

// NCCL's ncclDebugLogLevel values.
enum LogLevel : int {
  kLogNone = 0,
  kLogVersion = 1,
  kLogWarn = 2,
  kLogInfo = 3,
  kLogAbort = 4,
  kLogTrace = 5,
};

// Reads NCCL_DEBUG and opens `log_file` ("" = stderr) for appending.
// Returns false (and logs to stderr) if the file cannot be opened.
bool InitNcclLogger(const std::string& log_file);

// Same shape as ncclDebugLogger_t.
void NcclDebugLog(int level, unsigned long flags, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));

}  // namespace emu
}  // namespace flightrec

#define EMU_WARN(...) \
  ::flightrec::emu::NcclDebugLog(::flightrec::emu::kLogWarn, ~0UL, __FILE__, __LINE__, __VA_ARGS__)
#define EMU_INFO(...) \
  ::flightrec::emu::NcclDebugLog(::flightrec::emu::kLogInfo, ~0UL, __FILE__, __LINE__, __VA_ARGS__)

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_NCCL_LOGGER_H_

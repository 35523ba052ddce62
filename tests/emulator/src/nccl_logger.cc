#include "emulator/src/nccl_logger.h"

#include <fcntl.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace flightrec {
namespace emu {

namespace {
int g_fd = STDERR_FILENO;
int g_level = kLogNone;
char g_host[64] = "localhost";

int LevelFromEnv() {
  const char* v = std::getenv("NCCL_DEBUG");
  if (v == nullptr) return kLogNone;
  if (strcasecmp(v, "VERSION") == 0) return kLogVersion;
  if (strcasecmp(v, "WARN") == 0) return kLogWarn;
  if (strcasecmp(v, "INFO") == 0) return kLogInfo;
  if (strcasecmp(v, "ABORT") == 0) return kLogAbort;
  if (strcasecmp(v, "TRACE") == 0) return kLogTrace;
  return kLogNone;
}
}  // namespace

bool InitNcclLogger(const std::string& log_file) {
  g_level = LevelFromEnv();
  gethostname(g_host, sizeof(g_host) - 1);
  char* dot = std::strchr(g_host, '.');
  if (dot != nullptr) *dot = '\0';
  if (log_file.empty()) return true;
  int fd = open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "flightrec-emu: --log-file %s: %s\n", log_file.c_str(),
                 std::strerror(errno));
    return false;
  }
  g_fd = fd;
  return true;
}

void NcclDebugLog(int level, unsigned long flags, const char* file, int line, const char* fmt,
                  ...) {
  if (level > g_level || level == kLogNone) return;
  const char* tag = level == kLogWarn      ? "WARN"
                    : level == kLogVersion ? "VERSION"
                    : level == kLogTrace   ? "TRACE"
                                           : "INFO";
  char buf[1024];
  int n = std::snprintf(buf, sizeof(buf), "%s:%d:%ld NCCL %s ", g_host, getpid(),
                        static_cast<long>(syscall(SYS_gettid)), tag);
  if (n < 0) return;
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
  va_end(ap);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : std::min<size_t>(m, sizeof(buf) - n - 2));
  if (len == 0 || buf[len - 1] != '\n') buf[len++] = '\n';
  ssize_t rc;
  do {
    rc = write(g_fd, buf, len);
  } while (rc < 0 && errno == EINTR);
}

}  // namespace emu
}  // namespace flightrec

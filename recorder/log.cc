#include "recorder/log.h"

#include <stdarg.h>
#include <stdio.h>

namespace flightrec {
namespace rec {

void Logf(LogFn log, int level, const char* fmt, ...) {
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  if (log != nullptr) {
    log(level, kLogFlags, __FILE__, __LINE__, "flightrec: %s", line);
  } else if (level <= kLogWarn) {
    fprintf(stderr, "flightrec WARN: %s\n", line);
  }
}

}  // namespace rec
}  // namespace flightrec

// Slow-path logging through NCCL's logger (or stderr when there is none).
// Never called from the hot path.
#ifndef FLIGHTREC_RECORDER_LOG_H_
#define FLIGHTREC_RECORDER_LOG_H_

#include "recorder/recorder.h"

namespace flightrec {
namespace rec {

// Formats one line prefixed "flightrec: " and hands it to `log` at `level`
// (kLogWarn / kLogInfo). With a null `log`, warnings go to stderr and info
// lines are dropped, so a host without a logger sees each failure once.
void Logf(LogFn log, int level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_LOG_H_

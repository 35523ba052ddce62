// Crash-safe file publication: a file either appears complete or not at all.
#ifndef FLIGHTREC_RECORDER_FILE_UTIL_H_
#define FLIGHTREC_RECORDER_FILE_UTIL_H_

#include <stddef.h>

namespace flightrec {
namespace rec {

// Writes `data` to `<path>.<pid>.tmp` (O_CREAT|O_EXCL|O_CLOEXEC), fsyncs it,
// renames it to `path` and fsyncs the directory. On failure the tmp file is
// removed and `err` names the file and the reason.
bool WriteFileAtomically(const char* path, const void* data, size_t len, char* err, size_t err_len);

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_FILE_UTIL_H_

// How the reader opens a file (owner-checked, never through a symlink, never
// blocking on a FIFO) and takes bytes from it (pread until done).
#ifndef FLIGHTREC_ANALYZER_READER_FILE_READ_H_
#define FLIGHTREC_ANALYZER_READER_FILE_READ_H_

#include <stdint.h>
#include <sys/stat.h>

#include <string>

#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace reader_internal {

// Opens `path` for reading through fileio::OpenForRead with ReadTrust()
// (snapshot_reader.h) and fills *st. -1 with *error when it is missing
// ("cannot open: No such file or directory"), refused (a symlink, not a
// regular file, not believed: fileio's one-line reason) or cannot be
// opened; *status (may be null) says which.
int OpenTrusted(const std::string& path, struct stat* st, std::string* error,
                fileio::OpenStatus* status = nullptr);

// Reads up to `size` bytes at `offset` with pread, retrying EINTR; *done is
// how many arrived (fewer when the file is shorter, e.g. it shrank
// meanwhile). False with *error ("read failed: <errno text>") on an error.
bool PreadFully(int fd, uint64_t offset, uint8_t* dst, uint64_t size, uint64_t* done,
                std::string* error);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_FILE_READ_H_

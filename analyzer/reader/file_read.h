// pread until done: the one way the reader takes bytes from a file.
#ifndef FLIGHTREC_ANALYZER_READER_FILE_READ_H_
#define FLIGHTREC_ANALYZER_READER_FILE_READ_H_

#include <stdint.h>

#include <string>

namespace flightrec {
namespace reader_internal {

// Reads up to `size` bytes at `offset` with pread, retrying EINTR; *done is
// how many arrived (fewer when the file is shorter, e.g. it shrank
// meanwhile). False with *error ("read failed: <errno text>") on an error.
bool PreadFully(int fd, uint64_t offset, uint8_t* dst, uint64_t size, uint64_t* done,
                std::string* error);

}  // namespace reader_internal
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_FILE_READ_H_

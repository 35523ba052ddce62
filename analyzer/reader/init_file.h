// What a ring file left half-made by a process that died during init says
// about that process. The writer creates `<name>.ring.init`, writes the
// complete FileHeader (process_state kProcessStarting) and renames it to
// `<name>.ring` only once the file is complete; a process killed in
// between leaves a `.ring.init` that is empty, short, or a valid header
// followed by zeros. Rings of older plugins were created under their final
// name, so a killed init there leaves an all-zero `.ring`.
#ifndef FLIGHTREC_ANALYZER_READER_INIT_FILE_H_
#define FLIGHTREC_ANALYZER_READER_INIT_FILE_H_

#include <stdint.h>

#include <string>

#include "flightrec/record_format.h"

namespace flightrec {

constexpr const char* kInitSuffix = ".ring.init";
constexpr const char* kRingSuffix = ".ring";

struct InitFile {
  // Opened and stat'ed (reader_internal::OpenTrusted), and no header with
  // names flightrec never writes (image_header.h, CheckWrittenNames).
  bool readable = false;
  bool header = false;    // a complete FileHeader with our magic, endianness and major version
  bool all_zero = false;  // every byte is 0 (an empty file counts)
  uint64_t size = 0;
  uint64_t mtime_ns = 0;  // wall clock of the host that holds the file
  // From the header when `header`:
  int64_t pid = 0;
  std::string host;
  std::string job_id;
  uint64_t created_wall_ns = 0;
  uint32_t process_state = 0;
  std::string error;  // why !readable: refused, unopenable, or forged
};

// Reads at most the header and, for all_zero, scans the rest in bounded
// chunks (never the whole file in memory).
InitFile ReadInitFile(const std::string& path);

// True when `path`'s file name ends with `suffix`.
bool HasSuffix(const std::string& path, const char* suffix);

// Host and pid from a ring's file name `flightrec-<job>-<host>-<pid>.ring`
// or `....ring.init` (host may contain '-'; the job id is needed to find
// where it starts). False when the name does not have that form.
bool ParseRingName(const std::string& path, const std::string& job_id, std::string* host,
                   int64_t* pid);

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_INIT_FILE_H_

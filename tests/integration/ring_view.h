// What the integration tests read back from a ring or dump: by default the
// output of `flightrec show --json FILE` (the product path); when that binary
// has not been built, the same fields through the reader library directly.
#ifndef FLIGHTREC_TESTS_INTEGRATION_RING_VIEW_H_
#define FLIGHTREC_TESTS_INTEGRATION_RING_VIEW_H_

#include <stdint.h>

#include <string>
#include <vector>

#include "support/files.h"

namespace flightrec {
namespace itest {

struct RecView {
  uint64_t op_index = 0;
  bool has_seq = false;
  uint64_t seq = 0;
  std::string func, datatype, state;
  std::string api_datatype;  // "" when the record has none
  uint64_t count = 0;
  int root_or_peer = 0;
  bool p2p = false;
  uint64_t gpu_start_ns = 0, gpu_end_ns = 0, gpu_start_raw = 0, gpu_end_raw = 0;
  bool graph = false;  // the op's API call was graph-captured
  uint64_t t_api_ns = 0, t_enqueue_ns = 0;
  int channels = 0, proxy_ops_started = 0;
};

struct CommView {
  std::string name;
  uint64_t comm_id = 0;
  int rank = -1, nranks = 0;
  uint64_t head = 0, capacity = 0, torn = 0;
  std::vector<RecView> records;
};

struct FileView {
  bool ok = false;
  std::string error;   // why the file could not be read (names the file)
  std::string source;  // "flightrec show --json" or "reader library"
  std::string kind;    // "ring" | "dump"
  int64_t pid = 0;
  int api_version = 0;
  std::string disable_reason;
  std::string dump_reason;            // dumps: "timeout" | "trigger" | "exit" | "request"
  uint64_t dump_wall_ns = 0;          // dumps: when the plugin sealed it (CLOCK_REALTIME)
  std::string dump_detail;            // dumps: the watchdog's one-line reason
  uint64_t foreign_handle_drops = 0;  // process-wide drop counters: garbage handles,
  uint64_t pxn_foreign_drops = 0;     // and other processes' ProxyOps (PXN)
  std::vector<CommView> comms;
  const CommView* Comm(uint64_t comm_id) const;
};

FileView ReadFileView(const std::string& path);

// Files, paths and shell commands (tests/support/files.h).
using testing::BuildDir;
using testing::ListFiles;
using testing::MakeTempDir;
using testing::ReadText;
using testing::RunShell;
using testing::WaitForText;

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_RING_VIEW_H_

#include "analyzer/reader/stream_order.h"

#include <stdint.h>

#include <unordered_map>

#include "flightrec/record_format.h"

namespace flightrec {

size_t InferStreamOrderCompletion(ProcessSnapshot* process) {
  bool any = false;
  for (const CommSnapshot& c : process->comms) {
    for (const OpRecord& r : c.records) {
      if ((r.flags & format::kFlagNoCompletion) != 0 && r.state < format::kOpDone) any = true;
    }
  }
  if (!any) return 0;
  // Per stream: the newest enqueue time of an op that started (running or
  // done). Every op of one process is dated by the same clock.
  std::unordered_map<uint64_t, uint64_t> newest_started;
  for (const CommSnapshot& c : process->comms) {
    for (const OpRecord& r : c.records) {
      if (r.stream == 0 || r.state < format::kOpRunning) continue;
      uint64_t& t = newest_started[r.stream];
      if (r.t_enqueue_ns > t) t = r.t_enqueue_ns;
    }
  }
  size_t moved = 0;
  for (CommSnapshot& c : process->comms) {
    const bool finished_clean =
        c.state == format::kRegionFinalized && (c.flags & format::kRegionEndedInFlight) == 0;
    for (OpRecord& r : c.records) {
      if ((r.flags & format::kFlagNoCompletion) == 0 || r.state >= format::kOpDone) continue;
      bool done = finished_clean;
      if (!done && r.stream != 0) {
        const auto it = newest_started.find(r.stream);
        done = it != newest_started.end() && it->second > r.t_enqueue_ns;
      }
      if (done) {
        r.state = format::kOpDone;
        ++moved;
      }
    }
  }
  return moved;
}

}  // namespace flightrec

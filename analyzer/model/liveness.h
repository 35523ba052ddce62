// Whether the process that wrote a file still runs, where that can be
// checked: only when the file's host is this machine (its hostname equals
// the file's host). A process that still runs is not dead, however stale
// its heartbeat (a starved or stopped process); one that is gone says
// nothing about when it stopped (a launcher kills every rank of a hung job).
#ifndef FLIGHTREC_ANALYZER_MODEL_LIVENESS_H_
#define FLIGHTREC_ANALYZER_MODEL_LIVENESS_H_

#include <functional>
#include <string>

#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace analysis {

enum class Liveness {
  kUnknown,  // another host (or /proc unreadable): no evidence either way
  kRunning,  // pid exists, not a zombie, and started before the file was created
  kGone,     // no such pid, a zombie, or a newer process reusing the pid
};

using LivenessCheck = std::function<Liveness(const ProcessSnapshot&)>;

// The check on this machine: kill(pid, 0) and /proc/<pid>/stat (state and
// start time, against the file's created_wall_ns).
Liveness CheckLiveness(const ProcessSnapshot& process);

// This machine's host name, as the recorder writes it into files.
const std::string& ThisHost();

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_LIVENESS_H_

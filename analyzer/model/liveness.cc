#include "analyzer/model/liveness.h"

#include <errno.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace flightrec {
namespace analysis {
namespace {

constexpr uint64_t kNsPerSec = 1000000000ULL;
// /proc start times have clock-tick resolution and btime whole seconds.
constexpr uint64_t kStartSlackNs = 2 * kNsPerSec;

// Boot time (CLOCK_REALTIME seconds), 0 when unknown.
uint64_t BootTimeS() {
  std::ifstream in("/proc/stat");
  std::string key;
  uint64_t value = 0;
  while (in >> key) {
    if (key == "btime" && (in >> value)) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

const std::string& ThisHost() {
  static const std::string host = [] {
    char buf[256] = {};
    if (gethostname(buf, sizeof(buf) - 1) != 0) return std::string();
    return std::string(buf);
  }();
  return host;
}

Liveness CheckLiveness(const ProcessSnapshot& p) {
  if (p.pid <= 0 || p.host.empty() || p.host != ThisHost()) return Liveness::kUnknown;
  if (kill(static_cast<pid_t>(p.pid), 0) != 0) {
    return errno == ESRCH ? Liveness::kGone : Liveness::kUnknown;
  }
  std::ifstream in("/proc/" + std::to_string(p.pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return Liveness::kUnknown;
  // Fields after the command name "(...)": state is the 3rd, starttime the
  // 22nd (proc(5)).
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return Liveness::kUnknown;
  std::istringstream rest(line.substr(close + 1));
  std::string state;
  rest >> state;
  if (state == "Z" || state == "X") return Liveness::kGone;
  std::string field;
  for (int i = 4; i < 22 && (rest >> field); ++i) {
  }
  uint64_t start_ticks = 0;
  const long hz = sysconf(_SC_CLK_TCK);
  const uint64_t boot = BootTimeS();
  if (!(rest >> start_ticks) || hz <= 0 || boot == 0 || p.created_wall_ns == 0) {
    return Liveness::kRunning;  // it runs; whether it is the same process is unknown
  }
  const uint64_t started_ns =
      boot * kNsPerSec + start_ticks * (kNsPerSec / static_cast<uint64_t>(hz));
  // The file was created by the process, so after it started: a process
  // that started later reuses the pid.
  return started_ns > p.created_wall_ns + kStartSlackNs ? Liveness::kGone : Liveness::kRunning;
}

}  // namespace analysis
}  // namespace flightrec

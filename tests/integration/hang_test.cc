// (b) rank 5 stuck outside NCCL before op 700 with a 2 s timeout: every rank,
// rank 5 included, seals a dump within timeout + 2 s of the moment op 700 was
// first enqueued anywhere, and none before the timeout. "Before the timeout"
// is judged on what the dumps record, not on when the test saw the files: a
// timeout dump names the op it judged and how long that op had been stuck,
// and a trigger dump answers a timeout dump sealed before it. On a loaded
// machine an op before 700 may stall past the timeout first; its dumps are
// still dumps "after the timeout". The timeout and the slack are scaled by
// the machine's load (support/time_scale.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {
namespace {

// How long the watchdog says the op it dumped for had been stuck
// ("... stuck 2.1 s"); -1 when the detail does not say.
double StuckSeconds(const std::string& detail) {
  size_t at = detail.rfind("stuck ");
  if (at == std::string::npos) return -1;
  const char* begin = detail.c_str() + at + 6;
  char* end = nullptr;
  double s = std::strtod(begin, &end);
  return end != begin ? s : -1;
}

TEST(PluginHang, EveryRankSealsADumpWithinTimeoutPlusTwoSeconds) {
  const int timeout_s = testing::ScaledSeconds(2);
  const double timeout = timeout_s;
  const double slack = 2.0 * testing::TimeScale();
  EmuJob job = RunEmu(
      "hang",
      "--ranks 8 --tp 4 --ranks-per-node 4 --ops 2000 --step-us 5 "
      "--fault stuck:rank=5:op=700 --mark-op 700 --until-dumps 8 --hang-timeout-s " +
          testing::ScaledSecondsText(7),
      {{"NCCL_FLIGHTREC_TIMEOUT_S", std::to_string(timeout_s)}, {"NCCL_FLIGHTREC_POLL_MS", "100"}});
  // The job really hung and ended once every rank had sealed a dump (4),
  // before the launcher's hang timeout (3) would have ended it.
  ASSERT_EQ(job.status, 4) << job.summary.dump(1);
  uint64_t first_enqueue = 0;
  for (const auto& r : job.summary["ranks"]) {
    uint64_t t = r["mark_op_wall_ns"].get<uint64_t>();
    if (r["rank"] == 5) {
      EXPECT_EQ(t, 0u) << "rank 5 never reached op 700";
      EXPECT_EQ(r["state"], "stuck");
    } else if (t != 0 && (first_enqueue == 0 || t < first_enqueue)) {
      first_enqueue = t;
    }
  }
  ASSERT_NE(first_enqueue, 0u);
  std::vector<std::string> dumps = ListFiles(job.ring_dir, ".frdump");
  // The first timeout dump of the job: no dump may come before it.
  uint64_t first_timeout_dump = 0;
  std::map<int, uint64_t> earliest_by_pid;
  for (const auto& r : job.summary["ranks"]) earliest_by_pid[r["pid"].get<int>()] = 0;
  for (const std::string& d : dumps) {
    FileView v = ReadFileView(d);
    ASSERT_TRUE(v.ok) << v.error;
    EXPECT_EQ(v.kind, "dump");
    auto it = earliest_by_pid.find(static_cast<int>(v.pid));
    ASSERT_NE(it, earliest_by_pid.end()) << d << " names no rank's pid";
    EXPECT_NE(d.find("-" + std::to_string(v.pid) + "-"), std::string::npos) << d;
    if (v.dump_reason == "timeout") {
      EXPECT_GE(StuckSeconds(v.dump_detail), timeout * 0.9)
          << "pid " << v.pid << " dumped before the timeout: " << v.dump_detail;
      if (first_timeout_dump == 0 || v.dump_wall_ns < first_timeout_dump) {
        first_timeout_dump = v.dump_wall_ns;
      }
    } else {
      EXPECT_EQ(v.dump_reason, "trigger") << d << ": " << v.dump_detail;
    }
    if (it->second == 0 || v.dump_wall_ns < it->second) it->second = v.dump_wall_ns;
  }
  ASSERT_NE(first_timeout_dump, 0u) << "no rank timed out in " << job.ring_dir;
  for (const auto& r : job.summary["ranks"]) {
    int pid = r["pid"].get<int>();
    uint64_t earliest = earliest_by_pid[pid];
    ASSERT_NE(earliest, 0u) << "rank " << r["rank"] << " (pid " << pid << ") sealed no dump in "
                            << job.ring_dir;
    double latency_s = (static_cast<double>(earliest) - static_cast<double>(first_enqueue)) / 1e9;
    RecordProperty("rank" + std::to_string(r["rank"].get<int>()) + "_dump_latency_ms",
                   static_cast<int>(latency_s * 1000));
    EXPECT_LE(latency_s, timeout + slack) << "rank " << r["rank"];
    EXPECT_GE(earliest, first_timeout_dump) << "rank " << r["rank"] << " dumped before the timeout";
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

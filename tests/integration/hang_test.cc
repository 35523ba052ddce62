// (b) rank 5 stuck outside NCCL before op 700 with a 2 s timeout: every rank,
// rank 5 included, seals a dump within timeout + 2 s of the moment op 700 was
// first enqueued anywhere.
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr double kTimeoutS = 2.0;
constexpr double kSlackS = 2.0;

uint64_t MtimeNs(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return 0;
  return static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL + st.st_mtim.tv_nsec;
}

TEST(PluginHang, EveryRankSealsADumpWithinTimeoutPlusTwoSeconds) {
  EmuJob job = RunEmu("hang",
                      "--ranks 8 --tp 4 --ranks-per-node 4 --ops 2000 --step-us 5 "
                      "--fault stuck:rank=5:op=700 --mark-op 700 --hang-timeout-s 7",
                      {{"NCCL_FLIGHTREC_TIMEOUT_S", "2"}, {"NCCL_FLIGHTREC_POLL_MS", "100"}});
  ASSERT_EQ(job.status, 3) << job.summary.dump(1);  // hang timeout: the job really hung
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
  for (const auto& r : job.summary["ranks"]) {
    int pid = r["pid"].get<int>();
    std::string tag = "-" + std::to_string(pid) + "-";
    uint64_t earliest = 0;
    for (const std::string& d : dumps) {
      if (d.find(tag) == std::string::npos) continue;
      FileView v = ReadFileView(d);
      ASSERT_TRUE(v.ok) << v.error;
      EXPECT_EQ(v.kind, "dump");
      EXPECT_EQ(v.pid, pid);
      uint64_t t = MtimeNs(d);
      if (earliest == 0 || t < earliest) earliest = t;
    }
    ASSERT_NE(earliest, 0u) << "rank " << r["rank"] << " (pid " << pid << ") sealed no dump in "
                            << job.ring_dir;
    double latency_s = (static_cast<double>(earliest) - static_cast<double>(first_enqueue)) / 1e9;
    RecordProperty("rank" + std::to_string(r["rank"].get<int>()) + "_dump_latency_ms",
                   static_cast<int>(latency_s * 1000));
    EXPECT_LE(latency_s, kTimeoutS + kSlackS) << "rank " << r["rank"];
    EXPECT_GE(latency_s, kTimeoutS * 0.9) << "rank " << r["rank"] << " dumped before the timeout";
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

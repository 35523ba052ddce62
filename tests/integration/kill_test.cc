// (e) SIGKILL a rank writing at full speed at 50 random moments: its ring is
// always readable, and holds at least every record the rank had published as
// begun before it died (bounded by the ring's capacity, minus the one claim
// that may have been cut in half).
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <thread>

#include "emulator/src/coord.h"
#include "emulator/src/topology.h"
#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr int kIterations = 50;

bool IsGoneOrZombie(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  if (!in) return true;
  std::string line;
  std::getline(in, line);
  size_t close = line.rfind(')');
  return close == std::string::npos || line.size() < close + 3 || line[close + 2] == 'Z';
}

template <typename F>
bool WaitFor(F cond, int timeout_ms) {
  for (int i = 0; i < timeout_ms; ++i) {
    if (cond()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return cond();
}

TEST(PluginKill, RingSurvivesSigkillAtRandomMoments) {
  std::mt19937 rng(12345);
  std::uniform_int_distribution<int> delay_us(0, 30000);
  for (int iter = 0; iter < kIterations; ++iter) {
    SCOPED_TRACE("iteration " + std::to_string(iter));
    EmuJob job;
    job.dir = MakeTempDir("kill");
    job.ring_dir = job.dir + "/rings";
    ASSERT_EQ(mkdir(job.ring_dir.c_str(), 0755), 0);
    std::string cmd = EmuCommand(job,
                                 "--ranks 2 --tp 2 --ranks-per-node 1 --ops 100000000 "
                                 "--step-us 0 --hang-timeout-s 60",
                                 {{"NCCL_FLIGHTREC_RECORDS", "1024"}});
    pid_t launcher = fork();
    ASSERT_GE(launcher, 0);
    if (launcher == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + cmd + " >/dev/null 2>&1").c_str(),
            static_cast<char*>(nullptr));
      _exit(127);
    }
    emu::Coord coord;
    std::string err;
    std::string coord_path = job.dir + "/job/coord.shm";
    ASSERT_TRUE(WaitFor([&] { return coord.Open(coord_path, &err); }, 10000)) << err;
    ASSERT_TRUE(
        WaitFor([&] { return emu::Coord::Load(&coord.rank(1)->records_begun[1]) > 0; }, 10000));
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    pid_t victim = static_cast<pid_t>(__atomic_load_n(&coord.rank(1)->pid, __ATOMIC_ACQUIRE));
    ASSERT_EQ(kill(victim, SIGKILL), 0);
    ASSERT_TRUE(WaitFor([&] { return IsGoneOrZombie(victim); }, 10000));
    // The victim can publish nothing more: these are final.
    uint64_t begun[emu::kCommsPerRank];
    for (int k = 0; k < emu::kCommsPerRank; ++k)
      begun[k] = emu::Coord::Load(&coord.rank(1)->records_begun[k]);

    std::vector<std::string> rings =
        ListFiles(job.ring_dir, "-" + std::to_string(victim) + ".ring");
    ASSERT_EQ(rings.size(), 1u);
    FileView v = ReadFileView(rings[0]);
    ASSERT_TRUE(v.ok) << v.error;
    emu::Topology topo(2, 2, 1, coord.header().job_id);
    for (emu::CommKind kind : {emu::CommKind::kWorld, emu::CommKind::kTp}) {
      emu::CommInfo info = topo.CommOf(kind, 1);
      const CommView* c = v.Comm(info.comm_hash);
      uint64_t published = begun[static_cast<int>(kind)];
      if (published == 0) continue;
      ASSERT_NE(c, nullptr) << info.name;
      uint64_t floor = std::min<uint64_t>(published, c->capacity - 1);
      EXPECT_GE(c->records.size(), floor) << info.name << " published " << published;
      EXPECT_LE(c->torn, 1u) << info.name;
      uint64_t last_coll = 0;
      bool first = true;
      for (const RecView& r : c->records) {
        ASSERT_NE(r.func, "Unknown");
        if (r.p2p) continue;
        if (!first) {
          ASSERT_GT(r.op_index, last_coll) << info.name;
        }
        last_coll = r.op_index;
        first = false;
      }
    }
    kill(launcher, SIGTERM);
    int st = 0;
    waitpid(launcher, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 6) << "launcher status " << st;
    RunShell("rm -rf '" + job.dir + "'");
  }
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

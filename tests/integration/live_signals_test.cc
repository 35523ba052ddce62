// The stop signals of the live commands (analyzer/cli/stop_signal.h,
// docs/monitoring.md "Signals"): `flightrec exporter` (textfile and HTTP at
// once, rewriting the textfile as fast as it can so that a signal lands
// mid-write) and `flightrec status --watch`, each run on the rings of a
// small finished emulated job and stopped with SIGINT, SIGTERM and SIGHUP:
// each exits by itself with status 0 and one line saying why, and the
// exporter leaves no temporary file of its atomic rename behind. (`flightrec
// watch` is stopped in watch_test.cc.) Waits are liveness bounds only.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "integration/emu_job.h"
#include "integration/ring_view.h"
#include "integration/spawned.h"

namespace flightrec {
namespace itest {
namespace {

const std::pair<int, const char*> kStopSignals[] = {
    {SIGINT, "SIGINT"}, {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"}};

std::string Cli() { return "'" + BuildDir() + "/bin/flightrec'"; }

// Names in `dir` that contain ".tmp".
std::vector<std::string> TempFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const std::string& f : ListFiles(dir, "")) {
    if (f.find(".tmp") != std::string::npos) out.push_back(f);
  }
  return out;
}

// Waits (a liveness bound) until `path` has content.
bool WaitForContent(const std::string& path, int bound_s) {
  return WaitForText(path, bound_s, [](const std::string& text) { return !text.empty(); });
}

class LiveSignals : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    job_ = new EmuJob(RunEmu("live-signals", "--ranks 2 --tp 2 --ops 200 --job-id sig"));
  }
  static void TearDownTestSuite() {
    RunShell("rm -rf '" + job_->dir + "'");
    delete job_;
    job_ = nullptr;
  }
  static EmuJob* job_;
};

EmuJob* LiveSignals::job_ = nullptr;

TEST_F(LiveSignals, ExporterStopsWithStatusZeroAndLeavesNoTemporaryFile) {
  ASSERT_EQ(job_->status, 0) << job_->stderr_text;
  const std::string out = MakeTempDir("live-signals-exporter");
  const std::string textfile = out + "/flightrec.prom";
  for (const auto& [sig, name] : kStopSignals) {
    SCOPED_TRACE(name);
    RunShell("rm -f '" + textfile + "'");
    Spawned exporter(Cli() + " exporter --listen 127.0.0.1:0 --textfile '" + textfile +
                     "' --interval 0.001 '" + job_->ring_dir + "' >'" + out + "/stdout' 2>'" + out +
                     "/stderr'");
    ASSERT_TRUE(exporter.WaitBlocks(sig, 60)) << ReadText(out + "/stderr");
    ASSERT_TRUE(WaitForContent(textfile, 60)) << ReadText(out + "/stderr");
    EXPECT_EQ(exporter.Stop(sig, 60), 0) << ReadText(out + "/stderr");
    EXPECT_FALSE(exporter.signaled()) << "killed by the signal instead of exiting";
    EXPECT_NE(ReadText(out + "/stderr").find(std::string("flightrec exporter: stopped by ") + name),
              std::string::npos)
        << ReadText(out + "/stderr");
    EXPECT_NE(ReadText(textfile).find("flightrec_collectives_total{job=\"sig\""),
              std::string::npos);
    EXPECT_EQ(TempFiles(out), std::vector<std::string>{});
  }
  RunShell("rm -rf '" + out + "'");
}

TEST_F(LiveSignals, StatusWatchStopsWithStatusZero) {
  ASSERT_EQ(job_->status, 0) << job_->stderr_text;
  const std::string out = MakeTempDir("live-signals-status");
  for (const auto& [sig, name] : kStopSignals) {
    SCOPED_TRACE(name);
    Spawned status(Cli() + " status --watch --interval 0.1 '" + job_->ring_dir + "' >'" + out +
                   "/stdout' 2>'" + out + "/stderr'");
    ASSERT_TRUE(status.WaitBlocks(sig, 60)) << ReadText(out + "/stderr");
    ASSERT_TRUE(WaitForContent(out + "/stdout", 60)) << ReadText(out + "/stderr");
    EXPECT_EQ(status.Stop(sig, 60), 0) << ReadText(out + "/stderr");
    EXPECT_FALSE(status.signaled()) << "killed by the signal instead of exiting";
    EXPECT_NE(ReadText(out + "/stdout").find("job sig (2 processes): "), std::string::npos)
        << ReadText(out + "/stdout");
  }
  EXPECT_EQ(TempFiles(job_->ring_dir), std::vector<std::string>{});
  RunShell("rm -rf '" + out + "'");
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

// The fixture of the integration tests that run small emulated jobs with a
// fault and analyze their rings: the job is an 8-rank TP-4 node (tp0, tp1
// of 4 ranks each) with the given flags, run under a JobSlot with a fast
// watchdog; its directories are removed when the test passed and printed
// when it failed.
#ifndef FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_FIXTURE_H_
#define FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_FIXTURE_H_

#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "integration/analyze_run.h"
#include "integration/emu_job.h"
#include "support/files.h"
#include "support/time_scale.h"

namespace flightrec {
namespace itest {

class EmuJobTest : public ::testing::Test {
 protected:
  static constexpr int kJobRanks = 8;

  // flightrec-emu flags of an 8-rank TP-4 job of `ops` ops; `features`
  // e.g. "--ce" or "--sym".
  static std::string TpJobArgs(const std::string& features, const std::string& version, int ops,
                               const std::string& extra = "") {
    return "--ranks " + std::to_string(kJobRanks) + " --tp 4 --ranks-per-node 8 --step-us 20 " +
           features + " --nccl-version " + version + " --ops " + std::to_string(ops) + " " + extra;
  }

  // Runs the job, expects its exit status. `timeout_s`: the watchdog's
  // NCCL_FLIGHTREC_TIMEOUT_S (2 s scaled when empty), which a hang job
  // waits out before its first dump.
  EmuJob Run(const std::string& tag, const std::string& args, int expected_status,
             const std::string& timeout_s = "") {
    EmuJob job;
    {
      JobSlot slot;
      job = RunEmu(tag, args,
                   {{"NCCL_FLIGHTREC_TIMEOUT_S",
                     timeout_s.empty() ? testing::ScaledSecondsText(2) : timeout_s},
                    {"NCCL_FLIGHTREC_POLL_MS", "100"},
                    {"NCCL_FLIGHTREC_MAX_COMMS", "4"},
                    {"NCCL_FLIGHTREC_VERDICT", "0"}});
    }
    dirs_.push_back(job.dir);
    EXPECT_EQ(job.status, expected_status) << "flightrec-emu " << args << " in " << job.dir << "\n"
                                           << job.summary.dump(1).substr(0, 3000);
    return job;
  }

  // A job that hangs: `args` with --until-dumps `dumps` (exit status 4),
  // 20 s (scaled) without progress as the backstop.
  EmuJob Hang(const std::string& tag, const std::string& args, int dumps,
              const std::string& timeout_s = "") {
    return Run(tag,
               args + " --until-dumps " + std::to_string(dumps) + " --hang-timeout-s " +
                   testing::ScaledSecondsText(20),
               4, timeout_s);
  }

  AnalyzeRun Analyze(const EmuJob& job) {
    AnalyzeRun run = RunAnalyze({job.ring_dir});
    EXPECT_TRUE(run.report.is_object()) << run.output.substr(0, 2000);
    return run;
  }

  void TearDown() override {
    if (HasFailure()) {
      for (const std::string& d : dirs_) std::printf("kept %s\n", d.c_str());
      return;
    }
    for (const std::string& d : dirs_) testing::RunShell("rm -rf '" + d + "'");
  }

  std::vector<std::string> dirs_;
};

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_FIXTURE_H_

// (d) a hostile environment never breaks the job, and the plugin says why in
// NCCL's log: an unwritable NCCL_FLIGHTREC_DIR, a full filesystem
// (RLIMIT_FSIZE with SIGXFSZ ignored) and nonsense values.
#include <gtest/gtest.h>

#include "integration/emu_job.h"
#include "integration/ring_view.h"

namespace flightrec {
namespace itest {
namespace {

constexpr const char* kSmallJob =
    "--ranks 4 --tp 2 --ranks-per-node 2 --ops 64 --step-us 5 "
    "--hang-timeout-s 20";

void ExpectJobCompleted(const EmuJob& job) {
  ASSERT_EQ(job.status, 0) << job.summary.dump(1) << "\nlog:\n" << job.log;
  for (const auto& r : job.summary["ranks"]) {
    EXPECT_EQ(r["exit_code"], 0);
    EXPECT_EQ(r["ops_completed"], 64);
  }
}

TEST(PluginEnvFaults, UnwritableDirDisablesRecordingAndSaysSo) {
  EmuJob job = RunEmu("unwritable", kSmallJob, {{"NCCL_FLIGHTREC_DIR", "/proc/flightrec-nope"}});
  ExpectJobCompleted(job);
  EXPECT_NE(job.log.find("/proc/flightrec-nope"), std::string::npos) << job.log;
}

TEST(PluginEnvFaults, FullFilesystemDisablesRecordingAndSaysSo) {
  // 1024 blocks (512 KiB under /bin/sh) is far below one ring file (8 MiB);
  // the job's own files (the coordination file with its PXN mailboxes,
  // ~50 KiB here) are smaller.
  EmuJob job = RunEmu("fsize", kSmallJob, {}, "ulimit -f 1024; trap '' XFSZ; ");
  ExpectJobCompleted(job);
  EXPECT_NE(job.log.find("NCCL WARN"), std::string::npos) << job.log;
  EXPECT_NE(job.log.find("flightrec"), std::string::npos) << job.log;
  for (const std::string& ring : ListFiles(job.ring_dir, ".ring")) {
    FileView v = ReadFileView(ring);  // a partial file must be rejected cleanly
    if (v.ok) {
      EXPECT_FALSE(v.comms.empty() && v.disable_reason.empty()) << ring;
    }
  }
}

TEST(PluginEnvFaults, NonsenseValuesAreNamedInTheLog) {
  EmuJob job = RunEmu("nonsense", kSmallJob,
                      {{"NCCL_FLIGHTREC_TIMEOUT_S", "banana"},
                       {"NCCL_FLIGHTREC_RECORDS", "-5"},
                       {"NCCL_FLIGHTREC_MAX_COMMS", "lots"},
                       {"NCCL_FLIGHTREC_CLOCK", "sundial"},
                       {"NCCL_FLIGHTREC_POLL_MS", "1e999"}});
  ExpectJobCompleted(job);
  for (const char* s : {"NCCL_FLIGHTREC_TIMEOUT_S", "banana", "NCCL_FLIGHTREC_RECORDS",
                        "NCCL_FLIGHTREC_MAX_COMMS", "NCCL_FLIGHTREC_CLOCK", "sundial"}) {
    EXPECT_NE(job.log.find(s), std::string::npos) << s << " not in the NCCL log:\n" << job.log;
  }
  // Defaults were kept, so recording still works.
  EXPECT_EQ(ListFiles(job.ring_dir, ".ring").size(), 4u);
}

}  // namespace
}  // namespace itest
}  // namespace flightrec

// NCCL_FLIGHTREC_* parsing: defaults, valid values, nonsense values (warned
// once, naming the variable and value, default kept).
#include "recorder/config.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <string>

#include "recorder/ring_file.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

using rec::Config;
using test::CapturedLog;

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    test::ResetEnv("/unused");
    unsetenv("NCCL_FLIGHTREC_DIR");
    unsetenv("NCCL_FLIGHTREC_DUMP_ON_EXIT");
    unsetenv("NCCL_FLIGHTREC_JOB_ID");
    unsetenv("NCCL_FLIGHTREC_VERDICT");
    const char* tmp = getenv("TMPDIR");
    saved_tmpdir_ = tmp != nullptr ? tmp : "";
    setenv("TMPDIR", "/var/tmp/x", 1);
  }
  // The test process's own scratch dir comes back (tests/support/gtest_main.cc).
  void TearDown() override {
    if (saved_tmpdir_.empty()) {
      unsetenv("TMPDIR");
    } else {
      setenv("TMPDIR", saved_tmpdir_.c_str(), 1);
    }
  }
  std::string saved_tmpdir_;

  // Loads the config and returns only the lines logged while doing so.
  std::string Load(Config* cfg) {
    const size_t before = CapturedLog().size();
    rec::LoadConfig(cfg, &test::CaptureLog);
    return CapturedLog().substr(before);
  }
};

TEST_F(ConfigTest, DefaultsWithNothingSet) {
  Config c;
  EXPECT_EQ(Load(&c), "");
  EXPECT_TRUE(c.enable);
  // Per user: another user's directory of the same name cannot be ours.
  const std::string per_user = "/var/tmp/x/flightrec-" + std::to_string(geteuid());
  EXPECT_EQ(std::string(c.dir), per_user);
  EXPECT_EQ(std::string(c.dump_dir), per_user);
  EXPECT_FALSE(c.trust.group_set);
  EXPECT_EQ(c.trust.uid, static_cast<uint32_t>(geteuid()));
  EXPECT_EQ(c.timeout_ns, 120000000000ULL);
  EXPECT_EQ(c.poll_ns, 1000000000ULL);
  EXPECT_EQ(c.records, 4096u);
  EXPECT_EQ(c.max_comms, 16u);
  EXPECT_EQ(c.max_dumps, 4u);
  EXPECT_TRUE(c.dump_on_exit);
  EXPECT_STREQ(c.job_id, "nojob");
  EXPECT_EQ(c.clock, rec::kClockRequestAuto);
  EXPECT_TRUE(c.trigger);
  EXPECT_EQ(c.dump_signal, 0);
  EXPECT_TRUE(c.verdict);
  EXPECT_STREQ(c.analyzer, "");
  EXPECT_STREQ(c.on_verdict, "");
}

TEST_F(ConfigTest, DefaultRingStaysUnder16MiB) {
  Config c;
  Load(&c);
  const rec::RingLayout l = rec::ComputeLayout(c.max_comms, c.records);
  EXPECT_EQ(l.records_offset % format::kPageSize, 0u);
  EXPECT_EQ(l.file_size, l.records_offset + 16ULL * 4096 * 128);
  EXPECT_LE(l.file_size, 16ULL << 20);
}

TEST_F(ConfigTest, ValidValues) {
  setenv("NCCL_FLIGHTREC_ENABLE", "1", 1);
  setenv("NCCL_FLIGHTREC_DIR", "/data/fr", 1);
  setenv("NCCL_FLIGHTREC_DUMP_DIR", "/data/dumps", 1);
  setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.5", 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "100", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "3", 1);
  setenv("NCCL_FLIGHTREC_MAX_DUMPS", "0", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "run 7/a", 1);
  setenv("NCCL_FLIGHTREC_CLOCK", "monotonic", 1);
  setenv("NCCL_FLIGHTREC_TRIGGER", "0", 1);
  setenv("NCCL_FLIGHTREC_DUMP_SIGNAL", "SIGUSR2", 1);
  setenv("NCCL_FLIGHTREC_VERDICT", "0", 1);
  setenv("NCCL_FLIGHTREC_ANALYZER", "/opt/fr/bin/flightrec", 1);
  setenv("NCCL_FLIGHTREC_ON_VERDICT", "echo \"$FLIGHTREC_VERDICT\" >> /tmp/v", 1);
  Config c;
  EXPECT_EQ(Load(&c), "");
  EXPECT_STREQ(c.dir, "/data/fr");
  EXPECT_STREQ(c.dump_dir, "/data/dumps");
  EXPECT_EQ(c.timeout_ns, 500000000ULL);
  EXPECT_EQ(c.poll_ns, 125000000ULL);  // timeout / 4
  EXPECT_EQ(c.records, 128u);          // rounded up to a power of two
  EXPECT_EQ(c.max_comms, 3u);
  EXPECT_EQ(c.max_dumps, 0u);
  EXPECT_FALSE(c.dump_on_exit);
  EXPECT_STREQ(c.job_id, "run_7_a");
  EXPECT_EQ(c.clock, rec::kClockRequestMonotonic);
  EXPECT_FALSE(c.trigger);
  EXPECT_EQ(c.dump_signal, SIGUSR2);
  EXPECT_FALSE(c.verdict);
  EXPECT_STREQ(c.analyzer, "/opt/fr/bin/flightrec");
  EXPECT_STREQ(c.on_verdict, "echo \"$FLIGHTREC_VERDICT\" >> /tmp/v");
}

TEST_F(ConfigTest, PollIsClampedToTenMs) {
  setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.02", 1);
  Config c;
  Load(&c);
  EXPECT_EQ(c.poll_ns, 10000000ULL);
  setenv("NCCL_FLIGHTREC_POLL_MS", "1", 1);
  Load(&c);
  EXPECT_EQ(c.poll_ns, 10000000ULL);
  setenv("NCCL_FLIGHTREC_POLL_MS", "250", 1);
  Load(&c);
  EXPECT_EQ(c.poll_ns, 250000000ULL);
}

TEST_F(ConfigTest, JobIdFallbacks) {
  Config c;
  setenv("TORCHELASTIC_RUN_ID", "te-1", 1);
  Load(&c);
  EXPECT_STREQ(c.job_id, "te-1");
  setenv("SLURM_JOB_ID", "4242", 1);
  Load(&c);
  EXPECT_STREQ(c.job_id, "4242");
  setenv("NCCL_FLIGHTREC_JOB_ID", "mine", 1);
  Load(&c);
  EXPECT_STREQ(c.job_id, "mine");
  setenv("NCCL_FLIGHTREC_JOB_ID", "", 1);  // empty: next source
  Load(&c);
  EXPECT_STREQ(c.job_id, "4242");
  unsetenv("SLURM_JOB_ID");
  unsetenv("TORCHELASTIC_RUN_ID");
}

TEST_F(ConfigTest, NonsenseValuesWarnOnceAndKeepDefaults) {
  const char* bad[][2] = {
      {"NCCL_FLIGHTREC_ENABLE", "maybe"},    {"NCCL_FLIGHTREC_TIMEOUT_S", "abc"},
      {"NCCL_FLIGHTREC_RECORDS", "-5"},      {"NCCL_FLIGHTREC_MAX_COMMS", "0"},
      {"NCCL_FLIGHTREC_MAX_DUMPS", "lots"},  {"NCCL_FLIGHTREC_POLL_MS", "10ms"},
      {"NCCL_FLIGHTREC_CLOCK", "fast"},      {"NCCL_FLIGHTREC_DUMP_SIGNAL", "SIGKILL"},
      {"NCCL_FLIGHTREC_VERDICT", "perhaps"}, {"NCCL_FLIGHTREC_ANALYZER", ""}};
  for (const auto& kv : bad) setenv(kv[0], kv[1], 1);
  Config c;
  const std::string log = Load(&c);
  for (const auto& kv : bad) {
    const std::string needle = std::string(kv[0]) + "=\"" + kv[1] + "\"";
    const size_t at = log.find(needle);
    EXPECT_NE(at, std::string::npos) << needle << " not in:\n" << log;
    EXPECT_EQ(log.find(needle, at + 1), std::string::npos) << needle << " logged twice";
  }
  EXPECT_TRUE(c.enable);
  EXPECT_EQ(c.timeout_ns, 120000000000ULL);
  EXPECT_EQ(c.records, 4096u);
  EXPECT_EQ(c.max_comms, 16u);
  EXPECT_EQ(c.max_dumps, 4u);
  EXPECT_EQ(c.poll_ns, 1000000000ULL);
  EXPECT_EQ(c.clock, rec::kClockRequestAuto);
  EXPECT_EQ(c.dump_signal, 0);
  EXPECT_TRUE(c.verdict);
  EXPECT_STREQ(c.analyzer, "");
}

TEST_F(ConfigTest, OutOfRangeAndNegativeTimeouts) {
  for (const char* v : {"0", "-1", "nan", "inf", "1e12", "2s", ""}) {
    setenv("NCCL_FLIGHTREC_TIMEOUT_S", v, 1);
    Config c;
    const std::string log = Load(&c);
    EXPECT_NE(log.find("NCCL_FLIGHTREC_TIMEOUT_S"), std::string::npos) << v;
    EXPECT_EQ(c.timeout_ns, 120000000000ULL) << v;
  }
  setenv("NCCL_FLIGHTREC_RECORDS", "4194305", 1);  // above 1 << 22
  Config c;
  EXPECT_NE(Load(&c).find("NCCL_FLIGHTREC_RECORDS"), std::string::npos);
  EXPECT_EQ(c.records, 4096u);
}

TEST_F(ConfigTest, HugeProductIsShrunkBelowTheReaderLimit) {
  setenv("NCCL_FLIGHTREC_RECORDS", "4194304", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "4096", 1);
  Config c;
  Load(&c);
  EXPECT_EQ(c.max_comms, 4096u);
  EXPECT_LE(rec::ComputeLayout(c.max_comms, c.records).file_size, format::kMaxFileSize);
  EXPECT_EQ(c.records & (c.records - 1), 0u);
}

TEST(SignalNames, ParsesNumbersAndNames) {
  EXPECT_EQ(rec::ParseSignal("SIGUSR1"), SIGUSR1);
  EXPECT_EQ(rec::ParseSignal("USR2"), SIGUSR2);
  EXPECT_EQ(rec::ParseSignal("12"), 12);
  EXPECT_EQ(rec::ParseSignal("9"), 0);
  EXPECT_EQ(rec::ParseSignal("SIGSTOP"), 0);
  EXPECT_EQ(rec::ParseSignal("0"), 0);
  EXPECT_EQ(rec::ParseSignal("65"), 0);
  EXPECT_EQ(rec::ParseSignal("SIGFOO"), 0);
}

TEST(SanitizeName, KeepsSafeCharacters) {
  char out[16];
  rec::SanitizeName("a.b-c_D9", "x", out, sizeof(out));
  EXPECT_STREQ(out, "a.b-c_D9");
  rec::SanitizeName("../e t\n", "x", out, sizeof(out));
  EXPECT_STREQ(out, ".._e_t_");
  rec::SanitizeName("", "fallback", out, sizeof(out));
  EXPECT_STREQ(out, "fallback");
  rec::SanitizeName("0123456789abcdefghij", "x", out, sizeof(out));
  EXPECT_STREQ(out, "0123456789abcde");
}

}  // namespace
}  // namespace flightrec

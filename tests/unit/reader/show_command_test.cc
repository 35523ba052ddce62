// `flightrec show`, run in-process through its CLI11 registration.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/cli/commands.h"
#include "support/files.h"
#include "tests/unit/reader/image_builder.h"

namespace flightrec {
namespace {

using test_support::ImageBuilder;

struct ShowRun {
  int exit_code = -1;
  std::string out;
  std::string err;
};

ShowRun Show(std::vector<std::string> args) {
  CLI::App app{"flightrec"};
  ShowRun run;
  cli::AddShowCommand(app, &run.exit_code);
  args.insert(args.begin(), {"flightrec", "show"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  app.parse(static_cast<int>(argv.size()), argv.data());
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

class ShowCommandTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ImageBuilder b(2, 4);
    b.header().drops[format::kDropStaleHandle] = 3;
    b.header().gpu_offset_samples = 1;
    b.Claim(0, 0xabc, 1, 4, "tp0").drops[format::kDropAfterFinalize] = 2;
    for (uint64_t i = 0; i < 6; ++i) {
      format::Record r = ImageBuilder::Coll(i, 256);
      r.gpu_start_raw = test_support::kCreatedMono + 10000 * (i + 1);
      r.gpu_end_raw = r.gpu_start_raw + 2500;
      r.flags = format::kFlagGpuTimed;
      b.Append(0, r);
    }
    format::Record send = ImageBuilder::Coll(0, 8);
    send.func = format::kFuncSend;
    send.flags = format::kFlagP2p | format::kFlagHasApi;
    send.nccl_seq = UINT64_MAX;
    send.root_or_peer = 3;
    send.stream = 0xbeef;
    b.Claim(1, 0xdef, 1, 2, "pp").state = format::kRegionFinalized;
    b.Append(1, send);
    ring_ = Write("ring", b.Bytes());
    dump_ = Write("dump", b.DumpBytes(2));
    bad_ = Write("bad", {1, 2, 3});
  }
  void TearDown() override {
    for (const std::string& p : {ring_, dump_, bad_}) unlink(p.c_str());
  }
  static std::string Write(const char* tag, const std::vector<uint8_t>& bytes) {
    std::string path = testing::TempRoot() + "/flightrec-show-" + tag + "-XXXXXX";
    int fd = mkstemp(path.data());
    EXPECT_GE(fd, 0);
    EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
    close(fd);
    return path;
  }
  std::string ring_, dump_, bad_;
};

TEST_F(ShowCommandTest, JsonFollowsTheDocumentedSchema) {
  ShowRun run = Show({ring_, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema"], "flightrec.show/1");
  EXPECT_EQ(j["path"], ring_);
  EXPECT_EQ(j["kind"], "ring");
  const nlohmann::json& h = j["header"];
  for (const char* key : {"version",
                          "pid",
                          "host",
                          "job_id",
                          "plugin_version",
                          "nccl_version",
                          "gpu_uuid",
                          "gpu_pci_bus_id",
                          "cuda_device",
                          "api_version",
                          "clock_source",
                          "process_state",
                          "created_wall_ns",
                          "heartbeat_wall_ns",
                          "heartbeat_count",
                          "watchdog_timeout_ns",
                          "watchdog_poll_ns",
                          "dumps_sealed",
                          "max_regions",
                          "region_capacity",
                          "file_size",
                          "dump_reason",
                          "dump_sequence",
                          "dump_wall_ns",
                          "dump_detail",
                          "disable_reason"}) {
    EXPECT_TRUE(h.contains(key)) << key;
  }
  EXPECT_EQ(h.size(), 26u);
  EXPECT_EQ(h["version"], "1." + std::to_string(format::kFormatMinor));
  EXPECT_EQ(h["process_state"], "running");
  EXPECT_EQ(h["clock_source"], "monotonic");
  EXPECT_EQ(h["dump_reason"], "none");
  EXPECT_EQ(j["drops"]["stale_handle"], 3);
  EXPECT_EQ(j["drops"]["no_region"], 0);
  EXPECT_FALSE(j["drops"].contains("reserved9"));

  ASSERT_EQ(j["comms"].size(), 2u);
  const nlohmann::json& c = j["comms"][0];
  EXPECT_EQ(c["region"], 0);
  EXPECT_EQ(c["comm_id"], "0x0000000000000abc");
  EXPECT_EQ(c["name"], "tp0");
  EXPECT_EQ(c["rank"], 1);
  EXPECT_EQ(c["nranks"], 4);
  EXPECT_EQ(c["state"], "active");
  EXPECT_EQ(c["head"], 6);
  EXPECT_EQ(c["capacity"], 4);
  EXPECT_EQ(c["overwritten"], 2);
  EXPECT_EQ(c["torn"], 0);
  EXPECT_EQ(c["drops"]["after_finalize"], 2);
  ASSERT_EQ(c["records"].size(), 4u);
  const nlohmann::json& r = c["records"][3];
  EXPECT_EQ(r["slot"], 5);
  EXPECT_EQ(r["op_index"], 5);
  EXPECT_EQ(r["nccl_seq"], 5);
  EXPECT_EQ(r["func"], "AllReduce");
  EXPECT_EQ(r["datatype"], "ncclFloat32");
  EXPECT_TRUE(r["api_datatype"].is_null());  // no CollApi event in this record
  EXPECT_EQ(r["bytes"], 1024);
  EXPECT_EQ(r["root"], 0);
  EXPECT_FALSE(r.contains("peer"));
  EXPECT_EQ(r["algo"], "RING");
  EXPECT_EQ(r["proto"], "SIMPLE");
  EXPECT_EQ(r["state"], "enqueued");
  EXPECT_EQ(r["flags"], nlohmann::json({"gpu_timed"}));
  EXPECT_EQ(r["gpu_end_ns"].get<uint64_t>() - r["gpu_start_ns"].get<uint64_t>(), 2500u);
  EXPECT_EQ(r.size(), 29u);

  const nlohmann::json& p = j["comms"][1];
  EXPECT_EQ(p["state"], "finalized");
  const nlohmann::json& send = p["records"][0];
  EXPECT_TRUE(send["nccl_seq"].is_null());
  EXPECT_EQ(send["peer"], 3);
  EXPECT_FALSE(send.contains("root"));
  EXPECT_EQ(send["stream"], "0xbeef");
  EXPECT_EQ(send["flags"], nlohmann::json({"p2p", "api"}));
  EXPECT_TRUE(j["warnings"].is_array());
}

TEST_F(ShowCommandTest, RecordsLimitKeepsTheLastNPerCommunicator) {
  ShowRun run = Show({ring_, "--json", "--records", "2"});
  ASSERT_EQ(run.exit_code, 0);
  nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["comms"][0]["records"].size(), 2u);
  EXPECT_EQ(j["comms"][0]["records"][0]["slot"], 4);
  EXPECT_EQ(j["comms"][1]["records"].size(), 1u);
  ShowRun none = Show({ring_, "--json", "--records", "0"});
  EXPECT_EQ(nlohmann::json::parse(none.out)["comms"][0]["records"].size(), 0u);
}

TEST_F(ShowCommandTest, SeveralFilesGiveAnArrayAndDumpsSayDump) {
  ShowRun run = Show({ring_, dump_, "--json"});
  ASSERT_EQ(run.exit_code, 0) << run.err;
  nlohmann::json j = nlohmann::json::parse(run.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 2u);
  EXPECT_EQ(j[1]["kind"], "dump");
  EXPECT_EQ(j[1]["header"]["dump_reason"], "timeout");
  EXPECT_EQ(j[1]["header"]["dump_sequence"], 2);
}

TEST_F(ShowCommandTest, UnreadableFileExitsTwoAndNamesTheFile) {
  ShowRun run = Show({ring_, bad_, "--json"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(bad_ + ": truncated"), std::string::npos) << run.err;
  nlohmann::json j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j.size(), 1u);  // the readable file is still shown
}

TEST_F(ShowCommandTest, TextShowsCommsRecordsAndWarnsAboutDrops) {
  ShowRun run = Show({ring_});
  ASSERT_EQ(run.exit_code, 0);
  EXPECT_NE(run.out.find("WARNING: events were dropped: stale_handle=3"), std::string::npos)
      << run.out;
  EXPECT_NE(run.out.find("comm 0x0000000000000abc \"tp0\" rank 1/4"), std::string::npos);
  EXPECT_NE(run.out.find("overwritten 2"), std::string::npos);
  EXPECT_NE(run.out.find("WARNING: drops in this communicator: after_finalize=2"),
            std::string::npos);
  EXPECT_NE(run.out.find("AllReduce"), std::string::npos);
  EXPECT_NE(run.out.find("2.500us"), std::string::npos);
  EXPECT_NE(run.out.find("RING/SIMPLE"), std::string::npos);
}

TEST_F(ShowCommandTest, ExplainPrintsEveryHeaderField) {
  ShowRun run = Show({dump_, "--explain"});
  ASSERT_EQ(run.exit_code, 0);
  for (const char* field : {"kind",
                            "version",
                            "host",
                            "pid",
                            "job_id",
                            "plugin_version",
                            "nccl_version",
                            "api_version",
                            "gpu_uuid",
                            "gpu_pci_bus_id",
                            "cuda_device",
                            "process_state",
                            "disable_reason",
                            "clock_source",
                            "tsc_hz",
                            "created",
                            "created_mono_ns",
                            "gpu_to_mono_offset_ns",
                            "gpu_offset_samples",
                            "heartbeat",
                            "heartbeat_mono_ns",
                            "heartbeat_count",
                            "watchdog_timeout_ns",
                            "watchdog_poll_ns",
                            "dumps_sealed",
                            "max_dumps",
                            "dumps_open",
                            "dumps_released",
                            "dumps_absorbed",
                            "dumps_refused",
                            "last_refused_reason",
                            "dump_reason",
                            "dump_sequence",
                            "dump_time",
                            "dump_mono_ns",
                            "dump_detail",
                            "pointer_size",
                            "max_regions",
                            "region_capacity",
                            "region_table_offset",
                            "records_offset",
                            "file_size",
                            "compressed_size"}) {
    EXPECT_NE(run.out.find(std::string("  ") + field + " "), std::string::npos) << field;
  }
  EXPECT_NE(run.out.find("dump (zstd)"), std::string::npos);
  EXPECT_NE(run.out.find("2023-11-14T22:13:20.000000000Z"), std::string::npos) << run.out;
}

// Format 1.2: the dump budget and what it refused, in text and JSON; a file
// without a budget (format 1.0/1.1, all zero) prints no budget.
TEST_F(ShowCommandTest, DumpBudgetAndRefusalsArePrinted) {
  ImageBuilder b(1, 4);
  b.header().dumps_sealed = 6;
  b.header().max_dumps = 4;
  b.header().dumps_open = 4;
  b.header().dumps_released = 2;
  b.header().dumps_absorbed = 3;
  b.header().dumps_refused = 5;
  b.header().last_refused_reason = format::kDumpTrigger;
  b.header().last_refused_mono_ns = 77;
  b.Claim(0, 0xabc, 0, 2, "tp0");
  const std::string ring = Write("budget", b.Bytes());
  ShowRun text = Show({ring});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("dumps 6 sealed  budget 4 open of 4  released 2  absorbed 3  REFUSED 5 "
                          "(last: trigger)"),
            std::string::npos)
      << text.out;
  ShowRun json = Show({ring, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json& budget = j["header"]["dump_budget"];
  EXPECT_EQ(budget["max_dumps"], 4);
  EXPECT_EQ(budget["open"], 4);
  EXPECT_EQ(budget["released"], 2);
  EXPECT_EQ(budget["absorbed"], 3);
  EXPECT_EQ(budget["refused"], 5);
  EXPECT_EQ(budget["last_refused_reason"], "trigger");
  EXPECT_EQ(budget["last_refused_mono_ns"], 77);
  unlink(ring.c_str());

  ImageBuilder old(1, 4);  // no budget fields: no budget output
  old.Claim(0, 0xabc, 0, 2, "tp0");
  const std::string old_ring = Write("v11", old.Bytes());
  EXPECT_EQ(Show({old_ring}).out.find("dumps 0 sealed"), std::string::npos);
  EXPECT_EQ(Show({old_ring}).out.find(" budget "), std::string::npos);
  const nlohmann::json oj = nlohmann::json::parse(Show({old_ring, "--json"}).out);
  EXPECT_FALSE(oj["header"].contains("dump_budget"));
  unlink(old_ring.c_str());
}

TEST_F(ShowCommandTest, StartingProcessStateIsNamed) {
  ImageBuilder b(1, 4);
  b.header().process_state = format::kProcessStarting;
  const std::string ring = Write("starting", b.Bytes());
  ShowRun run = Show({ring});
  EXPECT_NE(run.out.find("state starting"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("unknown process_state"), std::string::npos) << run.out;
  unlink(ring.c_str());
}

}  // namespace
}  // namespace flightrec

// Input selection: directory walk, newest dump per process, foreign jobs
// and unreadable files listed with their reason.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <string>

#include "analyzer/model/inputs.h"
#include "analyzer/reader/init_file.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

namespace fs = std::filesystem;

class InputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("flightrec-inputs-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "sub");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, bool flightrec) {
    const std::string path = (dir_ / name).string();
    FILE* f = std::fopen(path.c_str(), "wb");
    const uint64_t magic = flightrec ? format::Magic() : 0x2020202020202020ULL;
    std::fwrite(&magic, sizeof(magic), 1, f);
    std::fclose(f);
    return path;
  }

  static ProcessSnapshot Snap(const std::string& path, const std::string& host, int64_t pid,
                              const std::string& job, bool dump, uint32_t seq) {
    ProcessSnapshot s;
    s.path = path;
    s.host = host;
    s.pid = pid;
    s.job_id = job;
    s.is_dump = dump;
    s.dump_sequence = seq;
    s.dump_wall_ns = seq * 1000;
    s.created_wall_ns = 42;
    return s;
  }

  fs::path dir_;
};

TEST_F(InputsTest, CollectWalksDirectoriesAndListsForeignFiles) {
  const std::string ring = Write("a.ring", true);
  const std::string nested = Write("sub/b.ring", true);
  const std::string notes = Write("notes.txt", false);
  Write("flightrec-job.trigger", false);  // ours, never an input: silent
  Write("x.frdump.tmp", true);            // being written: silent
  // What `flightrec watch` leaves beside the dumps: silent too.
  for (const char* f :
       {"flightrec-job.verdict.json", "flightrec-job.verdict.md", "flightrec-job.verdict.html",
        "flightrec-job.verdict.txt", "flightrec-job.verdict.done", "flightrec-job.verdict-3.lock",
        "flightrec-job.hook.log"}) {
    Write(f, false);
  }
  std::vector<RejectedInput> rejected;
  const auto files = CollectFiles({dir_.string(), (dir_ / "nope").string()}, &rejected);
  // Nothing is opened while walking: the reader judges every file.
  EXPECT_EQ(files, (std::vector<std::string>{ring, notes, nested}));
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_NE(rejected[0].reason.find("no such file"), std::string::npos);
  // A file named explicitly is read the same way.
  const std::string txt = (dir_ / "notes.txt").string();
  EXPECT_EQ(CollectFiles({txt}, &rejected), std::vector<std::string>{txt});

  // The real reader rejects the file that is not ours from its first
  // bytes, with the reason, and reads the others.
  const Inputs in = LoadInputs({dir_.string()});
  std::map<std::string, std::string> why;
  for (const RejectedInput& r : in.rejected) why[r.path] = r.reason;
  ASSERT_EQ(why.count(notes), 1u);
  EXPECT_NE(why[notes].find("not a flightrec ring or dump (bad magic"), std::string::npos)
      << why[notes];
  ASSERT_EQ(why.count(ring), 1u);  // the magic alone: truncated, not foreign
  EXPECT_EQ(why[ring].find("not a flightrec"), std::string::npos) << why[ring];
}

TEST_F(InputsTest, KeepsNewestDumpPerProcessAndListsRejects) {
  const std::string a_ring = Write("a.ring", true);
  const std::string a_d1 = Write("a.1.dump", true);
  const std::string a_d2 = Write("sub/a.2.dump", true);
  const std::string b = Write("b.ring", true);
  const std::string c = Write("c.ring", true);
  const std::string d = Write("d.ring", true);
  std::map<std::string, ReadResult> results;
  results[a_ring] = {true, Snap(a_ring, "h1", 1, "job", false, 0), ""};
  results[a_d1] = {true, Snap(a_d1, "h1", 1, "job", true, 1), ""};
  results[a_d2] = {true, Snap(a_d2, "h1", 1, "job", true, 2), ""};
  results[b] = {true, Snap(b, "h2", 2, "other-job", false, 0), ""};
  results[c] = {false, {}, c + ": truncated header (12 of 4096 bytes)"};
  results[d] = {true, Snap(d, "h3", 3, "job", false, 0), ""};
  LoadOptions options;
  options.threads = 3;
  options.read = [&results](const std::string& p) { return results.at(p); };
  const Inputs in = LoadInputs({dir_.string()}, options);

  EXPECT_EQ(in.job_id, "job");
  ASSERT_EQ(in.processes.size(), 2u);
  EXPECT_EQ(in.read, (std::vector<std::string>{a_d2, d}));
  EXPECT_EQ(in.processes[0].path, a_d2);
  EXPECT_EQ(in.superseded.size(), 2u);
  ASSERT_EQ(in.rejected.size(), 2u);
  EXPECT_EQ(in.rejected[0].path, b);
  EXPECT_NE(in.rejected[0].reason.find("foreign job id 'other-job'"), std::string::npos);
  EXPECT_EQ(in.rejected[1].path, c);
  EXPECT_NE(in.rejected[1].reason.find("truncated"), std::string::npos);
}

TEST_F(InputsTest, RingIsUsedWhenThereIsNoDump) {
  const std::string ring = Write("only.ring", true);
  LoadOptions options;
  options.read = [&](const std::string& p) {
    return ReadResult{true, Snap(p, "h", 9, "j", false, 0), ""};
  };
  const Inputs in = LoadInputs({ring}, options);
  ASSERT_EQ(in.processes.size(), 1u);
  EXPECT_FALSE(in.processes[0].is_dump);
}

// Rings left half-made by processes killed during init, as real files: an
// empty `.ring.init` (killed before the header write), one with a complete
// header and then nothing (killed after it), an all-zero `.ring` (an older
// plugin that created the ring under its final name), and a `.ring.init`
// whose process later finished init. Each is a process of the job that
// died during init, identified by its header or else its file name, never
// a rejected or foreign file; the finished one is superseded.
TEST_F(InputsTest, RingsLeftHalfMadeByInitAreProcessesThatDiedDuringInit) {
  const std::string empty_init = (dir_ / "flightrec-job-1-host-a-77.ring.init").string();
  std::fclose(std::fopen(empty_init.c_str(), "wb"));
  const std::string header_init = (dir_ / "flightrec-job-1-host-b-78.ring.init").string();
  {
    format::FileHeader h;
    std::memset(&h, 0, sizeof(h));
    h.magic = format::Magic();
    h.endian_marker = format::kEndianMarker;
    h.version_major = format::kFormatMajor;
    h.pid = 78;
    h.created_wall_ns = 1700000000123456789ULL;
    std::strcpy(h.host, "host-b");
    std::strcpy(h.job_id, "job-1");
    h.process_state = format::kProcessStarting;
    FILE* f = std::fopen(header_init.c_str(), "wb");
    std::fwrite(&h, sizeof(h), 1, f);
    const char zeros[100] = {};
    std::fwrite(zeros, sizeof(zeros), 1, f);  // then killed: short, zeros
    std::fclose(f);
  }
  const std::string zero_ring = (dir_ / "flightrec-job-1-host-c-79.ring").string();
  {
    FILE* f = std::fopen(zero_ring.c_str(), "wb");
    const std::vector<char> zeros(8192, 0);
    std::fwrite(zeros.data(), 1, zeros.size(), f);
    std::fclose(f);
  }
  const std::string finished_init = (dir_ / "flightrec-job-1-host-d-80.ring.init").string();
  std::fclose(std::fopen(finished_init.c_str(), "wb"));
  const std::string finished = Write("flightrec-job-1-host-d-80.ring", true);
  const std::string other = Write("flightrec-job-1-host-e-81.ring", true);
  std::map<std::string, ReadResult> complete;
  complete[finished] = {true, Snap(finished, "host-d", 80, "job-1", false, 0), ""};
  complete[other] = {true, Snap(other, "host-e", 81, "job-1", false, 0), ""};
  LoadOptions options;
  options.threads = 2;
  options.read = [&complete](const std::string& p) {
    auto it = complete.find(p);
    return it != complete.end() ? it->second : ReadSnapshotFile(p);  // the real reader
  };
  const Inputs in = LoadInputs({dir_.string()}, options);

  EXPECT_TRUE(in.rejected.empty())
      << in.rejected.front().path << ": " << in.rejected.front().reason;
  EXPECT_EQ(in.job_id, "job-1");
  ASSERT_EQ(in.processes.size(), 5u);
  ASSERT_EQ(in.sources.size(), 5u);
  std::map<std::string, size_t> at;  // "host:pid" -> index
  for (size_t i = 0; i < in.processes.size(); ++i) {
    at[in.processes[i].host + ":" + std::to_string(in.processes[i].pid)] = i;
  }
  for (const char* died : {"host-a:77", "host-b:78", "host-c:79"}) {
    ASSERT_EQ(at.count(died), 1u) << died;
    const size_t i = at[died];
    EXPECT_TRUE(DiedDuringInit(in.processes[i])) << died;
    EXPECT_EQ(in.processes[i].job_id, "job-1") << died;
    EXPECT_STREQ(in.sources[i].kind, "init") << died;
    EXPECT_NE(in.sources[i].reason.find("died during init"), std::string::npos) << died;
    EXPECT_NE(in.sources[i].time_wall_ns, 0u) << died;  // header created time, else mtime
  }
  EXPECT_NE(in.sources[at["host-b:78"]].reason.find("header"), std::string::npos);
  EXPECT_EQ(in.processes[at["host-b:78"]].created_wall_ns, 1700000000123456789ULL);
  EXPECT_NE(in.sources[at["host-a:77"]].reason.find("file name"), std::string::npos);
  ASSERT_EQ(at.count("host-d:80"), 1u);
  EXPECT_FALSE(DiedDuringInit(in.processes[at["host-d:80"]]));
  EXPECT_EQ(in.read[at["host-d:80"]], finished);
  ASSERT_EQ(in.superseded.size(), 1u);
  EXPECT_EQ(in.superseded[0].path, finished_init);
  EXPECT_EQ(in.superseded[0].by, finished);
  EXPECT_NE(in.superseded[0].why.find("finished init"), std::string::npos);
}

// A zero-filled file not named like a ring is not taken for one.
TEST_F(InputsTest, AnAllZeroFileNotNamedLikeARingIsRejected) {
  const std::string ring = Write("flightrec-job-1-host-e-81.ring", true);
  const std::string junk = (dir_ / "zeros.ring").string();
  {
    FILE* f = std::fopen(junk.c_str(), "wb");
    const std::vector<char> zeros(4096, 0);
    std::fwrite(zeros.data(), 1, zeros.size(), f);
    std::fclose(f);
  }
  LoadOptions options;
  options.read = [&](const std::string& p) {
    return p == ring ? ReadResult{true, Snap(p, "host-e", 81, "job-1", false, 0), ""}
                     : ReadSnapshotFile(p);
  };
  const Inputs in = LoadInputs({dir_.string()}, options);
  ASSERT_EQ(in.processes.size(), 1u);
  ASSERT_EQ(in.rejected.size(), 1u);
  EXPECT_EQ(in.rejected[0].path, junk);
  EXPECT_NE(in.rejected[0].reason.find("died during init"), std::string::npos)
      << in.rejected[0].reason;
}

// A process with one comm of `n` done collectives, enqueued 1 us apart.
ProcessSnapshot WithRecords(ProcessSnapshot s, uint64_t n) {
  CommSnapshot c;
  c.comm_id = 7;
  c.nranks = 1;
  c.rank = 0;
  for (uint64_t i = 0; i < n; ++i) {
    OpRecord r;
    r.slot_seq = i;
    r.op_index = i;
    r.state = format::kOpDone;
    r.t_enqueue_ns = 1000 + i * 1000;
    c.records.push_back(r);
  }
  c.head = c.coll_count = n;
  s.comms.push_back(std::move(c));
  return s;
}

TEST_F(InputsTest, ReloadGivesTheChosenFilesTheWholeBudget) {
  std::map<std::string, ReadResult> results;
  for (const char* name : {"a.ring", "b.ring", "c.ring"}) {
    const std::string p = Write(name, true);
    results[p] = {
        true,
        WithRecords(Snap(p, "h", 1 + static_cast<int>(results.size()), "job", false, 0), 1000), ""};
  }
  LoadOptions options;
  options.read = [&results](const std::string& p) { return results.at(p); };
  options.record_budget_bytes = 600 * sizeof(OpRecord);  // 200 each: the floor, 256, applies
  Inputs in = LoadInputs({dir_.string()}, options);
  ASSERT_EQ(in.processes.size(), 3u);
  for (const ProcessSnapshot& p : in.processes) EXPECT_EQ(p.comms[0].records.size(), 256u);

  // c's file now holds another process: it keeps what it had.
  results[in.processes[2].path].snapshot.pid = 99;
  ReloadProcesses({0, 2}, options, &in);
  EXPECT_EQ(in.processes[0].comms[0].records.size(), 300u);  // 600 shared by 2
  EXPECT_EQ(in.processes[0].comms[0].records.back().op_index, 999u);
  EXPECT_EQ(in.processes[0].comms[0].trimmed, 700u);
  EXPECT_EQ(in.processes[1].comms[0].records.size(), 256u);
  EXPECT_EQ(in.processes[2].pid, 3);
  EXPECT_EQ(in.processes[2].comms[0].records.size(), 256u);
}

// `flightrec analyze --window`: a cap on full records per file that holds
// however large the memory budget is, and only where a file exceeds it.
TEST_F(InputsTest, TheWindowCapsFullRecordsPerFileWhateverTheBudget) {
  std::map<std::string, ReadResult> results;
  const uint64_t sizes[] = {1000, 100, 50};
  for (uint64_t n : sizes) {
    const std::string p = Write("r" + std::to_string(n) + ".ring", true);
    results[p] = {true, WithRecords(Snap(p, "h", static_cast<int>(n), "job", false, 0), n), ""};
  }
  LoadOptions options;
  options.threads = 2;
  options.read = [&results](const std::string& p) { return results.at(p); };
  options.record_budget_bytes = uint64_t{1} << 30;
  options.window_records = 100;
  const Inputs in = LoadInputs({dir_.string()}, options);
  ASSERT_EQ(in.processes.size(), 3u);
  for (const ProcessSnapshot& p : in.processes) {
    const CommSnapshot& c = p.comms[0];
    const uint64_t had = static_cast<uint64_t>(p.pid);
    EXPECT_EQ(c.records.size(), std::min<uint64_t>(had, 100)) << p.path;
    EXPECT_EQ(c.trimmed, had > 100 ? had - 100 : 0) << p.path;
    EXPECT_EQ(c.records.back().op_index, had - 1) << p.path;  // the newest are kept
  }
}

}  // namespace
}  // namespace analysis
}  // namespace flightrec

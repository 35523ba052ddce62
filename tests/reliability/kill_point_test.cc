// Kill at every point (docs/reliability.md): for each named test point in the
// writer (recorder/testpoint.h) a forked child, linked with the testpoint
// build of the recorder, writes flat out and SIGKILLs itself on the k-th hit
// of that point (k random). It reports every slot sequence it saw published
// (BeginOp returned) through a shared anonymous mapping. The parent then
// reads the ring with the real reader and checks: every published record
// still in the window is present and identical, the in-flight claim is torn
// or absent (never data), nothing else is missing, and each dump on disk is
// complete (a seal killed mid-copy leaves no .frdump). A process killed
// during ring creation (point ring_init) leaves no `.ring`, only a
// `.ring.init` that is empty or has a valid header naming it.
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "analyzer/reader/snapshot_reader.h"
#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "reliability/rel_util.h"

namespace {
// Set in the child only; the parent never hits a point (it opens no comm).
const char* g_kill_point = nullptr;
int g_kill_at = 0;
int g_hits = 0;
}  // namespace

// The weak hook of recorder/testpoint.h. Runs on the writer thread, or on
// the watchdog thread for during_seal.
extern "C" void flightrec_testpoint(const char* name) {
  if (g_kill_point == nullptr || strcmp(name, g_kill_point) != 0) return;
  if (__atomic_add_fetch(&g_hits, 1, __ATOMIC_RELAXED) == g_kill_at) kill(getpid(), SIGKILL);
}

namespace flightrec {
namespace {

constexpr uint64_t kCapacity = 64;  // NCCL_FLIGHTREC_RECORDS (the minimum)
constexpr int kRunsPerPoint = 50;
constexpr uint64_t kMaxOps = 2000000;  // a child reaching this was never killed
// during_seal: the seals run on the watchdog thread, so on a loaded machine
// (sanitizers, parallel tests) the writer can finish kMaxOps before the k-th
// seal; it keeps writing until this deadline instead of racing the watchdog.
constexpr int kSealDeadlineS = 120;

// What the child tells the parent; written before each next claim.
struct Shared {
  uint64_t published;  // slot sequences [0, published) returned by BeginOp
  uint64_t dumps_requested;
};

OpDesc OpFor(uint64_t seq) {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.datatype = format::kTypeBfloat16;
  op.algo = format::kAlgoTree;
  op.proto = format::kProtoLL128;
  op.n_channels = static_cast<uint8_t>(1 + seq % 7);
  op.n_warps = 8;
  op.root_or_peer = static_cast<int32_t>(seq % 5);
  op.count = 1000 + seq;
  op.nccl_seq = seq;
  op.user_tag = seq * 3 + 1;
  op.stream = 0x100 + seq;
  return op;
}

void Silent(int, unsigned long, const char*, int, const char*, ...) {}

// The writer child. Never returns.
[[noreturn]] void ChildMain(const std::string& dir, const char* point, int k, Shared* shared) {
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "1", 1);
  setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
  setenv("NCCL_FLIGHTREC_MAX_DUMPS", "1000", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "killpoint", 1);
  CommIdentity id;
  id.comm_id = 0xabcdef;
  id.name = "kp";
  id.rank = 0;
  id.nranks = 2;
  id.from_init = true;
  id.api_version = 7;
  CommRecorder* c = OpenComm(id, &Silent);
  if (c == nullptr) _exit(2);
  g_kill_point = point;
  g_kill_at = k;
  const bool seal = strcmp(point, "during_seal") == 0;
  const time_t deadline = time(nullptr) + kSealDeadlineS;
  for (uint64_t i = 0; seal ? time(nullptr) < deadline : i < kMaxOps; ++i) {
    if (seal && i % 256 == 0) {
      // One dump in flight at a time, requested while we keep writing.
      size_t sealed = rel::ListFiles(dir, ".frdump").size();
      if (sealed == shared->dumps_requested) {
        RequestDump(format::kDumpRequest, "kill point test");
        __atomic_store_n(&shared->dumps_requested, sealed + 1, __ATOMIC_RELEASE);
      }
    }
    const uint64_t seq = c->BeginOp(OpFor(i));
    if (seq != i) _exit(3);
    // Pairs with the parent's acquire load after the child is dead.
    __atomic_store_n(&shared->published, seq + 1, __ATOMIC_RELEASE);
    c->OpEnqueued(seq);
  }
  _exit(4);  // never killed: the point was not reached k times
}

void ExpectIdentical(const OpRecord& r, uint64_t seq) {
  const OpDesc op = OpFor(seq);
  EXPECT_EQ(r.op_index, seq);
  EXPECT_EQ(r.nccl_seq, op.nccl_seq);
  EXPECT_EQ(r.count, op.count);
  EXPECT_EQ(r.user_tag, op.user_tag);
  EXPECT_EQ(r.stream, op.stream);
  EXPECT_EQ(r.root_or_peer, op.root_or_peer);
  EXPECT_EQ(r.func, op.func);
  EXPECT_EQ(r.datatype, op.datatype);
  EXPECT_EQ(r.algo, op.algo);
  EXPECT_EQ(r.proto, op.proto);
  EXPECT_EQ(r.n_channels, op.n_channels);
  EXPECT_EQ(r.n_warps, op.n_warps);
  EXPECT_EQ(r.bytes, op.count * 2);
}

struct KillRun {
  uint64_t published = 0;
  int dumps_before_kill = 0;
};

// Checks the ring (and dumps) a killed child left in `dir`.
void CheckRing(const std::string& dir, const std::string& point, const KillRun& run) {
  std::vector<std::string> rings = rel::ListFiles(dir, ".ring");
  ASSERT_EQ(rings.size(), 1u);
  ReadResult rr = ReadSnapshotFile(rings[0]);
  ASSERT_TRUE(rr.ok) << rr.error;
  ASSERT_EQ(rr.snapshot.comms.size(), 1u);
  const CommSnapshot& c = rr.snapshot.comms[0];
  const uint64_t p = run.published;
  const bool in_begin_op = point != "during_seal";
  if (in_begin_op) {
    // Killed inside BeginOp after its claim: exactly one claim in flight.
    ASSERT_EQ(c.head, p + 1);
    EXPECT_EQ(c.torn, 1u) << "the in-flight claim must be counted as torn";
  } else {
    ASSERT_GE(c.head, p);
    ASSERT_LE(c.head, p + 1);
    EXPECT_LE(c.torn, c.head - p);
  }
  // Every published record still in the window, identical, nothing else.
  const uint64_t first = c.head > kCapacity ? c.head - kCapacity : 0;
  std::vector<uint64_t> seen;
  for (const OpRecord& r : c.records) {
    SCOPED_TRACE("slot " + std::to_string(r.slot_seq));
    ASSERT_GE(r.slot_seq, first);
    if (r.slot_seq >= p) {
      // Only a seal kill can leave a committed but unreported record.
      ASSERT_FALSE(in_begin_op) << "an unpublished record was presented as data";
      ASSERT_EQ(r.slot_seq, p);
    }
    ExpectIdentical(r, r.slot_seq);
    seen.push_back(r.slot_seq);
  }
  for (uint64_t s = first; s < p; ++s) {
    EXPECT_TRUE(std::find(seen.begin(), seen.end(), s) != seen.end()) << "lost record " << s;
  }
  EXPECT_EQ(c.records.size() + c.torn, c.head - first);
  // Dumps: complete or absent. The kill hit seal number k, so k - 1 exist.
  std::vector<std::string> dumps = rel::ListFiles(dir, ".frdump");
  EXPECT_EQ(static_cast<int>(dumps.size()), run.dumps_before_kill);
  for (const std::string& d : dumps) {
    ReadResult dr = ReadSnapshotFile(d);
    EXPECT_TRUE(dr.ok) << dr.error;
    EXPECT_TRUE(dr.snapshot.is_dump);
  }
}

class KillPointTest : public ::testing::TestWithParam<const char*> {};

TEST_P(KillPointTest, PublishedRecordsSurviveAndTheClaimIsTorn) {
  const std::string point = GetParam();
  std::mt19937 rng(std::hash<std::string>()(point));
  // during_wrap fires once per lap, during_seal once per dump.
  const int max_k = point == "during_wrap" ? 40 : point == "during_seal" ? 4 : 400;
  std::uniform_int_distribution<int> pick_k(1, max_k);
  Shared* shared = static_cast<Shared*>(
      mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(shared, MAP_FAILED);
  for (int run = 0; run < kRunsPerPoint; ++run) {
    const int k = pick_k(rng);
    SCOPED_TRACE(point + " run " + std::to_string(run) + " k=" + std::to_string(k));
    const std::string dir = rel::MakeTempDir("kill-" + point);
    ASSERT_FALSE(dir.empty());
    memset(shared, 0, sizeof(Shared));
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) ChildMain(dir, point.c_str(), k, shared);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "child status " << status << " (exit 4: point reached fewer than k times)";
    KillRun kr;
    // Pairs with the child's release store; the child is dead, so final.
    kr.published = __atomic_load_n(&shared->published, __ATOMIC_ACQUIRE);
    kr.dumps_before_kill = point == "during_seal" ? k - 1 : 0;
    CheckRing(dir, point, kr);
    rel::RemoveTree(dir);
  }
  munmap(shared, sizeof(Shared));
}

INSTANTIATE_TEST_SUITE_P(EveryPoint, KillPointTest,
                         ::testing::Values("after_claim", "mid_payload", "before_commit",
                                           "during_wrap", "during_seal"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(info.param);
                         });

// Ring creation, killed at each of its ring_init points (1: the .init file
// exists, empty; 2: its header is written; 3: complete, not yet renamed) or
// not at all (k = 4: the point is passed 3 times, then the child writes).
[[noreturn]] void InitChildMain(const std::string& dir, int k) {
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
  setenv("NCCL_FLIGHTREC_MAX_COMMS", "1", 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "killinit", 1);
  g_kill_point = "ring_init";
  g_kill_at = k;
  CommIdentity id;
  id.comm_id = 0x1717;
  id.name = "init";
  id.rank = 0;
  id.nranks = 2;
  id.from_init = true;
  CommRecorder* c = OpenComm(id, &Silent);
  if (c == nullptr) _exit(2);
  c->BeginOp(OpFor(0));
  kill(getpid(), SIGKILL);  // killed after init: the ring is complete
  _exit(3);
}

TEST(RingInitKillTest, KilledDuringInitLeavesNoRingAndACompleteRingNeverHasMagicZero) {
  constexpr int kRunsPerPoint = 10;
  for (int k = 1; k <= 4; ++k) {
    for (int run = 0; run < kRunsPerPoint; ++run) {
      SCOPED_TRACE("ring_init hit " + std::to_string(k) + " run " + std::to_string(run));
      const std::string dir = rel::MakeTempDir("kill-init");
      ASSERT_FALSE(dir.empty());
      pid_t pid = fork();
      ASSERT_GE(pid, 0);
      if (pid == 0) InitChildMain(dir, k);
      int status = 0;
      ASSERT_EQ(waitpid(pid, &status, 0), pid);
      ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
      const std::vector<std::string> rings = rel::ListFiles(dir, ".ring");
      const std::vector<std::string> inits = rel::ListFiles(dir, ".ring.init");
      if (k <= 3) {
        EXPECT_TRUE(rings.empty()) << "a ring is visible under its name before init finished";
        ASSERT_EQ(inits.size(), 1u);
        const std::vector<uint8_t> bytes = rel::ReadBytes(inits[0]);
        if (k == 1) {
          EXPECT_TRUE(bytes.empty()) << bytes.size() << " bytes";
        } else {
          ASSERT_GE(bytes.size(), sizeof(format::FileHeader));
          format::FileHeader h;
          memcpy(&h, bytes.data(), sizeof(h));
          EXPECT_EQ(h.magic, format::Magic());
          EXPECT_EQ(h.version_major, format::kFormatMajor);
          EXPECT_EQ(h.version_minor, format::kFormatMinor);
          EXPECT_EQ(h.pid, pid);
          EXPECT_EQ(std::string(h.job_id), "killinit");
          EXPECT_NE(h.host[0], '\0');
          EXPECT_NE(h.created_wall_ns, 0u);
          EXPECT_EQ(h.file_size, 8192u + 64u * format::kRecordSize);
          EXPECT_EQ(h.process_state, k == 2 ? uint32_t{format::kProcessStarting}
                                            : uint32_t{format::kProcessRunning});
        }
      } else {
        EXPECT_TRUE(inits.empty());
        ASSERT_EQ(rings.size(), 1u);
        const std::vector<uint8_t> bytes = rel::ReadBytes(rings[0]);
        ASSERT_GE(bytes.size(), sizeof(uint64_t));
        uint64_t magic = 0;
        memcpy(&magic, bytes.data(), sizeof(magic));
        EXPECT_EQ(magic, format::Magic());
        ReadResult rr = ReadSnapshotFile(rings[0]);
        ASSERT_TRUE(rr.ok) << rr.error;
        EXPECT_EQ(rr.snapshot.process_state, format::kProcessRunning);
        ASSERT_EQ(rr.snapshot.comms.size(), 1u);
        EXPECT_EQ(rr.snapshot.comms[0].head, 1u);
      }
      rel::RemoveTree(dir);
    }
  }
}

}  // namespace
}  // namespace flightrec

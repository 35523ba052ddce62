// Built against the FLIGHTREC_TESTPOINTS variant of the recorder.
//
// Crash-point check at the writer's test points: at every point inside a
// claim the file shows the slot as not valid for its new sequence, and
// right after BeginOp returns it is valid. A SIGKILL at any of these points
// therefore leaves a slot the reader reports as torn, never as data.
//
// The reader side of the slot protocol (recorder/record_copy.h): at
// mid_record_copy (a record's commit and immutable words copied, its
// progress words not yet) the test reclaims the slot for a newer lap, and
// neither the dump nor the watchdog may take the mixed copy for a record.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <map>
#include <string>

#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

namespace {
std::string g_ring;                 // the ring file, once open
uint64_t g_seq = 0;                 // the slot sequence being claimed
std::map<std::string, int> g_hits;  // point -> times reached
int g_torn_seen = 0;                // points where the slot read as not valid
int g_valid_seen = 0;               // points where it read as valid (a bug)
std::atomic<int> g_seal_hits{0};    // during_seal runs on the watchdog thread
// mid_record_copy runs on the watchdog thread (its scan and its seals): an
// armed test runs g_on_copy there once, in the middle of one record's copy.
std::function<void()> g_on_copy;
std::atomic<bool> g_copy_armed{false};
std::atomic<bool> g_copy_fired{false};
}  // namespace

extern "C" void flightrec_testpoint(const char* name) {
  const std::string point = name;
  if (point == "during_seal") {
    ++g_seal_hits;
    return;
  }
  if (point == "mid_record_copy") {
    if (g_copy_armed.exchange(false)) {
      g_on_copy();
      g_copy_fired = true;
    }
    return;
  }
  if (g_ring.empty()) return;  // the writer points below are counted only while watched
  ++g_hits[name];
  const auto img = flightrec::test::ReadFile(g_ring);
  if (flightrec::test::SlotValid(img, 0, g_seq)) {
    ++g_valid_seen;
  } else {
    ++g_torn_seen;
  }
}

namespace flightrec {
namespace {

TEST(Testpoints, ClaimIsNeverValidBeforeCommit) {
  test::TempDir dir;
  EXPECT_EQ(test::RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
              CommIdentity id;
              id.comm_id = 1;
              id.nranks = 2;
              id.from_init = true;
              CommRecorder* c = OpenComm(id, &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              g_ring = test::RingPath(dir.path());
              OpDesc op;
              op.func = format::kFuncAllReduce;
              const uint64_t n = 64 * 2 + 3;
              for (uint64_t s = 0; s < n; ++s) {
                g_seq = s;
                CHILD_CHECK(c->BeginOp(op) == s);
                CHILD_CHECK(test::SlotValid(test::ReadFile(g_ring), 0, s));
              }
              CHILD_CHECK(g_hits["after_claim"] == static_cast<int>(n));
              CHILD_CHECK(g_hits["mid_payload"] == static_cast<int>(n));
              CHILD_CHECK(g_hits["before_commit"] == static_cast<int>(n));
              CHILD_CHECK(g_hits["during_wrap"] == 2);  // first claims of laps 1 and 2
              CHILD_CHECK(g_torn_seen == static_cast<int>(3 * n + 2));
              CHILD_CHECK(g_valid_seen == 0);
              g_ring.clear();
              RequestDump(format::kDumpRequest, "tp");
              CHILD_CHECK(test::WaitFor([] { return g_seal_hits.load() == 1; }));
              CloseComm(c);
              return 0;
            }),
            0);
}

CommIdentity Tracked(bool tracked) {
  CommIdentity id;
  id.comm_id = 0x5e91;
  id.name = "tp0";
  id.nranks = 2;
  id.from_init = true;
  id.completion_tracked = tracked;
  return id;
}

OpDesc OneChannelAllReduce() {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.n_channels = 1;
  return op;
}

// A dump seals while the oldest slot is reclaimed: the seal had copied op 0's
// commit and immutable words (op 0 is done) when op 64 took the slot and
// reset its progress words. Without the re-check the dump shows op 0 valid
// and merely enqueued: a finished op presented as the one a rank waits in.
TEST(Testpoints, SealNeverPresentsARecordMixedFromTwoLaps) {
  test::TempDir dir;
  EXPECT_EQ(test::RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
              setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
              CommRecorder* c = OpenComm(Tracked(true), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              for (uint64_t s = 0; s < 64; ++s) {
                CHILD_CHECK(c->BeginOp(OneChannelAllReduce()) == s);
                c->KernelStart(s, 1000 + s);
                c->KernelStop(s, 2000 + s);
              }
              // The watchdog's cursor is past every done op: from here on
              // only the seal copies records.
              CHILD_CHECK(test::WaitPolls(dir.path(), 2));
              uint64_t reclaimed = 0;
              g_on_copy = [&] { reclaimed = c->BeginOp(OneChannelAllReduce()); };
              g_copy_armed = true;
              RequestDump(format::kDumpRequest, "mid-copy");
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              CHILD_CHECK(g_copy_fired.load());
              CHILD_CHECK(reclaimed == 64);  // slot 0, the first one the seal copies
              const auto dumps = test::ListDir(dir.path(), ".frdump");
              const auto img = test::Decompress(test::ReadFile(dir.path() + "/" + dumps[0]));
              CHILD_CHECK(!img.empty());
              CHILD_CHECK(test::Region(img, 0)->head == 64);  // copied before the records
              // Slot 0 is torn (commit 0 in the image), not op 0 "enqueued".
              const bool mixed =
                  test::SlotValid(img, 0, 0) && test::Slot(img, 0, 0)->state != format::kOpDone;
              CHILD_CHECK(!mixed);
              CHILD_CHECK(test::Slot(img, 0, 0)->commit == 0);
              CHILD_CHECK(!test::SlotValid(img, 0, 0));
              for (uint64_t s = 1; s < 64; ++s) {
                const format::Record* r = test::Slot(img, 0, s);
                CHILD_CHECK(test::SlotValid(img, 0, s));
                CHILD_CHECK(r->state == format::kOpDone && r->gpu_end_raw == 2000 + s);
              }
              CloseComm(c);
              return 0;
            }),
            0);
}

// The watchdog scans op 0 (enqueued long ago in a region that reports no
// completion, so it is not judged) when, mid-copy, op 0 completes, the region
// starts reporting completion and op 64 reclaims the slot. Without the
// re-check the copy pairs op 0's old t_enqueue_ns with op 64's state
// (enqueued) and the watchdog seals a timeout dump for the finished op 0.
TEST(Testpoints, WatchdogNeverJudgesARecordMixedFromTwoLaps) {
  test::TempDir dir;
  EXPECT_EQ(
      test::RunInChild([&] {
        test::ResetEnv(dir.path());
        setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
        setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
        setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.2", 1);
        CommRecorder* c = OpenComm(Tracked(false), &test::CaptureLog);
        CHILD_CHECK(c != nullptr);
        const uint64_t first = c->BeginOp(OneChannelAllReduce());
        CHILD_CHECK(first == 0);
        usleep(300000);  // op 0 is older than the timeout from here on
        CHILD_CHECK(test::WaitPolls(dir.path(), 2));
        CHILD_CHECK(test::ListDir(dir.path(), ".frdump").empty());  // not judged
        g_on_copy = [&] {
          c->KernelStart(first, 1);  // marks the region completion-tracked
          c->KernelStop(first, 2);
          for (int i = 0; i < 64; ++i) c->BeginOp(OneChannelAllReduce());
        };
        g_copy_armed = true;
        CHILD_CHECK(test::WaitFor([] { return g_copy_fired.load(); }));
        // Ops 1..64 are enqueued and never progress: once they are
        // older than the timeout the watchdog rightly seals a dump for
        // the oldest, op 1. Op 0, done, must never be named.
        CHILD_CHECK(test::WaitFor([&] { return !test::ListDir(dir.path(), ".frdump").empty(); }));
        CHILD_CHECK(test::WaitPolls(dir.path(), 3));
        const auto dumps = test::ListDir(dir.path(), ".frdump");
        CHILD_CHECK(dumps.size() == 1);
        const auto img = test::Decompress(test::ReadFile(dir.path() + "/" + dumps[0]));
        CHILD_CHECK(!img.empty());
        const std::string detail = test::Header(img)->dump_detail;
        CHILD_CHECK(detail.find(" seq 0 stuck") == std::string::npos);
        CHILD_CHECK(detail.find("AllReduce op#1 seq 1 stuck") != std::string::npos);
        CloseComm(c);
        return 0;
      }),
      0);
}

}  // namespace
}  // namespace flightrec

// Crash-point check at the writer's test points (built against the
// FLIGHTREC_TESTPOINTS variant of the recorder): at every point inside a
// claim the file shows the slot as not valid for its new sequence, and
// right after BeginOp returns it is valid. A SIGKILL at any of these points
// therefore leaves a slot the reader reports as torn, never as data.
#include <gtest/gtest.h>

#include <atomic>
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
}  // namespace

extern "C" void flightrec_testpoint(const char* name) {
  const std::string point = name;
  if (point == "during_seal") {
    ++g_seal_hits;
    return;
  }
  ++g_hits[name];
  if (g_ring.empty()) return;
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

}  // namespace
}  // namespace flightrec

// Communicator lifecycle in the recorder: a finalize with ops not done
// (ncclCommAbort, destroy after ncclCommRevoke) counts them in
// RegionDesc::open_at_finalize and sets kRegionEndedInFlight before the
// region reads finalized; events after it are dropped; the watchdog never
// judges a finalized region.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <thread>
#include <vector>

#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

using test::RunInChild;

CommIdentity Identity(const char* name, uint64_t comm_id) {
  CommIdentity id;
  id.comm_id = comm_id;
  id.name = name;
  id.rank = 0;
  id.nranks = 4;
  id.from_init = true;
  id.api_version = 5;
  id.completion_tracked = true;
  return id;
}

OpDesc AllReduce(uint64_t i) {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.datatype = format::kTypeFloat32;
  op.n_channels = 1;
  op.count = 1024;
  op.nccl_seq = i;
  return op;
}

std::vector<unsigned char> Ring(const test::TempDir& dir) {
  return test::ReadFile(test::RingPath(dir.path()));
}

// Runs one op to done (one channel).
void Complete(CommRecorder* c, uint64_t s) {
  c->OpEnqueued(s);
  c->KernelStart(s, 100);
  c->KernelStop(s, 200);
}

TEST(Lifecycle, CleanDestroyHasNothingOpen) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              CommRecorder* keep = OpenComm(Identity("keep", 1), &test::CaptureLog);
              CommRecorder* c = OpenComm(Identity("world", 2), &test::CaptureLog);
              CHILD_CHECK(keep != nullptr && c != nullptr);
              for (uint64_t i = 0; i < 5; ++i) Complete(c, c->BeginOp(AllReduce(i)));
              CloseComm(c);
              auto img = Ring(dir);
              const format::RegionDesc* d = test::Region(img, c->region_index());
              CHILD_CHECK(d->state == format::kRegionFinalized);
              CHILD_CHECK(d->open_at_finalize == 0);
              CHILD_CHECK((d->flags & format::kRegionEndedInFlight) == 0);
              CloseComm(keep);
              return 0;
            }),
            0);
}

TEST(Lifecycle, AbortWithWorkInFlightIsMarked) {
  test::TempDir dir;
  EXPECT_EQ(
      RunInChild([&] {
        test::ResetEnv(dir.path());
        CommRecorder* keep = OpenComm(Identity("keep", 1), &test::CaptureLog);
        CommRecorder* c = OpenComm(Identity("world", 2), &test::CaptureLog);
        CHILD_CHECK(keep != nullptr && c != nullptr);
        for (uint64_t i = 0; i < 3; ++i) Complete(c, c->BeginOp(AllReduce(i)));
        // The hung op runs on the GPU; two more are queued behind it.
        const uint64_t hung = c->BeginOp(AllReduce(3));
        c->OpEnqueued(hung);
        c->KernelStart(hung, 300);
        c->OpEnqueued(c->BeginOp(AllReduce(4)));
        c->OpEnqueued(c->BeginOp(AllReduce(5)));
        // ncclCommAbort from another thread (PyTorch's watchdog): the
        // proxy thread is joined, finalize comes with the handles open.
        std::thread watchdog([c] { CloseComm(c); });
        watchdog.join();
        auto img = Ring(dir);
        const format::RegionDesc* d = test::Region(img, c->region_index());
        CHILD_CHECK(d->state == format::kRegionFinalized);
        CHILD_CHECK(d->open_at_finalize == 3);
        CHILD_CHECK((d->flags & format::kRegionEndedInFlight) != 0);
        CHILD_CHECK((d->flags & format::kRegionCompletionTracked) != 0);
        CHILD_CHECK(d->finalize_mono_ns >= test::Slot(img, c->region_index(), 5)->t_enqueue_ns);
        // Late events: the plugin resolves handles through CommByRegion,
        // which misses a finalized comm; a new op is declined and counted.
        CHILD_CHECK(CommByRegion(c->region_index(), c->generation_low8()) == nullptr);
        CHILD_CHECK(c->BeginOp(AllReduce(6)) == kNoSlot);
        img = Ring(dir);
        d = test::Region(img, c->region_index());
        CHILD_CHECK(test::Header(img)->drops[format::kDropAfterFinalize] >= 1);
        CHILD_CHECK(d->open_at_finalize == 3);
        CloseComm(keep);
        return 0;
      }),
      0);
}

TEST(Lifecycle, UntrackedCommCountsNothing) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              CommIdentity id = Identity("untracked", 3);
              id.completion_tracked = false;
              CommRecorder* keep = OpenComm(Identity("keep", 1), &test::CaptureLog);
              CommRecorder* c = OpenComm(id, &test::CaptureLog);
              CHILD_CHECK(keep != nullptr && c != nullptr);
              for (uint64_t i = 0; i < 4; ++i) c->OpEnqueued(c->BeginOp(AllReduce(i)));
              CloseComm(c);
              auto img = Ring(dir);
              const format::RegionDesc* d = test::Region(img, c->region_index());
              // No op ever reports done here: a clean destroy looks the same.
              CHILD_CHECK(d->open_at_finalize == 0);
              CHILD_CHECK((d->flags & format::kRegionEndedInFlight) == 0);
              CloseComm(keep);
              return 0;
            }),
            0);
}

TEST(Lifecycle, WrappedRingCountsOnlyTheLiveWindow) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);
              CommRecorder* keep = OpenComm(Identity("keep", 1), &test::CaptureLog);
              CommRecorder* c = OpenComm(Identity("world", 2), &test::CaptureLog);
              CHILD_CHECK(keep != nullptr && c != nullptr);
              auto img = Ring(dir);
              const uint64_t cap = test::Header(img)->region_capacity;
              // Laps of open ops, then a full window of done ones but two.
              for (uint64_t i = 0; i < 2 * cap; ++i) c->BeginOp(AllReduce(i));
              for (uint64_t i = 0; i < cap - 2; ++i) Complete(c, c->BeginOp(AllReduce(i)));
              c->BeginOp(AllReduce(0));
              c->BeginOp(AllReduce(1));
              CloseComm(c);
              img = Ring(dir);
              const format::RegionDesc* d = test::Region(img, c->region_index());
              CHILD_CHECK(d->open_at_finalize == 2);
              CHILD_CHECK((d->flags & format::kRegionEndedInFlight) != 0);
              CloseComm(keep);
              return 0;
            }),
            0);
}

// The watchdog judges active regions only: a comm ended with its op still
// running is never dumped as a timeout, however long the process lives on
// with another comm open; the same op on a live comm is.
TEST(Lifecycle, WatchdogNeverDumpsACommEndedInFlight) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.05", 1);
              CommRecorder* keep = OpenComm(Identity("keep", 1), &test::CaptureLog);
              CommRecorder* c = OpenComm(Identity("world", 2), &test::CaptureLog);
              CHILD_CHECK(keep != nullptr && c != nullptr);
              const uint64_t s = c->BeginOp(AllReduce(0));
              c->KernelStart(s, 100);                        // running, never stopped
              CloseComm(c);                                  // ncclCommAbort at once
              CHILD_CHECK(test::WaitPolls(dir.path(), 12));  // well past the timeout
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").empty());
              const uint64_t k = keep->BeginOp(AllReduce(0));
              keep->KernelStart(k, 100);
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              CloseComm(keep);
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace flightrec

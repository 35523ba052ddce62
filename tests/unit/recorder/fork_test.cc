// Fork without exec: the child must never write to the parent's ring file,
// has no watchdog, and its exit must not mark the parent exited.
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

TEST(Fork, ChildCannotModifyTheParentsFile) {
  test::TempDir dir;
  EXPECT_EQ(test::RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
              setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
              CommIdentity id;
              id.comm_id = 5;
              id.name = "f";
              id.rank = 0;
              id.nranks = 2;
              id.from_init = true;
              CommRecorder* c = OpenComm(id, &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              OpDesc op;
              op.func = format::kFuncAllReduce;
              op.n_channels = 1;
              const uint64_t s = c->BeginOp(op);
              const auto before = test::ReadFile(test::RingPath(dir.path()));
              pid_t pid = fork();
              if (pid == 0) {
                // Everything a confused child could do with inherited handles.
                int bad = 0;
                if (c->BeginOp(op) != kNoSlot) bad = 1;
                c->KernelStart(s, 1);
                c->KernelStop(s, 2);
                c->ProxyProgress(s, 99);
                c->CountDrop(format::kDropBadDescriptor);
                if (OpenComm(id, nullptr) != nullptr) bad = 2;
                RequestDump(format::kDumpRequest, "child");
                CloseComm(c);  // last close in the child: no dump, no exit mark
                _exit(bad);
              }
              int status = 0;
              CHILD_CHECK(waitpid(pid, &status, 0) == pid);
              CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
              const auto after = test::ReadFile(test::RingPath(dir.path()));
              const format::Record* r = test::Slot(after, 0, s);
              CHILD_CHECK(test::Region(after, 0)->head == 1);
              CHILD_CHECK(r->channels_started == 0 && r->net_bytes == 0);
              CHILD_CHECK(r->state == format::kOpEnqueued);
              CHILD_CHECK(test::Header(after)->drops[format::kDropBadDescriptor] == 0);
              CHILD_CHECK(test::Header(after)->process_state == format::kProcessRunning);
              CHILD_CHECK(test::Header(after)->dumps_sealed == 0);
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").empty());
              // Only the parent's watchdog keeps writing (heartbeat words).
              CHILD_CHECK(memcmp(test::Slot(before, 0, s), r, sizeof(*r)) == 0);
              // The parent still records normally.
              CHILD_CHECK(c->BeginOp(op) == 1);
              CloseComm(c);
              const auto last = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(test::Header(last)->process_state == format::kProcessExited);
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").size() == 1);  // exit dump
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace flightrec

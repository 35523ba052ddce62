// The watchdog and dumps: heartbeat, timeout dumps (exactly one per stuck
// op, sealed as a zstd frame, followed by a trigger file), trigger-file
// dumps, requested and signal dumps, MAX_DUMPS, the exit dump.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include <string>

#include "recorder/comm_recorder.h"
#include "recorder/fileio/trigger_io.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

namespace flightrec {
namespace {

using test::RunInChild;

CommIdentity Identity(bool tracked) {
  CommIdentity id;
  id.comm_id = 0x1a2b;
  id.name = "tp0";
  id.rank = 0;
  id.nranks = 2;
  id.from_init = true;
  id.completion_tracked = tracked;
  return id;
}

OpDesc AllReduce() {
  OpDesc op;
  op.func = format::kFuncAllReduce;
  op.n_channels = 1;
  return op;
}

bool WaitPolls(const test::TempDir& dir, uint64_t n) { return test::WaitPolls(dir.path(), n); }

// Reads dump number `index` (0-based, sorted by name) and decompresses it.
std::vector<unsigned char> Dump(const test::TempDir& dir, size_t index) {
  auto dumps = test::ListDir(dir.path(), ".frdump");
  if (index >= dumps.size()) return {};
  return test::Decompress(test::ReadFile(dir.path() + "/" + dumps[index]));
}

TEST(Watchdog, HeartbeatAdvances) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
              CommRecorder* c = OpenComm(Identity(false), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              CHILD_CHECK(WaitPolls(dir, 1));
              auto a = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(WaitPolls(dir, 2));
              auto b = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(test::Header(b)->heartbeat_count > test::Header(a)->heartbeat_count);
              CHILD_CHECK(test::Header(b)->heartbeat_mono_ns > test::Header(a)->heartbeat_mono_ns);
              CHILD_CHECK(test::Header(b)->heartbeat_wall_ns >= test::Header(a)->heartbeat_wall_ns);
              CHILD_CHECK(test::Header(a)->heartbeat_mono_ns >= test::Header(a)->created_mono_ns);
              CloseComm(c);
              return 0;
            }),
            0);
}

TEST(Watchdog, StuckOpSealsExactlyOneDumpAndLeavesTheTrigger) {
  test::TempDir dir;
  EXPECT_EQ(
      RunInChild([&] {
        test::ResetEnv(dir.path());
        setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.2", 1);
        CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
        CHILD_CHECK(c != nullptr);
        const uint64_t done = c->BeginOp(AllReduce());
        c->KernelStart(done, 1);
        c->KernelStop(done, 2);
        const uint64_t stuck = c->BeginOp(AllReduce());  // never progresses
        CHILD_CHECK(test::WaitFor([&] { return !test::ListDir(dir.path(), ".frdump").empty(); }));
        CHILD_CHECK(WaitPolls(dir, 5));  // more polls: still exactly one
        auto dumps = test::ListDir(dir.path(), ".frdump");
        CHILD_CHECK(dumps.size() == 1);
        const std::string name = dumps[0];
        CHILD_CHECK(name.find("flightrec-unit-") == 0);
        CHILD_CHECK(name.find("-" + std::to_string(getpid()) + "-1.frdump") != std::string::npos);
        const auto frame = test::ReadFile(dir.path() + "/" + name);
        CHILD_CHECK(frame.size() > 5);
        uint32_t magic = 0;
        memcpy(&magic, frame.data(), 4);
        CHILD_CHECK(magic == format::kZstdFrameMagic);
        // Frame_Header_Descriptor bit 2: Content_Checksum_flag (RFC 8878).
        CHILD_CHECK((frame[4] & 0x04) != 0);
        CHILD_CHECK(ZSTD_getFrameContentSize(frame.data(), frame.size()) !=
                    ZSTD_CONTENTSIZE_UNKNOWN);
        CHILD_CHECK(ZSTD_findFrameCompressedSize(frame.data(), frame.size()) ==
                    frame.size());  // exactly one frame
        auto img = test::Decompress(frame);
        CHILD_CHECK(!img.empty());
        const format::FileHeader* h = test::Header(img);
        CHILD_CHECK(h->magic == format::Magic());
        CHILD_CHECK(img.size() == h->file_size);
        CHILD_CHECK(h->file_kind == format::kFileKindDump);
        CHILD_CHECK(h->dump_reason == format::kDumpTimeout);
        CHILD_CHECK(h->dump_sequence == 1);
        CHILD_CHECK(h->dump_mono_ns > test::Slot(img, 0, stuck)->t_enqueue_ns);
        const std::string detail = h->dump_detail;
        CHILD_CHECK(detail.find("comm tp0 (0x1a2b) AllReduce op#1 seq 1 stuck") == 0);
        CHILD_CHECK(test::SlotValid(img, 0, done) && test::SlotValid(img, 0, stuck));
        CHILD_CHECK(test::Slot(img, 0, stuck)->state == format::kOpEnqueued);
        // The trigger for the other ranks.
        auto trig = test::ReadFile(dir.path() + "/flightrec-unit.trigger");
        const std::string line(trig.begin(), trig.end());
        CHILD_CHECK(line.find(" " + std::to_string(getpid()) + " timeout\n") != std::string::npos);
        auto live = test::ReadFile(test::RingPath(dir.path()));
        CHILD_CHECK(test::Header(live)->dumps_sealed == 1);
        CHILD_CHECK(test::Header(live)->file_kind == format::kFileKindRing);
        CHILD_CHECK(test::CapturedLog().find("stuck past") != std::string::npos);
        // Once the op completes, a later stuck op is a new event.
        c->KernelStart(stuck, 3);
        c->KernelStop(stuck, 4);
        c->BeginOp(AllReduce());
        CHILD_CHECK(
            test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 2; }));
        CloseComm(c);
        return 0;
      }),
      0);
}

TEST(Watchdog, UntrackedRegionIsNotJudgedUntilItReportsCompletion) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.05", 1);
              CommRecorder* c = OpenComm(Identity(false), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              c->BeginOp(AllReduce());          // no KernelCh/ProxyOp events for this comm
              CHILD_CHECK(WaitPolls(dir, 12));  // well past the timeout
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").empty());
              const uint64_t s = c->BeginOp(AllReduce());
              c->KernelStart(s, 1);  // completion is reported from now on
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              auto img = Dump(dir, 0);
              CHILD_CHECK(test::Header(img)->dump_reason == format::kDumpTimeout);
              CloseComm(c);
              return 0;
            }),
            0);
}

// A graph replay's op is recorded when the stream reaches it (NCCL starts
// its Coll event from the replay's host callback), so a replay that never
// finishes is a hang like any other: skipping graph-captured ops would never
// dump a job hung inside CUDA graphs.
TEST(Watchdog, AStuckGraphReplayIsJudgedLikeAnEagerOp) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.05", 1);
              CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              OpDesc replayed = AllReduce();
              replayed.flags = format::kFlagGraphCaptured;
              const uint64_t done = c->BeginOp(replayed);
              c->KernelStart(done, 1);
              c->KernelStop(done, 2);  // replay 1 finished
              c->BeginOp(replayed);    // replay 2 never does
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              const auto img = Dump(dir, 0);
              const auto* h = test::Header(img);
              CHILD_CHECK(h->dump_reason == format::kDumpTimeout);
              CHILD_CHECK(std::string(h->dump_detail).find("op#1 seq 1") != std::string::npos);
              CloseComm(c);
              return 0;
            }),
            0);
}

TEST(Watchdog, TriggerFromAnotherProcessSealsATriggerDump) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_POLL_MS", "10", 1);
              const fileio::Trust me = fileio::TrustSelf();
              char err[256];
              // A trigger from before we started is old news.
              CHILD_CHECK(fileio::WriteTrigger(dir.path().c_str(), "unit", "old", 1, "user", me,
                                               err, sizeof(err)));
              CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              CHILD_CHECK(WaitPolls(dir, 3));
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").empty());
              CHILD_CHECK(fileio::WriteTrigger(dir.path().c_str(), "unit", "otherhost", 42,
                                               "timeout", me, err, sizeof(err)));
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              CHILD_CHECK(WaitPolls(dir, 3));
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").size() == 1);
              auto img = Dump(dir, 0);
              CHILD_CHECK(test::Header(img)->dump_reason == format::kDumpTrigger);
              CHILD_CHECK(std::string(test::Header(img)->dump_detail) ==
                          "trigger from otherhost 42 timeout");
              CloseComm(c);
              return 0;
            }),
            0);
}

// The budget counts dumps whose ops are still pending: with an op stuck,
// the third request is refused (counted in the header, logged once), and
// the exit dump is sealed anyway.
TEST(Watchdog, RequestedDumpsRespectMaxDumpsButNeverTheExitDump) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_MAX_DUMPS", "2", 1);
              setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
              setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);  // a small ring, read every poll
              setenv("NCCL_FLIGHTREC_MAX_COMMS", "1", 1);
              CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              c->BeginOp(AllReduce());  // pending throughout (the timeout is 120 s)
              for (int i = 1; i <= 4; ++i) {
                RequestDump(format::kDumpRequest, "by test");
                // The request is taken at the watchdog's next poll.
                CHILD_CHECK(test::WaitFor([&] {
                  auto live = test::ReadFile(test::RingPath(dir.path()));
                  return i <= 2
                             ? test::ListDir(dir.path(), ".frdump").size() == static_cast<size_t>(i)
                             : test::Header(live)->dumps_refused == static_cast<uint32_t>(i - 2);
                }));
              }
              auto live = test::ReadFile(test::RingPath(dir.path()));
              const format::FileHeader* h = test::Header(live);
              CHILD_CHECK(h->max_dumps == 2);
              CHILD_CHECK(h->dumps_open == 2);
              CHILD_CHECK(h->dumps_released == 0);
              CHILD_CHECK(h->last_refused_reason == format::kDumpRequest);
              CHILD_CHECK(h->last_refused_mono_ns != 0);
              CloseComm(c);  // the exit dump is never refused
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").size() == 3);
              auto img = Dump(dir, 1);
              CHILD_CHECK(test::Header(img)->dump_reason == format::kDumpRequest);
              CHILD_CHECK(test::Header(img)->dump_sequence == 2);
              CHILD_CHECK(std::string(test::Header(img)->dump_detail) == "by test");
              CHILD_CHECK(test::Header(Dump(dir, 2))->dump_reason == format::kDumpExit);
              const std::string log = test::CapturedLog();
              CHILD_CHECK(log.find("MAX_DUMPS=2") != std::string::npos);
              CHILD_CHECK(log.find("MAX_DUMPS=2") == log.rfind("MAX_DUMPS=2"));  // once
              return 0;
            }),
            0);
}

// One rank that stalls past the timeout five times and recovers each time
// (checkpoints, a slow loader, a debugger), then exits: every stall got its
// one dump, each recovery gave the budget back, and the exit dump (the
// newest evidence) exists. With MAX_DUMPS counting every attempt, the fifth
// stall and the exit dump were refused.
TEST(Watchdog, RecoveredStallsGiveTheBudgetBackAndTheExitDumpIsSealed) {
  test::TempDir dir;
  EXPECT_EQ(
      RunInChild([&] {
        test::ResetEnv(dir.path());
        setenv("NCCL_FLIGHTREC_TIMEOUT_S", "0.1", 1);
        setenv("NCCL_FLIGHTREC_MAX_DUMPS", "4", 1);
        setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
        setenv("NCCL_FLIGHTREC_RECORDS", "64", 1);  // a small ring, read every poll
        setenv("NCCL_FLIGHTREC_MAX_COMMS", "1", 1);
        CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
        CHILD_CHECK(c != nullptr);
        size_t stalls_dumped = 0;
        for (size_t stall = 1; stall <= 5; ++stall) {
          const uint64_t s = c->BeginOp(AllReduce());  // stalls past the timeout
          stalls_dumped +=
              test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == stall; }, 5)
                  ? 1
                  : 0;
          c->KernelStart(s, 1);
          c->KernelStop(s, 2);             // recovers
          CHILD_CHECK(WaitPolls(dir, 3));  // the watchdog sees it done
        }
        CloseComm(c);
        // The exit dump exists: the newest evidence is never refused.
        auto dumps = test::ListDir(dir.path(), ".frdump");
        CHILD_CHECK(!dumps.empty());
        CHILD_CHECK(test::Header(Dump(dir, dumps.size() - 1))->dump_reason == format::kDumpExit);
        // Each stall had its dump, each recovery gave the budget back.
        CHILD_CHECK(stalls_dumped == 5);
        CHILD_CHECK(dumps.size() == 6);
        for (size_t i = 0; i < 5; ++i) {
          CHILD_CHECK(test::Header(Dump(dir, i))->dump_reason == format::kDumpTimeout);
        }
        CHILD_CHECK(test::Header(Dump(dir, 5))->dump_sequence == 6);
        auto live = test::ReadFile(test::RingPath(dir.path()));
        CHILD_CHECK(test::Header(live)->dumps_refused == 0);
        CHILD_CHECK(test::Header(live)->dumps_open == 0);
        CHILD_CHECK(test::Header(live)->dumps_released == 5);
        CHILD_CHECK(test::Header(live)->dumps_sealed == 6);
        return 0;
      }),
      0);
}

TEST(Watchdog, ExitDumpAndSignalDump) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
              setenv("NCCL_FLIGHTREC_DUMP_SIGNAL", "SIGUSR2", 1);
              CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              c->BeginOp(AllReduce());
              CHILD_CHECK(raise(SIGUSR2) == 0);
              CHILD_CHECK(
                  test::WaitFor([&] { return test::ListDir(dir.path(), ".frdump").size() == 1; }));
              CHILD_CHECK(test::Header(Dump(dir, 0))->dump_reason == format::kDumpRequest);
              CloseComm(c);
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").size() == 2);
              auto img = Dump(dir, 1);
              CHILD_CHECK(test::Header(img)->dump_reason == format::kDumpExit);
              CHILD_CHECK(test::Header(img)->process_state == format::kProcessRunning);
              CHILD_CHECK(test::SlotValid(img, 0, 0));
              auto live = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(test::Header(live)->process_state == format::kProcessExited);
              CHILD_CHECK(test::Header(live)->dumps_sealed == 2);
              // The handler is gone with the recorder.
              struct sigaction sa;
              CHILD_CHECK(sigaction(SIGUSR2, nullptr, &sa) == 0 && sa.sa_handler == SIG_DFL);
              return 0;
            }),
            0);
}

TEST(Watchdog, AtExitSealsTheExitDump) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "1", 1);
              pid_t pid = fork();
              if (pid == 0) {
                CommRecorder* c = OpenComm(Identity(true), nullptr);
                if (c == nullptr) _exit(3);
                c->BeginOp(AllReduce());
                exit(0);  // no CloseComm: the atexit handler must finish up
              }
              int status = 0;
              CHILD_CHECK(waitpid(pid, &status, 0) == pid);
              CHILD_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
              CHILD_CHECK(test::ListDir(dir.path(), ".frdump").size() == 1);
              CHILD_CHECK(test::Header(Dump(dir, 0))->dump_reason == format::kDumpExit);
              auto live = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(test::Header(live)->process_state == format::kProcessExited);
              return 0;
            }),
            0);
}

TEST(Watchdog, DumpFailureIsLoggedWithTheFileName) {
  test::TempDir dir;
  EXPECT_EQ(
      RunInChild([&] {
        test::ResetEnv(dir.path());
        const std::string file = dir.path() + "/file";
        FILE* f = fopen(file.c_str(), "w");
        CHILD_CHECK(f != nullptr);
        fclose(f);
        setenv("NCCL_FLIGHTREC_DUMP_DIR", (file + "/dumps").c_str(), 1);
        CommRecorder* c = OpenComm(Identity(true), &test::CaptureLog);
        CHILD_CHECK(c != nullptr);  // recording works without dumps
        CHILD_CHECK(test::CapturedLog().find("dumps will fail") != std::string::npos);
        RequestDump(format::kDumpRequest, "x");
        CHILD_CHECK(test::WaitFor(
            [&] { return test::CapturedLog().find("request dump failed") != std::string::npos; }));
        CHILD_CHECK(test::CapturedLog().find(file + "/dumps/flightrec-unit-") != std::string::npos);
        CloseComm(c);
        return 0;
      }),
      0);
}

}  // namespace
}  // namespace flightrec

// The ring file as OpenComm creates it: every header field, the region
// identity, file naming, and the ways creation can fail (each: nullptr, one
// logged reason, no crash, nothing left behind).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "flightrec/version.h"
#include "recorder/comm_recorder.h"
#include "recorder/recorder.h"
#include "unit/recorder/test_util.h"

// The emulator and NCCL export this; the recorder finds it with dlsym.
extern "C" __attribute__((visibility("default"))) int ncclGetVersion(int* version) {
  *version = 22809;
  return 0;
}

namespace flightrec {
namespace {

using test::CapturedLog;
using test::RunInChild;

CommIdentity TestIdentity(const char* name = "tp0", uint64_t comm_id = 0x1a2b) {
  CommIdentity id;
  id.comm_id = comm_id;
  id.name = name;
  id.rank = 3;
  id.nranks = 8;
  id.nnodes = 2;
  id.from_init = true;
  id.api_version = 5;
  return id;
}

TEST(RingFile, HeaderFieldsAndRegionIdentity) {
  test::TempDir dir;
  EXPECT_EQ(
      RunInChild([&] {
        test::ResetEnv(dir.path());
        setenv("NCCL_FLIGHTREC_TIMEOUT_S", "30", 1);
        setenv("NCCL_FLIGHTREC_RECORDS", "256", 1);
        setenv("NCCL_FLIGHTREC_MAX_COMMS", "4", 1);
        struct timespec t0;
        clock_gettime(CLOCK_REALTIME, &t0);
        CommRecorder* c = OpenComm(TestIdentity(), &test::CaptureLog);
        CHILD_CHECK(c != nullptr);
        CHILD_CHECK(c->region_index() == 0);
        CHILD_CHECK(c->rank() == 3);
        CHILD_CHECK(!c->finalized());
        char host[256] = {};
        gethostname(host, sizeof(host) - 1);
        const std::string expect_name =
            "flightrec-unit-" + std::string(host) + "-" + std::to_string(getpid()) + ".ring";
        CHILD_CHECK(test::ListDir(dir.path(), ".ring").size() == 1);
        CHILD_CHECK(test::ListDir(dir.path(), ".ring")[0] == expect_name);
        auto img = test::ReadFile(test::RingPath(dir.path()));
        const format::FileHeader* h = test::Header(img);
        CHILD_CHECK(img.size() == h->file_size);
        CHILD_CHECK(h->magic == format::Magic());
        CHILD_CHECK(h->endian_marker == format::kEndianMarker);
        CHILD_CHECK(h->version_major == format::kFormatMajor);
        CHILD_CHECK(h->version_minor == format::kFormatMinor);
        CHILD_CHECK(h->header_size == format::kHeaderSize);
        CHILD_CHECK(h->record_size == format::kRecordSize);
        CHILD_CHECK(h->region_desc_size == format::kRegionDescSize);
        CHILD_CHECK(h->max_regions == 4);
        CHILD_CHECK(h->region_capacity == 256);
        CHILD_CHECK(h->region_table_offset == format::kHeaderSize);
        CHILD_CHECK(h->records_offset == 8192);
        CHILD_CHECK(h->file_size == 8192 + 4 * 256 * 128);
        CHILD_CHECK(h->pointer_size == sizeof(void*));
        CHILD_CHECK(h->file_kind == format::kFileKindRing);
        CHILD_CHECK(h->pid == getpid());
        const uint64_t wall0 = t0.tv_sec * 1000000000ULL + t0.tv_nsec;
        CHILD_CHECK(h->created_wall_ns >= wall0);
        CHILD_CHECK(h->created_mono_ns > 0);
        CHILD_CHECK(h->clock_source == format::kClockTsc ||
                    h->clock_source == format::kClockMonotonic);
        CHILD_CHECK((h->tsc_hz != 0) == (h->clock_source == format::kClockTsc));
        CHILD_CHECK(h->api_version == 5);
        CHILD_CHECK(std::string(h->host) == host);
        CHILD_CHECK(std::string(h->job_id) == "unit");
        CHILD_CHECK(std::string(h->plugin_version) == kVersion);
        CHILD_CHECK(std::string(h->nccl_version) == "2.28.9");
        CHILD_CHECK(h->cuda_device == -1);  // no driver loaded here
        CHILD_CHECK(h->gpu_uuid[0] == '\0');
        CHILD_CHECK(h->process_state == format::kProcessRunning);
        CHILD_CHECK(h->watchdog_timeout_ns == 30000000000ULL);
        CHILD_CHECK(h->watchdog_poll_ns == 1000000000ULL);
        CHILD_CHECK(h->file_kind == format::kFileKindRing);
        CHILD_CHECK(h->dump_reason == format::kDumpNone);
        const format::RegionDesc* d = test::Region(img, 0);
        CHILD_CHECK(d->state == format::kRegionActive);
        CHILD_CHECK(d->region_index == 0);
        CHILD_CHECK(d->comm_id == 0x1a2b);
        CHILD_CHECK(d->rank == 3 && d->nranks == 8 && d->nnodes == 2);
        CHILD_CHECK(std::string(d->comm_name) == "tp0");
        CHILD_CHECK(d->generation >= 1);
        CHILD_CHECK(d->flags & format::kRegionIdentityFromInit);
        CHILD_CHECK(d->head == 0);
        for (uint32_t r = 1; r < 4; ++r) {
          CHILD_CHECK(test::Region(img, r)->state == format::kRegionFree);
          CHILD_CHECK(test::Region(img, r)->region_index == r);
        }
        CloseComm(c);
        img = test::ReadFile(test::RingPath(dir.path()));
        CHILD_CHECK(test::Header(img)->process_state == format::kProcessExited);
        CHILD_CHECK(test::Region(img, 0)->state == format::kRegionFinalized);
        CHILD_CHECK(test::Region(img, 0)->finalize_mono_ns >= test::Region(img, 0)->init_mono_ns);
        CHILD_CHECK(CapturedLog().find("recording to") != std::string::npos);
        return 0;
      }),
      0);
}

TEST(RingFile, StaleFileWithOurNameIsReplaced) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              char host[256] = {};
              gethostname(host, sizeof(host) - 1);
              const std::string path =
                  dir.path() + "/flightrec-unit-" + host + "-" + std::to_string(getpid()) + ".ring";
              FILE* f = fopen(path.c_str(), "w");
              CHILD_CHECK(f != nullptr);
              fputs("stale", f);
              fclose(f);
              CommRecorder* c = OpenComm(TestIdentity(), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              auto img = test::ReadFile(path);
              CHILD_CHECK(img.size() == test::Header(img)->file_size);
              CHILD_CHECK(test::Header(img)->magic == format::Magic());
              CloseComm(c);
              return 0;
            }),
            0);
}

TEST(RingFile, DirectoryIsCreated) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              const std::string sub = dir.path() + "/a/b/c";
              test::ResetEnv(sub);
              CommRecorder* c = OpenComm(TestIdentity(), &test::CaptureLog);
              CHILD_CHECK(c != nullptr);
              struct stat st;
              CHILD_CHECK(stat(sub.c_str(), &st) == 0 && S_ISDIR(st.st_mode));
              // Private: created 0700 whatever the umask lets through.
              CHILD_CHECK((st.st_mode & 0777) == 0700);
              CHILD_CHECK(test::RingPath(sub) != "");
              CloseComm(c);
              return 0;
            }),
            0);
}

TEST(RingFile, UnusableDirectoryDisablesWithReason) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              // A path below a regular file can never be created, even by root.
              const std::string file = dir.path() + "/file";
              FILE* f = fopen(file.c_str(), "w");
              CHILD_CHECK(f != nullptr);
              fclose(f);
              const std::string bad = file + "/sub";
              test::ResetEnv(bad);
              CHILD_CHECK(OpenComm(TestIdentity(), &test::CaptureLog) == nullptr);
              const std::string log = CapturedLog();
              CHILD_CHECK(log.find("disabled") != std::string::npos);
              CHILD_CHECK(log.find(bad) != std::string::npos);
              CHILD_CHECK(log.find("Not a directory") != std::string::npos);
              // Later opens stay off without logging again.
              CHILD_CHECK(OpenComm(TestIdentity("b", 2), &test::CaptureLog) == nullptr);
              CHILD_CHECK(CapturedLog() == log);
              CloseComm(nullptr);  // safe
              return 0;
            }),
            0);
}

TEST(RingFile, FullFilesystemFailsAtPreallocation) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              signal(SIGXFSZ, SIG_IGN);
              struct rlimit lim = {1 << 20, 1 << 20};  // the ring needs ~8 MiB
              CHILD_CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
              CHILD_CHECK(OpenComm(TestIdentity(), &test::CaptureLog) == nullptr);
              const std::string log = CapturedLog();
              CHILD_CHECK(log.find("cannot preallocate") != std::string::npos);
              CHILD_CHECK(log.find(".ring") != std::string::npos);
              CHILD_CHECK(test::ListDir(dir.path(), ".ring").empty());  // nothing left
              return 0;
            }),
            0);
}

TEST(RingFile, NullLoggerFallsBackToStderr) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              const std::string file = dir.path() + "/file";
              FILE* f = fopen(file.c_str(), "w");
              CHILD_CHECK(f != nullptr);
              fclose(f);
              test::ResetEnv(file + "/sub");
              const std::string err_path = dir.path() + "/stderr.txt";
              CHILD_CHECK(freopen(err_path.c_str(), "w", stderr) != nullptr);
              CHILD_CHECK(OpenComm(TestIdentity(), nullptr) == nullptr);
              CHILD_CHECK(OpenComm(TestIdentity(), nullptr) == nullptr);
              fflush(stderr);
              auto bytes = test::ReadFile(err_path);
              const std::string text(bytes.begin(), bytes.end());
              CHILD_CHECK(text.find("flightrec WARN: disabled") != std::string::npos);
              CHILD_CHECK(text.find("disabled") == text.rfind("disabled"));  // once
              return 0;
            }),
            0);
}

TEST(RingFile, EnableZeroTurnsEverythingOff) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              setenv("NCCL_FLIGHTREC_ENABLE", "0", 1);
              CHILD_CHECK(OpenComm(TestIdentity(), &test::CaptureLog) == nullptr);
              CHILD_CHECK(test::ListDir(dir.path(), "").size() == 2);  // "." and ".."
              CHILD_CHECK(CapturedLog().find("NCCL_FLIGHTREC_ENABLE=0") != std::string::npos);
              return 0;
            }),
            0);
}

TEST(RingFile, RecorderRestartsAfterLastClose) {
  test::TempDir dir;
  EXPECT_EQ(RunInChild([&] {
              test::ResetEnv(dir.path());
              CommRecorder* a = OpenComm(TestIdentity("a", 1), &test::CaptureLog);
              CHILD_CHECK(a != nullptr);
              const uint32_t gen_a = a->generation_low8();
              CloseComm(a);
              CHILD_CHECK(CommByRegion(0, gen_a) == nullptr);
              // NCCL may dlclose and reload us: a later open starts fresh.
              CommRecorder* b = OpenComm(TestIdentity("b", 2), &test::CaptureLog);
              CHILD_CHECK(b != nullptr);
              CHILD_CHECK(b->generation_low8() != gen_a);
              auto img = test::ReadFile(test::RingPath(dir.path()));
              CHILD_CHECK(test::Header(img)->process_state == format::kProcessRunning);
              CHILD_CHECK(test::Region(img, 0)->comm_id == 2);
              CloseComm(b);
              return 0;
            }),
            0);
}

}  // namespace
}  // namespace flightrec

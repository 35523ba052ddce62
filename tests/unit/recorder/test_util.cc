#include "unit/recorder/test_util.h"

#include <dirent.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <mutex>

#include "support/files.h"
#include "support/ring_image.h"
#include "support/time_scale.h"

namespace flightrec {
namespace test {

int RunInChild(const std::function<int()>& fn) {
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) return 255;
  if (pid == 0) {
    int rc = fn();
    fflush(nullptr);
    _exit(rc);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

TempDir::TempDir() {
  std::string templ = testing::TempRoot() + "/frtest.XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (mkdtemp(buf.data()) != nullptr) path_ = buf.data();
}

TempDir::~TempDir() {
  if (path_.empty()) return;
  nftw(
      path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return remove(p); },
      16, FTW_DEPTH | FTW_PHYS);
}

void ResetEnv(const std::string& dir) {
  const char* vars[] = {"NCCL_FLIGHTREC_ENABLE",       "NCCL_FLIGHTREC_DIR",
                        "NCCL_FLIGHTREC_DUMP_DIR",     "NCCL_FLIGHTREC_TIMEOUT_S",
                        "NCCL_FLIGHTREC_POLL_MS",      "NCCL_FLIGHTREC_RECORDS",
                        "NCCL_FLIGHTREC_MAX_COMMS",    "NCCL_FLIGHTREC_MAX_DUMPS",
                        "NCCL_FLIGHTREC_DUMP_ON_EXIT", "NCCL_FLIGHTREC_JOB_ID",
                        "NCCL_FLIGHTREC_CLOCK",        "NCCL_FLIGHTREC_TRIGGER",
                        "NCCL_FLIGHTREC_DUMP_SIGNAL",  "SLURM_JOB_ID",
                        "TORCHELASTIC_RUN_ID",         "NCCL_FLIGHTREC_VERDICT",
                        "NCCL_FLIGHTREC_ANALYZER",     "NCCL_FLIGHTREC_ON_VERDICT"};
  for (const char* v : vars) unsetenv(v);
  setenv("NCCL_FLIGHTREC_DIR", dir.c_str(), 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  setenv("NCCL_FLIGHTREC_JOB_ID", "unit", 1);
  // Unit tests seal timeout dumps; none of them is about the in-job verdict.
  setenv("NCCL_FLIGHTREC_VERDICT", "0", 1);
}

std::vector<unsigned char> ReadFile(const std::string& path) { return testing::ReadBytes(path); }

std::vector<std::string> ListDir(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() >= suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      out.push_back(name);
    }
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<unsigned char> Decompress(const std::vector<unsigned char>& frame) {
  unsigned long long size = ZSTD_getFrameContentSize(frame.data(), frame.size());
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN) return {};
  std::vector<unsigned char> out(size);
  size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != size) return {};
  return out;
}

std::string RingPath(const std::string& dir) {
  std::string error;
  return testing::OnlyRingIn(dir, &error);
}

const format::RegionDesc* Region(const std::vector<unsigned char>& img, uint32_t r) {
  return testing::RegionOf(img.data(), r);
}

const format::Record* Slot(const std::vector<unsigned char>& img, uint32_t r, uint64_t seq) {
  return testing::SlotOf(img.data(), r, seq);
}

bool SlotValid(const std::vector<unsigned char>& img, uint32_t r, uint64_t seq) {
  return testing::CommittedAs(*Slot(img, r, seq), seq);
}

namespace {
std::mutex g_log_mutex;
std::string g_log;
}  // namespace

std::string CapturedLog() {
  std::lock_guard<std::mutex> lock(g_log_mutex);
  return g_log;
}

void CaptureLog(int level, unsigned long, const char*, int, const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  std::lock_guard<std::mutex> lock(g_log_mutex);
  g_log += std::to_string(level) + " " + buf + "\n";
}

bool WaitFor(const std::function<bool()>& pred, double seconds) {
  const int steps = static_cast<int>(seconds * testing::TimeScale() / 0.005);
  for (int i = 0; i < steps; ++i) {
    if (pred()) return true;
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, nullptr);
  }
  return pred();
}

namespace {
uint64_t Heartbeats(const std::string& dir) {
  auto img = ReadFile(RingPath(dir));
  return img.size() >= sizeof(format::FileHeader) ? Header(img)->heartbeat_count : 0;
}
}  // namespace

bool WaitPolls(const std::string& dir, uint64_t n) {
  const uint64_t start = Heartbeats(dir);
  return WaitFor([&] { return Heartbeats(dir) >= start + n; });
}

}  // namespace test
}  // namespace flightrec

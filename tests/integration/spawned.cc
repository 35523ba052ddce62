#include "integration/spawned.h"

#include <dirent.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

namespace flightrec {
namespace itest {

Spawned::Spawned(const std::string& cmd) {
  const std::string line = "exec " + cmd;
  pid_ = fork();
  if (pid_ == 0) {
    // As from a shell: a test run under nohup (SIGHUP ignored) or with
    // signals blocked must not pass that on to the command under test.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) signal(sig, SIG_DFL);
    execl("/bin/sh", "sh", "-c", line.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
}

Spawned::~Spawned() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool Spawned::running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  reaped_ = true;
  signaled_ = WIFSIGNALED(status);
  result_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

int Spawned::Wait(int bound_s) {
  if (pid_ <= 0) return -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (running()) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      reaped_ = true;
      signaled_ = true;
      return result_ = -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return result_;
}

namespace {

// True when `file` (a /proc status or fdinfo file) has a line `key` followed
// by a hex mask with bit `sig` - 1 set.
bool MaskLineHas(const std::string& file, const std::string& key, int sig) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const unsigned long long mask = std::strtoull(line.c_str() + key.size(), nullptr, 16);
    return ((mask >> (sig - 1)) & 1ull) != 0;
  }
  return false;
}

// True when process `pid` holds a signalfd whose mask has `sig`.
bool HasSignalFd(pid_t pid, int sig) {
  const std::string proc = "/proc/" + std::to_string(pid);
  DIR* d = opendir((proc + "/fd").c_str());
  if (d == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] == '.') continue;
    char target[64] = {};
    const std::string fd = proc + "/fd/" + e->d_name;
    if (readlink(fd.c_str(), target, sizeof(target) - 1) <= 0) continue;
    if (std::string(target) != "anon_inode:[signalfd]") continue;
    if (MaskLineHas(proc + "/fdinfo/" + e->d_name, "sigmask:", sig)) found = true;
  }
  closedir(d);
  return found;
}

}  // namespace

bool Spawned::WaitBlocks(int sig, int bound_s) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  const std::string status = "/proc/" + std::to_string(pid_) + "/status";
  while (running() && std::chrono::steady_clock::now() < end) {
    if (HasSignalFd(pid_, sig) && MaskLineHas(status, "SigBlk:", sig)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

int Spawned::Stop(int sig, int bound_s) {
  if (pid_ > 0 && !reaped_) kill(pid_, sig);
  return Wait(bound_s);
}

}  // namespace itest
}  // namespace flightrec

#include "integration/adversary.h"

#include <dirent.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <thread>

#include "flightrec/job_dir.h"

extern char** environ;

namespace flightrec {
namespace itest {
namespace {

// In a forked child: becomes `who` for good, or exits 126.
void BecomeOrExit(const Identity& who) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) signal(sig, SIG_DFL);
  if (setgroups(who.groups.size(), who.groups.data()) != 0 ||
      setresgid(who.gid, who.gid, who.gid) != 0 || setresuid(who.uid, who.uid, who.uid) != 0) {
    _exit(126);
  }
  // Cleared by the credential change above: set after it. The test's
  // processes never outlive it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  umask(022);
}

int StatusOf(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

Identity JobUser() { return {kJobUid, kJobGid, {kJobGid, kProjectGid}}; }
Identity Stranger() { return {kStrangerUid, kStrangerGid, {kStrangerGid, kProjectGid}}; }

std::vector<std::string> UserEnv(const std::string& home,
                                 const std::map<std::string, std::string>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::string name = kv.substr(0, kv.find('='));
    if (name == "HOME" || name == "TMPDIR" || name == "XDG_RUNTIME_DIR" || name == "PATH" ||
        name.rfind("NCCL_", 0) == 0 || name.rfind("FLIGHTREC_", 0) == 0 || env.count(name) != 0) {
      continue;
    }
    out.push_back(kv);
  }
  out.push_back("HOME=" + home);
  if (env.count("PATH") == 0) out.push_back("PATH=/usr/bin:/bin");
  for (const auto& [k, v] : env) {
    if (!v.empty()) out.push_back(k + "=" + v);
  }
  return out;
}

UserProcess::UserProcess(const Identity& who, const std::string& cmd,
                         const std::vector<std::string>& envp, const std::string& cwd,
                         const std::string& out) {
  const std::string line = "exec " + cmd;
  std::vector<char*> ev;
  for (const std::string& e : envp) ev.push_back(const_cast<char*>(e.c_str()));
  ev.push_back(nullptr);
  pid_ = fork();
  if (pid_ == 0) {
    BecomeOrExit(who);
    if (chdir(cwd.c_str()) != 0) _exit(125);
    const int fd = open(out.empty() ? "/dev/null" : out.c_str(),
                        O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) _exit(125);
    dup2(fd, 1);
    dup2(fd, 2);
    const char* argv[] = {"sh", "-c", line.c_str(), nullptr};
    execve("/bin/sh", const_cast<char**>(argv), ev.data());
    _exit(127);
  }
}

UserProcess::~UserProcess() {
  if (pid_ > 0 && !reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

bool UserProcess::running() {
  if (pid_ <= 0 || reaped_) return false;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
  reaped_ = true;
  result_ = StatusOf(status);
  return false;
}

int UserProcess::Wait(int bound_s) {
  if (pid_ <= 0) return -1;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (running()) {
    if (std::chrono::steady_clock::now() > end) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      reaped_ = true;
      return result_ = -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return result_;
}

int UserProcess::Stop(int sig, int bound_s) {
  if (pid_ > 0 && !reaped_) kill(pid_, sig);
  return Wait(bound_s);
}

int RunAs(const Identity& who, const std::string& cmd, const std::vector<std::string>& envp,
          const std::string& cwd, int bound_s, std::string* out) {
  const std::string tmp_root = [] {
    const char* t = getenv("TMPDIR");
    return std::string(t != nullptr && t[0] != '\0' ? t : "/tmp");
  }();
  std::string pattern = tmp_root + "/runas-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = mkstemp(buf.data());
  if (fd < 0) return -1;
  close(fd);
  const std::string file = buf.data();
  // The child (another uid) writes it: hand it over.
  if (chown(file.c_str(), who.uid, who.gid) != 0) return -1;
  int rc = -1;
  {
    UserProcess p(who, cmd, envp, cwd, file);
    rc = p.Wait(bound_s);
  }
  if (out != nullptr) {
    std::ifstream in(file, std::ios::binary);
    out->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  unlink(file.c_str());
  return rc;
}

StrangerLoop::StrangerLoop(const std::function<void()>& step, int period_ms) {
  pid_ = fork();
  if (pid_ == 0) {
    BecomeOrExit(Stranger());
    for (;;) {
      step();
      usleep(static_cast<useconds_t>(period_ms) * 1000);
    }
  }
}

StrangerLoop::~StrangerLoop() { Stop(); }

void StrangerLoop::Stop() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
}

int DoAs(const Identity& who, const std::function<int()>& fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    BecomeOrExit(who);
    _exit(fn());
  }
  if (pid < 0) return -1;
  int status = 0;
  waitpid(pid, &status, 0);
  return StatusOf(status);
}

std::map<pid_t, std::string> ProcessesOf(uid_t uid) {
  std::map<pid_t, std::string> out;
  DIR* d = opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(e->d_name));
    if (pid <= 0) continue;
    const std::string proc = std::string("/proc/") + e->d_name;
    struct stat st;
    if (stat(proc.c_str(), &st) != 0 || st.st_uid != uid) continue;
    std::ifstream comm(proc + "/comm");
    std::string name;
    std::getline(comm, name);
    out[pid] = name;
  }
  closedir(d);
  return out;
}

Fingerprint FingerprintOf(const std::string& path) {
  Fingerprint f;
  struct stat st;
  if (lstat(path.c_str(), &st) != 0) return f;
  f.exists = true;
  f.mode = st.st_mode;
  f.uid = st.st_uid;
  f.ino = st.st_ino;
  f.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  if (S_ISREG(st.st_mode)) {
    std::ifstream in(path, std::ios::binary);
    f.content.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return f;
}

bool MakeFileAs(const std::string& path, const std::string& content, uid_t uid, gid_t gid,
                mode_t mode) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return false;
  const bool ok =
      write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()) &&
      fchown(fd, uid, gid) == 0 && fchmod(fd, mode) == 0;
  close(fd);
  return ok;
}

bool MakeDirAs(const std::string& path, uid_t uid, gid_t gid, mode_t mode) {
  if (mkdir(path.c_str(), 0700) != 0) return false;
  return chown(path.c_str(), uid, gid) == 0 && chmod(path.c_str(), mode) == 0;
}

std::string PluginHostName() {
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  char out[format::kNameMax] = {};
  format::SanitizeName(host, "unknown", out, sizeof(out));
  return out;
}

std::string DecompressedDump(const std::string& path) {
  std::string out;
  FILE* p = popen(("zstd -q -dc '" + path + "' 2>/dev/null").c_str(), "r");
  if (p == nullptr) return out;
  char buf[65536];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

}  // namespace itest
}  // namespace flightrec

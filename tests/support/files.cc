#include "support/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

namespace flightrec {
namespace testing {

std::string BuildDir() {
  const char* env = getenv("FLIGHTREC_BUILD_DIR");
  return env != nullptr && *env != '\0' ? env : FLIGHTREC_DEFAULT_BUILD_DIR;
}

std::string PluginPath() { return BuildDir() + "/lib/libnccl-profiler-flightrec.so"; }
std::string CliPath() { return BuildDir() + "/bin/flightrec"; }
std::string EmuPath() { return BuildDir() + "/bin/flightrec-emu"; }

std::string TempRoot() {
  const char* tmp = getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

std::string MakeTempDir(const std::string& tag) {
  std::string pattern = TempRoot() + "/flightrec-" + tag + "-XXXXXX";
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const char* made = mkdtemp(buf.data());
  return made != nullptr ? std::string(made) : std::string();
}

void RemoveTree(const std::string& dir) {
  if (dir.empty() || dir == "/") return;
  RunShellStatus("chmod -R u+w '" + dir + "' 2>/dev/null; rm -rf '" + dir + "'");
}

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

bool WaitForText(const std::string& path, int bound_s,
                 const std::function<bool(const std::string&)>& ready) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(bound_s);
  while (!ready(ReadText(path))) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return true;
}

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

bool WriteBytes(const std::string& path, const void* data, size_t size) {
  FILE* f = fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = size == 0 || fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok;
}

std::vector<std::string> ListFiles(const std::string& dir, const std::string& suffix) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name.size() < suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) {
      continue;
    }
    struct stat st;
    std::string path = dir + "/" + name;
    if (stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) out.push_back(path);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

int RunShellStatus(const std::string& cmd) {
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return status;
}

int RunShell(const std::string& cmd) {
  int status = RunShellStatus(cmd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace testing
}  // namespace flightrec

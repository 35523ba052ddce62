#include "reliability/rel_util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>

namespace flightrec {
namespace rel {

std::string BuildDir() {
  const char* env = getenv("FLIGHTREC_BUILD_DIR");
  return env != nullptr && *env != '\0' ? env : FLIGHTREC_DEFAULT_BUILD_DIR;
}

std::string PluginPath() { return BuildDir() + "/lib/libnccl-profiler-flightrec.so"; }
std::string CliPath() { return BuildDir() + "/bin/flightrec"; }
std::string EmuPath() { return BuildDir() + "/bin/flightrec-emu"; }

std::string MakeTempDir(const std::string& tag) {
  const char* tmp = getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                        "/flightrec-rel-" + tag + "-XXXXXX";
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

int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
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
  }
  return status;
}

int CountOpenFds() {
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.' ? 1 : 0;
  closedir(d);
  return n - 1;  // the descriptor opendir itself holds
}

long ResidentKib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

AnalyzeRun RunAnalyze(const std::vector<std::string>& paths, const std::string& format,
                      const std::vector<std::string>& extra) {
  AnalyzeRun run;
  std::string dir = MakeTempDir("analyze");
  std::string cmd = "exec '" + CliPath() + "' analyze --format " + format + " -j 1";
  for (const std::string& e : extra) cmd += " '" + e + "'";
  for (const std::string& p : paths) cmd += " '" + p + "'";
  cmd += " >'" + dir + "/out' 2>'" + dir + "/err'";
  int status = RunShellStatus(cmd);
  // sh reports a child killed by signal N as exit status 128 + N.
  if (WIFEXITED(status) && WEXITSTATUS(status) < 128) {
    run.exited = true;
    run.code = WEXITSTATUS(status);
  } else {
    run.signal = WIFEXITED(status) ? WEXITSTATUS(status) - 128 : WTERMSIG(status);
  }
  run.report = ReadText(dir + "/out");
  run.errors = ReadText(dir + "/err");
  RemoveTree(dir);
  return run;
}

}  // namespace rel
}  // namespace flightrec

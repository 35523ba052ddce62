#include "reliability/rel_util.h"

#include <dirent.h>
#include <stdlib.h>

#include <fstream>
#include <sstream>

namespace flightrec {
namespace rel {

int CountLines(const std::string& text, const std::string& needle) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
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
  std::string options = "--format " + format + " -j 1";
  for (const std::string& e : extra) options += " '" + e + "'";
  return testing::RunAnalyzeCli(options, paths);
}

}  // namespace rel
}  // namespace flightrec

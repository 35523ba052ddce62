#include "analyzer/report/output.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace flightrec {
namespace report {

bool WriteOutput(const std::string& path, const std::string& content, std::string* error) {
  if (path.empty() || path == "-") {
    const bool ok = std::fwrite(content.data(), 1, content.size(), stdout) == content.size() &&
                    std::fflush(stdout) == 0;
    if (!ok) *error = std::string("stdout: ") + std::strerror(errno);
    return ok;
  }
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "wbe");
  if (f == nullptr) {
    *error = path + ": cannot create: " + std::strerror(errno);
    return false;
  }
  bool ok = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  ok = (std::fclose(f) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
    *error = path + ": cannot write: " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace report
}  // namespace flightrec

#include "analyzer/report/output.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace flightrec {
namespace report {

namespace {

// What errors call the output: its path, or stdout.
std::string NameOf(const std::string& path) { return path.empty() ? "stdout" : path; }

}  // namespace

OutputStream::~OutputStream() {
  if (file_ == nullptr || path_.empty()) return;
  std::fclose(file_);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
}

bool OutputStream::Open(const std::string& path, std::string* error) {
  if (path.empty() || path == "-") {
    file_ = stdout;
    return true;
  }
  path_ = path;
  struct stat st;
  const bool in_place = lstat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode);
  tmp_ = in_place ? std::string() : path + ".tmp";
  file_ = std::fopen(in_place ? path.c_str() : tmp_.c_str(), "wbe");
  if (file_ == nullptr) *error = path + ": cannot create: " + std::strerror(errno);
  return file_ != nullptr;
}

bool OutputStream::Write(std::string_view text, std::string* error) {
  if (file_ == nullptr) {
    *error = NameOf(path_) + ": not open";
    return false;
  }
  if (std::fwrite(text.data(), 1, text.size(), file_) == text.size()) return true;
  *error =
      (path_.empty() ? std::string("stdout") : path_) + ": cannot write: " + std::strerror(errno);
  return false;
}

bool OutputStream::Commit(std::string* error) {
  if (file_ == nullptr) {
    *error = NameOf(path_) + ": not open";
    return false;
  }
  if (path_.empty()) {
    file_ = nullptr;
    if (std::fflush(stdout) == 0) return true;
    *error = std::string("stdout: ") + std::strerror(errno);
    return false;
  }
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  if (closed && (tmp_.empty() || std::rename(tmp_.c_str(), path_.c_str()) == 0)) return true;
  *error = path_ + ": cannot write: " + std::strerror(errno);
  if (!tmp_.empty()) std::remove(tmp_.c_str());
  return false;
}

bool WriteOutput(const std::string& path, const std::string& content, std::string* error) {
  OutputStream out;
  return out.Open(path, error) && out.Write(content, error) && out.Commit(error);
}

}  // namespace report
}  // namespace flightrec

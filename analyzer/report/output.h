// Writing a report where the user asked: a file (-o FILE) or stdout.
#ifndef FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_
#define FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_

#include <cstdio>
#include <string>
#include <string_view>

namespace flightrec {
namespace report {

// An output written in pieces (`flightrec timeline` streams its trace).
// path "" or "-" means stdout. A regular file (or a new one) is written to
// "<path>.tmp" and renamed by Commit, so a reader never sees half a report;
// destroyed without a Commit, the temporary file is removed. Anything else
// (/dev/null, a FIFO, a symlink) is written in place: a rename would
// replace the device or the link with a plain file. Failures set *error to
// "<path>: <reason>".
class OutputStream {
 public:
  OutputStream() = default;
  ~OutputStream();
  OutputStream(const OutputStream&) = delete;
  OutputStream& operator=(const OutputStream&) = delete;

  bool Open(const std::string& path, std::string* error);
  bool Write(std::string_view text, std::string* error);
  bool Commit(std::string* error);

 private:
  std::string path_;  // "" for stdout
  std::string tmp_;   // "" when written in place
  std::FILE* file_ = nullptr;
};

// The whole of `content` at once, through an OutputStream.
bool WriteOutput(const std::string& path, const std::string& content, std::string* error);

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_

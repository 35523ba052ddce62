// Writing a report where the user asked: a file (-o FILE) or stdout.
#ifndef FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_
#define FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_

#include <string>

namespace flightrec {
namespace report {

// path "" or "-" means stdout. The file is written to "<path>.tmp" and
// renamed, so a reader never sees half a report. On failure returns false
// and sets *error to "<path>: <reason>".
bool WriteOutput(const std::string& path, const std::string& content, std::string* error);

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_OUTPUT_H_

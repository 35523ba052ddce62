// Renders `flightrec status` (analyzer/model/live_status.h): a text frame for
// people, one line per process under a one-line summary per job, and the
// versioned JSON of docs/status.md for programs.
#ifndef FLIGHTREC_ANALYZER_REPORT_STATUS_REPORT_H_
#define FLIGHTREC_ANALYZER_REPORT_STATUS_REPORT_H_

#include <string>

#include "analyzer/model/live_status.h"

namespace flightrec {
namespace report {

constexpr const char* kStatusSchema = "flightrec.status/1";

std::string StatusText(const analysis::LiveStatus& status, const analysis::StatusOptions& options);
std::string StatusJson(const analysis::LiveStatus& status, const analysis::StatusOptions& options);

// Whether any process is stalled or dead (the CLI exits 1 then).
bool StatusHasTrouble(const analysis::LiveStatus& status);

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_STATUS_REPORT_H_

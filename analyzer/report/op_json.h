// An op as the JSON outputs name it (docs/report-schema.md, Finding `op`;
// docs/status.md): {"func", "seq", "index"} plus "peer" for p2p and
// "user_tag" when the op carries one; null for an invalid OpRef.
#ifndef FLIGHTREC_ANALYZER_REPORT_OP_JSON_H_
#define FLIGHTREC_ANALYZER_REPORT_OP_JSON_H_

#include <nlohmann/json.hpp>

#include "analyzer/model/finding.h"

namespace flightrec {
namespace report {

nlohmann::json OpJson(const analysis::OpRef& op);  // json_report.cc

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_OP_JSON_H_

// What to do next about a finding: a short concrete action (naming the host
// and pid where it has them) and the docs/runbook.md section that explains
// it. Every report format prints it with the finding.
#ifndef FLIGHTREC_ANALYZER_REPORT_NEXT_STEP_H_
#define FLIGHTREC_ANALYZER_REPORT_NEXT_STEP_H_

#include <string>
#include <vector>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"

namespace flightrec {
namespace report {

struct NextStep {
  std::string action;  // "run `py-spy dump --pid 4005` on host-0 ..."
  std::string anchor;  // "docs/runbook.md#next-lagging-outside"
};

NextStep NextStepFor(const analysis::JobIndex& index, const analysis::Finding& f);

// Every anchor NextStepFor can return (each must exist in docs/runbook.md).
std::vector<std::string> RunbookAnchors();

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_NEXT_STEP_H_

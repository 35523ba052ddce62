// Runs the analysis on a synthetic job and answers questions about it.
#ifndef FLIGHTREC_TESTS_UNIT_ANALYZER_ANALYZER_TEST_UTIL_H_
#define FLIGHTREC_TESTS_UNIT_ANALYZER_ANALYZER_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/job_index.h"
#include "unit/analyzer/synthetic_job.h"

namespace flightrec {
namespace testing {

struct Analyzed {
  explicit Analyzed(std::vector<ProcessSnapshot> p)
      : procs(std::move(p)), index(procs), result(analysis::Analyze(index)) {}

  std::vector<const analysis::Finding*> All(analysis::FindingKind kind) const {
    std::vector<const analysis::Finding*> out;
    for (const analysis::Finding& f : result.findings) {
      if (f.kind == kind) out.push_back(&f);
    }
    return out;
  }
  const analysis::Finding* First(analysis::FindingKind kind) const {
    auto all = All(kind);
    return all.empty() ? nullptr : all.front();
  }
  int64_t Pid(int32_t process) const { return process < 0 ? -1 : procs[process].pid; }
  std::vector<int64_t> CulpritPids() const {
    std::vector<int64_t> out;
    for (const analysis::Culprit& c : result.culprits) out.push_back(Pid(c.process));
    return out;
  }
  // Comm rank of global rank `rank` in the comm named `name`.
  int32_t RankIn(const std::string& name, int rank) const {
    for (const ProcessSnapshot& p : procs) {
      if (p.pid != 4000 + rank) continue;
      for (const CommSnapshot& c : p.comms) {
        if (c.name == name) return c.rank;
      }
    }
    return -1;
  }
  std::string CommName(const analysis::Finding& f) const { return index.groups()[f.group].name; }

  std::vector<ProcessSnapshot> procs;
  analysis::JobIndex index;
  analysis::Analysis result;
};

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_ANALYZER_ANALYZER_TEST_UTIL_H_

// Entry point of the analysis: snapshots in, findings and a verdict out.
//
// Verdict precedence (docs/analyzer.md): no usable input -> incomplete; any
// mismatch -> desync; any lagging_rank, dead_rank, missing_rank, all_stuck
// or deadlock -> hang; only stragglers -> slow; nothing -> healthy.
#ifndef FLIGHTREC_ANALYZER_MODEL_ANALYZER_H_
#define FLIGHTREC_ANALYZER_MODEL_ANALYZER_H_

#include "analyzer/model/detectors.h"
#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"

namespace flightrec {
namespace analysis {

struct AnalyzeOptions {
  ProgressOptions progress;
  StragglerOptions straggler;
};

Analysis Analyze(const JobIndex& index, const AnalyzeOptions& options = {});

// 0 healthy, 1 findings, 2 no usable input (the CLI's exit code).
int ExitCodeFor(const Analysis& analysis);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_ANALYZER_H_

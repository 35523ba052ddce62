// `flightrec timeline`: the job as Chrome trace-event JSON (Perfetto).
#ifndef FLIGHTREC_ANALYZER_REPORT_TIMELINE_H_
#define FLIGHTREC_ANALYZER_REPORT_TIMELINE_H_

#include <stdint.h>

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/model/job_index.h"
#include "analyzer/model/progress.h"

namespace flightrec {
namespace report {

struct TimelineOptions {
  // Inclusive ranges of trace pids (the global rank, see TracePids) to
  // draw; empty: every process. A 16k-rank trace is too big for Perfetto,
  // the culprit and its neighbours are not.
  std::vector<std::pair<int64_t, int64_t>> ranks;
};

// "0-7,12,40-47" -> ranges. False, with *error naming the bad part, for
// anything else (empty items, a range ending below its start, a sign).
bool ParseRankRanges(std::string_view text, std::vector<std::pair<int64_t, int64_t>>* ranges,
                     std::string* error);

// The processes (indices into index.processes()) `options` draws.
std::vector<size_t> DrawnProcesses(const analysis::JobIndex& index, const TimelineOptions& options);

// Streams the trace to `sink` in chunks of about a MiB, so memory does not
// grow with the trace. Returns false as soon as the sink does.
using TextSink = std::function<bool(std::string_view)>;
bool WriteTimeline(const analysis::JobIndex& index, const analysis::JobProgress& progress,
                   const TimelineOptions& options, const TextSink& sink);

// The whole trace as one string (tests, small jobs).
std::string TimelineTrace(const analysis::JobIndex& index, const analysis::JobProgress& progress,
                          const TimelineOptions& options = {});

}  // namespace report
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_REPORT_TIMELINE_H_

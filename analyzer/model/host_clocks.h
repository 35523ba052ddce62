// Hosts whose wall clocks disagree: the offset of each process's host clock
// against the reference host's (the first host with a communicator member),
// so that times of different hosts compare on one time line: heartbeats and
// dump times (progress.cc decides who is dead by them), the enqueue a wait
// started at and the GPU starts of an all-stuck op (JobProgress::Common).
//
// A collective ends at about the same instant on every rank, whoever arrived
// last, so across two hosts the median difference of the GPU end times
// (converted to each host's wall clock by its own reader) of the ops both
// finished is the difference of their clocks. Hosts that agree within
// kSkewFloorNs (NTP-synced clusters agree within milliseconds) get 0, as do
// hosts that share no finished collective with the first host.
#ifndef FLIGHTREC_ANALYZER_MODEL_HOST_CLOCKS_H_
#define FLIGHTREC_ANALYZER_MODEL_HOST_CLOCKS_H_

#include <stdint.h>

#include <vector>

#include "analyzer/model/job_index.h"

namespace flightrec {
namespace analysis {

constexpr int64_t kSkewFloorNs = 100000000;  // 100 ms

// Per process: ns its host's wall clock is ahead of the first host's
// (subtract it to get the first host's time line).
std::vector<int64_t> HostClockOffsets(const JobIndex& index);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_HOST_CLOCKS_H_

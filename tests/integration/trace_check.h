// Reads a Chrome trace-event JSON (`flightrec timeline`) the way Perfetto
// imports it and lists what the viewer would reject or mis-draw: on each
// (pid, tid) track, complete ("X") slices and thread instants must nest
// (a slice that starts inside another ends inside it), every "B" has its
// "E", durations are present and non-negative; every flow id has one "s"
// and one "f", the "s" no later than the "f", each bound to a slice of its
// track (the enclosing one, the flow strictly after its start, where no
// ordering of equal times can make the viewer pick the slice before; for an
// "f" without bp "e", one starting at or after it).
#ifndef FLIGHTREC_TESTS_INTEGRATION_TRACE_CHECK_H_
#define FLIGHTREC_TESTS_INTEGRATION_TRACE_CHECK_H_

#include <stddef.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flightrec {
namespace itest {

struct TraceCheck {
  std::vector<std::string> problems;  // the first few, for the message
  size_t problem_count = 0;
  size_t slices = 0;  // X slices read
  size_t flows = 0;   // complete flows (an "s" and its "f")
  size_t tracks = 0;  // (pid, tid) tracks holding a slice

  bool ok() const { return problem_count == 0; }
  std::string Describe() const;
};

TraceCheck CheckTrace(const nlohmann::json& trace);

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_TRACE_CHECK_H_

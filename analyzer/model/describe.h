// Short human labels shared by the findings' summaries and the reports:
// "rank 5 (host-a pid 4242)", "AllReduce #812", "comm `tp1`", "12:03:41".
#ifndef FLIGHTREC_ANALYZER_MODEL_DESCRIBE_H_
#define FLIGHTREC_ANALYZER_MODEL_DESCRIBE_H_

#include <stdint.h>

#include <string>

#include "analyzer/model/finding.h"
#include "analyzer/model/job_index.h"

namespace flightrec {
namespace analysis {

std::string HexId(uint64_t id);                      // "0x00000000deadbeef"
std::string ProcessLabel(const ProcessSnapshot& p);  // "host-a pid 4242"
// "rank 5 (host-a pid 4242)", or "rank 5 (no file)" when process < 0.
std::string RankLabel(const JobIndex& index, int32_t rank, int32_t process);
std::string CommLabel(const CommGroup& group);  // "comm `tp1`" or "comm 0x…"
std::string OpLabel(const OpRef& op);           // "AllReduce #812", "Send #3 to 2"
std::string ClockTime(uint64_t wall_ns);        // "12:03:41" (UTC), "?" when 0
std::string Seconds(double ns);                 // "1.25 s", "340 ms", "12 us"
// UTC, "" when 0: "2025-08-25T12:03:41.123Z", or with kNanoseconds
// "2025-08-25T12:03:41.123456789Z" (`flightrec show`).
enum class IsoPrecision { kMilliseconds, kNanoseconds };
std::string IsoTime(uint64_t wall_ns, IsoPrecision precision = IsoPrecision::kMilliseconds);
OpRef OpOf(const OpRecord& r);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_DESCRIBE_H_

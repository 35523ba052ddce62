// Short human labels shared by the findings' summaries and the reports:
// "rank 5 (host-a pid 4242)", "AllReduce #812", "comm `tp1`",
// "2025-08-25T12:03:41Z", and the few words that lead a report for someone
// who does not know the job: host, pid and global rank first.
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
// ISO 8601 in UTC to the second, "2025-08-25T12:03:41Z"; "?" when 0.
std::string ClockTime(uint64_t wall_ns);
std::string Seconds(double ns);  // "1.25 s", "340 ms", "12 us"
// UTC, "" when 0: "2025-08-25T12:03:41.123Z", or with kNanoseconds
// "2025-08-25T12:03:41.123456789Z" (`flightrec show`).
enum class IsoPrecision { kMilliseconds, kNanoseconds };
std::string IsoTime(uint64_t wall_ns, IsoPrecision precision = IsoPrecision::kMilliseconds);
OpRef OpOf(const OpRecord& r);

// The process's widest communicator (its rank there is the global rank);
// nullptr when it has none with a known size.
const CommSnapshot* WidestComm(const ProcessSnapshot& p);
// "world rank 5": the process's rank in its widest communicator (the number
// in the job's logs and scheduler); "" when it has none.
std::string GlobalRank(const ProcessSnapshot& p);
// "host-a pid 4242 (world rank 5)".
std::string WhoLabel(const ProcessSnapshot& p);
// A finding in a few words, who first: "host-a pid 4242 (world rank 5)
// never enqueued AllReduce #812 (user tag 1234)".
std::string FindingLead(const JobIndex& index, const Finding& f);
// How long the ranks blocked in the finding's op had waited when the job's
// state was captured: "7 ranks waiting 42.0 s (since 2025-08-25T12:03:41Z)";
// "" when the finding is not about a wait.
std::string WaitedText(const JobIndex& index, const Finding& f);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_DESCRIBE_H_

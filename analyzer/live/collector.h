// The exporter's metric model: every ring under some directories, tailed
// incrementally, turned into Prometheus metrics (docs/monitoring.md).
//
// Each Scan lists the directories again (new processes appear, removed ring
// files disappear), and for each ring reads its header and region table and
// only the slots claimed since the previous scan (LiveRing::ReadSlots), plus
// the few slots seen pending before, to learn whether they completed. It
// never writes to a ring and holds no lock a writer could wait on.
//
// What is exact and what is not, across ring laps (a region overwrote slots
// before a scan read them):
//   - flightrec_collectives_total summed over `func` is exactly the region's
//     head (slots claimed), except a last slot whose claim never completed;
//     slots overwritten or torn before they could be read are counted with
//     func="unknown".
//   - bytes and the histograms cover only the records read; they miss the
//     overwritten ones (flightrec_unread_records_total counts those).
//   - pending ops are tracked up to kMaxPendingPerComm per region (the
//     oldest ones are kept).
// A ring that vanishes takes its series with it at the next scan; one that
// turns unreadable (truncated, garbage) is skipped with a reason, and its
// series go too.
#ifndef FLIGHTREC_ANALYZER_LIVE_COLLECTOR_H_
#define FLIGHTREC_ANALYZER_LIVE_COLLECTOR_H_

#include <stdint.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/live/exposition.h"
#include "analyzer/reader/live_ring.h"

namespace flightrec {
namespace live {

constexpr size_t kMaxPendingPerComm = 1024;

struct ScanStats {
  uint64_t rings = 0;          // rings read this scan
  uint64_t slots_read = 0;     // record slots read (new + pending re-checks)
  uint64_t skipped_files = 0;  // ring/dump files skipped this scan
  double seconds = 0;          // wall time of the scan (set by the caller)
};

// What a scrape shows per rank (docs/monitoring.md, "Node mode").
enum class Detail {
  kRank,  // every family per communicator and rank
  kNode,  // per rank only what the alert rules compare across ranks (the
          // sync counters and the pending gauges); the operation counters
          // and histograms summed per node and communicator
};

class Collector {
 public:
  explicit Collector(std::vector<std::string> dirs, Detail detail = Detail::kRank);
  ~Collector();

  // Rescans the directories and tails every ring. `now_wall_ns` is
  // CLOCK_REALTIME (ages are measured against it). New problems (a file
  // skipped for a reason it was not skipped for before) are appended to
  // *log as one line each.
  ScanStats Scan(uint64_t now_wall_ns, std::vector<std::string>* log);

  // The exposition of everything the last Scan saw. `scan` adds the
  // exporter's own metrics.
  void Render(const ScanStats& scan, std::string* out) const;

 private:
  struct Ring;
  struct Dump;
  // Slots ScanRing will read in `ring` (its head just read): the new ones
  // of each region, at most a lap, and the pending ones it re-checks.
  static uint64_t NewSlots(const Ring& ring);
  // Reads the new slots of `ring`; touches nothing but *ring, *recs (its
  // scratch) and *stats, so rings are scanned in parallel.
  static void ScanRing(Ring* ring, std::vector<LiveOp>* recs, ScanStats* stats);

  std::vector<std::string> dirs_;
  Detail detail_;
  std::map<std::string, std::unique_ptr<Ring>> rings_;  // by path
  std::map<std::string, std::unique_ptr<Dump>> dumps_;  // by path
  // Files skipped in the last scan, by path: the problem (for the gauge and
  // to log a file's problem once, not every scan).
  std::map<std::string, RingProblem> skipped_;
  std::map<std::string, uint64_t> skips_total_;  // reason -> skip events
  uint64_t now_wall_ns_ = 0;
  // Size of the last exposition: the next one is reserved at once instead of
  // growing (and copying) ~20 times on its way to ~400 KB.
  mutable size_t last_render_bytes_ = 0;
};

}  // namespace live
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_LIVE_COLLECTOR_H_

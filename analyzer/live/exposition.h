// The Prometheus text exposition format (version 0.0.4): one family at a
// time, its # HELP and # TYPE lines first, then its samples. Label values are
// escaped (backslash, double quote, newline); names are the caller's
// constants and follow the naming rules (docs/monitoring.md).
#ifndef FLIGHTREC_ANALYZER_LIVE_EXPOSITION_H_
#define FLIGHTREC_ANALYZER_LIVE_EXPOSITION_H_

#include <stdint.h>

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace flightrec {
namespace live {

using Labels = std::vector<std::pair<const char*, std::string>>;

// Fixed bucket bounds (seconds) of every flightrec histogram: from 10 us (a
// small collective) to 5 min (a stuck one), so that histograms of different
// ranks, processes and nodes merge (the same `le` everywhere).
constexpr std::array<double, 16> kBucketBounds = {1e-5, 5e-5, 1e-4, 5e-4, 1e-3, 5e-3, 1e-2, 5e-2,
                                                  0.1,  0.5,  1.0,  5.0,  10.0, 30.0, 60.0, 300.0};

// kBucketBounds in nanoseconds, for ObserveNs.
constexpr std::array<uint64_t, 16> kBucketBoundsNs = {
    10000,       50000,       100000,      500000,      1000000,    5000000,
    10000000,    50000000,    100000000,   500000000,   1000000000, 5000000000,
    10000000000, 30000000000, 60000000000, 300000000000};

struct Histogram {
  std::array<uint64_t, kBucketBounds.size()> buckets{};  // non-cumulative
  uint64_t count = 0;                                    // == the +Inf bucket
  uint64_t sum_ns = 0;  // exact (2^64 ns is 584 years); rendered in seconds
  // One observation of `ns` nanoseconds (integer compares: the exporter
  // observes every record it reads).
  void ObserveNs(uint64_t ns);
  // Adds another histogram's observations (the same buckets everywhere).
  void Add(const Histogram& other);
};

class Exposition {
 public:
  explicit Exposition(std::string* out) : out_(out) {}
  // Starts a family: `type` is "counter", "gauge" or "histogram".
  void Family(const char* name, const char* type, const char* help);
  void Sample(const char* name, const Labels& labels, double value);
  // name_bucket{...,le}, name_sum, name_count.
  void HistogramSamples(const char* name, const Labels& labels, const Histogram& h);
  // The same, with the labels already rendered by LabelText: for series
  // whose labels are shared by many lines (a scrape writes ~20 lines per
  // communicator and histogram).
  void SampleText(const char* name, const std::string& label_text, double value);
  void HistogramText(const char* name, const std::string& label_text, const Histogram& h);

 private:
  void Line(const char* name, const char* suffix, const std::string& label_text, const char* le,
            double value);
  std::string* out_;
};

// Escapes a label value for the text format.
std::string EscapeLabelValue(const std::string& v);

// `a="x",b="y"`: the labels as they appear between the braces, values
// escaped.
std::string LabelText(const Labels& labels);

}  // namespace live
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_LIVE_EXPOSITION_H_

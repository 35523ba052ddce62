#include "analyzer/live/exposition.h"

#include <cmath>
#include <cstdio>

namespace flightrec {
namespace live {
namespace {

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  char buf[40];
  // Integers (counters) print exactly; others with 17 significant digits.
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", v);
  } else {
    std::snprintf(buf, sizeof(buf), "%.17g", v);
  }
  return buf;
}

// kBucketBoundsNs is kBucketBounds in nanoseconds.
constexpr bool NsBoundsMatch() {
  for (size_t i = 0; i < kBucketBounds.size(); ++i) {
    if (kBucketBoundsNs[i] != static_cast<uint64_t>(kBucketBounds[i] * 1e9 + 0.5)) return false;
  }
  return true;
}
static_assert(NsBoundsMatch(), "kBucketBoundsNs must be kBucketBounds in nanoseconds");

}  // namespace

void Histogram::ObserveNs(uint64_t ns) {
  for (size_t i = 0; i < kBucketBoundsNs.size(); ++i) {
    if (ns <= kBucketBoundsNs[i]) {
      ++buckets[i];
      break;
    }
  }
  ++count;
  sum += static_cast<double>(ns) / 1e9;
}

std::string EscapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void Exposition::Family(const char* name, const char* type, const char* help) {
  *out_ += "# HELP ";
  *out_ += name;
  *out_ += ' ';
  *out_ += help;
  *out_ += "\n# TYPE ";
  *out_ += name;
  *out_ += ' ';
  *out_ += type;
  *out_ += '\n';
}

void Exposition::Line(const std::string& name, const Labels& labels, const char* le, double value) {
  *out_ += name;
  if (!labels.empty() || le != nullptr) {
    *out_ += '{';
    bool first = true;
    for (const auto& kv : labels) {
      if (!first) *out_ += ',';
      first = false;
      *out_ += kv.first;
      *out_ += "=\"";
      *out_ += EscapeLabelValue(kv.second);
      *out_ += '"';
    }
    if (le != nullptr) {
      if (!first) *out_ += ',';
      *out_ += "le=\"";
      *out_ += le;
      *out_ += '"';
    }
    *out_ += '}';
  }
  *out_ += ' ';
  *out_ += FormatValue(value);
  *out_ += '\n';
}

void Exposition::Sample(const char* name, const Labels& labels, double value) {
  Line(name, labels, nullptr, value);
}

void Exposition::HistogramSamples(const char* name, const Labels& labels, const Histogram& h) {
  const std::string base = name;
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBucketBounds.size(); ++i) {
    cumulative += h.buckets[i];
    char le[32];
    std::snprintf(le, sizeof(le), "%g", kBucketBounds[i]);
    Line(base + "_bucket", labels, le, static_cast<double>(cumulative));
  }
  Line(base + "_bucket", labels, "+Inf", static_cast<double>(h.count));
  Line(base + "_sum", labels, nullptr, h.sum);
  Line(base + "_count", labels, nullptr, static_cast<double>(h.count));
}

}  // namespace live
}  // namespace flightrec

#include "analyzer/live/exposition.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace flightrec {
namespace live {
namespace {

void AppendValue(double v, std::string* out) {
  if (std::isnan(v)) {
    *out += "NaN";
    return;
  }
  if (std::isinf(v)) {
    *out += v > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buf[40];
  // Integers (counters) print exactly; others with 17 significant digits.
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof(buf), static_cast<int64_t>(v));
    out->append(buf, r.ptr);
    return;
  }
  const int n = std::snprintf(buf, sizeof(buf), "%.17g", v);
  out->append(buf, n > 0 && static_cast<size_t>(n) < sizeof(buf) ? static_cast<size_t>(n) : 0);
}

// The `le` label values of kBucketBounds ("%g").
const std::array<std::string, kBucketBounds.size()>& BucketLe() {
  static const std::array<std::string, kBucketBounds.size()> le = [] {
    std::array<std::string, kBucketBounds.size()> out;
    for (size_t i = 0; i < kBucketBounds.size(); ++i) {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%g", kBucketBounds[i]);
      out[i] = buf;
    }
    return out;
  }();
  return le;
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
  sum_ns += ns;
}

void Histogram::Add(const Histogram& other) {
  for (size_t i = 0; i < buckets.size(); ++i) buckets[i] += other.buckets[i];
  count += other.count;
  sum_ns += other.sum_ns;
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

std::string LabelText(const Labels& labels) {
  std::string out;
  for (const auto& kv : labels) {
    if (!out.empty()) out += ',';
    out += kv.first;
    out += "=\"";
    out += EscapeLabelValue(kv.second);
    out += '"';
  }
  return out;
}

void Exposition::Line(const char* name, const char* suffix, const std::string& label_text,
                      const char* le, double value) {
  std::string& out = *out_;
  out += name;
  out += suffix;
  if (!label_text.empty() || le != nullptr) {
    out += '{';
    out += label_text;
    if (le != nullptr) {
      if (!label_text.empty()) out += ',';
      out += "le=\"";
      out += le;
      out += '"';
    }
    out += '}';
  }
  out += ' ';
  AppendValue(value, &out);
  out += '\n';
}

void Exposition::Sample(const char* name, const Labels& labels, double value) {
  Line(name, "", LabelText(labels), nullptr, value);
}

void Exposition::SampleText(const char* name, const std::string& label_text, double value) {
  Line(name, "", label_text, nullptr, value);
}

void Exposition::HistogramSamples(const char* name, const Labels& labels, const Histogram& h) {
  HistogramText(name, LabelText(labels), h);
}

void Exposition::HistogramText(const char* name, const std::string& label_text,
                               const Histogram& h) {
  const auto& le = BucketLe();
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kBucketBounds.size(); ++i) {
    cumulative += h.buckets[i];
    Line(name, "_bucket", label_text, le[i].c_str(), static_cast<double>(cumulative));
  }
  Line(name, "_bucket", label_text, "+Inf", static_cast<double>(h.count));
  Line(name, "_sum", label_text, nullptr, static_cast<double>(h.sum_ns) / 1e9);
  Line(name, "_count", label_text, nullptr, static_cast<double>(h.count));
}

}  // namespace live
}  // namespace flightrec

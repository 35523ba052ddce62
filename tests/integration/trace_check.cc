#include "integration/trace_check.h"

#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace flightrec {
namespace itest {
namespace {

using nlohmann::json;
using Track = std::pair<int64_t, int64_t>;  // (pid, tid)

struct Span {
  int64_t start = 0, end = 0;  // ns
};

constexpr size_t kShown = 12;

void Problem(TraceCheck* out, const std::string& text) {
  if (out->problems.size() < kShown) out->problems.push_back(text);
  ++out->problem_count;
}

// Microseconds (JSON number) -> integer ns, as the viewer rounds them.
bool Ns(const json& e, const char* key, int64_t* out) {
  if (!e.contains(key) || !e[key].is_number()) return false;
  *out = std::llround(e[key].get<double>() * 1000.0);
  return true;
}

std::string Where(const json& e) {
  return std::string(e.value("ph", "?")) + " '" + e.value("name", "") + "' pid " + e["pid"].dump() +
         " tid " + (e.contains("tid") ? e["tid"].dump() : "-") + " ts " +
         (e.contains("ts") ? e["ts"].dump() : "-");
}

Track TrackOf(const json& e) { return {e.value("pid", int64_t{-1}), e.value("tid", int64_t{-1})}; }

// Slices of one track must form a forest: sorted by start (longer first on
// ties), a slice that starts before the innermost open one ends must end
// no later than it.
void CheckNesting(const Track& track, std::vector<Span>* spans, TraceCheck* out) {
  std::sort(spans->begin(), spans->end(), [](const Span& a, const Span& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  std::vector<int64_t> open;  // ends of the enclosing slices
  for (const Span& s : *spans) {
    while (!open.empty() && open.back() <= s.start) open.pop_back();
    if (!open.empty() && s.end > open.back()) {
      Problem(out, "pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) +
                       ": slice [" + std::to_string(s.start) + ", " + std::to_string(s.end) +
                       "] ns partially overlaps one ending at " + std::to_string(open.back()));
    }
    open.push_back(s.end);
  }
}

// The viewer binds a flow end to the slice open on its track when it reads
// the event; at a slice's very start that depends on how it orders events of
// equal time (the previous slice may end there), so a flow must fall inside
// a slice, or on a zero-length one.
bool Encloses(const std::vector<Span>& spans, int64_t ts) {
  for (const Span& s : spans) {
    if ((s.start < ts && ts <= s.end) || (s.start == ts && s.end == ts)) return true;
  }
  return false;
}

bool StartsAtOrAfter(const std::vector<Span>& spans, int64_t ts) {
  for (const Span& s : spans) {
    if (s.start >= ts) return true;
  }
  return false;
}

}  // namespace

std::string TraceCheck::Describe() const {
  std::string s = std::to_string(problem_count) + " problems in " + std::to_string(slices) +
                  " slices on " + std::to_string(tracks) + " tracks, " + std::to_string(flows) +
                  " flows";
  for (const std::string& p : problems) s += "\n  " + p;
  if (problem_count > problems.size()) s += "\n  ...";
  return s;
}

TraceCheck CheckTrace(const json& trace) {
  TraceCheck out;
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    Problem(&out, "no traceEvents array");
    return out;
  }
  std::map<Track, std::vector<Span>> slices;
  std::map<Track, std::vector<int64_t>> begun;  // open B events
  struct FlowEnds {
    const json* s = nullptr;
    const json* f = nullptr;
    int starts = 0, finishes = 0;
  };
  std::map<std::string, FlowEnds> flows;
  for (const json& e : trace["traceEvents"]) {
    const std::string ph = e.value("ph", "");
    if (ph == "M") continue;
    int64_t ts = 0;
    if (!Ns(e, "ts", &ts)) {
      Problem(&out, Where(e) + ": no numeric ts");
      continue;
    }
    const Track track = TrackOf(e);
    if (ph == "X") {
      int64_t dur = 0;
      if (!Ns(e, "dur", &dur) || dur < 0) {
        Problem(&out, Where(e) + ": duration missing or negative");
        continue;
      }
      slices[track].push_back({ts, ts + dur});
      ++out.slices;
    } else if (ph == "B") {
      begun[track].push_back(ts);
    } else if (ph == "E") {
      std::vector<int64_t>& open = begun[track];
      if (open.empty()) {
        Problem(&out, Where(e) + ": E without a B");
      } else {
        if (ts < open.back()) Problem(&out, Where(e) + ": E before its B");
        slices[track].push_back({open.back(), std::max(ts, open.back())});
        open.pop_back();
      }
    } else if (ph == "i" || ph == "I") {
      const std::string scope = e.value("s", "t");
      if (scope == "t") slices[track].push_back({ts, ts});  // a zero-length slice
    } else if (ph == "s" || ph == "f") {
      FlowEnds& f = flows[e.contains("id") ? e["id"].dump() : std::string("?")];
      (ph == "s" ? f.s : f.f) = &e;
      ++(ph == "s" ? f.starts : f.finishes);
    }
  }
  for (const auto& [track, open] : begun) {
    if (!open.empty()) {
      Problem(&out, "pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) +
                        ": " + std::to_string(open.size()) + " B events never ended");
    }
  }
  for (auto& [track, spans] : slices) {
    CheckNesting(track, &spans, &out);
  }
  out.tracks = slices.size();
  for (const auto& [id, f] : flows) {
    if (f.starts != 1 || f.finishes != 1) {
      Problem(&out, "flow " + id + ": " + std::to_string(f.starts) + " s and " +
                        std::to_string(f.finishes) + " f events");
      continue;
    }
    int64_t s_ts = 0, f_ts = 0;
    Ns(*f.s, "ts", &s_ts);
    Ns(*f.f, "ts", &f_ts);
    if (s_ts > f_ts)
      Problem(&out, "flow " + id + " runs backward: " + Where(*f.s) + " -> " + Where(*f.f));
    const auto src = slices.find(TrackOf(*f.s));
    if (src == slices.end() || !Encloses(src->second, s_ts)) {
      Problem(&out, "flow " + id + ": " + Where(*f.s) + " is bound to no slice");
    }
    const auto dst = slices.find(TrackOf(*f.f));
    const bool enclosing = f.f->value("bp", "") == "e";
    if (dst == slices.end() ||
        !(enclosing ? Encloses(dst->second, f_ts) : StartsAtOrAfter(dst->second, f_ts))) {
      Problem(&out, "flow " + id + ": " + Where(*f.f) + " is bound to no slice");
    }
    ++out.flows;
  }
  return out;
}

}  // namespace itest
}  // namespace flightrec

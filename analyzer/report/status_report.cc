#include "analyzer/report/status_report.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer/model/describe.h"
#include "analyzer/report/op_json.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {
namespace {

using analysis::CommStatus;
using analysis::JobStatus;
using analysis::LiveState;
using analysis::LiveStatus;
using analysis::ProcessStatus;
using analysis::StatusOptions;
using nlohmann::json;

double Secs(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

std::string Age(uint64_t ns) {
  char buf[32];
  const double s = Secs(ns);
  std::snprintf(buf, sizeof(buf), s < 10 ? "%.1f s" : "%.0f s", s);
  return buf;
}

// 1234567 -> "1.2M" (SI, one decimal under 10).
std::string Si(double v, const char* unit) {
  static const char* const kPrefix[] = {"", "k", "M", "G", "T", "P"};
  size_t k = 0;
  while (v >= 1000 && k + 1 < sizeof(kPrefix) / sizeof(kPrefix[0])) {
    v /= 1000;
    ++k;
  }
  char buf[48];
  std::snprintf(buf, sizeof(buf), v < 10 && k > 0 ? "%.1f %s%s" : "%.0f %s%s", v, kPrefix[k], unit);
  return buf;
}

std::string CommName(const CommSnapshot& c) {
  return c.name.empty() ? analysis::HexId(c.comm_id) : c.name;
}

std::string RanksText(const ProcessSnapshot& p) {
  std::string s;
  for (const CommSnapshot& c : p.comms) {
    s += (s.empty() ? "" : " ") + CommName(c) + ":" + std::to_string(c.rank);
  }
  return s.empty() ? "-" : s;
}

const char* Where(const OpRecord& r) {
  return r.state >= format::kOpRunning ? "on the GPU" : "enqueued, not started";
}

std::string StateText(const ProcessSnapshot& p, const ProcessStatus& s) {
  std::string t = analysis::LiveStateName(s.state);
  switch (s.state) {
    case LiveState::kStalled: {
      const OpRecord& r = p.comms[s.pending_comm].records[s.pending_record];
      t += " at " + analysis::OpOnComm(p, s.pending_comm, s.pending_record) + " for " +
           Age(s.pending_age_ns) + " (" + Where(r) + ")";
      break;
    }
    case LiveState::kDead:
      if (analysis::DiedDuringInit(p)) {
        t += " during init (seen gone on this host)";
      } else {
        t += " (silent " + Age(s.silent_ns) +
             (s.liveness == analysis::Liveness::kGone ? ", seen gone on this host)" : ")");
      }
      break;
    case LiveState::kDisabled:
      if (!p.disable_reason.empty()) t += " (" + p.disable_reason + ")";
      break;
    case LiveState::kStarting:
      t += " (only " + p.path.substr(p.path.find_last_of('/') + 1) + ")";
      break;
    default:
      if (s.has_pending() && s.state == LiveState::kProgressing) {
        t += " (oldest pending " + Age(s.pending_age_ns) + ")";
      }
      break;
  }
  return t;
}

std::string HeartbeatText(const ProcessStatus& s) {
  if (!s.has_heartbeat) return "hb -";
  return "hb " + Age(s.heartbeat_age_ns) + (s.alive ? "" : " stale");
}

std::string LastDoneText(const ProcessSnapshot& p, const ProcessStatus& s) {
  std::string t;
  for (size_t c = 0; c < p.comms.size() && c < s.comms.size(); ++c) {
    const CommStatus& cs = s.comms[c];
    std::string part = CommName(p.comms[c]) + " ";
    if (!cs.tracked) {
      part += "(no completions recorded)";
    } else if (cs.last_done < 0) {
      part += "none";
    } else {
      const OpRecord& r = p.comms[c].records[cs.last_done];
      part += analysis::OpLabel(analysis::OpOf(r));
    }
    t += (t.empty() ? "" : ", ") + part;
  }
  return t.empty() ? "-" : t;
}

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

json RanksJson(const ProcessSnapshot& p) {
  json ranks = json::array();
  for (const CommSnapshot& c : p.comms) {
    ranks.push_back({{"comm", analysis::HexId(c.comm_id)}, {"name", c.name}, {"rank", c.rank}});
  }
  return ranks;
}

// Writes JSON as nlohmann's dump(2, ' ', false, replace) prints it (objects
// with their keys in byte order, two spaces per level, numbers as it prints
// them) without building the tree: the process list is most of a large
// job's document. Callers give an object's keys in byte order.
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void BeginObject() { Open('{'); }
  void EndObject() { Close('}'); }
  void BeginArray() { Open('['); }
  void EndArray() { Close(']'); }
  void Key(const char* key) {
    Next();
    *out_ += '"';
    *out_ += key;
    *out_ += "\": ";
    after_key_ = true;
  }

  void Null() { Scalar("null"); }
  void Bool(bool v) { Scalar(v ? "true" : "false"); }
  void Int(int64_t v) { Scalar(std::to_string(v)); }
  void Uint(uint64_t v) { Scalar(std::to_string(v)); }
  void Double(double v) {
    if (!std::isfinite(v)) return Scalar("null");
    std::array<char, 64> buf;
    char* end = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), v);
    Scalar(buf.data(), static_cast<size_t>(end - buf.data()));
  }
  void String(const std::string& v) {
    Value();
    for (const char ch : v) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') {
        // Escapes and UTF-8 (invalid sequences replaced) as nlohmann does.
        *out_ += json(v).dump(-1, ' ', false, json::error_handler_t::replace);
        return;
      }
    }
    *out_ += '"';
    *out_ += v;
    *out_ += '"';
  }
  // A subtree built as nlohmann::json (the small parts of the document).
  void Tree(const json& v) {
    Value();
    const std::string text = v.dump(2, ' ', false, json::error_handler_t::replace);
    const std::string indent = "\n" + std::string(2 * open_.size(), ' ');
    for (const char c : text) {
      if (c == '\n') {
        *out_ += indent;
      } else {
        *out_ += c;
      }
    }
  }

 private:
  void Open(char c) {
    Value();
    *out_ += c;
    open_.push_back(0);
  }
  void Close(char c) {
    const size_t n = open_.back();
    open_.pop_back();
    if (n != 0) {
      *out_ += '\n';
      out_->append(2 * open_.size(), ' ');
    }
    *out_ += c;
  }
  // Before an array element or an object key: its separator and indent.
  void Next() {
    if (open_.empty()) return;
    *out_ += open_.back()++ == 0 ? "\n" : ",\n";
    out_->append(2 * open_.size(), ' ');
  }
  void Value() {
    if (after_key_) {
      after_key_ = false;
    } else {
      Next();
    }
  }
  void Scalar(const std::string& text) { Scalar(text.data(), text.size()); }
  void Scalar(const char* text, size_t n) {
    Value();
    out_->append(text, n);
  }

  std::string* out_;
  std::vector<size_t> open_;  // per open container: its elements so far
  bool after_key_ = false;
};

// One op as the analyze report writes it (OpJson): a small subtree.
void WriteOp(const analysis::OpRef& op, Writer* w) { w->Tree(OpJson(op)); }

void WriteRanks(const ProcessSnapshot& p, Writer* w) {
  w->BeginArray();
  for (const CommSnapshot& c : p.comms) {
    w->BeginObject();
    w->Key("comm");
    w->String(analysis::HexId(c.comm_id));
    w->Key("name");
    w->String(c.name);
    w->Key("rank");
    w->Int(c.rank);
    w->EndObject();
  }
  w->EndArray();
}

void WriteComms(const ProcessSnapshot& p, const ProcessStatus& s, Writer* w) {
  w->BeginArray();
  for (size_t c = 0; c < p.comms.size() && c < s.comms.size(); ++c) {
    const CommSnapshot& comm = p.comms[c];
    const CommStatus& cs = s.comms[c];
    const double span = cs.span_ns > 0 ? Secs(cs.span_ns) : 0;
    w->BeginObject();
    w->Key("bytes_per_s");
    w->Double(span > 0 ? static_cast<double>(cs.bytes) / span : 0.0);
    w->Key("comm");
    w->String(analysis::HexId(comm.comm_id));
    w->Key("last_completed");
    if (cs.last_done >= 0) {
      w->BeginObject();
      w->Key("op");
      WriteOp(analysis::OpOf(comm.records[cs.last_done]), w);
      w->Key("time");
      w->String(analysis::IsoTime(cs.last_done_ns));
      w->EndObject();
    } else {
      w->Null();
    }
    w->Key("name");
    w->String(comm.name);
    w->Key("nranks");
    w->Int(comm.nranks);
    w->Key("ops_per_s");
    w->Double(span > 0 ? static_cast<double>(cs.ops) / span : 0.0);
    w->Key("pending_ops");
    w->Uint(cs.pending);
    w->Key("rank");
    w->Int(comm.rank);
    w->Key("tracked");
    w->Bool(cs.tracked);
    w->EndObject();
  }
  w->EndArray();
}

void WriteProcess(const JobStatus& job, size_t i, Writer* w) {
  const ProcessSnapshot& p = job.processes[i];
  const ProcessStatus& s = job.status[i];
  json drops = json::object();
  for (size_t k = 0; k < p.drops.size(); ++k) {
    if (p.drops[k] != 0) drops[format::kDropCauseNames[k]] = p.drops[k];
  }
  w->BeginObject();
  w->Key("alive");
  w->Bool(s.alive);
  w->Key("bytes_per_s");
  w->Double(s.bytes_per_s);
  w->Key("comms");
  WriteComms(p, s, w);
  w->Key("dead_after_s");
  w->Double(Secs(s.dead_after_ns));
  w->Key("dropped");
  w->Uint(s.dropped);
  w->Key("drops_by_cause");
  w->Tree(drops);
  w->Key("heartbeat_age_s");
  if (s.has_heartbeat) {
    w->Double(Secs(s.heartbeat_age_ns));
  } else {
    w->Null();
  }
  w->Key("host");
  w->String(p.host);
  w->Key("job_id");
  w->String(job.job_id);
  w->Key("ops_per_s");
  w->Double(s.ops_per_s);
  w->Key("path");
  w->String(p.path);
  w->Key("pending");
  if (s.has_pending()) {
    const CommSnapshot& c = p.comms[s.pending_comm];
    const OpRecord& r = c.records[s.pending_record];
    w->BeginObject();
    w->Key("age_s");
    w->Double(Secs(s.pending_age_ns));
    w->Key("comm");
    w->String(analysis::HexId(c.comm_id));
    w->Key("name");
    w->String(c.name);
    w->Key("op");
    WriteOp(analysis::OpOf(r), w);
    w->Key("where");
    w->String(r.state >= format::kOpRunning ? "gpu" : "enqueued");
    w->EndObject();
  } else {
    w->Null();
  }
  w->Key("pending_ops");
  w->Uint(s.pending_ops);
  w->Key("pid");
  w->Int(p.pid);
  w->Key("ranks");
  WriteRanks(p, w);
  w->Key("silent_s");
  w->Double(Secs(s.silent_ns));
  w->Key("state");
  w->String(analysis::LiveStateName(s.state));
  w->Key("torn");
  w->Uint(s.torn);
  w->EndObject();
}

}  // namespace

bool StatusHasTrouble(const LiveStatus& status) {
  for (const JobStatus& j : status.jobs) {
    for (const ProcessStatus& s : j.status) {
      if (s.state == LiveState::kStalled || s.state == LiveState::kDead) return true;
    }
  }
  return false;
}

// The activation mask(s) the process's comms recorded with (format 1.5:
// RegionDesc::event_mask, docs/plugin.md), and whether NCCL overrode one.
std::string MaskText(const ProcessSnapshot& p) {
  std::vector<uint32_t> masks;
  bool overridden = false;
  for (const CommSnapshot& c : p.comms) {
    if (c.event_mask == 0) continue;
    if (std::find(masks.begin(), masks.end(), c.event_mask) == masks.end()) {
      masks.push_back(c.event_mask);
    }
    overridden = overridden || (c.flags & format::kRegionMaskOverridden) != 0;
  }
  if (masks.empty()) return "";
  std::string text = " | mask";
  for (uint32_t m : masks) {
    char buf[16];
    snprintf(buf, sizeof(buf), " 0x%x", m);
    text += buf;
  }
  return overridden ? text + " (overridden by NCCL)" : text;
}

std::string StatusText(const LiveStatus& status, const StatusOptions& options) {
  std::string out = "flightrec status  " + analysis::IsoTime(status.now_wall_ns) +
                    "  (stalled after " + Age(options.stalled_after_ns) + ", rates over " +
                    Age(options.window_ns) + ")\n";
  for (const JobStatus& job : status.jobs) {
    out += "job " + job.job_id + " (" + std::to_string(job.processes.size()) +
           " processes): " + analysis::JobSummary(job) + "\n";
    for (const analysis::StragglerStatus& st : job.stragglers) {
      out += "  straggler: " + analysis::StragglerLine(job, st) + "\n";
    }
    std::vector<std::string> who(job.processes.size()), ranks(job.processes.size()),
        hb(job.processes.size());
    size_t w_who = 0, w_ranks = 0, w_hb = 0;
    for (size_t i = 0; i < job.processes.size(); ++i) {
      const ProcessSnapshot& p = job.processes[i];
      who[i] = (p.host.empty() ? "?" : p.host) + " " + std::to_string(p.pid);
      ranks[i] = RanksText(p);
      hb[i] = HeartbeatText(job.status[i]);
      w_who = std::max(w_who, who[i].size());
      w_ranks = std::max(w_ranks, ranks[i].size());
      w_hb = std::max(w_hb, hb[i].size());
    }
    for (size_t i = 0; i < job.processes.size(); ++i) {
      const ProcessSnapshot& p = job.processes[i];
      const ProcessStatus& s = job.status[i];
      std::string line = "  " + Pad(who[i], w_who) + "  " + Pad(ranks[i], w_ranks) + "  " +
                         Pad(hb[i], w_hb) + "  " + StateText(p, s);
      if (!p.comms.empty()) {
        line += "  | " + Si(s.ops_per_s, "ops/s") + " " + Si(s.bytes_per_s, "B/s") +
                " | last: " + LastDoneText(p, s);
      }
      if (s.dropped != 0) line += " | dropped " + std::to_string(s.dropped);
      if (s.torn != 0) line += " | torn " + std::to_string(s.torn);
      line += MaskText(p);
      out += line + "\n";
    }
  }
  if (status.jobs.empty()) out += "no rings found\n";
  if (!status.other_jobs.empty()) {
    out += "other jobs here (--job to see one):";
    for (const std::string& j : status.other_jobs) out += " " + j;
    out += "\n";
  }
  for (const analysis::RejectedInput& r : status.problems) out += "skipped: " + r.reason + "\n";
  if (status.ignored_files != 0) {
    out += std::to_string(status.ignored_files) +
           " other files in the directories (dumps, logs) not read\n";
  }
  return out;
}

std::string StatusJson(const LiveStatus& status, const StatusOptions& options) {
  json jobs = json::array();
  for (const JobStatus& job : status.jobs) {
    json counts = json::object();
    for (LiveState st :
         {LiveState::kProgressing, LiveState::kStalled, LiveState::kIdle, LiveState::kDead,
          LiveState::kExited, LiveState::kStarting, LiveState::kDisabled}) {
      counts[analysis::LiveStateName(st)] = 0;
    }
    for (const ProcessStatus& s : job.status) {
      counts[analysis::LiveStateName(s.state)] =
          counts[analysis::LiveStateName(s.state)].get<int>() + 1;
    }
    json stragglers = json::array();
    for (const analysis::StragglerStatus& st : job.stragglers) {
      const ProcessSnapshot& p = job.processes[st.process];
      const CommSnapshot& c = p.comms[st.comm];
      stragglers.push_back({{"host", p.host},
                            {"pid", p.pid},
                            {"ranks", RanksJson(p)},
                            {"comm", analysis::HexId(c.comm_id)},
                            {"name", c.name},
                            {"rank", st.rank},
                            {"side", st.gpu_side ? "gpu" : "cpu"},
                            {"last_fraction", st.last_fraction},
                            {"median_late_s", st.median_late_ns / 1e9},
                            {"waiting_ranks", st.members - 1},
                            {"wait_gpu_s_per_s", st.wait_gpu_per_s},
                            {"text", analysis::StragglerLine(job, st)}});
    }
    jobs.push_back({{"job_id", job.job_id},
                    {"processes", job.processes.size()},
                    {"counts", counts},
                    {"summary", analysis::JobSummary(job)},
                    {"stragglers", stragglers}});
  }
  json problems = json::array(), superseded = json::array();
  for (const analysis::RejectedInput& r : status.problems) {
    problems.push_back({{"path", r.path}, {"reason", r.reason}});
  }
  for (const analysis::SupersededInput& s : status.superseded) {
    superseded.push_back({{"path", s.path}, {"by", s.by}, {"why", s.why}});
  }
  // The schema of docs/status.md, keys in byte order; names come from
  // files: invalid UTF-8 is replaced, never thrown on.
  std::string out;
  size_t processes = 0;
  for (const JobStatus& job : status.jobs) processes += job.processes.size();
  out.reserve(4096 * (processes + 1));
  Writer w(&out);
  w.BeginObject();
  w.Key("ignored_files");
  w.Tree(json(status.ignored_files));
  w.Key("jobs");
  w.Tree(jobs);
  w.Key("other_jobs");
  w.Tree(json(status.other_jobs));
  w.Key("problems");
  w.Tree(problems);
  w.Key("processes");
  w.BeginArray();
  for (const JobStatus& job : status.jobs) {
    for (size_t i = 0; i < job.processes.size(); ++i) WriteProcess(job, i, &w);
  }
  w.EndArray();
  w.Key("schema");
  w.String(kStatusSchema);
  w.Key("stalled_after_s");
  w.Double(Secs(options.stalled_after_ns));
  w.Key("superseded");
  w.Tree(superseded);
  w.Key("time");
  w.String(analysis::IsoTime(status.now_wall_ns));
  w.Key("window_s");
  w.Double(Secs(options.window_ns));
  w.EndObject();
  out += "\n";
  return out;
}

}  // namespace report
}  // namespace flightrec

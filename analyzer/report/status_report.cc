#include "analyzer/report/status_report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
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

json CommsJson(const ProcessSnapshot& p, const ProcessStatus& s) {
  json comms = json::array();
  for (size_t c = 0; c < p.comms.size() && c < s.comms.size(); ++c) {
    const CommSnapshot& comm = p.comms[c];
    const CommStatus& cs = s.comms[c];
    json last = nullptr;
    if (cs.last_done >= 0) {
      last = {{"op", OpJson(analysis::OpOf(comm.records[cs.last_done]))},
              {"time", analysis::IsoTime(cs.last_done_ns)}};
    }
    const double span = cs.span_ns > 0 ? Secs(cs.span_ns) : 0;
    comms.push_back({{"comm", analysis::HexId(comm.comm_id)},
                     {"name", comm.name},
                     {"rank", comm.rank},
                     {"nranks", comm.nranks},
                     {"tracked", cs.tracked},
                     {"pending_ops", cs.pending},
                     {"last_completed", last},
                     {"ops_per_s", span > 0 ? static_cast<double>(cs.ops) / span : 0.0},
                     {"bytes_per_s", span > 0 ? static_cast<double>(cs.bytes) / span : 0.0}});
  }
  return comms;
}

json ProcessJson(const JobStatus& job, size_t i) {
  const ProcessSnapshot& p = job.processes[i];
  const ProcessStatus& s = job.status[i];
  json pending = nullptr;
  if (s.has_pending()) {
    const CommSnapshot& c = p.comms[s.pending_comm];
    const OpRecord& r = c.records[s.pending_record];
    pending = {{"comm", analysis::HexId(c.comm_id)},
               {"name", c.name},
               {"op", OpJson(analysis::OpOf(r))},
               {"age_s", Secs(s.pending_age_ns)},
               {"where", r.state >= format::kOpRunning ? "gpu" : "enqueued"}};
  }
  json drops = json::object();
  for (size_t k = 0; k < p.drops.size(); ++k) {
    if (p.drops[k] != 0) drops[format::kDropCauseNames[k]] = p.drops[k];
  }
  return {{"job_id", job.job_id},
          {"host", p.host},
          {"pid", p.pid},
          {"ranks", RanksJson(p)},
          {"state", analysis::LiveStateName(s.state)},
          {"path", p.path},
          {"alive", s.alive},
          {"heartbeat_age_s", s.has_heartbeat ? json(Secs(s.heartbeat_age_ns)) : json(nullptr)},
          {"silent_s", Secs(s.silent_ns)},
          {"dead_after_s", Secs(s.dead_after_ns)},
          {"pending", pending},
          {"pending_ops", s.pending_ops},
          {"ops_per_s", s.ops_per_s},
          {"bytes_per_s", s.bytes_per_s},
          {"dropped", s.dropped},
          {"drops_by_cause", drops},
          {"torn", s.torn},
          {"comms", CommsJson(p, s)}};
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
  json jobs = json::array(), processes = json::array();
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
    for (size_t i = 0; i < job.processes.size(); ++i) processes.push_back(ProcessJson(job, i));
  }
  json problems = json::array(), superseded = json::array();
  for (const analysis::RejectedInput& r : status.problems) {
    problems.push_back({{"path", r.path}, {"reason", r.reason}});
  }
  for (const analysis::SupersededInput& s : status.superseded) {
    superseded.push_back({{"path", s.path}, {"by", s.by}, {"why", s.why}});
  }
  const json out = {{"schema", kStatusSchema},
                    {"time", analysis::IsoTime(status.now_wall_ns)},
                    {"stalled_after_s", Secs(options.stalled_after_ns)},
                    {"window_s", Secs(options.window_ns)},
                    {"jobs", jobs},
                    {"processes", processes},
                    {"problems", problems},
                    {"superseded", superseded},
                    {"other_jobs", status.other_jobs},
                    {"ignored_files", status.ignored_files}};
  // Names come from files: replace invalid UTF-8 rather than throw.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace report
}  // namespace flightrec

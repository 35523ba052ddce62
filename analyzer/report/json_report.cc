#include <nlohmann/json.hpp>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/describe.h"
#include "analyzer/reader/fr_reader.h"
#include "analyzer/report/next_step.h"
#include "analyzer/report/op_json.h"
#include "analyzer/report/report.h"
#include "flightrec/record_names.h"
#include "flightrec/version.h"

namespace flightrec {
namespace report {
namespace {

using analysis::Culprit;
using analysis::Finding;
using analysis::JobIndex;
using analysis::OpRef;
using analysis::RankNote;
using nlohmann::json;

json CommJson(const analysis::CommGroup& g) {
  return {{"id", analysis::HexId(g.comm_id)}, {"name", g.name}, {"nranks", g.nranks}};
}

// A process with its rank in every communicator it belongs to; a rank with
// no file has null host and pid and the memberships we know of (the holes
// of narrower comms that are the same process, JobIndex::MissingMemberships).
json SourceJson(const analysis::EvidenceSource& s) {
  return {{"path", s.path},
          {"kind", s.kind},
          {"reason", s.reason},
          {"time", s.time_wall_ns != 0 ? json(analysis::IsoTime(s.time_wall_ns)) : json(nullptr)}};
}

json ProcessJson(const ReportInput& in, int32_t process, int32_t group, int32_t rank) {
  const JobIndex& index = in.index;
  json ranks = json::array();
  if (process < 0) {
    for (const auto& [gi, r] : index.MissingMemberships(group, rank)) {
      const analysis::CommGroup& g = index.groups()[gi];
      ranks.push_back({{"comm", analysis::HexId(g.comm_id)}, {"name", g.name}, {"rank", r}});
    }
    return {{"host", nullptr}, {"pid", nullptr}, {"ranks", ranks}};
  }
  const ProcessSnapshot& p = index.processes()[process];
  for (const CommSnapshot& c : p.comms) {
    ranks.push_back({{"comm", analysis::HexId(c.comm_id)}, {"name", c.name}, {"rank", c.rank}});
  }
  json j = {{"host", p.host}, {"pid", p.pid}, {"ranks", ranks}};
  if (p.pytorch_fr) {  // docs/report-schema.md "pytorch_fr"
    std::string what;
    const std::vector<std::string> frames = FrCurrentFrames(p, 16, &what);
    j["pytorch_fr"] = {{"global_rank", p.pytorch_fr->global_rank},
                       {"rank_from", p.pytorch_fr->rank_from},
                       {"format", p.pytorch_fr->format},
                       {"path", p.pytorch_fr->path},
                       {"version", p.pytorch_fr->version},
                       {"entry", what},
                       {"python_frames", frames}};
  }
  // Only when the sources describe this index's processes (one each).
  if (in.inputs.sources.size() == index.processes().size()) {
    j["source"] = SourceJson(in.inputs.sources[process]);
  }
  return j;
}

}  // namespace

json OpJson(const OpRef& op) {
  if (!op.valid) return nullptr;
  json j = {{"func", format::FuncName(op.func)},
            {"seq", op.seq == UINT64_MAX ? json(nullptr) : json(op.seq)},
            {"index", op.index}};
  if (op.p2p) j["peer"] = op.peer;
  if (op.user_tag != 0) j["user_tag"] = op.user_tag;
  if (op.copy_engine) {  // seq is then the comm's ceSeqNum
    j["copy_engine"] = true;
    j["algo"] = format::AlgoName(op.algo);
  }
  if (op.symmetric) {  // NCCL 2.31+: a symmetric kernel and its variant
    j["symmetric"] = true;
    j["kernel_variant"] = op.kernel_variant < format::kNumKernelVariants
                              ? format::kKernelVariantNames[op.kernel_variant]
                              : "other";
  }
  return j;
}

namespace {

json DetailJson(const JobIndex& index, const RankNote& n) {
  json d = {{"rank", n.rank}, {"where", analysis::WhereaboutsName(n.where)}};
  if (n.behind != 0) d["behind"] = n.behind;
  if (n.skipped) d["skipped"] = true;
  if (n.blocked_group >= 0) {
    const analysis::CommGroup& g = index.groups()[n.blocked_group];
    d["blocked_at"] = {
        {"comm", analysis::HexId(g.comm_id)}, {"name", g.name}, {"op", OpJson(n.blocked_op)}};
  }
  if (n.late_ns > 0) d["late_ns"] = n.late_ns;
  if (n.caused_wait_ns > 0) d["caused_wait_ns"] = n.caused_wait_ns;
  return d;
}

json FindingJson(const ReportInput& in, const Finding& f) {
  const JobIndex& index = in.index;
  json ranks = json::array(), processes = json::array(), details = json::array();
  for (const RankNote& n : f.ranks) {
    ranks.push_back(n.rank);
    processes.push_back(ProcessJson(in, n.process, f.group, n.rank));
    details.push_back(DetailJson(index, n));
  }
  for (int32_t p : f.extra_processes) processes.push_back(ProcessJson(in, p, -1, -1));
  json j = {{"kind", analysis::FindingKindName(f.kind)},
            {"comm", f.group >= 0 ? CommJson(index.groups()[f.group]) : json(nullptr)},
            {"ranks", ranks},
            {"processes", processes},
            {"op", OpJson(f.op)},
            {"summary", f.summary},
            {"confidence", f.confidence},
            {"root_cause", f.root_cause},
            {"details", details}};
  if (!f.fields.empty()) j["fields"] = f.fields;
  if (!f.tie_break.empty()) j["tie_break"] = f.tie_break;
  if (f.kind == analysis::FindingKind::kCommAborted) {
    j["open_at_end"] = f.open_at_end;
    j["ended_at"] = analysis::IsoTime(f.ended_wall_ns);
    j["successor"] = f.successor >= 0 ? CommJson(index.groups()[f.successor]) : json(nullptr);
    j["recovered"] = f.recovered;
  }
  if (f.waiting > 0) {
    j["waiting"] = f.waiting;
    // all_stuck in a symmetric kernel: where inside it (docs/report-schema.md).
    static const char* const kSymPhases[] = {"", "peers_in_final_sync", "all_computing",
                                             "all_in_final_sync", "all_in_initial_sync"};
    if (f.sym_phase != 0 && f.sym_phase < 5) j["kernel_phase"] = kSymPhases[f.sym_phase];
    j["waiting_since"] = analysis::IsoTime(f.waiting_since_wall_ns);
  }
  const NextStep next = NextStepFor(index, f);
  j["next_step"] = {{"action", next.action}, {"runbook", next.anchor}};
  return j;
}

}  // namespace

std::string JsonReport(const ReportInput& in) {
  json findings = json::array(), culprits = json::array();
  for (const Finding& f : in.analysis.findings) findings.push_back(FindingJson(in, f));
  for (const Culprit& c : in.analysis.culprits) {
    culprits.push_back(ProcessJson(in, c.process, c.group, c.rank));
  }
  json read = in.inputs.read, rejected = json::array(), superseded = json::array();
  for (const analysis::RejectedInput& r : in.inputs.rejected) {
    rejected.push_back({{"path", r.path}, {"reason", r.reason}});
  }
  for (const analysis::SupersededInput& s : in.inputs.superseded) {
    superseded.push_back({{"path", s.path}, {"by", s.by}, {"why", s.why}});
  }
  // Where each process's state came from, in the order of `read`.
  json sources = json::array();
  for (const analysis::EvidenceSource& s : in.inputs.sources) sources.push_back(SourceJson(s));
  json out = {{"schema", kSchema},
              {"verdict", analysis::VerdictName(in.analysis.verdict)},
              {"headline", Headline(in)},
              {"title", Title(in)},
              {"summary", Summary(in)},
              {"analyzed_at", in.inputs.analyzed_wall_ns != 0
                                  ? json(analysis::IsoTime(in.inputs.analyzed_wall_ns))
                                  : json(nullptr)},
              {"tool", {{"name", "flightrec"}, {"version", kVersion}}},
              {"exit_code", analysis::ExitCodeFor(in.analysis)},
              {"job_id", in.inputs.job_id},
              {"findings", findings},
              {"culprits", culprits},
              {"inputs",
               {{"paths", in.inputs.paths},
                {"read", read},
                {"sources", sources},
                {"superseded", superseded},
                {"rejected", rejected}}},
              {"notes", in.analysis.notes}};
  // Names come from files: replace invalid UTF-8 rather than throw.
  return out.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace report
}  // namespace flightrec

#include "analyzer/report/show_report.h"

#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/model/describe.h"
#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace report {
namespace {

using Json = nlohmann::ordered_json;
using format::DumpReasonName;

constexpr size_t kRegionDrops = 8;  // RegionDesc::drops

std::string Format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string Format(const char* fmt, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string Hex(uint64_t v, int width) { return Format("0x%0*" PRIx64, width, v); }

// "2023-11-14T22:13:20.123456789Z", or "-" for 0 (not observed).
std::string WallTime(uint64_t ns) {
  if (ns == 0) return "-";
  return analysis::IsoTime(ns, analysis::IsoPrecision::kNanoseconds);
}

// Time of day with microseconds for the record table ("22:13:20.123456").
std::string TimeOfDay(uint64_t ns) {
  if (ns == 0) return "-";
  std::string full = WallTime(ns);
  return full.substr(11, 15);
}

std::string Duration(uint64_t start, uint64_t end) {
  if (start == 0 || end == 0 || end < start) return "-";
  return Format("%.3fus", static_cast<double>(end - start) / 1e3);
}

const char* StateName(uint8_t state) { return format::OpStateName(state); }

bool HasDumpBudget(const ProcessSnapshot& s) {
  return s.max_dumps != 0 || s.dumps_open != 0 || s.dumps_released != 0 || s.dumps_refused != 0 ||
         s.dumps_absorbed != 0;
}

// --- JSON -----------------------------------------------------------------

// One key of a JSON object and its value.
using JsonField = std::pair<const char*, Json>;

// Adds `fields` to the object `j`, in order: every JSON object below is one
// such table.
void Put(Json* j, std::initializer_list<JsonField> fields) {
  for (const JsonField& f : fields) (*j)[f.first] = f.second;
}

Json DropsJson(const uint64_t* drops, size_t n) {
  Json j = Json::object();
  for (size_t i = 0; i < n; ++i) {
    // Causes after format 1.0's (and reserved ones, which a newer writer may
    // use) appear only when non-zero, so a 1.0 file shows only 1.0's causes.
    if (i > format::kDropNoApiSlot && drops[i] == 0) continue;
    j[format::kDropCauseNames[i]] = drops[i];
  }
  return j;
}

Json FlagsJson(uint8_t flags) {
  static const std::pair<uint8_t, const char*> kNames[] = {{format::kFlagP2p, "p2p"},
                                                           {format::kFlagGraphCaptured, "graph"},
                                                           {format::kFlagHasApi, "api"},
                                                           {format::kFlagGpuTimed, "gpu_timed"},
                                                           {format::kFlagNetwork, "network"}};
  Json j = Json::array();
  for (const auto& f : kNames) {
    if (flags & f.first) j.push_back(f.second);
  }
  return j;
}

Json RecordJson(const OpRecord& r) {
  Json j;
  Put(&j, {{"slot", r.slot_seq},
           {"op_index", r.op_index},
           {"nccl_seq", r.is_p2p() ? Json(nullptr) : Json(r.nccl_seq)},
           {"func", format::FuncName(r.func)},
           {"count", r.count},
           {"datatype", format::DataTypeName(r.datatype)},
           {"api_datatype", r.api_datatype != format::kTypeUnknown
                                ? Json(format::DataTypeName(r.api_datatype))
                                : Json(nullptr)},
           {"bytes", r.bytes},
           {r.is_p2p() ? "peer" : "root", r.root_or_peer},
           {"algo", format::AlgoName(r.algo)},
           {"proto", format::ProtoName(r.proto)},
           {"channels", r.n_channels},
           {"warps", r.n_warps},
           {"state", StateName(r.state)},
           {"flags", FlagsJson(r.flags)},
           {"user_tag", r.user_tag},
           {"stream", Hex(r.stream, 1)},
           {"t_api_ns", r.t_api_ns},
           {"t_enqueue_ns", r.t_enqueue_ns},
           {"t_enqueued_ns", r.t_enqueued_ns},
           {"gpu_start_ns", r.gpu_start_ns},
           {"gpu_end_ns", r.gpu_end_ns},
           {"gpu_start_raw", r.gpu_start_raw},
           {"gpu_end_raw", r.gpu_end_raw},
           {"channels_started", r.channels_started},
           {"channels_stopped", r.channels_stopped},
           {"proxy_ops_started", r.proxy_ops_started},
           {"proxy_ops_stopped", r.proxy_ops_stopped},
           {"net_bytes", r.net_bytes}});
  return j;
}

// Index of the first record to show: the last `limit` ones (-1 = all).
size_t FirstShown(size_t n, int64_t limit) {
  if (limit < 0 || static_cast<uint64_t>(limit) >= n) return 0;
  return n - static_cast<size_t>(limit);
}

Json CommJson(const CommSnapshot& c, int64_t limit) {
  Json j;
  Put(&j, {{"region", c.region_index},
           {"comm_id", Hex(c.comm_id, 16)},
           {"name", c.name},
           {"rank", c.rank},
           {"nranks", c.nranks},
           {"nnodes", c.nnodes},
           {"state", RegionStateName(c.state)},
           {"generation", c.generation},
           {"head", c.head},
           {"capacity", c.capacity},
           {"overwritten", c.overwritten},
           {"coll_count", c.coll_count},
           {"p2p_count", c.p2p_count},
           {"torn", c.torn},
           {"drops", DropsJson(c.drops.data(), kRegionDrops)}});
  Json records = Json::array();
  for (size_t i = FirstShown(c.records.size(), limit); i < c.records.size(); ++i) {
    records.push_back(RecordJson(c.records[i]));
  }
  j["records"] = std::move(records);
  return j;
}

Json HeaderJson(const ProcessSnapshot& s) {
  Json h;
  Put(&h, {{"version", Format("%u.%u", s.version_major, s.version_minor)},
           {"pid", s.pid},
           {"host", s.host},
           {"job_id", s.job_id},
           {"plugin_version", s.plugin_version},
           {"nccl_version", s.nccl_version},
           {"gpu_uuid", s.gpu_uuid},
           {"gpu_pci_bus_id", s.gpu_pci_bus_id},
           {"cuda_device", s.cuda_device},
           {"api_version", s.api_version},
           {"clock_source", ClockSourceName(s.clock_source)},
           {"process_state", ProcessStateName(s.process_state)},
           {"created_wall_ns", s.created_wall_ns},
           {"heartbeat_wall_ns", s.heartbeat_wall_ns},
           {"heartbeat_count", s.heartbeat_count},
           {"watchdog_timeout_ns", s.watchdog_timeout_ns},
           {"watchdog_poll_ns", s.watchdog_poll_ns},
           {"dumps_sealed", s.dumps_sealed}});
  // Format 1.2's dump budget, only when the file has one: a file of an older
  // format shows no budget.
  if (HasDumpBudget(s)) {
    Json b;
    Put(&b, {{"max_dumps", s.max_dumps},
             {"open", s.dumps_open},
             {"released", s.dumps_released},
             {"absorbed", s.dumps_absorbed},
             {"refused", s.dumps_refused},
             {"last_refused_reason", DumpReasonName(s.last_refused_reason)},
             {"last_refused_mono_ns", s.last_refused_mono_ns}});
    h["dump_budget"] = std::move(b);
  }
  Put(&h, {{"max_regions", s.max_regions},
           {"region_capacity", s.region_capacity},
           {"file_size", s.file_size},
           {"dump_reason", DumpReasonName(s.dump_reason)},
           {"dump_sequence", s.dump_sequence},
           {"dump_wall_ns", s.dump_wall_ns},
           {"dump_detail", s.dump_detail},
           {"disable_reason", s.disable_reason}});
  return h;
}

}  // namespace

Json ShowJson(const ProcessSnapshot& s, int64_t limit) {
  Json j;
  Put(&j, {{"schema", kShowSchema},
           {"path", s.path},
           {"kind", DescribeFileKind(s)},
           {"header", HeaderJson(s)},
           {"drops", DropsJson(s.drops.data(), s.drops.size())}});
  Json comms = Json::array();
  for (const CommSnapshot& c : s.comms) comms.push_back(CommJson(c, limit));
  j["comms"] = std::move(comms);
  j["warnings"] = s.warnings;
  return j;
}

namespace {

// --- human output -----------------------------------------------------------

struct Field {
  const char* name;
  std::string value;
  const char* meaning;
};

std::vector<Field> HeaderFields(const ProcessSnapshot& s) {
  return {
      {"kind", Format("%s%s", DescribeFileKind(s), s.compressed ? " (zstd)" : ""),
       "ring = the live/crashed process's mapping, dump = a sealed snapshot"},
      {"version", Format("%u.%u", s.version_major, s.version_minor), "on-disk format major.minor"},
      {"host", s.host, "writer's hostname"},
      {"pid", std::to_string(s.pid), "writer's process id"},
      {"job_id", s.job_id, "SLURM/TORCHELASTIC/NCCL_FLIGHTREC_JOB_ID"},
      {"plugin_version", s.plugin_version, "flightrec plugin that wrote the file"},
      {"nccl_version", s.nccl_version, "NCCL version, empty when unknown"},
      {"api_version", std::to_string(s.api_version), "NCCL profiler API version (1..7)"},
      {"gpu_uuid", s.gpu_uuid, "CUDA device UUID, empty without a driver"},
      {"gpu_pci_bus_id", s.gpu_pci_bus_id, "PCI bus id of the device"},
      {"cuda_device", std::to_string(s.cuda_device), "CUDA device ordinal, -1 when unknown"},
      {"process_state", ProcessStateName(s.process_state),
       "running also after SIGKILL; exited after the last finalize"},
      {"disable_reason", s.disable_reason, "why recording turned itself off"},
      {"clock_source", ClockSourceName(s.clock_source), "clock behind every *_ns field"},
      {"tsc_hz", std::to_string(s.tsc_hz), "TSC frequency when clock_source is tsc"},
      {"created", WallTime(s.created_wall_ns), "CLOCK_REALTIME at init (wall anchor)"},
      {"created_mono_ns", std::to_string(s.created_mono_ns), "CLOCK_MONOTONIC at the same instant"},
      {"gpu_to_mono_offset_ns", std::to_string(s.gpu_to_mono_offset_ns),
       "estimate of monotonic - GPU timer"},
      {"gpu_offset_samples", std::to_string(s.gpu_offset_samples),
       "observations behind that estimate; 0 = GPU times not converted"},
      {"heartbeat", WallTime(s.heartbeat_wall_ns), "watchdog's last heartbeat (wall)"},
      {"heartbeat_mono_ns", std::to_string(s.heartbeat_mono_ns), "same, monotonic"},
      {"heartbeat_count", std::to_string(s.heartbeat_count), "heartbeats so far"},
      {"watchdog_timeout_ns", std::to_string(s.watchdog_timeout_ns),
       "an op older than this is stuck"},
      {"watchdog_poll_ns", std::to_string(s.watchdog_poll_ns), "watchdog poll / heartbeat period"},
      {"dumps_sealed", std::to_string(s.dumps_sealed), "dumps this process wrote"},
      {"max_dumps", std::to_string(s.max_dumps), "dump budget: open incident dumps allowed"},
      {"dumps_open", std::to_string(s.dumps_open), "incident dumps whose ops are still pending"},
      {"dumps_released", std::to_string(s.dumps_released),
       "incident dumps whose ops completed (budget given back)"},
      {"dumps_absorbed", std::to_string(s.dumps_absorbed),
       "trigger changes answered by an earlier dump"},
      {"dumps_refused", std::to_string(s.dumps_refused), "dumps the budget refused"},
      {"last_refused_reason", DumpReasonName(s.last_refused_reason),
       "reason of the last refused dump"},
      {"dump_reason", DumpReasonName(s.dump_reason), "why this dump was taken"},
      {"dump_sequence", std::to_string(s.dump_sequence), "1 for the process's first dump"},
      {"dump_time", WallTime(s.dump_wall_ns), "when the dump was taken (wall)"},
      {"dump_mono_ns", std::to_string(s.dump_mono_ns), "same, monotonic"},
      {"dump_detail", s.dump_detail, "the watchdog's one-line reason"},
      {"pointer_size", std::to_string(s.pointer_size), "sizeof(void*) of the writer"},
      {"max_regions", std::to_string(s.max_regions), "communicator regions in the file"},
      {"region_capacity", std::to_string(s.region_capacity), "records per region (power of two)"},
      {"region_table_offset", std::to_string(s.region_table_offset),
       "byte offset of RegionDesc[0]"},
      {"records_offset", std::to_string(s.records_offset), "byte offset of region 0's records"},
      {"file_size", std::to_string(s.file_size), "bytes of the (decompressed) image"},
      {"compressed_size", std::to_string(s.compressed_size), "bytes on disk for a zstd dump"},
  };
}

const char* OrDash(const std::string& s) { return s.empty() ? "-" : s.c_str(); }

void PrintHeader(const ProcessSnapshot& s, bool explain, std::string* out) {
  *out += Format("== %s\n", s.path.c_str());
  if (explain) {
    for (const Field& f : HeaderFields(s)) {
      *out += Format("  %-22s %-32s %s\n", f.name, f.value.c_str(), f.meaning);
    }
    return;
  }
  *out += Format("  %s%s v%u.%u  host %s  pid %" PRId64 "  job %s  state %s\n", DescribeFileKind(s),
                 s.compressed ? " (zstd)" : "", s.version_major, s.version_minor, s.host.c_str(),
                 s.pid, s.job_id.c_str(), ProcessStateName(s.process_state));
  *out += Format("  plugin %s  nccl %s  api v%u  gpu %s (bus %s, device %d)\n",
                 OrDash(s.plugin_version), OrDash(s.nccl_version), s.api_version,
                 OrDash(s.gpu_uuid), OrDash(s.gpu_pci_bus_id), s.cuda_device);
  *out += Format("  created %s  heartbeat %s (#%" PRIu64 ")\n", WallTime(s.created_wall_ns).c_str(),
                 WallTime(s.heartbeat_wall_ns).c_str(), s.heartbeat_count);
  if (s.is_dump) {
    *out += Format("  dump #%u (%s) at %s: %s\n", s.dump_sequence, DumpReasonName(s.dump_reason),
                   WallTime(s.dump_wall_ns).c_str(), s.dump_detail.c_str());
  }
  if (HasDumpBudget(s)) {
    *out += Format("  dumps %" PRIu64 " sealed  budget %u open of %u  released %u  absorbed %u",
                   s.dumps_sealed, s.dumps_open, s.max_dumps, s.dumps_released, s.dumps_absorbed);
    if (s.dumps_refused != 0) {
      *out +=
          Format("  REFUSED %u (last: %s)", s.dumps_refused, DumpReasonName(s.last_refused_reason));
    }
    *out += "\n";
  }
  if (!s.disable_reason.empty()) {
    *out += Format("  recording disabled: %s\n", s.disable_reason.c_str());
  }
}

// "stale_handle=3 no_region=1", empty when nothing was dropped.
std::string DropSummary(const uint64_t* drops, size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (drops[i] == 0) continue;
    if (!text.empty()) text += " ";
    text += Format("%s=%" PRIu64, format::kDropCauseNames[i], drops[i]);
  }
  return text;
}

void PrintDrops(const ProcessSnapshot& s, std::string* out) {
  std::string text = DropSummary(s.drops.data(), s.drops.size());
  *out += Format("  drops: %s\n", text.empty() ? "none" : text.c_str());
  if (!text.empty()) *out += Format("  WARNING: events were dropped: %s\n", text.c_str());
}

// NCCL's ncclProfile* bit names, lowest bit first (docs/plugin.md).
std::string MaskNames(uint32_t mask) {
  static const char* const kBits[] = {"Group",     "Coll",      "P2p",      "ProxyOp",
                                      "ProxyStep", "ProxyCtrl", "KernelCh", "NetPlugin",
                                      "GroupApi",  "CollApi",   "P2pApi",   "KernelLaunch",
                                      "CeColl",    "CeSync",    "CeBatch",  "KernelPhase"};
  std::string text;
  for (uint32_t i = 0; i < 32; ++i) {
    if ((mask & (1u << i)) == 0) continue;
    if (!text.empty()) text += " ";
    text += i < sizeof(kBits) / sizeof(kBits[0]) ? kBits[i] : Format("bit%u", i);
  }
  return text;
}

void PrintRecords(const CommSnapshot& c, int64_t limit, std::string* out) {
  size_t first = FirstShown(c.records.size(), limit);
  if (first == c.records.size()) return;
  *out += Format("    %8s %8s %8s %-13s %10s %-14s %-14s %5s %-16s %3s %-8s %-15s %-15s %-15s %s\n",
                 "slot", "op_index", "seq", "func", "count", "datatype", "api_datatype", "r/p",
                 "algo/proto", "ch", "state", "enqueue", "gpu_start", "gpu_end", "duration");
  for (size_t i = first; i < c.records.size(); ++i) {
    const OpRecord& r = c.records[i];
    std::string seq = r.is_p2p() ? "-" : std::to_string(r.nccl_seq);
    // A symmetric kernel (NCCL 2.31+) has no protocol: its variant is shown.
    const unsigned variant =
        r.kernel_variant < format::kNumKernelVariants ? r.kernel_variant : 1u;  // 1: "other"
    std::string algo = r.is_symmetric()
                           ? Format("%s/%s", format::AlgoName(r.algo),
                                    variant != 0 ? format::kKernelVariantNames[variant] : "-")
                           : Format("%s/%s", format::AlgoName(r.algo), format::ProtoName(r.proto));
    std::string peer = Format("%s%d", r.is_p2p() ? "p" : "r", r.root_or_peer);
    // "-": the record has no API-level datatype (no CollApi/P2pApi event, or an older file).
    const char* api_type =
        r.api_datatype != format::kTypeUnknown ? format::DataTypeName(r.api_datatype) : "-";
    *out += Format("    %8" PRIu64 " %8" PRIu64 " %8s %-13s %10" PRIu64
                   " %-14s %-14s %5s %-16s %3u %-8s %-15s %-15s "
                   "%-15s %s\n",
                   r.slot_seq, r.op_index, seq.c_str(), format::FuncName(r.func), r.count,
                   format::DataTypeName(r.datatype), api_type, peer.c_str(), algo.c_str(),
                   r.n_channels, StateName(r.state), TimeOfDay(r.t_enqueue_ns).c_str(),
                   TimeOfDay(r.gpu_start_ns).c_str(), TimeOfDay(r.gpu_end_ns).c_str(),
                   Duration(r.gpu_start_ns, r.gpu_end_ns).c_str());
  }
}

void PrintComms(const ProcessSnapshot& s, int64_t limit, std::string* out) {
  *out += Format("  communicators: %zu\n", s.comms.size());
  for (const CommSnapshot& c : s.comms) {
    *out += Format("  [region %u] comm %s \"%s\" rank %d/%d  %s  head %" PRIu64
                   "  capacity %" PRIu64 "  overwritten %" PRIu64 "  torn %" PRIu64 "\n",
                   c.region_index, Hex(c.comm_id, 16).c_str(), c.name.c_str(), c.rank, c.nranks,
                   RegionStateName(c.state), c.head, c.capacity, c.overwritten, c.torn);
    if (c.event_mask != 0) {  // format 1.5: the mask the plugin asked NCCL for
      *out += Format("    event mask 0x%x: %s%s\n", c.event_mask, MaskNames(c.event_mask).c_str(),
                     (c.flags & format::kRegionMaskOverridden) != 0
                         ? "  (overridden: NCCL delivered events outside it, RAS)"
                         : "");
    }
    std::string drops = DropSummary(c.drops.data(), kRegionDrops);
    if (!drops.empty())
      *out += Format("    WARNING: drops in this communicator: %s\n", drops.c_str());
    PrintRecords(c, limit, out);
  }
}

}  // namespace

void AppendShowText(const ProcessSnapshot& s, bool explain, int64_t limit, std::string* out) {
  PrintHeader(s, explain, out);
  PrintDrops(s, out);
  PrintComms(s, limit, out);
  for (const std::string& w : s.warnings) *out += Format("  warning: %s\n", w.c_str());
}

}  // namespace report
}  // namespace flightrec

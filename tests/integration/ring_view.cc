#include "integration/ring_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analyzer/reader/snapshot_reader.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace itest {

const CommView* FileView::Comm(uint64_t comm_id) const {
  for (const CommView& c : comms) {
    if (c.comm_id == comm_id) return &c;
  }
  return nullptr;
}

namespace {

uint64_t U64(const nlohmann::json& j) {
  if (j.is_number_unsigned()) return j.get<uint64_t>();
  if (j.is_number_integer()) return static_cast<uint64_t>(j.get<int64_t>());
  if (j.is_string()) return std::strtoull(j.get<std::string>().c_str(), nullptr, 0);
  return 0;
}

FileView FromShowJson(const std::string& path, const std::string& cli) {
  FileView v;
  v.source = "flightrec show --json";
  std::string cmd = "'" + cli + "' show --json '" + path + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) {
    v.error = path + ": cannot run " + cli;
    return v;
  }
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = pclose(p);
  if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0) {
    v.error = path + ": flightrec show exited " + std::to_string(WEXITSTATUS(rc)) + ": " +
              out.substr(0, 400);
    return v;
  }
  nlohmann::json j = nlohmann::json::parse(out, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    v.error = path + ": flightrec show printed no JSON object";
    return v;
  }
  v.kind = j.value("kind", "");
  const nlohmann::json& h = j["header"];
  v.pid = h.is_object() ? static_cast<int64_t>(U64(h.value("pid", nlohmann::json(0)))) : 0;
  v.api_version = h.is_object() ? h.value("api_version", 0) : 0;
  if (h.is_object() && h.contains("disable_reason") && h["disable_reason"].is_string()) {
    v.disable_reason = h["disable_reason"].get<std::string>();
  }
  if (h.is_object() && v.kind == "dump") {
    v.dump_reason = h.value("dump_reason", "");
    v.dump_wall_ns = U64(h.value("dump_wall_ns", nlohmann::json(0)));
    v.dump_detail = h.value("dump_detail", "");
  }
  if (j.contains("drops") && j["drops"].is_object()) {
    v.foreign_handle_drops = U64(j["drops"].value("foreign_handle", nlohmann::json(0)));
    v.pxn_foreign_drops = U64(j["drops"].value("pxn_foreign", nlohmann::json(0)));
  }
  for (const auto& c : j["comms"]) {
    CommView cv;
    cv.name = c.value("name", "");
    cv.comm_id = U64(c["comm_id"]);
    cv.rank = c.value("rank", -1);
    cv.nranks = c.value("nranks", 0);
    cv.head = U64(c["head"]);
    cv.capacity = U64(c["capacity"]);
    cv.torn = U64(c["torn"]);
    for (const auto& r : c["records"]) {
      RecView rv;
      rv.op_index = U64(r["op_index"]);
      rv.has_seq = r.contains("nccl_seq") && !r["nccl_seq"].is_null();
      if (rv.has_seq) rv.seq = U64(r["nccl_seq"]);
      rv.func = r.value("func", "");
      rv.datatype = r.value("datatype", "");
      if (r.contains("api_datatype") && r["api_datatype"].is_string()) {
        rv.api_datatype = r["api_datatype"].get<std::string>();
      }
      rv.state = r.value("state", "");
      rv.count = U64(r["count"]);
      rv.p2p = r.contains("peer");
      rv.root_or_peer = rv.p2p ? r.value("peer", 0) : r.value("root", 0);
      rv.gpu_start_ns = U64(r["gpu_start_ns"]);
      rv.gpu_end_ns = U64(r["gpu_end_ns"]);
      rv.gpu_start_raw = U64(r["gpu_start_raw"]);
      rv.gpu_end_raw = U64(r["gpu_end_raw"]);
      for (const auto& f : r["flags"]) rv.graph = rv.graph || f == "graph";
      rv.t_api_ns = U64(r["t_api_ns"]);
      rv.t_enqueue_ns = U64(r["t_enqueue_ns"]);
      rv.channels = r.value("channels", 0);
      rv.proxy_ops_started = r.value("proxy_ops_started", 0);
      cv.records.push_back(rv);
    }
    v.comms.push_back(cv);
  }
  v.ok = true;
  return v;
}

FileView FromReader(const std::string& path) {
  FileView v;
  v.source = "reader library";
  ReadResult r = ReadSnapshotFile(path);
  if (!r.ok) {
    v.error = r.error;
    return v;
  }
  const ProcessSnapshot& s = r.snapshot;
  v.kind = DescribeFileKind(s);
  v.pid = s.pid;
  v.api_version = static_cast<int>(s.api_version);
  v.disable_reason = s.disable_reason;
  if (v.kind == "dump") {
    v.dump_reason = format::DumpReasonName(s.dump_reason);
    v.dump_wall_ns = s.dump_wall_ns;
    v.dump_detail = s.dump_detail;
  }
  v.foreign_handle_drops = s.drops[format::kDropForeignHandle];
  v.pxn_foreign_drops = s.drops[format::kDropPxnForeign];
  for (const CommSnapshot& c : s.comms) {
    CommView cv;
    cv.name = c.name;
    cv.comm_id = c.comm_id;
    cv.rank = c.rank;
    cv.nranks = c.nranks;
    cv.head = c.head;
    cv.capacity = c.capacity;
    cv.torn = c.torn;
    for (const OpRecord& o : c.records) {
      RecView rv;
      rv.op_index = o.op_index;
      rv.has_seq = !o.is_p2p();
      rv.seq = o.nccl_seq;
      rv.func = format::FuncName(o.func);
      rv.datatype = format::DataTypeName(o.datatype);
      if (o.api_datatype != format::kTypeUnknown) {
        rv.api_datatype = format::DataTypeName(o.api_datatype);
      }
      rv.state = format::OpStateName(o.state);
      rv.count = o.count;
      rv.p2p = o.is_p2p();
      rv.root_or_peer = o.root_or_peer;
      rv.gpu_start_ns = o.gpu_start_ns;
      rv.gpu_end_ns = o.gpu_end_ns;
      rv.gpu_start_raw = o.gpu_start_raw;
      rv.gpu_end_raw = o.gpu_end_raw;
      rv.graph = (o.flags & format::kFlagGraphCaptured) != 0;
      rv.t_api_ns = o.t_api_ns;
      rv.t_enqueue_ns = o.t_enqueue_ns;
      rv.channels = o.n_channels;
      rv.proxy_ops_started = o.proxy_ops_started;
      cv.records.push_back(rv);
    }
    v.comms.push_back(cv);
  }
  v.ok = true;
  return v;
}

}  // namespace

FileView ReadFileView(const std::string& path) {
  std::string cli = BuildDir() + "/bin/flightrec";
  if (access(cli.c_str(), X_OK) == 0) return FromShowJson(path, cli);
  return FromReader(path);
}

}  // namespace itest
}  // namespace flightrec

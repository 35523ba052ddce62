#include "support/fr_from_job.h"

#include <stdint.h>

#include <algorithm>
#include <map>
#include <utility>

#include "analyzer/model/inputs.h"
#include "flightrec/record_format.h"
#include "support/files.h"
#include "tests/unit/reader/fr_pickle_builder.h"

namespace flightrec {
namespace test_support {
namespace {

struct TypeName {
  uint8_t type;
  const char* name;
  uint8_t size;
};
constexpr TypeName kTypeNames[] = {
    {format::kTypeFloat32, "Float", 4},
    {format::kTypeFloat64, "Double", 8},
    {format::kTypeFloat16, "Half", 2},
    {format::kTypeBfloat16, "BFloat16", 2},
    {format::kTypeInt32, "Int", 4},
    {format::kTypeInt64, "Long", 8},
    {format::kTypeUint8, "Byte", 1},
    {format::kTypeInt8, "Char", 1},
    {format::kTypeUint32, "UInt32", 4},
    {format::kTypeUint64, "UInt64", 8},
    {format::kTypeFloat8e4m3, "Float8_e4m3fn", 1},
    {format::kTypeFloat8e5m2, "Float8_e5m2", 1},
};

const TypeName* TypeOf(uint8_t type) {
  for (const TypeName& t : kTypeNames) {
    if (t.type == type) return &t;
  }
  return nullptr;
}

// The torch.distributed call behind a collective, and where c10d has it.
struct PyCall {
  const char* profiling;  // after "nccl:"
  const char* fn;
  int line;
};
PyCall CallOf(uint8_t func) {
  switch (func) {
    case format::kFuncAllReduce:
      return {"all_reduce", "all_reduce", 2806};
    case format::kFuncAllGather:
      return {"_allgather_base", "all_gather_into_tensor", 3890};
    case format::kFuncReduceScatter:
      return {"_reduce_scatter_base", "reduce_scatter_tensor", 4330};
    case format::kFuncBroadcast:
      return {"broadcast", "broadcast", 2710};
    case format::kFuncReduce:
      return {"reduce", "reduce", 2950};
    case format::kFuncSend:
      return {"send", "send", 2250};
    case format::kFuncRecv:
      return {"recv", "recv", 2300};
    default:
      return {"all_to_all", "all_to_all_single", 4620};
  }
}

// A communicator as FR names it, and its members' global ranks by comm rank.
struct Group {
  std::string name, desc, comm_name;
  int32_t nranks = 0;
  std::map<int32_t, int64_t> members;
};

struct Entry {
  const OpRecord* r;
  uint64_t comm_id;
  uint64_t order;  // enqueue time
};

void Frame(PickleWriter* w, const std::string& fn, const std::string& file, int line) {
  FrFrame(w, fn, file, line);
}

std::string RanksText(const Group& g) {
  std::string s = "[";
  bool first = true;
  for (const auto& [rank, global] : g.members) {
    s += (first ? "" : ", ") + std::to_string(global);
    first = false;
  }
  return s + "]";
}

}  // namespace

FrFromJobResult WriteFrDumpsOfJob(const std::string& flightrec_dir, const std::string& out_dir,
                                  const FrFromJobOptions& options) {
  FrFromJobResult out;
  const analysis::Inputs in = analysis::LoadInputs({flightrec_dir});
  // The widest communicator gives the global rank; every process is a member.
  int32_t world = 0;
  for (const ProcessSnapshot& p : in.processes) {
    for (const CommSnapshot& c : p.comms) world = std::max(world, c.nranks);
  }
  std::map<uint64_t, Group> groups;
  std::vector<int64_t> global(in.processes.size(), -1);
  for (size_t i = 0; i < in.processes.size(); ++i) {
    for (const CommSnapshot& c : in.processes[i].comms) {
      if (c.nranks == world) global[i] = c.rank;
    }
  }
  for (size_t i = 0; i < in.processes.size(); ++i) {
    if (global[i] < 0) continue;
    for (const CommSnapshot& c : in.processes[i].comms) {
      if (c.nranks < 2) continue;  // one-rank comms record nothing
      Group& g = groups[c.comm_id];
      g.comm_name = c.name;
      g.nranks = c.nranks;
      g.members[c.rank] = global[i];
    }
  }
  // One global order of the process groups, as every rank creates them.
  std::vector<std::pair<std::pair<int32_t, std::string>, uint64_t>> order;
  for (const auto& [id, g] : groups) order.push_back({{-g.nranks, g.comm_name}, id});
  std::sort(order.begin(), order.end());
  for (size_t k = 0; k < order.size(); ++k) {
    Group& g = groups[order[k].second];
    g.name = std::to_string(k);
    g.desc = g.nranks == world ? "default_pg" : g.comm_name;
  }

  for (size_t i = 0; i < in.processes.size(); ++i) {
    const ProcessSnapshot& p = in.processes[i];
    const int64_t rank = global[i];
    if (rank < 0 || options.omit.count(static_cast<int>(rank)) != 0) continue;
    std::vector<Entry> entries;
    std::vector<const CommSnapshot*> mine;
    for (const CommSnapshot& c : p.comms) {
      if (groups.count(c.comm_id) == 0) continue;
      mine.push_back(&c);
      for (const OpRecord& r : c.records) {
        const uint64_t t = r.t_api_ns != 0 ? r.t_api_ns : r.t_enqueue_ns;
        entries.push_back({&r, c.comm_id, t});
      }
    }
    std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return a.order != b.order ? a.order < b.order : a.r->slot_seq < b.r->slot_seq;
    });
    std::sort(mine.begin(), mine.end(), [&groups](const CommSnapshot* a, const CommSnapshot* b) {
      return std::stoi(groups[a->comm_id].name) < std::stoi(groups[b->comm_id].name);
    });

    struct Pg {
      int64_t coll = 0, p2p = 0, enqueued = 0, started = 0, completed = 0;
    };
    std::map<uint64_t, Pg> pg;
    struct Out {
      const Entry* e;
      int64_t coll, p2p;
    };
    std::vector<Out> fr;
    for (const Entry& e : entries) {
      Pg& s = pg[e.comm_id];
      if (e.r->is_p2p()) {
        ++s.p2p;
      } else {
        s.coll = static_cast<int64_t>(e.r->op_index) + 1;
        s.enqueued = std::max(s.enqueued, s.coll);
        if (e.r->state >= format::kOpRunning) s.started = std::max(s.started, s.coll);
        if (e.r->state >= format::kOpDone) s.completed = std::max(s.completed, s.coll);
      }
      fr.push_back({&e, s.coll, e.r->is_p2p() ? s.p2p : 0});
    }
    const size_t first = fr.size() > options.buffer ? fr.size() - options.buffer : 0;

    PickleWriter w;
    w.BeginDict();
    w.Str("version");
    w.Str("2.10");
    w.Str("pg_config");
    w.BeginDict();
    for (const CommSnapshot* c : mine) {
      const Group& g = groups[c->comm_id];
      w.Str(g.name);
      w.BeginDict();
      w.Str("name");
      w.Str(g.name);
      w.Str("desc");
      w.Str(g.desc);
      w.Str("ranks");
      w.Str(RanksText(g));
      w.EndDict();
    }
    w.EndDict();
    w.Str("comm_lib_version");
    w.Str(p.nccl_version.empty() ? "2.27.5" : p.nccl_version);
    w.Str("pg_status");
    w.BeginDict();
    for (const CommSnapshot* c : mine) {
      const Pg& s = pg[c->comm_id];
      w.Str(groups[c->comm_id].name);
      w.BeginDict();
      w.Str("last_enqueued_collective");
      w.Int(s.enqueued);
      w.Str("last_started_collective");
      w.Int(options.timing ? s.started : -1);
      w.Str("last_completed_collective");
      w.Int(s.completed);
      w.EndDict();
    }
    w.EndDict();
    w.Str("entries");
    w.BeginList();
    const uint64_t timeout_ms =
        p.watchdog_timeout_ns != 0 ? p.watchdog_timeout_ns / 1000000 : 600000;
    for (size_t k = first; k < fr.size(); ++k) {
      const OpRecord& r = *fr[k].e->r;
      const Group& g = groups[fr[k].e->comm_id];
      const PyCall call = CallOf(r.func);
      const bool p2p = r.is_p2p();
      w.BeginDict();
      w.Str("frames");
      w.BeginList();
      Frame(&w, call.fn, "/usr/lib/python3/dist-packages/torch/distributed/distributed_c10d.py",
            call.line);
      Frame(&w, "wrapper", "/usr/lib/python3/dist-packages/torch/distributed/c10d_logger.py", 81);
      const std::string kind = g.desc == "default_pg" ? "world" : g.comm_name.substr(0, 2);
      Frame(&w,
            kind == "tp"   ? "forward"
            : kind == "dp" ? "sync_gradients"
                           : "all_reduce_loss",
            kind == "tp" ? "/job/model/parallel_layers.py" : "/job/train.py",
            kind == "tp"   ? 211
            : kind == "dp" ? 88
                           : 64);
      Frame(&w, "train_step", "/job/train.py", 42);
      Frame(&w, "main", "/job/train.py", 120);
      w.EndList();
      FrEntryIds(&w, static_cast<int64_t>(k), g.name, g.desc, fr[k].coll, fr[k].p2p);
      w.Str("profiling_name");
      std::string name = std::string("nccl:") + call.profiling;
      if (p2p) {
        int32_t me = 0;
        for (const CommSnapshot& c : p.comms) {
          if (c.comm_id == fr[k].e->comm_id) me = c.rank;
        }
        name += " " + std::to_string(me) + (r.func == format::kFuncSend ? "->" : "<-") +
                std::to_string(r.root_or_peer);
      }
      w.Str(name);
      w.Str("time_created_ns");
      w.Int(static_cast<int64_t>(fr[k].e->order));
      const bool started = options.timing && r.state >= format::kOpRunning;
      const bool done = r.state >= format::kOpDone;
      const uint64_t t_start = r.gpu_start_ns != 0 ? r.gpu_start_ns : r.t_last_progress_ns;
      const uint64_t t_end = r.last_progress_ns();
      if (options.timing && done && t_end > t_start && t_start != 0) {
        w.Str("duration_ms");
        w.Float(static_cast<double>(t_end - t_start) / 1e6);
      }
      // Sizes in the user's elements and type (a byte-counted AllGather or
      // Broadcast is the user's tensor to PyTorch).
      uint64_t count = r.count;
      uint8_t type = r.datatype;
      if (r.api_datatype != format::kTypeUnknown && r.api_datatype != r.datatype) {
        const TypeName* api = TypeOf(r.api_datatype);
        const TypeName* coll = TypeOf(r.datatype);
        if (api != nullptr && coll != nullptr) {
          count = count * coll->size / api->size;
          type = r.api_datatype;
        }
      }
      const TypeName* t = TypeOf(type);
      FrSizes(&w, static_cast<int64_t>(count), t != nullptr ? t->name : "Float");
      w.Str("state");
      w.Str(done ? "completed" : started ? "started" : "scheduled");
      w.Str("time_discovered_started_ns");
      if ((started || done) && t_start != 0) {
        w.Int(static_cast<int64_t>(t_start));
      } else {
        w.None();
      }
      w.Str("time_discovered_completed_ns");
      if (done && t_end != 0) {
        w.Int(static_cast<int64_t>(t_end));
      } else {
        w.None();
      }
      w.Str("retired");
      w.Bool(done);
      w.Str("timeout_ms");
      w.Int(static_cast<int64_t>(timeout_ms));
      w.Str("is_p2p");
      w.Bool(p2p);
      w.EndDict();
    }
    w.EndList();
    w.EndDict();
    const std::vector<uint8_t> bytes = w.Finish();
    const std::string path = out_dir + "/comm_lib_trace_rank_" + std::to_string(rank);
    if (!testing::WriteBytes(path, bytes.data(), bytes.size())) {
      out.error = "cannot write " + path;
      return out;
    }
    out.written.push_back(static_cast<int>(rank));
    out.paths.push_back(path);
  }
  std::sort(out.written.begin(), out.written.end());
  std::sort(out.paths.begin(), out.paths.end());
  if (out.written.empty()) {
    out.error = "no process with a communicator under " + flightrec_dir;
    return out;
  }
  out.ok = true;
  return out;
}

}  // namespace test_support
}  // namespace flightrec

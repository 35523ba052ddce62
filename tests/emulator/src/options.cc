#include "emulator/src/options.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "emulator/src/schedule.h"
#include "emulator/src/topology.h"

namespace flightrec {
namespace emu {

namespace {

// `comm`: a CommKind value, -1 for the faults without comm= only.
const Fault* Find(const std::vector<Fault>& faults, FaultKind kind, int r, int64_t op_number,
                  int comm) {
  for (const Fault& f : faults) {
    if (f.kind != kind || f.rank != r) continue;
    if (f.comm >= 0 && f.comm != comm) continue;
    const bool from_op = kind == FaultKind::kSlow || kind == FaultKind::kGpuSlow;
    if (from_op ? op_number >= f.op : f.op == op_number) return &f;
  }
  return nullptr;
}

const Fault* FindLink(const std::vector<Fault>& faults, int64_t op_number, int comm) {
  for (const Fault& f : faults) {
    if (f.comm >= 0 && f.comm != comm) continue;
    if (f.kind == FaultKind::kSlowLink && op_number >= f.op) return &f;
  }
  return nullptr;
}

}  // namespace

const Fault* Options::FindFault(FaultKind kind, int r, int64_t op_number) const {
  return Find(faults, kind, r, op_number, -1);
}

const Fault* Options::FindFaultOn(FaultKind kind, int r, int64_t op_number, CommKind comm) const {
  return Find(faults, kind, r, op_number, static_cast<int>(comm));
}

const Fault* Options::FindLinkFault(int64_t op_number) const {
  return FindLink(faults, op_number, -1);
}

const Fault* Options::FindLinkFaultOn(int64_t op_number, CommKind comm) const {
  return FindLink(faults, op_number, static_cast<int>(comm));
}

const Fault* Options::FindSkipFault(int r, int64_t op_number, bool one_call) const {
  for (const Fault& f : faults) {
    if (f.kind == FaultKind::kSkip && f.rank == r && f.op == op_number &&
        (f.call >= 0) == one_call) {
      return &f;
    }
  }
  return nullptr;
}

namespace {

bool ToInt64(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  *out = v;
  return true;
}

bool ToDouble(const std::string& s, double* out) {
  if (s.empty()) return false;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (errno != 0 || *end != '\0' || v < 0) return false;
  *out = v;
  return true;
}

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep)) parts.push_back(item);
  return parts;
}

bool FaultKindFromName(const std::string& name, FaultKind* kind) {
  static const struct {
    const char* name;
    FaultKind kind;
  } kKinds[] = {{"stuck", FaultKind::kStuck},        {"skip", FaultKind::kSkip},
                {"kill", FaultKind::kKill},          {"mismatch", FaultKind::kMismatch},
                {"gpu-hang", FaultKind::kGpuHang},   {"slow", FaultKind::kSlow},
                {"pause", FaultKind::kPause},        {"gpu-slow", FaultKind::kGpuSlow},
                {"slow-link", FaultKind::kSlowLink}, {"sym-compute", FaultKind::kSymCompute}};
  for (const auto& k : kKinds) {
    if (name == k.name) {
      *kind = k.kind;
      return true;
    }
  }
  return false;
}

// Validates the whole configuration once every option has been read.
bool Validate(Options* o, std::string* error) {
  if (o->ranks < 1 || o->ranks > 4096) {
    *error = "--ranks must be in 1..4096";
    return false;
  }
  if (o->tp < 1 || o->ranks % o->tp != 0) {
    *error = "--tp must be >= 1 and divide --ranks";
    return false;
  }
  if (o->ranks_per_node < 1) {
    *error = "--ranks-per-node must be >= 1";
    return false;
  }
  if (o->pxn && (o->ranks_per_node < 2 || o->ranks_per_node >= o->ranks)) {
    *error = "--pxn needs several nodes of at least 2 ranks (2 <= --ranks-per-node < --ranks)";
    return false;
  }
  if (o->api < 0 || o->api > kNewestProfilerApi) {
    *error = "--api must be 1.." + std::to_string(kNewestProfilerApi);
    return false;
  }
  if (o->ops < 0) {
    *error = "--ops must be >= 0";
    return false;
  }
  // The graph is one pattern period, so replays must start at its first op.
  if (o->graph_replays > 0 && o->ops % kPeriod != 0) {
    *error = "--graph-replays needs --ops to be a multiple of " + std::to_string(kPeriod) +
             " (replays start at the pattern's first op)";
    return false;
  }
  if (o->on_hang == "shrink" && o->graph_replays > 0) {
    *error = "--on-hang shrink does not combine with --graph-replays";
    return false;
  }
  if (o->ce && !o->nccl_version.AtLeast(2, 29)) {
    *error = "--ce needs --nccl-version 2.29 or newer (CE profiler events exist from 2.29.2)";
    return false;
  }
  if (o->ras_mask_op >= 0 && !o->nccl_version.AtLeast(2, 31)) {
    *error = "--ras-mask needs --nccl-version 2.31 or newer (ncclProfilerSetRasOverride)";
    return false;
  }
  if (o->sym && !o->on_hang.empty()) {
    *error = "--sym does not combine with --on-hang";
    return false;
  }
  if (o->sym && o->graph_replays > 0) {
    *error = "--sym does not combine with --graph-replays";
    return false;
  }
  if (o->ce && o->graph_replays > 0) {
    *error = "--ce does not combine with --graph-replays";
    return false;
  }
  if (!o->until_log.empty() && o->log_file.empty()) {
    *error = "--until-log needs --log-file";
    return false;
  }
  for (const auto& [rank, assignment] : o->rank_env) {
    if (rank >= o->ranks) {
      *error = "--rank-env: rank " + std::to_string(rank) + " is not in 0.." +
               std::to_string(o->ranks - 1) + " (" + assignment + ")";
      return false;
    }
  }
  for (const Fault& f : o->faults) {
    const bool any_rank = f.kind == FaultKind::kSymCompute && f.rank == -1;  // every rank
    if (f.kind != FaultKind::kSlowLink && !any_rank && (f.rank < 0 || f.rank >= o->ranks)) {
      *error = "--fault: rank " + std::to_string(f.rank) + " is not in 0.." +
               std::to_string(o->ranks - 1);
      return false;
    }
    // A replay runs the captured ops as captured: none can be left out or
    // called differently.
    const bool replayed = f.op >= o->ops && f.kind != FaultKind::kSlow &&
                          f.kind != FaultKind::kGpuSlow && f.kind != FaultKind::kSlowLink;
    if (replayed && (f.kind == FaultKind::kSkip || f.kind == FaultKind::kMismatch)) {
      *error = "--fault: op " + std::to_string(f.op) +
               " is a CUDA-graph replay (op >= --ops); a replay cannot skip or change one op";
      return false;
    }
    // Leaving one call out of a group needs a group of collectives: the
    // schedule's op i % 8 == 5 ({ReduceScatter, AllReduce}).
    if (f.call >= 0 && (f.kind != FaultKind::kSkip || !IsGroupedCollOp(f.op) || f.call >= 2)) {
      *error = "--fault ...:call=" + std::to_string(f.call) +
               ": only skip takes call=K, on a grouped collective op (op % " +
               std::to_string(kPeriod) + " == 5) with K in 0..1";
      return false;
    }
    // A Send/Recv has no collective function to change (and turning a Send
    // into a Recv is not a field mismatch): refuse rather than run clean.
    if (f.kind == FaultKind::kMismatch && f.field == MismatchField::kFunc && IsP2pOp(f.op)) {
      *error = "--fault mismatch:...:field=func: op " + std::to_string(f.op) +
               " is the Send/Recv ring (op % " + std::to_string(kPeriod) +
               " == 6), which has no collective function; use field=count or datatype";
      return false;
    }
  }
  return true;
}

}  // namespace

bool ParseFault(const std::string& spec, Fault* out, std::string* error) {
  std::vector<std::string> parts = Split(spec, ':');
  Fault f;
  if (parts.empty() || !FaultKindFromName(parts[0], &f.kind)) {
    *error = "--fault '" + spec +
             "': unknown kind "
             "(stuck|skip|kill|mismatch|gpu-hang|slow|pause|gpu-slow|slow-link|sym-compute)";
    return false;
  }
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t eq = parts[i].find('=');
    std::string key = parts[i].substr(0, eq);
    std::string val = eq == std::string::npos ? "" : parts[i].substr(eq + 1);
    int64_t n = 0;
    if (key == "rank" && ToInt64(val, &n)) {
      f.rank = static_cast<int>(n);
    } else if (key == "op" && ToInt64(val, &n) && n >= 0) {
      f.op = n;
    } else if (key == "call" && ToInt64(val, &n) && n >= 0 && n < 64) {
      f.call = static_cast<int>(n);
    } else if (key == "comm" && (val == "world" || val == "tp" || val == "dp")) {
      const CommKind k = val == "world" ? CommKind::kWorld
                         : val == "tp"  ? CommKind::kTp
                                        : CommKind::kDp;
      f.comm = static_cast<int>(k);
    } else if (key == "us" && ToInt64(val, &n) && n >= 0) {
      f.us = n;
    } else if (key == "field" && val == "count") {
      f.field = MismatchField::kCount;
    } else if (key == "field" && val == "datatype") {
      f.field = MismatchField::kDatatype;
    } else if (key == "field" && val == "func") {
      f.field = MismatchField::kFunc;
    } else if (key == "field" && val == "datatype-same-bytes") {
      f.field = MismatchField::kDatatypeSameBytes;
    } else {
      *error = "--fault '" + spec + "': bad part '" + parts[i] + "'";
      return false;
    }
  }
  const bool from_op =
      f.kind == FaultKind::kSlow || f.kind == FaultKind::kGpuSlow || f.kind == FaultKind::kSlowLink;
  const bool needs_op = !from_op;
  const bool needs_us = from_op || f.kind == FaultKind::kPause;
  // sym-compute: rank=R optional (every rank when not given).
  const bool needs_rank = f.kind != FaultKind::kSlowLink && f.kind != FaultKind::kSymCompute;
  if (from_op && f.op < 0) f.op = 0;
  if (!from_op && f.comm >= 0) {
    *error = "--fault '" + spec + "': only slow, gpu-slow and slow-link take comm=world|tp|dp";
    return false;
  }
  if (f.kind == FaultKind::kSlowLink && f.rank >= 0) {
    *error = "--fault '" + spec + "': slow-link holds for every rank (no rank=R)";
    return false;
  }
  if ((needs_rank && f.rank < 0) || (needs_op && f.op < 0) || (needs_us && f.us <= 0) ||
      (f.kind == FaultKind::kMismatch && f.field == MismatchField::kNone)) {
    *error =
        "--fault '" + spec + "': needs " + std::string(needs_rank ? "rank=R" : "") +
        (needs_op ? ":op=N" : "") + (needs_us ? ":us=X" : "") +
        (f.kind == FaultKind::kMismatch ? ":field=count|datatype|datatype-same-bytes|func" : "");
    return false;
  }
  *out = f;
  return true;
}

bool ParseOptions(const std::vector<std::string>& args, Options* o, std::string* error) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string key = a, val;
    bool has_inline = false;
    size_t eq = a.find('=');
    if (a.compare(0, 2, "--") == 0 && eq != std::string::npos) {
      key = a.substr(0, eq);
      val = a.substr(eq + 1);
      has_inline = true;
    }
    auto next = [&](std::string* v) {
      if (has_inline) {
        *v = val;
        return true;
      }
      if (i + 1 >= args.size()) return false;
      *v = args[++i];
      return true;
    };
    if (key == "--grouped-init") {
      o->grouped_init = true;
      continue;
    }
    if (key == "--pxn") {
      o->pxn = true;
      continue;
    }
    if (key == "--ce") {
      o->ce = true;
      continue;
    }
    if (key == "--no-cuda") {
      o->no_cuda = true;
      continue;
    }
    if (key == "--sym") {
      o->sym = true;
      continue;
    }
    if (key == "--nonblocking-init") {
      o->nonblocking_init = true;
      continue;
    }
    std::string v;
    if (!next(&v)) {
      *error = "option '" + key + "' needs a value";
      return false;
    }
    int64_t n = 0;
    double d = 0;
    bool ok = true;
    if (key == "--ranks") {
      ok = ToInt64(v, &n) && (o->ranks = static_cast<int>(n), true);
    } else if (key == "--ops") {
      ok = ToInt64(v, &o->ops);
    } else if (key == "--tp") {
      ok = ToInt64(v, &n) && (o->tp = static_cast<int>(n), true);
    } else if (key == "--ranks-per-node") {
      ok = ToInt64(v, &n) && (o->ranks_per_node = static_cast<int>(n), true);
    } else if (key == "--api") {
      ok = ToInt64(v, &n) && n >= 1 && n <= kNewestProfilerApi &&
           (o->api = static_cast<int>(n), true);
    } else if (key == "--nccl-version") {
      if (!ParseNcclVersion(v, &o->nccl_version, error)) return false;
    } else if (key == "--graph-replays") {
      ok = ToInt64(v, &n) && n >= 0 && (o->graph_replays = static_cast<int>(n), true);
    } else if (key == "--seed") {
      ok = ToInt64(v, &n) && (o->seed = static_cast<uint64_t>(n), true);
    } else if (key == "--job-dir") {
      o->job_dir = v;
    } else if (key == "--job-id") {
      o->job_id = v;
    } else if (key == "--dump-dir") {
      o->dump_dir = v;
    } else if (key == "--step-us") {
      ok = ToInt64(v, &o->step_us) && o->step_us >= 0;
    } else if (key == "--streams") {
      ok = v == "rank" || v == "comm";
      if (ok) o->streams = v == "comm" ? StreamMode::kComm : StreamMode::kRank;
    } else if (key == "--fault") {
      Fault f;
      if (!ParseFault(v, &f, error)) return false;
      o->faults.push_back(f);
    } else if (key == "--ras-mask") {
      const size_t colon = v.find(':');
      int64_t mask = 0;
      ok = colon != std::string::npos && ToInt64(v.substr(0, colon), &o->ras_mask_op) &&
           o->ras_mask_op >= 0 && ToInt64(v.substr(colon + 1), &mask) && mask >= 0 &&
           mask <= 0x7fffffff;
      o->ras_mask = static_cast<int>(mask);
    } else if (key == "--on-hang") {
      ok = v == "abort" || v == "revoke" || v == "shrink";
      if (ok) o->on_hang = v;
    } else if (key == "--watchdog-s") {
      ok = ToDouble(v, &d) && d > 0 && (o->watchdog_s = d, true);
    } else if (key == "--shrink-ops") {
      ok = ToInt64(v, &o->shrink_ops) && o->shrink_ops >= 0;
    } else if (key == "--hang-timeout-s") {
      ok = ToDouble(v, &d) && (o->hang_timeout_s = d, true);
    } else if (key == "--until-dumps") {
      ok = ToInt64(v, &n) && n >= 0 && (o->until_dumps = static_cast<int>(n), true);
    } else if (key == "--mark-op") {
      ok = ToInt64(v, &o->mark_op);
    } else if (key == "--summary") {
      o->summary_file = v;
    } else if (key == "--log-file") {
      o->log_file = v;
    } else if (key == "--until-log") {
      o->until_log = v;
    } else if (key == "--linger-s") {
      ok = ToDouble(v, &d) && d >= 0 && (o->linger_s = d, true);
    } else if (key == "--sigchld") {
      ok = v == "ignore" || v == "reap";
      if (ok) o->sigchld = v;
    } else if (key == "--rank-env") {
      const size_t colon = v.find(':');
      const size_t eq = v.find('=');
      ok = colon != std::string::npos && eq != std::string::npos && eq > colon + 1 &&
           ToInt64(v.substr(0, colon), &n) && n >= 0;
      if (ok) o->rank_env.emplace_back(static_cast<int>(n), v.substr(colon + 1));
    } else if (key == "--rank-index") {
      ok = ToInt64(v, &n) && (o->rank = static_cast<int>(n), true);
    } else if (key == "--coord") {
      o->coord_path = v;
    } else {
      *error = "unknown option '" + key + "' (see flightrec-emu --help)";
      return false;
    }
    if (!ok) {
      *error = "option '" + key + "': bad value '" + v + "'";
      return false;
    }
  }
  return Validate(o, error);
}

const char* UsageText() {
  return R"(usage: flightrec-emu run [options]
Runs an emulated NCCL job: one process per rank, each loading the profiler
plugin named by NCCL_PROFILER_PLUGIN exactly as NCCL does.

  --ranks N             ranks (processes) [8]
  --ops M               ops per rank [100]
  --tp T                tensor-parallel group size; DP groups = ranks with equal rank%T [1]
  --ranks-per-node K    emulated node size (sets nNodes, network proxy events) [8]
  --api N               force ncclProfiler_vN (default: newest the NCCL version looks up)
  --nccl-version X.Y.Z  emulated NCCL release, 2.23.0 .. 2.31 or 'master' [2.28.9]
  --grouped-init        init the communicators concurrently on separate threads
  --pxn                 PXN: network sends of odd channels are reported by the local
                        partner rank's proxy (rank ^ 1), with this rank's context,
                        parent and pid (docs/design/nccl.md §PXN)
  --graph-replays R     after the --ops eager ops, capture one pattern period (ops 0..7) in a
                        CUDA graph and replay it R times (op numbers --ops .. --ops+8R-1);
                        stuck/kill/slow before a replayed op hold that whole graph launch
  --seed S              schedule seed (counts, channels) [1]
  --job-dir DIR         coordination file and default dirs [new dir under $TMPDIR]
  --job-id ID           job id (commHash input, NCCL_FLIGHTREC_JOB_ID when unset)
  --dump-dir DIR        where --until-dumps looks for *.frdump [$NCCL_FLIGHTREC_DIR]
  --step-us US          emulated kernel time per op [200]
  --streams rank|comm   GPU streams of a rank: one in-order stream for all its comms (rank:
                        a rank blocked in one comm blocks its later ops in every comm), or
                        one per comm, as PyTorch's process groups (comm: ops of different
                        comms overlap; with --graph-replays each comm's captured ops
                        are replayed on its stream) [rank]
  --fault SPEC          stuck|skip|kill:rank=R:op=N, mismatch:rank=R:op=N:field=count|datatype|func,
                        mismatch:rank=R:op=N:field=datatype-same-bytes (other type, same bytes),
                        skip:rank=R:op=N:call=K (leave out call K of the grouped op N % 8 == 5),
                        gpu-hang:rank=R:op=N, pause:rank=R:op=N:us=X (one stall of X us
                        outside NCCL before op N), and from op N on (every op without op=N):
                        slow:rank=R:us=X[:op=N] (X us on the host before each op),
                        gpu-slow:rank=R:us=X[:op=N] (its GPU stream starts each launch X us late),
                        slow-link:us=X[:op=N] (every launch's transfer X us longer, all ranks),
                        slow, gpu-slow, slow-link take :comm=world|tp|dp (only that comm's ops),
                        sym-compute:op=N[:rank=R] (with --sym: op N's symmetric kernel never
                        leaves its compute phase on rank R, or on every rank; the others wait
                        in the final sync)
                        (repeatable)
  --on-hang abort|revoke|shrink
                        a framework watchdog in every rank: once an op has been in flight
                        --watchdog-s without progress, ncclCommAbort every comm (abort),
                        ncclCommRevoke then destroy them (revoke), or ncclCommShrink world
                        without the faulted ranks and run --shrink-ops AllReduces on it
                        (shrink); from the watchdog thread, with the ops' handles open
  --watchdog-s S        the framework's collective timeout for --on-hang [2]
  --shrink-ops K        AllReduces on the shrunk comm [20]
  --ce                  the TP AllGather (op % 8 == 1) runs as a copy-engine collective
                        (NCCL 2.29+, TP comm on one node): GroupApi, CollApi, CeColl with
                        CeSync/CeBatch/CeSync, ceSeqNum += 2, no kernel or proxy events;
                        a fake CUDA driver (libcuda.so.1) completes the plugin's events
  --no-cuda             with --ce: no CUDA driver in the rank processes
  --nonblocking-init    ncclConfig_t.blocking=0: each comm inits on a thread of its own
  --sym                 the TP AllReduce (op % 8 == 0, TP comm on one node) runs as a
                        symmetric kernel (AllReduce_AGxLL_R): up to 2.30 no Coll/KernelCh and
                        seqNumber not advanced; 2.31+ Coll with isSymColl, KernelCh and
                        KernelPhase (initial_sync, compute, final_sync) from a profiler thread
  --ras-mask N:MASK     before op N, RAS overrides the activation mask with MASK (2.31+)
  --hang-timeout-s S    kill all ranks after S seconds without progress [60]
  --until-dumps N       kill all ranks once N ranks each sealed a dump in the dump dir
  --mark-op N           record when each rank enqueues op N (summary: mark_op_wall_ns)
  --summary FILE        write the JSON summary there instead of stdout
  --log-file FILE       NCCL log lines (NCCL_DEBUG=WARN|INFO) there instead of stderr
  --until-log TEXT      kill all ranks once TEXT appears in --log-file (after --linger-s)
  --linger-s S          with --until-log: let the job run S more seconds [0]
  --sigchld ignore|reap SIGCHLD in the ranks: SIG_IGN, or a handler reaping every child
  --rank-env R:NAME=VAL set NAME=VAL in rank R only (repeatable)
Exit status: 0 all ranks exited 0; 2 usage error; 3 hang timeout; 4 --until-dumps
reached; 5 a rank failed and the rest finished; 6 interrupted (SIGINT/SIGTERM);
7 --until-log reached; 8 only ranks a stuck fault holds are left; 1 internal error.
)";
}

}  // namespace emu
}  // namespace flightrec

#include "emulator/src/launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "emulator/src/coord.h"
#include "emulator/src/topology.h"
#include "flightrec/job_dir.h"

namespace flightrec {
namespace emu {

namespace {

volatile sig_atomic_t g_interrupted = 0;
void OnSignal(int) { g_interrupted = 1; }

double MonoSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

struct RankProc {
  pid_t pid = -1;
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  bool killed_by_launcher = false;
};

// mkdir -p: the job dir (and the default dump dir under it) may be given
// under a parent that does not exist yet.
bool MakeDir(const std::string& dir, std::string* error) {
  for (size_t slash = dir.find('/', 1); slash != std::string::npos;
       slash = dir.find('/', slash + 1)) {
    const std::string parent = dir.substr(0, slash);
    if (mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
      *error = parent + ": " + std::strerror(errno);
      return false;
    }
  }
  if (mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST) return true;
  *error = dir + ": " + std::strerror(errno);
  return false;
}

std::string SelfExe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return "flightrec-emu";
  buf[n] = '\0';
  return buf;
}

pid_t SpawnRank(const std::string& exe, const std::vector<std::string>& args, int rank,
                const Options& o) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  // Child: never outlive the launcher (a SIGKILLed test must not leak ranks).
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() == 1) _exit(127);
  setenv("RANK", std::to_string(rank).c_str(), 1);
  setenv("WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
  setenv("LOCAL_RANK", std::to_string(rank % o.ranks_per_node).c_str(), 1);
  setenv("LOCAL_WORLD_SIZE", std::to_string(o.ranks_per_node).c_str(), 1);
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execv(exe.c_str(), argv.data());
  std::fprintf(stderr, "flightrec-emu: exec %s: %s\n", exe.c_str(), std::strerror(errno));
  _exit(127);
}

void KillAll(std::vector<RankProc>* procs) {
  for (RankProc& p : *procs) {
    if (!p.exited && p.pid > 0) {
      kill(p.pid, SIGKILL);
      p.killed_by_launcher = true;
    }
  }
  for (RankProc& p : *procs) {
    if (p.exited || p.pid <= 0) continue;
    int st = 0;
    while (waitpid(p.pid, &st, 0) < 0 && errno == EINTR) {
    }
    p.exited = true;
    p.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    p.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
}

void Reap(std::vector<RankProc>* procs) {
  for (RankProc& p : *procs) {
    if (p.exited || p.pid <= 0) continue;
    int st = 0;
    pid_t r = waitpid(p.pid, &st, WNOHANG);
    if (r != p.pid) continue;
    p.exited = true;
    p.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
    p.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
}

std::string Hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

const char* StateName(uint32_t s) {
  switch (s) {
    case kRankRunning:
      return "running";
    case kRankStuck:
      return "stuck";
    case kRankFinished:
      return "finished";
    case kRankAborted:
      return "aborted";
    default:
      return "starting";
  }
}

nlohmann::json Summary(const Options& o, const std::vector<RankProc>& procs, const Coord& coord,
                       int status, const std::string& dump_dir, uint64_t until_log_wall_ns) {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  Topology topo(o.ranks, o.tp, o.ranks_per_node, o.job_id);
  nlohmann::json j;
  j["schema"] = "flightrec.emu.summary/1";
  j["job_id"] = o.job_id;
  j["job_dir"] = o.job_dir;
  j["dump_dir"] = dump_dir;
  j["coord"] = o.coord_path;
  j["status"] = status;
  j["status_name"] = ExitStatusName(status);
  j["nccl_version"] = o.nccl_version.ToString();
  j["api_forced"] = o.api;
  j["ops"] = o.ops;
  j["graph_replays"] = o.graph_replays;
  j["tp"] = o.tp;
  j["ranks_per_node"] = o.ranks_per_node;
  if (!o.until_log.empty()) j["until_log_wall_ns"] = until_log_wall_ns;
  nlohmann::json ranks = nlohmann::json::array();
  for (int r = 0; r < o.ranks; ++r) {
    const RankProc& p = procs[r];
    RankSlot* s = coord.rank(r);
    nlohmann::json e;
    e["rank"] = r;
    e["pid"] = p.pid;
    e["host"] = host;
    e["node"] = r / o.ranks_per_node;
    e["exit_code"] = p.exited && p.signal == 0 ? nlohmann::json(p.exit_code) : nlohmann::json();
    e["signal"] = p.signal != 0 ? nlohmann::json(p.signal) : nlohmann::json();
    e["killed_by_launcher"] = p.killed_by_launcher;
    e["state"] = StateName(__atomic_load_n(&s->state, __ATOMIC_ACQUIRE));
    e["ops_enqueued"] = Coord::Load(&s->ops_enqueued);
    e["ops_completed"] = Coord::Load(&s->ops_completed);
    e["mark_op_wall_ns"] = Coord::Load(&s->mark_wall_ns);
    if (o.pxn) {  // ops of the partner this rank's proxy reported (nccl.md §PXN), and left
      e["pxn_reported"] = coord.PxnTaken(r);
      e["pxn_unreported"] = coord.PxnPosted(r) - coord.PxnTaken(r);
    }
    nlohmann::json comms = nlohmann::json::array();
    static const CommKind kKinds[] = {CommKind::kWorld, CommKind::kTp, CommKind::kDp};
    for (int k = 0; k < kCommsPerRank; ++k) {
      CommInfo c = topo.CommOf(kKinds[k], r);
      comms.push_back({{"name", c.name},
                       {"comm_id", Hex(c.comm_hash)},
                       {"rank", c.my_rank},
                       {"nranks", c.nranks},
                       {"nnodes", c.nnodes},
                       {"records_begun", Coord::Load(&s->records_begun[k])}});
    }
    e["comms"] = comms;
    ranks.push_back(e);
  }
  j["ranks"] = ranks;
  return j;
}

}  // namespace

const char* ExitStatusName(int status) {
  switch (status) {
    case kExitOk:
      return "ok";
    case kExitUsage:
      return "usage";
    case kExitHang:
      return "hang-timeout";
    case kExitUntilDumps:
      return "until-dumps";
    case kExitRankFailed:
      return "rank-failed";
    case kExitInterrupted:
      return "interrupted";
    case kExitUntilLog:
      return "until-log";
    case kExitOnlyStuckLeft:
      return "only-stuck-left";
    default:
      return "internal-error";
  }
}

// How many of the job's rank processes sealed at least one dump in `dir`:
// dumps are named flightrec-<job>-<host>-<pid>-<n>.frdump
// (include/flightrec/job_dir.h). A rank that dumped twice (a stall it
// recovered from, then the hang) counts once, and files no rank wrote count
// not at all.
int CountRanksDumped(const std::string& dir, const std::vector<RankProc>& procs) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  std::set<long> pids;
  while (dirent* e = readdir(d)) {
    if (!format::EndsWith(e->d_name, ".frdump")) continue;
    const std::string name(e->d_name, std::strlen(e->d_name) - std::strlen(".frdump"));
    const size_t seq_dash = name.rfind('-');
    if (seq_dash == std::string::npos || seq_dash == 0) continue;
    const size_t pid_dash = name.rfind('-', seq_dash - 1);
    if (pid_dash == std::string::npos) continue;
    const std::string pid = name.substr(pid_dash + 1, seq_dash - pid_dash - 1);
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    pids.insert(std::strtol(pid.c_str(), nullptr, 10));
  }
  closedir(d);
  int n = 0;
  for (const RankProc& p : procs) n += pids.count(static_cast<long>(p.pid)) != 0 ? 1 : 0;
  return n;
}

bool LogWatch::Poll() {
  if (found_) return true;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return false;
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  offset_ += chunk.size();
  tail_ += chunk;
  if (tail_.find(text_) != std::string::npos) {
    found_ = true;
    timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    found_wall_ns_ = static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
    return true;
  }
  // Keep what could be the start of a match split across reads.
  if (tail_.size() >= text_.size()) tail_.erase(0, tail_.size() - text_.size() + 1);
  return false;
}

int RunLauncher(Options o, const std::vector<std::string>& raw_args) {
  std::string error;
  if (o.job_id.empty()) {
    o.job_id = "emu-" + std::to_string(getpid()) + "-" + std::to_string(o.seed);
  }
  if (o.job_dir.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string tmpl = std::string(tmp != nullptr ? tmp : "/tmp") + "/flightrec-emu-XXXXXX";
    if (mkdtemp(&tmpl[0]) == nullptr) {
      std::fprintf(stderr, "flightrec-emu: mkdtemp %s: %s\n", tmpl.c_str(), std::strerror(errno));
      return kExitInternal;
    }
    o.job_dir = tmpl;
  } else if (!MakeDir(o.job_dir, &error)) {
    std::fprintf(stderr, "flightrec-emu: --job-dir %s\n", error.c_str());
    return kExitInternal;
  }
  // Dumps land where the plugin puts them: NCCL_FLIGHTREC_DUMP_DIR, else the
  // ring dir (docs/plugin.md); --dump-dir only overrides where we count them.
  const char* fr_dir = std::getenv("NCCL_FLIGHTREC_DIR");
  const char* fr_dump_dir = std::getenv("NCCL_FLIGHTREC_DUMP_DIR");
  std::string dump_dir = !o.dump_dir.empty()      ? o.dump_dir
                         : fr_dump_dir != nullptr ? fr_dump_dir
                         : fr_dir != nullptr      ? fr_dir
                                                  : o.job_dir + "/flightrec";
  // With NCCL_FLIGHTREC_DUMP_DIR alone the rings stay in the plugin's
  // default directory, as under NCCL.
  if (fr_dir == nullptr && fr_dump_dir == nullptr) {
    MakeDir(dump_dir, &error);
    setenv("NCCL_FLIGHTREC_DIR", dump_dir.c_str(), 1);
  }
  setenv("NCCL_FLIGHTREC_JOB_ID", o.job_id.c_str(), 0);
  o.coord_path = o.job_dir + "/coord.shm";
  Topology topo(o.ranks, o.tp, o.ranks_per_node, o.job_id);
  Coord coord;
  // --on-hang shrink: one more comm slot, the shrunk world's (lifecycle.h).
  const int ncomms = topo.num_comms() + (o.on_hang == "shrink" ? 1 : 0);
  if (!coord.Create(o.coord_path, o.ranks, ncomms, o.job_id, &error)) {
    std::fprintf(stderr, "flightrec-emu: %s\n", error.c_str());
    return kExitInternal;
  }
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);

  std::string exe = SelfExe();
  std::vector<RankProc> procs(o.ranks);
  for (int r = 0; r < o.ranks; ++r) {
    std::vector<std::string> args{exe, "rank"};
    args.insert(args.end(), raw_args.begin(), raw_args.end());
    args.insert(args.end(), {"--job-id", o.job_id, "--job-dir", o.job_dir, "--rank-index",
                             std::to_string(r), "--coord", o.coord_path});
    procs[r].pid = SpawnRank(exe, args, r, o);
    if (procs[r].pid < 0) {
      std::fprintf(stderr, "flightrec-emu: fork: %s\n", std::strerror(errno));
      KillAll(&procs);
      return kExitInternal;
    }
  }

  int status = kExitOk;
  uint64_t last_progress = UINT64_MAX;
  double last_change = MonoSeconds();
  LogWatch log_watch(o.log_file, o.until_log);
  double until_log_seen = -1;
  for (;;) {
    Reap(&procs);
    bool all_exited = true;
    // Every rank still running is held by a stuck fault and the others have
    // exited (--on-hang abort|revoke ended their comms): nothing can make
    // progress any more; no need to wait out --hang-timeout-s.
    bool only_stuck_left = true;
    uint64_t progress = 0;
    for (int r = 0; r < o.ranks; ++r) {
      all_exited = all_exited && procs[r].exited;
      only_stuck_left = only_stuck_left &&
                        (procs[r].exited ||
                         __atomic_load_n(&coord.rank(r)->state, __ATOMIC_ACQUIRE) == kRankStuck);
      progress += Coord::Load(&coord.rank(r)->ops_completed);
    }
    if (all_exited) break;
    double now = MonoSeconds();
    if (progress != last_progress) {
      last_progress = progress;
      last_change = now;
    }
    if (g_interrupted) {
      status = kExitInterrupted;
    } else if (o.until_dumps > 0 && CountRanksDumped(dump_dir, procs) >= o.until_dumps) {
      status = kExitUntilDumps;
    } else if (until_log_seen >= 0 && now - until_log_seen >= o.linger_s) {
      status = kExitUntilLog;
    } else if (only_stuck_left) {
      status = kExitOnlyStuckLeft;
    } else if (now - last_change > o.hang_timeout_s) {
      status = kExitHang;
    }
    if (until_log_seen < 0 && !o.until_log.empty() && log_watch.Poll()) until_log_seen = now;
    if (status != kExitOk) {
      KillAll(&procs);
      break;
    }
    usleep(20 * 1000);
  }
  if (status == kExitOk) {
    for (const RankProc& p : procs) {
      if (p.signal != 0 || p.exit_code != 0) status = kExitRankFailed;
    }
  }
  std::string text =
      Summary(o, procs, coord, status, dump_dir, log_watch.found_wall_ns()).dump(2) + "\n";
  if (o.summary_file.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
  } else {
    std::ofstream out(o.summary_file);
    out << text;
    if (!out) {
      std::fprintf(stderr, "flightrec-emu: --summary %s: cannot write\n", o.summary_file.c_str());
      return kExitInternal;
    }
  }
  return status;
}

}  // namespace emu
}  // namespace flightrec

// flightrec-emu: the NCCL emulator's command line.
//   flightrec-emu run [options]        run a job (see --help)
//   flightrec-emu schedule [options] --rank-index R
//                                      print rank R's expected records (JSON)
//   flightrec-emu rank ...             internal: one rank process
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "emulator/src/coord.h"
#include "emulator/src/launcher.h"
#include "emulator/src/nccl_logger.h"
#include "emulator/src/options.h"
#include "emulator/src/rank_runtime.h"
#include "emulator/src/schedule.h"
#include "flightrec/record_names.h"

namespace emu = flightrec::emu;

namespace {

void ReapEveryChild(int) {
  const int saved = errno;
  while (waitpid(-1, nullptr, WNOHANG) > 0) {
  }
  errno = saved;
}

// What a host framework may have done before NCCL loads: --rank-env and
// --sigchld.
void ApplyHostSetup(const emu::Options& o) {
  for (const auto& [rank, assignment] : o.rank_env) {
    if (rank != o.rank) continue;
    const size_t eq = assignment.find('=');
    setenv(assignment.substr(0, eq).c_str(), assignment.substr(eq + 1).c_str(), 1);
  }
  if (o.sigchld.empty()) return;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof(sa));
  sa.sa_handler = o.sigchld == "ignore" ? SIG_IGN : &ReapEveryChild;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &sa, nullptr);
}

int RunRank(const emu::Options& o) {
  if (!emu::InitNcclLogger(o.log_file)) return emu::kExitInternal;
  ApplyHostSetup(o);
  emu::Coord coord;
  std::string error;
  if (o.rank < 0 || !coord.Open(o.coord_path, &error) || o.rank >= coord.nranks()) {
    std::fprintf(
        stderr, "flightrec-emu rank: %s\n",
        error.empty() ? "needs --rank-index and --coord from the launcher" : error.c_str());
    return emu::kExitUsage;
  }
  emu::RankRuntime rt(o, &coord);
  return rt.Run();
}

int PrintSchedule(const emu::Options& o) {
  emu::Topology topo(o.ranks, o.tp, o.ranks_per_node, o.job_id);
  int rank = o.rank < 0 ? 0 : o.rank;
  nlohmann::json j;
  for (const auto& [comm, recs] :
       emu::ExpectedRecords(o.seed, o.ops, topo, rank, o.graph_replays)) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& r : recs) {
      arr.push_back(
          {{"op_index", r.op_index},
           {"nccl_seq", r.nccl_seq == UINT64_MAX ? nlohmann::json() : nlohmann::json(r.nccl_seq)},
           {"func", flightrec::format::FuncName(r.func)},
           {"count", r.count},
           {"datatype", flightrec::format::DataTypeName(r.datatype)},
           {"root_or_peer", r.root_or_peer},
           {"channels", r.n_channels}});
    }
    j[comm] = arr;
  }
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(emu::UsageText(), argc < 2 ? stderr : stdout);
    return argc < 2 ? emu::kExitUsage : 0;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  emu::Options o;
  std::string error;
  if (!emu::ParseOptions(args, &o, &error)) {
    std::fprintf(stderr, "flightrec-emu %s: %s\n", cmd.c_str(), error.c_str());
    return emu::kExitUsage;
  }
  if (cmd == "run") {
    if (!emu::InitNcclLogger(o.log_file)) return emu::kExitInternal;
    return emu::RunLauncher(o, args);
  }
  if (cmd == "rank") return RunRank(o);
  if (cmd == "schedule") return PrintSchedule(o);
  std::fprintf(stderr, "flightrec-emu: unknown command '%s' (run|schedule)\n", cmd.c_str());
  return emu::kExitUsage;
}

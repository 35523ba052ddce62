#include "integration/emu_job.h"

#include <sys/stat.h>

#include <fstream>

#include "integration/ring_view.h"

namespace flightrec {
namespace itest {

std::string EmuCommand(const EmuJob& job, const std::string& args,
                       const std::map<std::string, std::string>& env) {
  std::string b = BuildDir();
  std::string cmd = "env NCCL_PROFILER_PLUGIN=flightrec NCCL_DEBUG=INFO LD_LIBRARY_PATH='" + b +
                    "/lib' NCCL_FLIGHTREC_DIR='" + job.ring_dir + "'";
  for (const auto& [k, v] : env) cmd += " '" + k + "=" + v + "'";
  cmd += " '" + b + "/bin/flightrec-emu' run --job-dir '" + job.dir + "/job' --summary '" +
         job.dir + "/summary.json' --log-file '" + job.dir + "/nccl.log' " + args;
  return cmd;
}

EmuJob RunEmu(const std::string& tag, const std::string& args,
              const std::map<std::string, std::string>& env, const std::string& shell_prefix) {
  EmuJob job;
  job.dir = MakeTempDir(tag);
  job.ring_dir = job.dir + "/rings";
  auto it = env.find("NCCL_FLIGHTREC_DIR");
  if (it != env.end()) {
    job.ring_dir = it->second;
  } else {
    mkdir(job.ring_dir.c_str(), 0755);
  }
  std::map<std::string, std::string> rest = env;
  rest.erase("NCCL_FLIGHTREC_DIR");
  // stderr is kept: a sanitizer report from a rank lands there.
  job.status = RunShell(shell_prefix + EmuCommand(job, args, rest) + " >/dev/null 2>'" + job.dir +
                        "/stderr.log'");
  std::ifstream in(job.dir + "/summary.json");
  job.summary = nlohmann::json::parse(in, nullptr, false);
  job.log = ReadText(job.dir + "/nccl.log");
  job.stderr_text = ReadText(job.dir + "/stderr.log");
  return job;
}

}  // namespace itest
}  // namespace flightrec

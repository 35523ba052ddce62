// Runs `flightrec-emu run` with the real plugin and collects its summary,
// exit status and NCCL log.
#ifndef FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_H_
#define FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_H_

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace flightrec {
namespace itest {

// Lines the plugin logs in a job's log when it gives the in-job verdict
// (docs/plugin.md): the headline, then how the verdict's hook ended. A job
// with a hook that ends on the second has surely run the hook.
inline constexpr char kHeadlineTag[] = "flightrec: verdict:";
inline constexpr char kHookTag[] = "flightrec: verdict hook:";

struct EmuJob {
  std::string dir;       // job dir (also holds summary.json, nccl.log)
  std::string ring_dir;  // NCCL_FLIGHTREC_DIR
  int status = -1;       // launcher exit status
  nlohmann::json summary;
  std::string log;          // NCCL_DEBUG=INFO lines of every rank
  std::string stderr_text;  // launcher and ranks (sanitizer reports land here)
};

// `env` entries are exported for the job only; NCCL_PROFILER_PLUGIN=flightrec,
// LD_LIBRARY_PATH=<build>/lib and NCCL_DEBUG=INFO are always set.
EmuJob RunEmu(const std::string& tag, const std::string& args,
              const std::map<std::string, std::string>& env = {},
              const std::string& shell_prefix = "");

// The launcher command line RunEmu would use (for tests that drive it).
std::string EmuCommand(const EmuJob& job, const std::string& args,
                       const std::map<std::string, std::string>& env);

}  // namespace itest
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_INTEGRATION_EMU_JOB_H_

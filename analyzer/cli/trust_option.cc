// --trust-group (commands.h): whose files every subcommand believes.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "analyzer/cli/commands.h"
#include "analyzer/reader/snapshot_reader.h"
#include "recorder/fileio/safe_file.h"

namespace flightrec {
namespace cli {
namespace {

// Set once, while the command line is parsed (before any command runs).
bool g_trust_set = false;
fileio::Trust g_trust;

}  // namespace

void AddTrustGroupOption(CLI::App& app) {
  const CLI::Validator group(
      [](const std::string& name) -> std::string {
        fileio::Trust t;
        char why[fileio::kWhyMax] = {};
        if (fileio::TrustGroup(name.c_str(), &t, why, sizeof(why))) return "";
        return std::string(why) + " (from --trust-group or NCCL_FLIGHTREC_GROUP)";
      },
      "GROUP");
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    sub->add_option_function<std::string>(
           "--trust-group",
           [](const std::string& name) {
             char why[fileio::kWhyMax] = {};
             if (fileio::TrustGroup(name.c_str(), &g_trust, why, sizeof(why))) {
               g_trust_set = true;
               SetReadTrust(g_trust);
             }
           },
           "Also believe files of members of GROUP (name or gid; you must be in it) and share "
           "the files written with it (default: NCCL_FLIGHTREC_GROUP; docs/security.md)")
        ->check(group);
  }
  // NCCL_FLIGHTREC_GROUP, when --trust-group is not given: read as the
  // plugin reads it (recorder/config.cc), an unknown group or one the user
  // is not in warned about and ignored, so that the `flightrec watch` the
  // plugin spawns with the job's environment believes what the plugin does
  // and still gives its verdict. Before any command runs.
  app.parse_complete_callback([] {
    const char* env = getenv("NCCL_FLIGHTREC_GROUP");
    if (g_trust_set || env == nullptr || *env == '\0') return;
    char why[fileio::kWhyMax] = {};
    if (fileio::TrustGroup(env, &g_trust, why, sizeof(why))) {
      g_trust_set = true;
      SetReadTrust(g_trust);
    } else {
      std::fprintf(stderr,
                   "flightrec: warning: NCCL_FLIGHTREC_GROUP=%s ignored: %s; only your own files "
                   "are believed and shared with nobody\n",
                   env, why);
    }
  });
}

fileio::Trust CommandTrust() { return g_trust_set ? g_trust : fileio::TrustSelf(); }

}  // namespace cli
}  // namespace flightrec

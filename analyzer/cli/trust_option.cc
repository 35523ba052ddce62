// --trust-group (commands.h): whose files every subcommand believes.
#include <CLI/CLI.hpp>

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
        ->envname("NCCL_FLIGHTREC_GROUP")
        ->check(group);
  }
}

fileio::Trust CommandTrust() { return g_trust_set ? g_trust : fileio::TrustSelf(); }

}  // namespace cli
}  // namespace flightrec

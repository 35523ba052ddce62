// `flightrec`: read flight-recorder rings and dumps, and name the culprit.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>

#include "analyzer/cli/commands.h"
#include "flightrec/version.h"

int main(int argc, char** argv) {
  CLI::App app{
      "flightrec: read NCCL flight-recorder rings and dumps, and name the rank a hung job waits "
      "on"};
  app.set_version_flag("--version", flightrec::kVersion);
  app.require_subcommand(1);
  int exit_code = 0;
  flightrec::cli::AddShowCommand(app, &exit_code);
  flightrec::cli::AddAnalyzeCommand(app, &exit_code);
  flightrec::cli::AddTimelineCommand(app, &exit_code);
  flightrec::cli::AddTriggerCommand(app, &exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;  // usage errors are exit code 2, as documented
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flightrec: %s\n", e.what());
    return 2;
  }
  return exit_code;
}

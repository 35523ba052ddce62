// `flightrec`: read flight-recorder rings and dumps, and name the culprit.
#include <CLI/CLI.hpp>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <cstdio>
#include <exception>

#include "analyzer/cli/commands.h"
#include "flightrec/version.h"

namespace {

// The analyzer keeps thousands of 0.1-4 MiB vectors (records, signatures,
// indexes) until it exits. glibc gives each allocation above its mmap
// threshold (128 KiB until a large mapped block is freed, which raises it)
// a mapping of its own: a syscall, a fresh VMA faulted in page by page, and
// a munmap later. Whether the threshold is raised depends on which buffers
// happen to be freed first; fixing it at 4 MiB takes them from the heap
// every time (docs/performance.md, "Analyzer": 256 ranks read whole in
// 0.110 s instead of 0.122 s). Images and rings larger than that still map.
void TuneAllocator() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  TuneAllocator();
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
  flightrec::cli::AddWatchCommand(app, &exit_code);
  flightrec::cli::AddStatusCommand(app, &exit_code);
  flightrec::cli::AddExporterCommand(app, &exit_code);
  flightrec::cli::AddTrustGroupOption(app);
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

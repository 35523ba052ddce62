// Each `flightrec` subcommand registers itself on the CLI11 app. The command
// sets *exit_code when it runs: 0 healthy/ok, 1 findings, 2 usage error or
// no readable input (see docs/analyzer.md).
#ifndef FLIGHTREC_ANALYZER_CLI_COMMANDS_H_
#define FLIGHTREC_ANALYZER_CLI_COMMANDS_H_

namespace CLI {
class App;
}

namespace flightrec {
namespace fileio {
struct Trust;
}  // namespace fileio
namespace cli {

void AddShowCommand(CLI::App& app, int* exit_code);      // show_command.cc
void AddAnalyzeCommand(CLI::App& app, int* exit_code);   // analyze_command.cc
void AddTimelineCommand(CLI::App& app, int* exit_code);  // timeline_command.cc
void AddTriggerCommand(CLI::App& app, int* exit_code);   // trigger_command.cc
void AddWatchCommand(CLI::App& app, int* exit_code);     // watch_command.cc
void AddStatusCommand(CLI::App& app, int* exit_code);    // status_command.cc
void AddExporterCommand(CLI::App& app, int* exit_code);  // exporter_command.cc

// `--trust-group GROUP` on every subcommand (default: NCCL_FLIGHTREC_GROUP):
// files owned by a member of GROUP (and carrying its gid) are believed
// beside the running user's, and files the command creates are shared
// with GROUP (recorder/fileio/safe_file.h). Resolved while the command
// line is parsed, before any command runs: an unknown group, or one the
// user is not in, is a usage error (exit 2). Sets the reader's trust
// (SetReadTrust) too. trust_option.cc.
void AddTrustGroupOption(CLI::App& app);
// The trust the running command reads and writes with: the running user,
// plus the group given.
fileio::Trust CommandTrust();

}  // namespace cli
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_CLI_COMMANDS_H_

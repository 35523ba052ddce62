#include "support/analyze_runner.h"

#include <sys/wait.h>

#include "support/files.h"

namespace flightrec {
namespace testing {

CliRun RunAnalyzeCli(const std::string& options, const std::vector<std::string>& paths) {
  CliRun run;
  const std::string dir = MakeTempDir("analyze");
  std::string cmd = "exec '" + CliPath() + "' analyze " + options;
  for (const std::string& p : paths) cmd += " '" + p + "'";
  cmd += " >'" + dir + "/out' 2>'" + dir + "/err'";
  int status = RunShellStatus(cmd);
  // sh reports a child killed by signal N as exit status 128 + N.
  if (WIFEXITED(status) && WEXITSTATUS(status) < 128) {
    run.exited = true;
    run.code = WEXITSTATUS(status);
  } else {
    run.signal = WIFEXITED(status) ? WEXITSTATUS(status) - 128 : WTERMSIG(status);
  }
  run.report = ReadText(dir + "/out");
  run.errors = ReadText(dir + "/err");
  RemoveTree(dir);
  return run;
}

}  // namespace testing
}  // namespace flightrec

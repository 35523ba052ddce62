#include "recorder/dump_signal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "recorder/log.h"
#include "recorder/watchdog.h"

namespace flightrec {
namespace rec {
namespace {

int g_signo = 0;
struct sigaction g_previous;

void OnDumpSignal(int) {
  const int saved = errno;
  PostDumpRequest(format::kDumpRequest, "dump signal");
  errno = saved;
}

}  // namespace

bool InstallDumpSignal(int signo, LogFn log) {
  if (signo <= 0 || g_signo != 0) return false;
  struct sigaction sa;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = &OnDumpSignal;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(signo, &sa, &g_previous) != 0) {
    Logf(log, kLogWarn, "cannot install the dump handler for signal %d: %s", signo,
         strerror(errno));
    return false;
  }
  g_signo = signo;
  Logf(log, kLogInfo, "signal %d seals a dump (NCCL_FLIGHTREC_DUMP_SIGNAL)", signo);
  return true;
}

void RestoreDumpSignal() {
  if (g_signo == 0) return;
  sigaction(g_signo, &g_previous, nullptr);
  g_signo = 0;
}

}  // namespace rec
}  // namespace flightrec

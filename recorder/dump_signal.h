// The optional NCCL_FLIGHTREC_DUMP_SIGNAL handler. Off by default (a plugin
// installs no signal handler unless asked). The handler only calls
// RequestDump(kDumpRequest), which is async-signal-safe; the watchdog seals
// the dump on its own thread.
#ifndef FLIGHTREC_RECORDER_DUMP_SIGNAL_H_
#define FLIGHTREC_RECORDER_DUMP_SIGNAL_H_

#include "recorder/recorder.h"

namespace flightrec {
namespace rec {

// Installs the handler for `signo`, remembering the previous action.
bool InstallDumpSignal(int signo, LogFn log);
// Puts the previous action back (before our code can be unloaded).
void RestoreDumpSignal();

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_DUMP_SIGNAL_H_

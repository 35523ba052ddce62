// How much longer than on an idle release build a test may let a process
// take: the factor every timeout a test hands out or waits for is multiplied
// by, so that a slow machine cannot flip a verdict. It is
//   $FLIGHTREC_TEST_TIME_SCALE (default: 2 in an ASan build, 4 in a TSan
//   build, else 1) x the load per core when the test asks (1 when idle),
// and never below 1. Tests assert on what the files record, never on how
// fast it happened; this only widens the windows they wait in.
#ifndef FLIGHTREC_TESTS_SUPPORT_TIME_SCALE_H_
#define FLIGHTREC_TESTS_SUPPORT_TIME_SCALE_H_

#include <string>

namespace flightrec {
namespace testing {

double TimeScale();

// `seconds` x TimeScale(), rounded up to whole seconds (at least `seconds`).
int ScaledSeconds(int seconds);

// ScaledSeconds as a decimal string, for environment variables and flags.
std::string ScaledSecondsText(int seconds);

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_TIME_SCALE_H_

#include "support/time_scale.h"

#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

namespace flightrec {
namespace testing {
namespace {

// Past this the machine is not slow but broken; the test's own timeout
// (ctest TIMEOUT) still bounds it.
constexpr double kMaxScale = 8.0;

#ifndef FLIGHTREC_BUILD_TIME_SCALE
#define FLIGHTREC_BUILD_TIME_SCALE 1
#endif

double EnvScale() {
  const char* s = getenv("FLIGHTREC_TEST_TIME_SCALE");
  if (s == nullptr) return FLIGHTREC_BUILD_TIME_SCALE;
  char* end = nullptr;
  double v = strtod(s, &end);
  return (end != s && v >= 1.0) ? v : 1.0;
}

double LoadPerCore() {
  double load = 0;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (getloadavg(&load, 1) != 1 || cores < 1) return 1.0;
  return load / static_cast<double>(cores);
}

}  // namespace

double TimeScale() {
  double scale = EnvScale() * std::max(1.0, LoadPerCore());
  return std::min(std::max(scale, 1.0), kMaxScale);
}

int ScaledSeconds(int seconds) {
  return std::max(seconds, static_cast<int>(std::ceil(seconds * TimeScale())));
}

std::string ScaledSecondsText(int seconds) { return std::to_string(ScaledSeconds(seconds)); }

}  // namespace testing
}  // namespace flightrec

#include "recorder/clock.h"

#include <math.h>
#include <stdio.h>

#if FLIGHTREC_HAVE_RDTSC
#include <cpuid.h>
#endif

namespace flightrec {
namespace rec {

ClockState g_clock = {0, 0, 0, 0, 0};

namespace {

constexpr uint64_t kCalibrationNs = 4000000;  // stays within the 5 ms budget

#if FLIGHTREC_HAVE_RDTSC
bool InvariantTsc() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (static_cast<unsigned>(__get_cpuid_max(0x80000000u, nullptr)) < 0x80000007u) return false;
  if (!__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx)) return false;
  return (edx & (1u << 8)) != 0;
}

// One (tsc, mono) pair taken with the tightest bracket of a few tries.
void SamplePair(uint64_t* tsc, uint64_t* mono) {
  uint64_t best = UINT64_MAX;
  for (int i = 0; i < 5; ++i) {
    uint64_t m0 = MonotonicNs();
    uint64_t t = __rdtsc();
    uint64_t m1 = MonotonicNs();
    if (m1 - m0 < best) {
      best = m1 - m0;
      *tsc = t;
      *mono = m0 + (m1 - m0) / 2;
    }
  }
}

bool CalibrateTsc() {
  uint64_t t0 = 0, m0 = 0, t1 = 0, m1 = 0;
  SamplePair(&t0, &m0);
  while (MonotonicNs() - m0 < kCalibrationNs) {
  }
  SamplePair(&t1, &m1);
  if (t1 <= t0 || m1 <= m0) return false;
  const double hz = static_cast<double>(t1 - t0) * 1e9 / static_cast<double>(m1 - m0);
  if (hz < 1e8 || hz > 2e10) return false;  // not a plausible TSC
  g_clock.tsc_hz = static_cast<uint64_t>(llround(hz));
  g_clock.mult = static_cast<uint64_t>(1e9 * static_cast<double>(1ULL << kClockShift) / hz);
  g_clock.tsc_base = t1;
  g_clock.mono_base = m1;
  return true;
}
#endif

}  // namespace

__attribute__((noinline)) uint64_t MonotonicNsSlow() { return MonotonicNs(); }

__attribute__((noinline)) void StampMonotonicSlow(uint64_t* dst) {
  __atomic_store_n(dst, MonotonicNs(), __ATOMIC_RELAXED);
}

uint32_t InitClock(ClockRequest request, char* note, unsigned note_len) {
  if (note_len > 0) note[0] = '\0';
  uint32_t current = __atomic_load_n(&g_clock.source, __ATOMIC_RELAXED);
  if (current != 0) return current;  // calibrated by an earlier recorder
  uint32_t source = format::kClockMonotonic;
#if FLIGHTREC_HAVE_RDTSC
  const bool invariant = InvariantTsc();
  if (request == kClockRequestTsc && !invariant) {
    snprintf(note, note_len, "NCCL_FLIGHTREC_CLOCK=tsc but the TSC is not invariant; using it");
  }
  if (request == kClockRequestTsc || (request == kClockRequestAuto && invariant)) {
    if (CalibrateTsc()) {
      source = format::kClockTsc;
    } else {
      snprintf(note, note_len, "TSC calibration failed; using CLOCK_MONOTONIC");
    }
  }
#else
  if (request == kClockRequestTsc) snprintf(note, note_len, "no TSC on this CPU");
#endif
  if (source != format::kClockTsc) g_clock.tsc_hz = 0;
  // Pairs with the acquire load in ClockNowNs: publishes the calibration.
  __atomic_store_n(&g_clock.source, source, __ATOMIC_RELEASE);
  return source;
}

}  // namespace rec
}  // namespace flightrec

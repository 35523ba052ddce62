// The recorder's cheap monotonic clock.
//
// With an invariant TSC (cpuid 0x80000007 EDX bit 8) the hot path reads rdtsc
// and converts it to CLOCK_MONOTONIC nanoseconds with a precomputed
// 128-bit multiply and shift, calibrated once per process against
// CLOCK_MONOTONIC (a few ms). Otherwise it calls clock_gettime directly. The
// choice is recorded in FileHeader::clock_source / tsc_hz.
#ifndef FLIGHTREC_RECORDER_CLOCK_H_
#define FLIGHTREC_RECORDER_CLOCK_H_

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define FLIGHTREC_HAVE_RDTSC 1
#else
#define FLIGHTREC_HAVE_RDTSC 0
#endif

#include "flightrec/record_format.h"
#include "recorder/config.h"

namespace flightrec {
namespace rec {

// The scaling's shift, a constant so that the hot path's shift is one
// instruction: 2^32 steps per TSC tick keep the rate to < 1e-9 relative error.
constexpr uint32_t kClockShift = 32;
struct ClockState {
  uint32_t source;  // format::ClockSource; 0 until calibrated
  uint64_t mult;    // ns = (tsc - tsc_base) * mult >> kClockShift
  uint64_t tsc_base;
  uint64_t mono_base;
  uint64_t tsc_hz;
};

extern ClockState g_clock;

// Calibrates once per process (later calls keep the first result) and
// returns the source in use. `note` receives a short explanation when the
// request could not be honoured ("" otherwise).
uint32_t InitClock(ClockRequest request, char* note, unsigned note_len);

inline uint64_t MonotonicNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

inline uint64_t RealtimeNs() {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// ClockNowNs's fallback (no invariant TSC): MonotonicNs, out of line so the
// hot path's callers keep no timespec frame and no registers for it.
uint64_t MonotonicNsSlow();
// StampNow's fallback: *dst = MonotonicNs(), a relaxed atomic store.
void StampMonotonicSlow(uint64_t* dst);

#if FLIGHTREC_HAVE_RDTSC
// The TSC now, in CLOCK_MONOTONIC ns; only once g_clock.source reads kClockTsc.
inline uint64_t TscNowNs() {
  const uint64_t delta = __rdtsc() - g_clock.tsc_base;
  const unsigned __int128 scaled = static_cast<unsigned __int128>(delta) * g_clock.mult;
  return g_clock.mono_base + static_cast<uint64_t>(scaled >> kClockShift);
}
#endif
// Hot path: no lock, no allocation; a vDSO call at worst.
inline uint64_t ClockNowNs() {
#if FLIGHTREC_HAVE_RDTSC
  // Pairs with the release store of g_clock.source in InitClock: the
  // calibration fields are complete when the source reads kClockTsc.
  if (__atomic_load_n(&g_clock.source, __ATOMIC_ACQUIRE) == format::kClockTsc) return TscNowNs();
#endif
  return MonotonicNsSlow();
}
// Hot path: *dst = ClockNowNs() as a relaxed atomic store. For an event
// whose last act is the stamp: the fallback's call then has nothing live
// after it, so the plugin's entry point saves no register for it (with
// `x = ClockNowNs()` the destination lives across that call).
inline void StampNow(uint64_t* dst) {
#if FLIGHTREC_HAVE_RDTSC
  // Pairs with the release store of g_clock.source in InitClock (as above).
  if (__atomic_load_n(&g_clock.source, __ATOMIC_ACQUIRE) == format::kClockTsc) {
    __atomic_store_n(dst, TscNowNs(), __ATOMIC_RELAXED);
    return;
  }
#endif
  StampMonotonicSlow(dst);
}

}  // namespace rec
}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_CLOCK_H_

// clock_jump_shim: an LD_PRELOAD library that steps the wall clock of the
// process it is loaded into, as NTP stepping or an operator's `date -s`
// would, and leaves every other clock alone.
//
//   export FLIGHTREC_TEST_CLOCK_JUMPS="+3600@1.0,-7200@2.0"
//   LD_PRELOAD=<build>/tests/reliability/flightrec_clock_jump_shim.so program
//
// FLIGHTREC_TEST_CLOCK_JUMPS is a comma-separated list of steps:
//
//   [r<RANK>:]<+|-><SECONDS>@<AFTER>
//
//   SECONDS  how far the wall clock steps (decimal, sign required). Steps
//            accumulate: "+3600@1,-7200@2" reads 1 h ahead from 1 s of
//            process life on and 1 h behind from 2 s on.
//   AFTER    seconds of process life (CLOCK_MONOTONIC since this library was
//            loaded, i.e. since exec) from which the step is in effect; 0 =
//            from the first instruction.
//   r<RANK>: the step applies only in a process whose $RANK is RANK (the
//            emulator sets RANK in every rank process); without it, every
//            process that loads the shim steps.
//
// Up to 16 steps. A malformed value is reported on stderr and aborts the
// process at load (a test must not run with a schedule it did not mean).
// Unset or empty: the shim changes nothing.
//
// Stepped: clock_gettime(CLOCK_REALTIME, CLOCK_REALTIME_COARSE, CLOCK_TAI)
// (settimeofday/clock_settime step all three), gettimeofday() and time().
// Not stepped: CLOCK_MONOTONIC, CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_COARSE,
// CLOCK_BOOTTIME and the CPU-time clocks, exactly as on a real host; the
// kernel's own timestamps (file mtimes, futex timeouts) are untouched too.
// The offset is a pure function of the monotonic clock, so every call after
// the library's constructor is lock-free, allocation-free and
// async-signal-safe.
//
// Calls glibc makes internally (not through the PLT) are not seen; neither
// is the raw clock_gettime syscall. The flightrec recorder and the emulator
// call clock_gettime through the PLT.
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

namespace {

constexpr int kMaxSteps = 16;
constexpr int64_t kNsPerSec = 1000000000LL;

struct Step {
  uint64_t after_ns;  // process-life threshold
  int64_t delta_ns;   // wall-clock step
};

using ClockGettimeFn = int (*)(clockid_t, struct timespec*);
using GettimeofdayFn = int (*)(struct timeval*, void*);

ClockGettimeFn g_real_clock_gettime = nullptr;
GettimeofdayFn g_real_gettimeofday = nullptr;
Step g_steps[kMaxSteps];
int g_nsteps = 0;
uint64_t g_start_mono_ns = 0;
int g_state = 0;  // 0 not loaded, 1 loading, 2 ready

[[noreturn]] void Die(const char* what, const char* spec) {
  char msg[512];
  int n = snprintf(msg, sizeof(msg), "clock_jump_shim: FLIGHTREC_TEST_CLOCK_JUMPS=\"%s\": %s\n",
                   spec, what);
  if (n > 0) {
    ssize_t w = write(2, msg, static_cast<size_t>(n) < sizeof(msg) ? n : sizeof(msg) - 1);
    (void)w;
  }
  abort();
}

// Parses a decimal number of seconds (optionally signed, optional fraction)
// into ns. Advances *p past it. False when there is no number.
bool ParseSeconds(const char** p, bool sign_required, int64_t* out_ns) {
  const char* s = *p;
  int64_t sign = 1;
  if (*s == '+' || *s == '-') {
    sign = *s == '-' ? -1 : 1;
    ++s;
  } else if (sign_required) {
    return false;
  }
  if (*s < '0' || *s > '9') return false;
  int64_t whole = 0;
  while (*s >= '0' && *s <= '9') {
    whole = whole * 10 + (*s - '0');
    if (whole > 100LL * 365 * 86400) return false;  // a century is plenty
    ++s;
  }
  int64_t frac = 0, scale = kNsPerSec;
  if (*s == '.') {
    ++s;
    while (*s >= '0' && *s <= '9') {
      if (scale > 1) {
        scale /= 10;
        frac += (*s - '0') * scale;
      }
      ++s;
    }
  }
  *out_ns = sign * (whole * kNsPerSec + frac);
  *p = s;
  return true;
}

uint64_t RealMonoNs() {
  struct timespec ts;
  g_real_clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSec + static_cast<uint64_t>(ts.tv_nsec);
}

void Load() {
  g_real_clock_gettime = reinterpret_cast<ClockGettimeFn>(dlsym(RTLD_NEXT, "clock_gettime"));
  g_real_gettimeofday = reinterpret_cast<GettimeofdayFn>(dlsym(RTLD_NEXT, "gettimeofday"));
  if (g_real_clock_gettime == nullptr || g_real_gettimeofday == nullptr) {
    Die("cannot find the real clock_gettime/gettimeofday", "");
  }
  g_start_mono_ns = RealMonoNs();
  const char* spec = getenv("FLIGHTREC_TEST_CLOCK_JUMPS");
  if (spec == nullptr) return;
  const char* rank_env = getenv("RANK");
  const char* p = spec;
  while (*p != '\0') {
    bool mine = true;
    if (*p == 'r') {
      ++p;
      int64_t rank = -1;
      if (*p < '0' || *p > '9') Die("expected a rank number after 'r'", spec);
      for (rank = 0; *p >= '0' && *p <= '9'; ++p) rank = rank * 10 + (*p - '0');
      if (*p != ':') Die("expected ':' after the rank", spec);
      ++p;
      char buf[24];
      snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(rank));
      mine = rank_env != nullptr && strcmp(rank_env, buf) == 0;
    }
    Step step;
    int64_t after = 0;
    if (!ParseSeconds(&p, true, &step.delta_ns)) Die("expected +SECONDS or -SECONDS", spec);
    if (*p != '@') Die("expected '@' after the step", spec);
    ++p;
    if (!ParseSeconds(&p, false, &after) || after < 0) Die("expected @SECONDS (>= 0)", spec);
    step.after_ns = static_cast<uint64_t>(after);
    if (*p == ',') {
      ++p;
    } else if (*p != '\0') {
      Die("expected ',' between steps", spec);
    }
    if (!mine) continue;
    if (g_nsteps == kMaxSteps) Die("more than 16 steps", spec);
    g_steps[g_nsteps++] = step;
  }
}

void EnsureLoaded() {
  if (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) == 2) return;
  int expected = 0;
  if (__atomic_compare_exchange_n(&g_state, &expected, 1, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE)) {
    Load();
    __atomic_store_n(&g_state, 2, __ATOMIC_RELEASE);
    return;
  }
  // Another thread is loading (only possible before main): it is short.
  while (__atomic_load_n(&g_state, __ATOMIC_ACQUIRE) != 2) {
  }
}

__attribute__((constructor)) void ShimConstructor() { EnsureLoaded(); }

// The wall-clock offset in effect now.
int64_t OffsetNs() {
  if (g_nsteps == 0) return 0;
  const uint64_t life = RealMonoNs() - g_start_mono_ns;
  int64_t offset = 0;
  for (int i = 0; i < g_nsteps; ++i) {
    if (life >= g_steps[i].after_ns) offset += g_steps[i].delta_ns;
  }
  return offset;
}

bool IsWallClock(clockid_t id) {
  return id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE || id == CLOCK_TAI;
}

void Shift(struct timespec* ts, int64_t offset_ns) {
  int64_t ns = static_cast<int64_t>(ts->tv_sec) * kNsPerSec + ts->tv_nsec + offset_ns;
  if (ns < 0) ns = 0;  // before 1970: clamp rather than wrap
  ts->tv_sec = static_cast<time_t>(ns / kNsPerSec);
  ts->tv_nsec = static_cast<long>(ns % kNsPerSec);
}

// Called directly by every entry point below: a call through the PLT would
// reach libc's clock_gettime when the shim is dlopened rather than preloaded.
int ShiftedClockGettime(clockid_t id, struct timespec* ts) {
  EnsureLoaded();
  const int rc = g_real_clock_gettime(id, ts);
  if (rc == 0 && IsWallClock(id)) Shift(ts, OffsetNs());
  return rc;
}

}  // namespace

extern "C" {

__attribute__((visibility("default"))) int clock_gettime(clockid_t id,
                                                         struct timespec* ts) noexcept {
  return ShiftedClockGettime(id, ts);
}

__attribute__((visibility("default"))) int gettimeofday(struct timeval* __restrict tv,
                                                        void* __restrict tz) noexcept {
  EnsureLoaded();
  const int rc = g_real_gettimeofday(tv, tz);
  if (rc == 0) {
    struct timespec ts = {tv->tv_sec, static_cast<long>(tv->tv_usec) * 1000};
    Shift(&ts, OffsetNs());
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = static_cast<suseconds_t>(ts.tv_nsec / 1000);
  }
  return rc;
}

__attribute__((visibility("default"))) time_t time(time_t* out) noexcept {
  struct timespec ts;
  if (ShiftedClockGettime(CLOCK_REALTIME, &ts) != 0) return static_cast<time_t>(-1);
  if (out != nullptr) *out = ts.tv_sec;
  return ts.tv_sec;
}

}  // extern "C"

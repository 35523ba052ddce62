// Compile-time test points in the writer (LTTng's TESTPOINT idea): empty in
// every normal build; with -DFLIGHTREC_TESTPOINTS each one calls the weak hook
// flightrec_testpoint(name) when a test defines it, so crash-point tests can
// stop or kill the writer at a known instruction.
//
// Points: after_claim, mid_payload, before_commit, during_wrap (first claim of
// a new lap), during_seal (dump copy), mid_record_copy (a live reader has
// copied a record's commit and immutable words, not yet its progress words:
// record_copy.h; the kill test does not use it), ring_init (ring creation:
// three hits, after the .init file is created, after its header is written,
// before the rename).
#ifndef FLIGHTREC_RECORDER_TESTPOINT_H_
#define FLIGHTREC_RECORDER_TESTPOINT_H_

#ifdef FLIGHTREC_TESTPOINTS
extern "C" void flightrec_testpoint(const char* name) __attribute__((weak));
#define FLIGHTREC_TESTPOINT(name)                                   \
  do {                                                              \
    if (flightrec_testpoint != nullptr) flightrec_testpoint(#name); \
  } while (0)
#else
#define FLIGHTREC_TESTPOINT(name) \
  do {                            \
  } while (0)
#endif

#endif  // FLIGHTREC_RECORDER_TESTPOINT_H_

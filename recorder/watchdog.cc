#include "recorder/watchdog.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "flightrec/record_names.h"
#include "recorder/atomics.h"
#include "recorder/ce_completion.h"
#include "recorder/clock.h"
#include "recorder/log.h"
#include "recorder/record_copy.h"

namespace flightrec {
namespace rec {
namespace {

// The dump-request mailbox (process-wide; RequestDump may run in a signal
// handler, so everything here is an atomic on static storage).
uint32_t g_request_reason = 0;  // format::DumpReason, 0 = none
char g_request_detail[128] = {};
int g_wake_fd = -1;     // the running watchdog's eventfd, or -1
uint32_t g_wakers = 0;  // PostDumpRequest calls inside the fd window

constexpr uint64_t kNsPerMs = 1000000ULL;

void Wake(int fd) {
  if (fd < 0) return;
  uint64_t one = 1;
  ssize_t n = write(fd, &one, sizeof(one));
  (void)n;  // EAGAIN: a wake-up is already pending, which is all we need
}

}  // namespace

void PostDumpRequest(format::DumpReason reason, const char* detail) {
  CopyNameRelaxed(g_request_detail, sizeof(g_request_detail),
                  detail != nullptr ? detail : "dump requested");
  // Pairs with the acquire exchange in Watchdog::CheckRequest: the detail
  // bytes above are visible once the reason is.
  __atomic_store_n(&g_request_reason, static_cast<uint32_t>(reason), __ATOMIC_RELEASE);
  // g_wakers keeps Stop() from closing the fd between our load and write.
  AddRelaxed(&g_wakers, 1u);
  // Pairs with the release exchange of g_wake_fd in Start/Stop.
  Wake(__atomic_load_n(&g_wake_fd, __ATOMIC_ACQUIRE));
  // Pairs with the acquire load of g_wakers in Stop (our write is done).
  __atomic_fetch_sub(&g_wakers, 1u, __ATOMIC_RELEASE);
}

bool Watchdog::Start(const WatchdogContext& ctx, char* err, size_t err_len) {
  ctx_ = ctx;
  StoreRelaxed(&stop_, 0u);
  const uint32_t regions = ctx.ring->layout.max_regions;
  cursors_ = static_cast<Cursor*>(calloc(regions, sizeof(Cursor)));
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (cursors_ == nullptr || wake_fd_ < 0) {
    snprintf(err, err_len, "watchdog setup failed: %s", strerror(errno));
    free(cursors_);
    cursors_ = nullptr;
    if (wake_fd_ >= 0) close(wake_fd_);
    wake_fd_ = -1;
    return false;
  }
  fileio::MakeTriggerPaths(ctx.cfg->dump_dir, ctx.cfg->job_id, ctx.cfg->trust.uid, &trigger_paths_);
  RefreshTriggerBaseline();
  verdict_.Init(ctx.cfg, ctx.ring->header()->pid, ctx.log);
  // The thread inherits a mask with every signal blocked, so no host signal
  // handler ever runs on it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&thread_, nullptr, &Watchdog::ThreadMain, this);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (rc != 0) {
    snprintf(err, err_len, "cannot start the watchdog thread: %s", strerror(rc));
    close(wake_fd_);
    wake_fd_ = -1;
    free(cursors_);
    cursors_ = nullptr;
    return false;
  }
  started_ = true;
  // Pairs with the acquire load in PostDumpRequest.
  __atomic_store_n(&g_wake_fd, wake_fd_, __ATOMIC_RELEASE);
  return true;
}

void Watchdog::Stop() {
  if (!started_) return;
  // Pairs with the acquire load in PostDumpRequest: no new waker sees the fd.
  __atomic_store_n(&g_wake_fd, -1, __ATOMIC_RELEASE);
  StoreRelaxed(&stop_, 1u);
  Wake(wake_fd_);
  pthread_join(thread_, nullptr);
  verdict_.Stop();
  // Pairs with the release decrement in PostDumpRequest: a signal handler
  // that loaded the fd before we cleared it has finished writing to it.
  while (__atomic_load_n(&g_wakers, __ATOMIC_ACQUIRE) != 0) sched_yield();
  close(wake_fd_);
  wake_fd_ = -1;
  free(cursors_);
  cursors_ = nullptr;
  started_ = false;
}

void Watchdog::ForgetAfterFork() {
  if (!started_) return;
  __atomic_store_n(&g_wake_fd, -1, __ATOMIC_RELAXED);
  close(wake_fd_);
  wake_fd_ = -1;
  verdict_.ForgetAfterFork();
  started_ = false;  // cursors_ leak in the child: freeing could deadlock
}

void* Watchdog::ThreadMain(void* self) {
  pthread_setname_np(pthread_self(), "flightrec-wd");
  static_cast<Watchdog*>(self)->Loop();
  return nullptr;
}

void Watchdog::Loop() {
  const int poll_ms = static_cast<int>(ctx_.cfg->poll_ns / kNsPerMs);
  while (LoadRelaxed(&stop_) == 0) {
    struct pollfd pfd = {wake_fd_, POLLIN, 0};
    if (poll(&pfd, 1, poll_ms) > 0) {
      uint64_t drained = 0;
      ssize_t n = read(wake_fd_, &drained, sizeof(drained));
      (void)n;
    }
    if (LoadRelaxed(&stop_) != 0) break;
    Poll();
  }
}

void Watchdog::Poll() {
  Heartbeat();
  CheckRequest();
  const uint64_t now = ClockNowNs();
  // Copy-engine collectives complete through CUDA events on their stream
  // (ce_completion.h): mark them before they are judged below.
  CePoll(now);
  oldest_pending_ns_ = UINT64_MAX;
  scan_complete_ = true;
  for (uint32_t r = 0; r < ctx_.ring->layout.max_regions; ++r) ScanRegion(r, now);
  // The dump budget: dumps whose pending ops have all completed are released.
  if (scan_complete_) ctx_.dumps->ReleaseResolved(oldest_pending_ns_);
  if (ctx_.cfg->trigger) CheckTrigger();
  verdict_.Poll();
}

void Watchdog::Heartbeat() {
  format::FileHeader* h = ctx_.ring->header();
  // Single writer (this thread): load + store, readers only need each word.
  StoreRelaxed(&h->heartbeat_mono_ns, ClockNowNs());
  StoreRelaxed(&h->heartbeat_wall_ns, RealtimeNs());
  StoreRelaxed(&h->heartbeat_count, LoadRelaxed(&h->heartbeat_count) + 1);
}

void Watchdog::CheckRequest() {
  // Pairs with the release store in PostDumpRequest.
  const uint32_t reason = __atomic_exchange_n(&g_request_reason, 0u, __ATOMIC_ACQUIRE);
  if (reason == 0) return;
  char detail[sizeof(g_request_detail)];
  ReadNameRelaxed(g_request_detail, sizeof(g_request_detail), detail, sizeof(detail));
  ctx_.dumps->Seal(static_cast<format::DumpReason>(reason), detail, nullptr, 0);
  last_dump_ns_ = ClockNowNs();
  RefreshTriggerBaseline();
}

void Watchdog::ScanRegion(uint32_t r, uint64_t now) {
  format::RegionDesc* d = ctx_.ring->region(r);
  // Pairs with the release store of state in ProcessRecorder::OpenComm: the
  // identity and the zeroed records are visible once it reads active.
  if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != format::kRegionActive) return;
  Cursor& c = cursors_[r];
  const uint64_t generation = LoadRelaxed(&d->generation);
  if (c.generation != generation) c = Cursor{generation, 0, UINT64_MAX};
  const uint64_t cap = ctx_.ring->layout.region_capacity;
  const uint64_t head = LoadRelaxed(&d->head);
  if (head > cap && c.next < head - cap) c.next = head - cap;  // overwritten
  const format::Record* records = ctx_.ring->records(r);
  for (uint64_t budget = kScanBudget; budget > 0 && c.next < head; --budget) {
    // The record is judged on a private copy taken with the slot protocol's
    // re-check (record_copy.h), so its state, times and identity all belong
    // to one lap: a slot reclaimed while it was copied never pairs a new
    // lap's state with the old lap's t_enqueue_ns.
    format::Record copy;
    const format::Record* rec = &copy;
    const uint64_t commit = CopyLiveRecord(&records[c.next & (cap - 1)], &copy);
    if (commit > c.next + 1) {  // a newer lap took the slot
      ++c.next;
      continue;
    }
    // A claim in progress, or the slot changed while copied: next poll.
    if (commit != c.next + 1) return;
    // Graph-captured ops are judged like eager ones: where completion is
    // reported (KernelCh, or network proxy ops) NCCL starts a replayed op's
    // Coll/P2p event when the stream reaches it, every replay, so its
    // enqueue time is the replay's (docs/design/nccl.md §CUDA graphs). Only plans with
    // no proxy ops are recorded once at capture, and those comms report no
    // completion, so the check below leaves them alone.
    // A copy-engine op without CUDA events (kFlagNoCompletion) never
    // reports completion: the analyzer infers it from stream order
    // (docs/design/recorder.md §Copy-engine completion); the op after it is
    // judged instead.
    if (rec->state == format::kOpDone || (rec->flags & format::kFlagNoCompletion) != 0) {
      ++c.next;
      continue;
    }
    // The oldest op not done. Judge it only where completion is reported.
    if ((LoadRelaxed(&d->flags) & format::kRegionCompletionTracked) == 0) return;
    const uint64_t t0 = rec->t_enqueue_ns;
    if (t0 < oldest_pending_ns_) oldest_pending_ns_ = t0;
    if (now > t0 && now - t0 > ctx_.cfg->timeout_ns && c.reported != c.next) {
      c.reported = c.next;
      OnStuck(r, rec, c.next, now);
    }
    return;
  }
  if (c.next < head) scan_complete_ = false;  // budget spent: the oldest is unknown
}

void Watchdog::OnStuck(uint32_t r, const format::Record* rec, uint64_t seq, uint64_t now) {
  const format::RegionDesc* d = ctx_.ring->region(r);
  char name[64];
  ReadNameRelaxed(d->comm_name, sizeof(d->comm_name), name, sizeof(name));
  const double stuck_s = static_cast<double>(now - LoadRelaxed(&rec->t_enqueue_ns)) / 1e9;
  char detail[128];
  snprintf(detail, sizeof(detail), "comm %s (0x%llx) %s op#%llu seq %llu stuck %.1f s",
           name[0] != '\0' ? name : "?", static_cast<unsigned long long>(LoadRelaxed(&d->comm_id)),
           format::FuncName(LoadRelaxed(&rec->func)),
           static_cast<unsigned long long>(LoadRelaxed(&rec->op_index)),
           static_cast<unsigned long long>(seq), stuck_s);
  Logf(ctx_.log, kLogWarn, "op stuck past NCCL_FLIGHTREC_TIMEOUT_S: %s", detail);
  if (!ctx_.dumps->Seal(format::kDumpTimeout, detail, nullptr, 0)) return;
  last_dump_ns_ = ClockNowNs();
  verdict_.OnIncidentDump(true);
  char err[kPathMax + 128];
  if (!fileio::WriteTrigger(ctx_.cfg->dump_dir, ctx_.cfg->job_id, ctx_.host,
                            ctx_.ring->header()->pid, format::kTriggerReasonTimeout,
                            ctx_.cfg->trust, err, sizeof(err))) {
    Logf(ctx_.log, kLogWarn, "cannot leave the trigger file: %s", err);
  }
  RefreshTriggerBaseline();
}

void Watchdog::CheckTrigger() {
  // Only a regular file owned by us (or the trusted group) counts; a
  // symlink or another user's file in its place is never read.
  const fileio::TriggerState now = fileio::ReadTriggerState(trigger_paths_, ctx_.cfg->trust);
  if (now == trigger_seen_) return;
  trigger_seen_ = now;
  if (!now.any()) return;  // removed: nothing to answer
  // Same incident: our recent dump, or our dump whose ops are still pending,
  // already answers it.
  if ((last_dump_ns_ != 0 && ClockNowNs() - last_dump_ns_ < ctx_.cfg->timeout_ns) ||
      ctx_.dumps->incident_open()) {
    ctx_.dumps->CountAbsorbed();
    return;
  }
  // Only the parsed fields reach the dump (a sanitized host, a number, a
  // word of the fixed set); a trigger whose text does not parse is not
  // flightrec's and is ignored.
  format::TriggerLine line;
  if (!fileio::ReadTrigger(trigger_paths_, ctx_.cfg->trust, &line)) {
    Logf(ctx_.log, kLogInfo, "ignored a trigger file that flightrec did not write");
    return;
  }
  char detail[128];
  snprintf(detail, sizeof(detail), "trigger from %s %lld %s", line.host,
           static_cast<long long>(line.pid), line.reason);
  // A user's request (`flightrec trigger`) is a snapshot, not evidence of a
  // hang: it is sealed as a request dump and starts no verdict.
  const bool hang = line.FromTimeout();
  if (ctx_.dumps->Seal(hang ? format::kDumpTrigger : format::kDumpRequest, detail, nullptr, 0) &&
      hang) {
    verdict_.OnIncidentDump(false);
  }
  last_dump_ns_ = ClockNowNs();
  RefreshTriggerBaseline();
}

void Watchdog::RefreshTriggerBaseline() {
  trigger_seen_ = fileio::ReadTriggerState(trigger_paths_, ctx_.cfg->trust);
}

}  // namespace rec
}  // namespace flightrec

#include "recorder/process_recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <new>

#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/dump_signal.h"
#include "recorder/host_info.h"
#include "recorder/log.h"

namespace flightrec {

namespace rec {
CommRecorder* g_comm_table[format::kMaxRegions] = {};
format::FileHeader* g_live_header = nullptr;
uint64_t g_pending_drops[format::kNumDropCauses] = {};
}  // namespace rec

namespace {
// Process-wide init counter (1-based), kept across recorder restarts so a
// handle from an earlier load never matches a new communicator.
uint64_t g_generation = 0;
constexpr uint32_t kUnknownPeers = 4096;
constexpr size_t kPointerBytes = sizeof(void*);  // one CommRecorder* per region
}  // namespace

ProcessRecorder* ProcessRecorder::Start(LogFn log, int api_version) {
  ProcessRecorder* p = new (std::nothrow) ProcessRecorder();
  if (p == nullptr) {
    rec::Logf(log, kLogWarn, "disabled: out of memory");
    return nullptr;
  }
  if (!p->Init(log, api_version)) {
    delete p;
    return nullptr;
  }
  return p;
}

bool ProcessRecorder::Init(LogFn log, int api_version) {
  log_ = log;
  rec::LoadConfig(&cfg_, log);
  if (!cfg_.enable) {
    rec::Logf(log, kLogInfo, "disabled by NCCL_FLIGHTREC_ENABLE=0");
    return false;
  }
  char note[128];
  rec::InitClock(cfg_.clock, note, sizeof(note));
  if (note[0] != '\0') rec::Logf(log, kLogWarn, "%s", note);
  rec::HostName(host_, sizeof(host_));
  char err[rec::kPathMax + 128];
  comms_ = static_cast<CommRecorder**>(calloc(cfg_.max_comms, kPointerBytes));
  if (comms_ == nullptr) {
    rec::Logf(log, kLogWarn, "disabled: out of memory for the region table");
    return false;
  }
  if (!rec::CreateRingFile(cfg_, host_, &ring_, err, sizeof(err))) {
    rec::Logf(log, kLogWarn, "disabled: %s", err);
    free(comms_);
    return false;
  }
  ring_.header()->api_version = static_cast<uint32_t>(api_version);
  if (!rec::MakeDirs(cfg_.dump_dir, err, sizeof(err))) {
    rec::Logf(log, kLogWarn, "dumps will fail: %s", err);
  }
  dumps_.Init(&ring_, &cfg_, host_, log);
  rec::WatchdogContext ctx;
  ctx.ring = &ring_;
  ctx.cfg = &cfg_;
  ctx.dumps = &dumps_;
  ctx.host = host_;
  ctx.log = log;
  if (!watchdog_.Start(ctx, err, sizeof(err))) {
    rec::Logf(log, kLogWarn, "recording without a watchdog: %s", err);
  }
  if (cfg_.dump_signal != 0) rec::InstallDumpSignal(cfg_.dump_signal, log);
  format::FileHeader* h = ring_.header();
  for (uint32_t c = 0; c < format::kNumDropCauses; ++c) {
    const uint64_t n = __atomic_exchange_n(&rec::g_pending_drops[c], uint64_t{0}, __ATOMIC_RELAXED);
    rec::AddRelaxed(&h->drops[c], n);
  }
  // Pairs with the acquire load in CountProcessDrop.
  __atomic_store_n(&rec::g_live_header, h, __ATOMIC_RELEASE);
  rec::Logf(log, kLogInfo, "recording to %s (%u comms x %llu records, timeout %.3f s)", ring_.path,
            cfg_.max_comms, static_cast<unsigned long long>(cfg_.records),
            static_cast<double>(cfg_.timeout_ns) / 1e9);
  return true;
}

int32_t ProcessRecorder::ClaimRegion() const {
  int32_t oldest = -1;
  uint64_t oldest_ns = UINT64_MAX;
  for (uint32_t r = 0; r < ring_.layout.max_regions; ++r) {
    const format::RegionDesc* d = ring_.region(r);
    const uint32_t state = rec::LoadRelaxed(&d->state);
    if (state == format::kRegionFree) return static_cast<int32_t>(r);
    const uint64_t fin = rec::LoadRelaxed(&d->finalize_mono_ns);
    if (state == format::kRegionFinalized && fin < oldest_ns) {
      oldest = static_cast<int32_t>(r);
      oldest_ns = fin;
    }
  }
  return oldest;
}

// Drops the finalized CommRecorder that last used region r. NCCL delivers no
// event for a communicator after its finalize, and CommByRegion stopped
// returning it at CloseComm, so nothing can hold it any more.
void ProcessRecorder::Retire(uint32_t r) {
  CommRecorder* old = comms_[r];
  if (old == nullptr) return;
  // Pairs with the acquire load in CommByRegion.
  __atomic_store_n(&rec::g_comm_table[r], static_cast<CommRecorder*>(nullptr), __ATOMIC_RELEASE);
  free(old->p2p_counters_);
  delete old;
  comms_[r] = nullptr;
}

// Zeroes a reused region so no record of the previous generation can pass
// for one of the new one (its slot sequences restart at 0).
void ProcessRecorder::ResetRegion(uint32_t r) {
  format::RegionDesc* d = ring_.region(r);
  rec::StoreRelaxed(&d->state, uint32_t{format::kRegionFree});
  uint64_t* words = reinterpret_cast<uint64_t*>(ring_.records(r));
  const uint64_t n = ring_.layout.region_capacity * format::kRecordSize / 8;
  for (uint64_t i = 0; i < n; ++i) rec::StoreRelaxed(&words[i], uint64_t{0});
  uint64_t* desc_words = reinterpret_cast<uint64_t*>(d);
  for (uint32_t i = 1; i < format::kRegionDescSize / 8; ++i) {
    rec::StoreRelaxed(&desc_words[i], uint64_t{0});
  }
  rec::StoreRelaxed(&d->region_index, r);
}

CommRecorder* ProcessRecorder::OpenComm(const CommIdentity& id, LogFn log) {
  const int32_t r = ClaimRegion();
  if (r < 0) {
    CountDrop(format::kDropNoRegion);
    if (!no_region_logged_) {
      rec::Logf(log, kLogWarn,
                "no free region for comm %s (0x%llx): all %u in use; raise "
                "NCCL_FLIGHTREC_MAX_COMMS (further misses are only counted)",
                id.name != nullptr ? id.name : "?", static_cast<unsigned long long>(id.comm_id),
                cfg_.max_comms);
      no_region_logged_ = true;
    }
    return nullptr;
  }
  CommRecorder* c = new (std::nothrow) CommRecorder();
  const uint32_t peers = id.nranks > 0 ? static_cast<uint32_t>(id.nranks) : kUnknownPeers;
  uint64_t* counters = static_cast<uint64_t*>(calloc(static_cast<size_t>(peers) * 2, 8));
  if (c == nullptr || counters == nullptr) {
    delete c;
    free(counters);
    rec::Logf(log, kLogWarn, "not recording comm 0x%llx: out of memory",
              static_cast<unsigned long long>(id.comm_id));
    return nullptr;
  }
  const uint32_t ri = static_cast<uint32_t>(r);
  Retire(ri);
  ResetRegion(ri);
  format::RegionDesc* d = ring_.region(ri);
  rec::StoreRelaxed(&d->comm_id, id.comm_id);
  rec::StoreRelaxed(&d->rank, id.rank);
  rec::StoreRelaxed(&d->nranks, id.nranks);
  rec::StoreRelaxed(&d->nnodes, id.nnodes);
  uint32_t flags = id.from_init ? uint32_t{format::kRegionIdentityFromInit} : 0u;
  if (id.completion_tracked) flags |= format::kRegionCompletionTracked;
  rec::StoreRelaxed(&d->flags, flags);
  rec::CopyNameRelaxed(d->comm_name, sizeof(d->comm_name), id.name);
  const uint64_t generation = ++g_generation;
  rec::StoreRelaxed(&d->generation, generation);
  rec::StoreRelaxed(&d->init_mono_ns, rec::ClockNowNs());

  c->header_ = ring_.header();
  c->desc_ = d;
  c->records_ = ring_.records(ri);
  c->mask_ = ring_.layout.region_capacity - 1;
  c->p2p_counters_ = counters;
  c->p2p_peers_ = peers;
  c->region_index_ = ri;
  c->generation_low8_ = static_cast<uint32_t>(generation & 0xff);
  c->rank_ = id.rank;
  c->identity_bound_ = id.from_init ? 1u : 0u;
  comms_[ri] = c;
  ++open_comms_;
  // Publishes the region. Pairs with the acquire load of state in the
  // watchdog scan and in readers of the file.
  __atomic_store_n(&d->state, uint32_t{format::kRegionActive}, __ATOMIC_RELEASE);
  // Pairs with the acquire load in CommByRegion.
  __atomic_store_n(&rec::g_comm_table[ri], c, __ATOMIC_RELEASE);
  rec::Logf(log, kLogInfo, "comm %s (0x%llx) rank %d: region %u, generation %llu",
            id.name != nullptr ? id.name : "?", static_cast<unsigned long long>(id.comm_id),
            id.rank, ri, static_cast<unsigned long long>(generation));
  return c;
}

void ProcessRecorder::BindIdentity(CommRecorder* c, uint64_t comm_id, const char* name,
                                   int32_t rank) {
  if (c->identity_bound_ != 0) return;
  c->identity_bound_ = 1;
  rec::StoreRelaxed(&c->desc_->comm_id, comm_id);
  rec::StoreRelaxed(&c->desc_->rank, rank);
  rec::CopyNameRelaxed(c->desc_->comm_name, sizeof(c->desc_->comm_name), name);
  rec::StoreRelaxed(&c->rank_, rank);
}

bool ProcessRecorder::Owns(const CommRecorder* c) const {
  const uint32_t r = c->region_index_;
  return r < ring_.layout.max_regions && comms_[r] == c;
}

bool ProcessRecorder::CloseComm(CommRecorder* c) {
  if (c->finalized()) return open_comms_ == 0;
  rec::StoreRelaxed(&c->finalized_, 1u);
  format::RegionDesc* d = c->desc_;
  rec::StoreRelaxed(&d->finalize_mono_ns, rec::ClockNowNs());
  // Pairs with the acquire load of state in the watchdog and readers.
  __atomic_store_n(&d->state, uint32_t{format::kRegionFinalized}, __ATOMIC_RELEASE);
  --open_comms_;
  return open_comms_ == 0;
}

void ProcessRecorder::SetApiVersion(int api_version) {
  uint32_t* field = &ring_.header()->api_version;
  if (rec::LoadRelaxed(field) == 0) rec::StoreRelaxed(field, static_cast<uint32_t>(api_version));
}

void ProcessRecorder::CountDrop(format::DropCause cause) {
  const uint32_t c = static_cast<uint32_t>(cause);
  if (c < format::kNumDropCauses) rec::AddRelaxed(&ring_.header()->drops[c], uint64_t{1});
}

void ProcessRecorder::FinishProcess() {
  if (finished_ || forked_) return;
  finished_ = true;
  watchdog_.Stop();
  rec::RestoreDumpSignal();
  if (cfg_.dump_on_exit) dumps_.Seal(format::kDumpExit, "process recorder shut down", nullptr, 0);
  rec::StoreRelaxed(&ring_.header()->process_state, uint32_t{format::kProcessExited});
}

void ProcessRecorder::ExitHandler() { FinishProcess(); }

void ProcessRecorder::Shutdown() {
  // Pairs with the acquire load in CountProcessDrop: new drops go to the
  // pending counters from here on.
  __atomic_store_n(&rec::g_live_header, static_cast<format::FileHeader*>(nullptr),
                   __ATOMIC_RELEASE);
  FinishProcess();
  rec::RestoreDumpSignal();  // also in a fork child, before we can be unloaded
  for (uint32_t r = 0; r < ring_.layout.max_regions; ++r) Retire(r);
  rec::UnmapRing(&ring_);
  free(comms_);
  delete this;
}

void ProcessRecorder::ForkChild() {
  forked_ = true;
  rec::StoreRelaxed(&rec::g_live_header, static_cast<format::FileHeader*>(nullptr));
  rec::DetachMapping(&ring_);
  watchdog_.ForgetAfterFork();
}

}  // namespace flightrec

#include "recorder/process_recorder.h"

#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <new>

#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/dump_signal.h"
#include "recorder/host_info.h"
#include "recorder/log.h"
#include "recorder/record_copy.h"

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
  // A parked slab of the same layout is recycled (its range mapped over);
  // else a new one.
  slab_ = rec::TakeParkedSlab(rec::ComputeLayout(cfg_.max_comms, cfg_.records));
  unsigned char* at = slab_ != nullptr ? slab_->ring.base : nullptr;
  if (slab_ == nullptr) slab_ = rec::NewSlab(cfg_.max_comms);
  if (slab_ == nullptr) {
    rec::Logf(log, kLogWarn, "disabled: out of memory for the region table");
    return false;
  }
  if (!rec::CreateRingFile(cfg_, host_, at, &slab_->ring, err, sizeof(err))) {
    rec::Logf(log, kLogWarn, "disabled: %s", err);
    if (at != nullptr) {
      rec::ParkSlab(slab_);  // the range stays mapped (anonymous now)
    } else {
      rec::FreeUnmappedSlab(slab_);
    }
    slab_ = nullptr;
    return false;
  }
  rec::StoreRelaxed(&ring().header()->api_version, static_cast<uint32_t>(api_version));
  {
    // Created now (0700, or 0750 with a trusted group) when missing; who
    // else can write it is said once: every file there is created and read
    // by the fileio rules (docs/security.md).
    char note[fileio::kWhyMax * 2];
    const int dump_fd = fileio::OpenDir(cfg_.dump_dir, fileio::DirRole::kShared, cfg_.trust, true,
                                        err, sizeof(err), note, sizeof(note));
    if (dump_fd < 0) {
      rec::Logf(log, kLogWarn, "dumps will fail: %s", err);
    } else {
      close(dump_fd);
      if (note[0] != '\0') rec::Logf(log, kLogInfo, "%s", note);
    }
  }
  dumps_.Init(&ring(), &cfg_, host_, log);
  rec::WatchdogContext ctx;
  ctx.ring = &ring();
  ctx.cfg = &cfg_;
  ctx.dumps = &dumps_;
  ctx.host = host_;
  ctx.log = log;
  if (!watchdog_.Start(ctx, err, sizeof(err))) {
    rec::Logf(log, kLogWarn, "recording without a watchdog: %s", err);
  }
  if (cfg_.dump_signal != 0) rec::InstallDumpSignal(cfg_.dump_signal, log);
  format::FileHeader* h = ring().header();
  for (uint32_t c = 0; c < format::kNumDropCauses; ++c) {
    const uint64_t n = __atomic_exchange_n(&rec::g_pending_drops[c], uint64_t{0}, __ATOMIC_RELAXED);
    rec::AddRelaxed(&h->drops[c], n);
  }
  // Pairs with the acquire load in CountProcessDrop.
  __atomic_store_n(&rec::g_live_header, h, __ATOMIC_RELEASE);
  rec::Logf(log, kLogInfo, "recording to %s (%u comms x %llu records, timeout %.3f s)", ring().path,
            cfg_.max_comms, static_cast<unsigned long long>(cfg_.records),
            static_cast<double>(cfg_.timeout_ns) / 1e9);
  return true;
}

int32_t ProcessRecorder::ClaimRegion() const {
  int32_t oldest = -1;
  uint64_t oldest_ns = UINT64_MAX;
  for (uint32_t r = 0; r < ring().layout.max_regions; ++r) {
    const format::RegionDesc* d = ring().region(r);
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

// Zeroes a reused region so no record of the previous generation can pass
// for one of the new one (its slot sequences restart at 0).
void ProcessRecorder::ResetRegion(uint32_t r) {
  format::RegionDesc* d = ring().region(r);
  rec::StoreRelaxed(&d->state, uint32_t{format::kRegionFree});
  uint64_t* words = reinterpret_cast<uint64_t*>(ring().records(r));
  const uint64_t n = ring().layout.region_capacity * format::kRecordSize / 8;
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
  const uint32_t ri = static_cast<uint32_t>(r);
  // The region's finalized comm (if any) stops resolving before its object
  // is re-armed. Pairs with the acquire load in LookupComm.
  __atomic_store_n(&rec::g_comm_table[ri], static_cast<CommRecorder*>(nullptr), __ATOMIC_RELEASE);
  // The region's object, kept for the library's lifetime (ring_slab.h).
  const uint32_t peers = id.nranks > 0 ? static_cast<uint32_t>(id.nranks) : kUnknownPeers;
  CommRecorder* c = rec::SlabComm(slab_, ri, peers);
  if (c == nullptr) {
    rec::Logf(log, kLogWarn, "not recording comm 0x%llx: out of memory",
              static_cast<unsigned long long>(id.comm_id));
    return nullptr;
  }
  ResetRegion(ri);
  format::RegionDesc* d = ring().region(ri);
  rec::StoreRelaxed(&d->comm_id, id.comm_id);
  rec::StoreRelaxed(&d->rank, id.rank);
  rec::StoreRelaxed(&d->nranks, id.nranks);
  rec::StoreRelaxed(&d->nnodes, id.nnodes);
  uint32_t flags = id.from_init ? uint32_t{format::kRegionIdentityFromInit} : 0u;
  if (id.completion_tracked) flags |= format::kRegionCompletionTracked;
  rec::StoreRelaxed(&d->flags, flags);
  rec::StoreRelaxed(&d->event_mask, id.event_mask);
  rec::CopyNameRelaxed(d->comm_name, sizeof(d->comm_name), id.name);
  const uint64_t generation = ++g_generation;
  rec::StoreRelaxed(&d->generation, generation);
  rec::StoreRelaxed(&d->init_mono_ns, rec::ClockNowNs());

  // The same values for every comm of this region of this slab: a late
  // writer of the previous comm reads exactly these (ring_slab.h).
  c->header_ = ring().header();
  c->desc_ = d;
  c->records_ = ring().records(ri);
  c->mask_ = ring().layout.region_capacity - 1;
  c->region_index_ = ri;
  // Re-armed for this comm (relaxed: a late writer of the previous comm may
  // read them; LookupComm's generation test then turns its new events away).
  rec::StoreRelaxed(&c->generation_low8_, static_cast<uint32_t>(generation & 0xff));
  rec::StoreRelaxed(&c->rank_, id.rank);
  c->identity_bound_ = id.from_init ? 1u : 0u;
  rec::StoreRelaxed(&c->finalized_, 0u);
  rec::StoreRelaxed(&c->live_key_,
                    CommRecorder::kLiveKeyBit | static_cast<uint32_t>(generation & 0xff));
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
  return r < ring().layout.max_regions && slab_->comms[r] == c;
}

bool ProcessRecorder::CloseComm(CommRecorder* c) {
  if (c->finalized()) return open_comms_ == 0;
  rec::StoreRelaxed(&c->finalized_, 1u);
  rec::StoreRelaxed(&c->live_key_, 0u);  // new lookups of this comm miss
  format::RegionDesc* d = c->desc_;
  rec::StoreRelaxed(&d->finalize_mono_ns, rec::ClockNowNs());
  // NCCL calls finalize after its proxy thread joined and stops no open
  // event on the way (ncclCommAbort, destroy after ncclCommRevoke): ops not
  // done now never will be. Written before the state is published.
  const uint32_t open = OpenAtFinalize(c);
  rec::StoreRelaxed(&d->open_at_finalize, open);
  if (open > 0) {
    // An OR: a late event's MarkCompletionTracked may race with it.
    __atomic_fetch_or(&d->flags, uint32_t{format::kRegionEndedInFlight}, __ATOMIC_RELAXED);
  }
  // Pairs with the acquire load of state in the watchdog and readers.
  __atomic_store_n(&d->state, uint32_t{format::kRegionFinalized}, __ATOMIC_RELEASE);
  // New lookups miss at once. Pairs with the acquire load in LookupComm.
  __atomic_store_n(&rec::g_comm_table[c->region_index_], static_cast<CommRecorder*>(nullptr),
                   __ATOMIC_RELEASE);
  --open_comms_;
  return open_comms_ == 0;
}

uint32_t ProcessRecorder::OpenAtFinalize(const CommRecorder* c) const {
  const format::RegionDesc* d = c->desc_;
  // Without KernelCh or ProxyOp events no op ever reports done: nothing to
  // count (the reader cannot tell an abort from a clean destroy there).
  if ((rec::LoadRelaxed(&d->flags) & format::kRegionCompletionTracked) == 0) return 0;
  const uint64_t cap = ring().layout.region_capacity;
  const uint64_t head = rec::LoadRelaxed(&d->head);
  const uint64_t first = head > cap ? head - cap : 0;
  uint32_t open = 0;
  for (uint64_t seq = first; seq < head; ++seq) {
    format::Record copy;
    // A slot whose copy does not belong to `seq` (claim in progress, newer
    // lap) is not one of this window's ops.
    if (rec::CopyLiveRecord(&c->records_[seq & (cap - 1)], &copy) != seq + 1) continue;
    // kFlagNoCompletion: no event could ever have marked it done.
    if (copy.state != format::kOpDone && (copy.flags & format::kFlagNoCompletion) == 0 &&
        open < UINT32_MAX) {
      ++open;
    }
  }
  return open;
}

void ProcessRecorder::SetApiVersion(int api_version) {
  uint32_t* field = &ring().header()->api_version;
  if (rec::LoadRelaxed(field) == 0) rec::StoreRelaxed(field, static_cast<uint32_t>(api_version));
}

void ProcessRecorder::CountDrop(format::DropCause cause) {
  const uint32_t c = static_cast<uint32_t>(cause);
  if (c < format::kNumDropCauses) rec::AddRelaxed(&ring().header()->drops[c], uint64_t{1});
}

void ProcessRecorder::FinishProcess() {
  if (finished_ || forked_) return;
  finished_ = true;
  watchdog_.Stop();
  rec::RestoreDumpSignal();
  if (cfg_.dump_on_exit) dumps_.Seal(format::kDumpExit, "process recorder shut down", nullptr, 0);
  rec::StoreRelaxed(&ring().header()->process_state, uint32_t{format::kProcessExited});
}

void ProcessRecorder::ExitHandler() { FinishProcess(); }

void ProcessRecorder::Shutdown() {
  // Pairs with the acquire load in CountProcessDrop: new drops go to the
  // pending counters from here on.
  __atomic_store_n(&rec::g_live_header, static_cast<format::FileHeader*>(nullptr),
                   __ATOMIC_RELEASE);
  FinishProcess();
  rec::RestoreDumpSignal();  // also in a fork child, before we can be unloaded
  for (uint32_t r = 0; r < ring().layout.max_regions; ++r) {
    // Pairs with the acquire load in LookupComm.
    __atomic_store_n(&rec::g_comm_table[r], static_cast<CommRecorder*>(nullptr), __ATOMIC_RELEASE);
  }
  // A proxy thread past its lookup may still write through the objects and
  // the mapping: both are kept until unload (ring_slab.h).
  rec::ParkSlab(slab_);
  slab_ = nullptr;
  delete this;
}

void ProcessRecorder::ForkChild() {
  forked_ = true;
  rec::StoreRelaxed(&rec::g_live_header, static_cast<format::FileHeader*>(nullptr));
  rec::DetachMapping(&ring());
  watchdog_.ForgetAfterFork();
}

}  // namespace flightrec

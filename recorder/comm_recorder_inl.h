// Inline bodies of CommRecorder's hot path. Included by comm_recorder.h only.
//
// Every function here: no lock, no allocation, no syscall (the clock is
// rdtsc or a vDSO call), no exception, straight-line code. The record state
// machine is the one documented in include/flightrec/record_format.h.
//
// Threads: BeginOp/OpEnqueued run on NCCL's launch thread; KernelStart/Stop
// and ProxyOp*/ProxyProgress on its proxy thread, which is therefore the
// single writer of every progress word of a record: those words use a
// relaxed load + store, not an atomic read-modify-write.
#ifndef FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_
#define FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_

#include "flightrec/record_names.h"
#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/comm_recorder.h"
#include "recorder/testpoint.h"

namespace flightrec {
namespace rec {
// 0 once recording is off for the whole process (fork child). Relaxed: a
// late reader just records one more op into memory nobody reads.
extern uint32_t g_hot_enabled;
// region index -> live CommRecorder (or nullptr); defined and written by
// process_recorder.cc.
extern CommRecorder* g_comm_table[format::kMaxRegions];

// CommByRegion's body, inline: every event that carries a handle resolves
// it, ~20 per collective, and the out-of-line call was ~9 % of the hot path.
inline CommRecorder* LookupComm(uint32_t region_index, uint32_t generation_low8);
}  // namespace rec

inline uint32_t CommRecorder::region_index() const { return region_index_; }
inline uint32_t CommRecorder::generation_low8() const { return generation_low8_; }
inline int32_t CommRecorder::rank() const { return rec::LoadRelaxed(&rank_); }
inline bool CommRecorder::finalized() const { return rec::LoadRelaxed(&finalized_) != 0; }

inline uint64_t CommRecorder::NowNs() { return rec::ClockNowNs(); }

inline CommRecorder* rec::LookupComm(uint32_t region_index, uint32_t generation_low8) {
  if (region_index >= format::kMaxRegions) return nullptr;
  if (LoadRelaxed(&g_hot_enabled) == 0) return nullptr;  // fork child
  // Pairs with the release stores in ProcessRecorder::OpenComm / Retire.
  CommRecorder* c = __atomic_load_n(&g_comm_table[region_index], __ATOMIC_ACQUIRE);
  if (c == nullptr || c->generation_low8() != (generation_low8 & 0xffu) || c->finalized()) {
    return nullptr;
  }
  return c;
}

inline void CommRecorder::CountDrop(format::DropCause cause) {
  const uint32_t c = static_cast<uint32_t>(cause);
  if (c >= format::kNumDropCauses) return;
  rec::AddRelaxed(&header_->drops[c], uint64_t{1});
  if (c < 8) rec::AddRelaxed(&desc_->drops[c], uint64_t{1});
}

inline uint64_t CommRecorder::NoteApiCall(const ApiCall& call) {
  const uint64_t ticket = rec::AddRelaxed(&api_next_, uint64_t{1});
  ApiSlot* s = &api_[ticket & (kApiSlots - 1)];
  rec::StoreRelaxed(&s->token, uint64_t{0});
  // Pairs with the acquire fence in LookupApiCall: a reader that sees any
  // field below also sees token == 0 on its re-check.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  rec::StoreRelaxed(&s->t_api_ns, call.t_api_ns);
  rec::StoreRelaxed(&s->user_tag, call.user_tag);
  rec::StoreRelaxed(&s->stream, call.stream);
  rec::StoreRelaxed(&s->graph_captured, uint64_t{call.graph_captured});
  // Pairs with the acquire load of token in LookupApiCall.
  __atomic_store_n(&s->token, ticket + 1, __ATOMIC_RELEASE);
  return ticket + 1;
}

inline bool CommRecorder::LookupApiCall(uint64_t token, ApiCall* out) {
  ApiSlot* s = &api_[(token - 1) & (kApiSlots - 1)];
  // Pairs with the release store of token in NoteApiCall.
  if (token == 0 || __atomic_load_n(&s->token, __ATOMIC_ACQUIRE) != token) {
    CountDrop(format::kDropNoApiSlot);
    return false;
  }
  ApiCall copy;
  copy.t_api_ns = rec::LoadRelaxed(&s->t_api_ns);
  copy.user_tag = rec::LoadRelaxed(&s->user_tag);
  copy.stream = rec::LoadRelaxed(&s->stream);
  copy.graph_captured = static_cast<uint8_t>(rec::LoadRelaxed(&s->graph_captured));
  // Pairs with the release fence in NoteApiCall (seqlock re-check).
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (rec::LoadRelaxed(&s->token) != token) {
    CountDrop(format::kDropNoApiSlot);
    return false;
  }
  *out = copy;
  return true;
}

inline uint64_t CommRecorder::NextOpIndex(const OpDesc& op) {
  if ((op.flags & format::kFlagP2p) == 0) {
    return rec::AddRelaxed(&desc_->coll_count, uint64_t{1});
  }
  rec::AddRelaxed(&desc_->p2p_count, uint64_t{1});
  const int32_t peer = op.root_or_peer;
  if (peer < 0 || static_cast<uint32_t>(peer) >= p2p_peers_) return UINT64_MAX;
  const uint32_t dir = op.func == format::kFuncRecv ? 1 : 0;
  return rec::AddRelaxed(&p2p_counters_[static_cast<uint64_t>(peer) * 2 + dir], uint64_t{1});
}

// Fills the immutable words of `slot` (commit is already 0) and its progress
// words. The immutable part is built in a local copy so the checksum is
// computed once, then stored word by word with relaxed stores.
inline void CommRecorder::WriteRecord(format::Record* slot, const OpDesc& op, uint64_t seq,
                                      uint64_t op_index, uint64_t now) {
  format::Record img;
  img.commit = seq + 1;
  img.op_index = op_index;
  img.nccl_seq = op.nccl_seq;
  img.count = op.count;
  img.user_tag = op.user_tag;
  img.t_api_ns = op.t_api_ns;
  img.t_enqueue_ns = now;
  img.stream = op.stream;
  img.root_or_peer = op.root_or_peer;
  img.func = op.func;
  img.datatype = op.datatype;
  img.algo = op.algo;
  img.proto = op.proto;
  img.n_channels = op.n_channels;
  img.n_warps = op.n_warps;
  img.flags = static_cast<uint8_t>(op.flags | (op.t_api_ns != 0 ? format::kFlagHasApi : 0));
  img.type_size = format::DataTypeSize(op.datatype);
  img.checksum = 0;
  img.checksum = format::RecordChecksum(reinterpret_cast<const unsigned char*>(&img), seq);
  const uint64_t* src = reinterpret_cast<const uint64_t*>(&img);
  uint64_t* dst = reinterpret_cast<uint64_t*>(slot);
  constexpr uint32_t kWords = format::kRecordSize / 8;  // 16
  constexpr uint32_t kFirstMutable = 80 / 8;            // 10
  for (uint32_t w = 1; w < kFirstMutable; ++w) {
    rec::StoreRelaxed(&dst[w], src[w]);
    if (w == 5) FLIGHTREC_TESTPOINT(mid_payload);
  }
  for (uint32_t w = kFirstMutable; w < kWords; ++w) rec::StoreRelaxed(&dst[w], uint64_t{0});
  rec::StoreRelaxed(&slot->state, static_cast<uint8_t>(format::kOpEnqueued));
}

inline uint64_t CommRecorder::BeginOp(const OpDesc& op) {
  if (rec::LoadRelaxed(&rec::g_hot_enabled) == 0) {
    CountDrop(format::kDropDisabled);
    return kNoSlot;
  }
  if (finalized()) {
    CountDrop(format::kDropAfterFinalize);
    return kNoSlot;
  }
  const uint64_t seq = rec::AddRelaxed(&desc_->head, uint64_t{1});
  FLIGHTREC_TESTPOINT(after_claim);
  if (seq > mask_ && (seq & mask_) == 0) FLIGHTREC_TESTPOINT(during_wrap);
  const uint64_t op_index = NextOpIndex(op);
  const uint64_t now = NowNs();
  format::Record* slot = &records_[seq & mask_];
  rec::StoreRelaxed(&slot->commit, uint64_t{0});
  // Invalidates the old lap before any payload byte changes. Pairs with the
  // acquire fence a reader issues after copying a record and before it
  // re-reads commit (the dump copy and the watchdog scan).
  __atomic_thread_fence(__ATOMIC_RELEASE);
  WriteRecord(slot, op, seq, op_index, now);
  FLIGHTREC_TESTPOINT(before_commit);
  // Publishes the record. Pairs with the acquire load of commit in LiveSlot,
  // in the watchdog scan and in every reader.
  __atomic_store_n(&slot->commit, seq + 1, __ATOMIC_RELEASE);
  rec::StoreRelaxed(&desc_->last_enqueue_mono_ns, now);
  return seq;
}

inline format::Record* CommRecorder::LiveSlot(uint64_t seq) {
  if (seq == kNoSlot) return nullptr;  // BeginOp declined; nothing to count
  format::Record* slot = &records_[seq & mask_];
  // Pairs with the release store of commit in BeginOp: n_channels and the
  // other immutable words read after this belong to `seq`.
  if (__atomic_load_n(&slot->commit, __ATOMIC_ACQUIRE) != seq + 1) {
    CountDrop(format::kDropStaleHandle);
    return nullptr;
  }
  return slot;
}

inline void CommRecorder::OpEnqueued(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r != nullptr) rec::StoreRelaxed(&r->t_enqueued_ns, NowNs());
}

inline void CommRecorder::MarkCompletionTracked() {
  // Once per region: the watchdog only judges ops of regions that report
  // completion (see docs/design/recorder.md).
  if ((rec::LoadRelaxed(&desc_->flags) & format::kRegionCompletionTracked) == 0) {
    __atomic_fetch_or(&desc_->flags, uint32_t{format::kRegionCompletionTracked}, __ATOMIC_RELAXED);
  }
}

inline void CommRecorder::NoteGpuOffset(uint64_t gpu_timer_ns, uint64_t now) {
  // Several proxy threads may race here; a lost minimum only makes the
  // estimate slightly looser (benign), so relaxed loads and stores suffice.
  // The header line is shared by every communicator's proxy thread: it is
  // written only when the minimum improves or every kGpuOffsetBatch-th
  // observation of this comm, so the sample count may lag by less than that
  // per comm (it is informational; readers only test it against 0).
  const int64_t offset = static_cast<int64_t>(now - gpu_timer_ns);
  const uint64_t pending = rec::LoadRelaxed(&gpu_offset_pending_) + 1;
  const bool improves = rec::LoadRelaxed(&header_->gpu_offset_samples) == 0 ||
                        offset < rec::LoadRelaxed(&header_->gpu_to_mono_offset_ns);
  if (!improves && pending < kGpuOffsetBatch) {
    rec::StoreRelaxed(&gpu_offset_pending_, pending);
    return;
  }
  if (improves) rec::StoreRelaxed(&header_->gpu_to_mono_offset_ns, offset);
  rec::AddRelaxed(&header_->gpu_offset_samples, pending);
  rec::StoreRelaxed(&gpu_offset_pending_, uint64_t{0});
}

namespace rec {
// Moves the op state forward only (single writer after commit: proxy thread).
inline void AdvanceState(format::Record* r, uint8_t target) {
  if (LoadRelaxed(&r->state) < target) StoreRelaxed(&r->state, target);
}
// Saturating uint8 increment (single writer); returns the new value.
inline uint8_t Bump(uint8_t* counter) {
  uint8_t v = LoadRelaxed(counter);
  if (v < 255) StoreRelaxed(counter, static_cast<uint8_t>(v + 1));
  return v < 255 ? static_cast<uint8_t>(v + 1) : v;
}
}  // namespace rec

inline void CommRecorder::KernelStart(uint64_t seq, uint64_t gpu_timer_ns) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const bool first = rec::Bump(&r->channels_started) == 1;
  if (first) MarkCompletionTracked();  // once per op is enough (per region, really)
  if (gpu_timer_ns != 0) {
    const uint64_t cur = rec::LoadRelaxed(&r->gpu_start_raw);
    if (cur == 0 || gpu_timer_ns < cur) rec::StoreRelaxed(&r->gpu_start_raw, gpu_timer_ns);
  }
  rec::AdvanceState(r, format::kOpRunning);
  // The host clock is the largest cost of an event (rdtsc is ~20 ns in a VM):
  // read it once per op here. Later timed channels are dated by their own GPU
  // timer (gpu_start_raw); untimed ones (v3) still read it.
  if (!first && gpu_timer_ns != 0) return;
  const uint64_t now = NowNs();
  if (first && gpu_timer_ns != 0) NoteGpuOffset(gpu_timer_ns, now);
  rec::StoreRelaxed(&r->t_last_progress_ns, now);
}

inline void CommRecorder::KernelStop(uint64_t seq, uint64_t gpu_timer_ns) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const uint8_t stopped = rec::Bump(&r->channels_stopped);
  if (gpu_timer_ns > rec::LoadRelaxed(&r->gpu_end_raw)) {
    rec::StoreRelaxed(&r->gpu_end_raw, gpu_timer_ns);
  }
  const uint8_t started = rec::LoadRelaxed(&r->channels_started);
  const uint8_t channels = rec::LoadRelaxed(&r->n_channels);
  const bool done = stopped >= (channels > started ? channels : started);
  if (done) rec::AdvanceState(r, format::kOpDone);
  // As in KernelStart: a timed stop is dated by its GPU timer (gpu_end_raw,
  // converted with the offset sampled at the first start); only an untimed
  // stop (v3) reads the host clock.
  if (gpu_timer_ns != 0) return;
  rec::StoreRelaxed(&r->t_last_progress_ns, NowNs());
}

inline void CommRecorder::ProxyOpStart(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  MarkCompletionTracked();
  rec::Bump(&r->proxy_ops_started);
  rec::AdvanceState(r, format::kOpRunning);
  rec::StoreRelaxed(&r->t_last_progress_ns, NowNs());
}

inline void CommRecorder::ProxyOpStop(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const uint8_t stopped = rec::Bump(&r->proxy_ops_stopped);
  const uint8_t started = rec::LoadRelaxed(&r->proxy_ops_started);
  // Without KernelCh events the network side is all we know of completion.
  if (rec::LoadRelaxed(&r->channels_started) == 0 && started > 0 && stopped >= started) {
    rec::AdvanceState(r, format::kOpDone);
  }
  rec::StoreRelaxed(&r->t_last_progress_ns, NowNs());
}

inline void CommRecorder::ProxyProgress(uint64_t seq, uint64_t bytes) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  rec::StoreRelaxed(&r->net_bytes, rec::LoadRelaxed(&r->net_bytes) + bytes);
  rec::StoreRelaxed(&r->t_last_progress_ns, NowNs());
}

}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_

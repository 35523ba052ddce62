// Inline bodies of CommRecorder's hot path. Included by comm_recorder.h only.
//
// Every function here: no lock, no allocation, no syscall (the clock is
// rdtsc or a vDSO call), no exception, straight-line code. The record state
// machine is the one documented in include/flightrec/record_format.h.
//
// Threads: BeginOp/OpEnqueued run on NCCL's launch thread; KernelStart/Stop
// and KernelPhase on the thread that delivers a communicator's KernelCh
// events (its proxy thread up to NCCL 2.30; from 2.31 a profiler thread of
// its own, docs/design/nccl.md §NCCL 2.31), ProxyOp*/ProxyProgress on its
// proxy thread. Each progress word has one writer thread, so those words use
// a relaxed load + store, not an atomic read-modify-write: the kernel words
// (channel counters, GPU timers, phase counters) are the KernelCh thread's,
// the proxy words (proxy counters, net_bytes) the proxy thread's. Two words
// have both as writers: `state` (AdvanceState: a bounded compare-exchange,
// so a late kOpRunning never overwrites kOpDone; kOpDone itself, the last
// state, is a plain store, MarkDone; KernelRunning says when the KernelCh
// thread's kOpRunning can be one too) and t_last_progress_ns (a
// plain store: either thread's "now" is a valid recent progress time).
#ifndef FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_
#define FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_

#include <stddef.h>

#include "flightrec/record_names.h"
#include "recorder/atomics.h"
#include "recorder/clock.h"
#include "recorder/comm_recorder.h"
#include "recorder/testpoint.h"

// The hot-path members below are always inlined into the plugin's entry
// points: each is called from one or two places per ABI entry, and an
// out-of-line call would materialize its arguments (OpDesc) in memory.
#define FLIGHTREC_HOT_INLINE inline __attribute__((always_inline))

namespace flightrec {
namespace rec {
// 0 once recording is off for the whole process (fork child; the child also
// empties g_comm_table, so LookupComm needs no test of its own). Relaxed: a
// late reader just records one more op into memory nobody reads.
extern uint32_t g_hot_enabled;
// region index -> live CommRecorder (or nullptr); defined and written by
// process_recorder.cc.
extern CommRecorder* g_comm_table[format::kMaxRegions];

// CommByRegion's body, inline: every event that carries a handle resolves
// it, ~20 per collective, and the out-of-line call was ~9 % of the hot path.
inline CommRecorder* LookupComm(uint32_t region_index, uint32_t generation_low8);

// Every location of a Record is accessed with one access size only (mixing
// sizes on one location is outside the C++ memory model): words 0..14 as
// 64-bit atomics, the one-byte fields of word 15 (state, the channel,
// proxy-op and phase counters, api_datatype) as 1-byte
// atomics, by the
// writers here and by the readers (record_copy.h). n_channels lives in
// word 9, so it is read as that whole word.
inline uint8_t RecordByte(const format::Record* r, size_t record_offset) {
  const uint64_t word = LoadRelaxed(reinterpret_cast<const uint64_t*>(r) + record_offset / 8);
  const uint32_t byte = static_cast<uint32_t>(record_offset % 8);
  return static_cast<uint8_t>(word >>
                              (8 * (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? byte : 7 - byte)));
}
}  // namespace rec

inline uint32_t CommRecorder::region_index() const { return region_index_; }
inline uint32_t CommRecorder::generation_low8() const {
  return rec::LoadRelaxed(&generation_low8_);
}
inline int32_t CommRecorder::rank() const { return rec::LoadRelaxed(&rank_); }
inline bool CommRecorder::finalized() const { return rec::LoadRelaxed(&finalized_) != 0; }
inline uint32_t CommRecorder::live_key() const { return rec::LoadRelaxed(&live_key_); }

inline uint64_t CommRecorder::NowNs() { return rec::ClockNowNs(); }

FLIGHTREC_HOT_INLINE CommRecorder* rec::LookupComm(uint32_t region_index,
                                                   uint32_t generation_low8) {
  if (region_index >= format::kMaxRegions) return nullptr;
  // No g_hot_enabled test: a fork child empties the table (recorder.cc).
  // Pairs with the release stores in ProcessRecorder::OpenComm / Retire.
  CommRecorder* c = __atomic_load_n(&g_comm_table[region_index], __ATOMIC_ACQUIRE);
  // One word holds both the generation and "not finalized" (live_key_).
  if (c == nullptr || c->live_key() != (CommRecorder::kLiveKeyBit | (generation_low8 & 0xffu))) {
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

inline void CommRecorder::NoteMaskOverridden() {
  if ((rec::LoadRelaxed(&desc_->flags) & format::kRegionMaskOverridden) == 0) {
    // Relaxed: a region flag read by itself (as kRegionCompletionTracked).
    __atomic_fetch_or(&desc_->flags, uint32_t{format::kRegionMaskOverridden}, __ATOMIC_RELAXED);
  }
}

FLIGHTREC_HOT_INLINE uint64_t CommRecorder::NoteApiCall(const ApiCall& call) {
  // One writer, so a relaxed load + store, not a locked add: NCCL lets only
  // one thread at a time issue calls on a communicator, and the user's
  // hand-over between threads orders them (docs/design/nccl.md §Call rules).
  // A thread that breaks that rule, or a late caller of a finalized comm
  // that resumes in the region's next one, can at worst share a ticket with
  // another call: one op then carries the other call's API fields.
  const uint64_t ticket = rec::LoadRelaxed(&api_next_);
  rec::StoreRelaxed(&api_next_, ticket + 1);
  ApiSlot* s = &api_[ticket & (kApiSlots - 1)];
  rec::StoreRelaxed(&s->token, uint64_t{0});
  // Pairs with the acquire fence in LookupApiCall: a reader that sees any
  // field below also sees token == 0 on its re-check.
  __atomic_thread_fence(__ATOMIC_RELEASE);
  rec::StoreRelaxed(&s->t_api_ns, call.t_api_ns);
  rec::StoreRelaxed(&s->user_tag, call.user_tag);
  rec::StoreRelaxed(&s->stream, call.stream);
  rec::StoreRelaxed(&s->graph_captured, uint64_t{call.graph_captured});
  rec::StoreRelaxed(&s->datatype, uint64_t{call.datatype});
  // Pairs with the acquire load of token in LookupApiCall.
  __atomic_store_n(&s->token, ticket + 1, __ATOMIC_RELEASE);
  return ticket + 1;
}

FLIGHTREC_HOT_INLINE bool CommRecorder::LookupApiCall(uint64_t token, ApiCall* out,
                                                      bool count_miss) {
  ApiSlot* s = &api_[(token - 1) & (kApiSlots - 1)];
  // Pairs with the release store of token in NoteApiCall.
  if (token == 0 || __atomic_load_n(&s->token, __ATOMIC_ACQUIRE) != token) {
    if (count_miss) CountDrop(format::kDropNoApiSlot);
    return false;
  }
  ApiCall copy;
  copy.t_api_ns = rec::LoadRelaxed(&s->t_api_ns);
  copy.user_tag = rec::LoadRelaxed(&s->user_tag);
  copy.stream = rec::LoadRelaxed(&s->stream);
  copy.graph_captured = static_cast<uint8_t>(rec::LoadRelaxed(&s->graph_captured));
  copy.datatype = static_cast<uint8_t>(rec::LoadRelaxed(&s->datatype));
  // Pairs with the release fence in NoteApiCall (seqlock re-check).
  __atomic_thread_fence(__ATOMIC_ACQUIRE);
  if (rec::LoadRelaxed(&s->token) != token) {
    if (count_miss) CountDrop(format::kDropNoApiSlot);
    return false;
  }
  *out = copy;
  return true;
}

FLIGHTREC_HOT_INLINE uint64_t CommRecorder::NextOpIndex(const OpDesc& op) {
  if ((op.flags & format::kFlagP2p) == 0) {
    return rec::AddRelaxed(&desc_->coll_count, uint64_t{1});
  }
  rec::AddRelaxed(&desc_->p2p_count, uint64_t{1});
  const int32_t peer = op.root_or_peer;
  // A late launch thread of this region's previous comm may run this while
  // SlabComm re-arms the object for the next one with a larger array. Pairs
  // with the release store of p2p_peers_ in SlabComm: a peer count read
  // here is never larger than the array loaded after it.
  const uint32_t peers = __atomic_load_n(&p2p_peers_, __ATOMIC_ACQUIRE);
  if (peer < 0 || static_cast<uint32_t>(peer) >= peers) return UINT64_MAX;
  // Pairs with the release store of p2p_counters_ in SlabComm: a fresh
  // array is seen zeroed.
  uint64_t* const counters = __atomic_load_n(&p2p_counters_, __ATOMIC_ACQUIRE);
  const uint32_t dir = op.func == format::kFuncRecv ? 1 : 0;
  return rec::AddRelaxed(&counters[static_cast<uint64_t>(peer) * 2 + dir], uint64_t{1});
}

// Fills the immutable words of `slot` (commit is already 0) and its progress
// words. The immutable words are built in registers (the two packed words at
// offsets 64 and 72 by shifts, in the byte order of the CPU, so that memory
// holds the Record's layout on either byte order; a byte-wise image read back
// as words stalled on store forwarding), the checksum is computed once over
// them, and they are stored one relaxed word at a time.
FLIGHTREC_HOT_INLINE void CommRecorder::WriteRecord(format::Record* slot, const OpDesc& op,
                                                    uint64_t seq, uint64_t op_index, uint64_t now) {
  static_assert(offsetof(format::Record, root_or_peer) == 64 &&
                    offsetof(format::Record, func) == 68 &&
                    offsetof(format::Record, datatype) == 69 &&
                    offsetof(format::Record, algo) == 70 && offsetof(format::Record, proto) == 71,
                "word 8: root_or_peer, func, datatype, algo, proto");
  static_assert(
      offsetof(format::Record, n_channels) == 72 && offsetof(format::Record, n_warps) == 73 &&
          offsetof(format::Record, flags) == 74 && offsetof(format::Record, type_size) == 75 &&
          offsetof(format::Record, checksum) == 76,
      "word 9: n_channels, n_warps, flags, type_size, checksum");
  constexpr bool kLittle = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
  // The byte at Record offset 64 + 8 * word + i, shifted into place.
  auto at = [](uint64_t byte, int i) { return byte << (kLittle ? 8 * i : 8 * (7 - i)); };
  const uint8_t flags =
      static_cast<uint8_t>(op.flags | (op.t_api_ns != 0 ? format::kFlagHasApi : 0));
  const uint64_t root = static_cast<uint32_t>(op.root_or_peer);
  constexpr uint32_t kWords = format::kRecordSize / 8;  // 16
  constexpr uint32_t kFirstMutable = 80 / 8;            // 10
  uint64_t w[kFirstMutable];                            // w[0] (commit) is not stored here
  w[0] = seq + 1;
  w[1] = op_index;
  w[2] = op.nccl_seq;
  w[3] = op.count;
  w[4] = op.user_tag;
  w[5] = op.t_api_ns;
  w[6] = now;
  w[7] = op.stream;
  w[8] = (kLittle ? root : root << 32) | at(op.func, 4) | at(op.datatype, 5) | at(op.algo, 6) |
         at(op.proto, 7);
  w[9] = at(op.n_channels, 0) | at(op.n_warps, 1) | at(flags, 2) |
         at(format::DataTypeSize(op.datatype), 3);  // checksum bytes [76, 80) zero
  const uint64_t checksum = format::RecordChecksum(reinterpret_cast<const unsigned char*>(w), seq);
  w[9] |= kLittle ? checksum << 32 : checksum;
  // Written out: GCC does not unroll loops of atomic stores, and a loop
  // would keep w[] on the stack.
  static_assert(kFirstMutable == 10 && kWords == 16, "store list below");
  uint64_t* dst = reinterpret_cast<uint64_t*>(slot);
  rec::StoreRelaxed(&dst[1], w[1]);
  rec::StoreRelaxed(&dst[2], w[2]);
  rec::StoreRelaxed(&dst[3], w[3]);
  rec::StoreRelaxed(&dst[4], w[4]);
  rec::StoreRelaxed(&dst[5], w[5]);
  FLIGHTREC_TESTPOINT(mid_payload);
  rec::StoreRelaxed(&dst[6], w[6]);
  rec::StoreRelaxed(&dst[7], w[7]);
  rec::StoreRelaxed(&dst[8], w[8]);
  rec::StoreRelaxed(&dst[9], w[9]);
  // Progress words: zero; word 15 byte by byte (see RecordByte).
  // api_datatype is written here, before commit publishes the record, and
  // not again within the lap (record_format.h, "Access sizes").
  rec::StoreRelaxed(&dst[10], uint64_t{0});
  rec::StoreRelaxed(&dst[11], uint64_t{0});
  rec::StoreRelaxed(&dst[12], uint64_t{0});
  rec::StoreRelaxed(&dst[13], uint64_t{0});
  rec::StoreRelaxed(&dst[14], uint64_t{0});
  rec::StoreRelaxed(&slot->channels_started, uint8_t{0});
  rec::StoreRelaxed(&slot->channels_stopped, uint8_t{0});
  rec::StoreRelaxed(&slot->proxy_ops_started, uint8_t{0});
  rec::StoreRelaxed(&slot->proxy_ops_stopped, uint8_t{0});
  rec::StoreRelaxed(&slot->phase_compute_channels, uint8_t{0});
  rec::StoreRelaxed(&slot->phase_final_channels, uint8_t{0});
  rec::StoreRelaxed(&slot->api_datatype, op.api_datatype);
  rec::StoreRelaxed(&slot->state, static_cast<uint8_t>(format::kOpEnqueued));
}

FLIGHTREC_HOT_INLINE uint64_t CommRecorder::BeginOp(const OpDesc& op) {
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

FLIGHTREC_HOT_INLINE format::Record* CommRecorder::LiveSlot(uint64_t seq) {
  if (seq == kNoSlot) return nullptr;  // BeginOp declined; nothing to count
  format::Record* slot = &records_[seq & mask_];
  if (slot == nullptr) __builtin_unreachable();  // lets callers drop their null test
  // Pairs with the release store of commit in BeginOp: n_channels and the
  // other immutable words read after this belong to `seq`.
  if (__atomic_load_n(&slot->commit, __ATOMIC_ACQUIRE) != seq + 1) {
    CountDrop(format::kDropStaleHandle);
    return nullptr;
  }
  return slot;
}

FLIGHTREC_HOT_INLINE void CommRecorder::OpEnqueued(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r != nullptr) rec::StampNow(&r->t_enqueued_ns);
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
// Moves the op state forward only. Two writer threads from NCCL 2.31 on
// (KernelCh events from the profiler thread, ProxyOp from the proxy thread):
// a compare-exchange, so a ProxyOpStart's kOpRunning can never overwrite a
// KernelStop's kOpDone. Bounded: every failed exchange saw a higher state,
// and there are kNumOpStates states. Relaxed: nothing else is published
// through `state` (readers take the record's words as they find them).
inline void AdvanceState(format::Record* r, uint8_t target) {
  uint8_t cur = LoadRelaxed(&r->state);
  while (cur < target) {
    if (__atomic_compare_exchange_n(&r->state, &cur, target, /*weak=*/false, __ATOMIC_RELAXED,
                                    __ATOMIC_RELAXED)) {
      return;
    }
  }
}
// kOpDone, the last state, as a plain store: it cannot move the state
// backwards, and an AdvanceState to a lower state on another thread either
// lands before it or fails its exchange on seeing kOpDone. Saves the locked
// instruction an AdvanceState costs (once per op, on the KernelCh thread).
inline void MarkDone(format::Record* r) {
  static_assert(format::kOpDone == format::kNumOpStates - 1, "kOpDone is the last state");
  StoreRelaxed(&r->state, static_cast<uint8_t>(format::kOpDone));
}
// kOpRunning at an op's first KernelCh start, on the KernelCh thread (after
// it counted the channel in channels_started). The op's only other writer of
// `state` is its proxy thread: the same thread up to NCCL 2.30, another from
// 2.31 (KernelCh from the profiler thread). Before any of the op's ProxyOps
// started, the proxy thread has nothing to write, so a load and a plain store
// do; a locked exchange here, right after the record's stores, cost ~10 ns a
// collective (docs/performance.md). Once ProxyOps started, AdvanceState.
// The window left (2.31+ only): a proxy thread that starts and stops every
// ProxyOp of the op between this load of proxy_ops_started and the state
// store becoming visible, while it still reads channels_started == 0, would
// have its kOpDone overwritten; the op's KernelCh stops then mark it done
// again.
inline void KernelRunning(format::Record* r) {
  if (LoadRelaxed(&r->proxy_ops_started) != 0) {
    AdvanceState(r, format::kOpRunning);
  } else if (LoadRelaxed(&r->state) < format::kOpRunning) {
    StoreRelaxed(&r->state, static_cast<uint8_t>(format::kOpRunning));
  }
}
// Saturating uint8 increment (single writer); returns the new value.
inline uint8_t Bump(uint8_t* counter) {
  uint8_t v = LoadRelaxed(counter);
  if (v < 255) StoreRelaxed(counter, static_cast<uint8_t>(v + 1));
  return v < 255 ? static_cast<uint8_t>(v + 1) : v;
}
}  // namespace rec

FLIGHTREC_HOT_INLINE void CommRecorder::KernelStart(uint64_t seq, uint64_t gpu_timer_ns) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const bool first = rec::Bump(&r->channels_started) == 1;
  if (gpu_timer_ns != 0) {
    const uint64_t cur = rec::LoadRelaxed(&r->gpu_start_raw);
    if (cur == 0 || gpu_timer_ns < cur) rec::StoreRelaxed(&r->gpu_start_raw, gpu_timer_ns);
  }
  // The host clock is the costliest part of a KernelCh event (the first
  // channel's read is ~5 ns of a collective, docs/performance.md): read it
  // once per op, at the first channel. Later timed channels are dated
  // by their own GPU timer (gpu_start_raw); untimed ones (v3) still read it.
  if (!first && gpu_timer_ns != 0) return;
  KernelStartDated(r, gpu_timer_ns, first);
}

// Out of line: once per op (8 channels: 1 call in 8), and keeping the clock
// and the GPU-offset code out of KernelStart lets the plugin's KernelCh entry
// point run without saving registers.
__attribute__((noinline)) inline void CommRecorder::KernelStartDated(format::Record* r,
                                                                     uint64_t gpu_timer_ns,
                                                                     bool first) {
  if (first) {
    MarkCompletionTracked();  // once per op is enough (per region, really)
    rec::KernelRunning(r);
  }
  const uint64_t now = NowNs();
  if (first && gpu_timer_ns != 0) NoteGpuOffset(gpu_timer_ns, now);
  rec::StoreRelaxed(&r->t_last_progress_ns, now);
}

FLIGHTREC_HOT_INLINE void CommRecorder::KernelStop(uint64_t seq, uint64_t gpu_timer_ns) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const uint8_t stopped = rec::Bump(&r->channels_stopped);
  if (gpu_timer_ns > rec::LoadRelaxed(&r->gpu_end_raw)) {
    rec::StoreRelaxed(&r->gpu_end_raw, gpu_timer_ns);
  }
  const uint8_t started = rec::LoadRelaxed(&r->channels_started);
  const uint8_t channels = rec::RecordByte(r, offsetof(format::Record, n_channels));
  const bool done = stopped >= (channels > started ? channels : started);
  if (done) rec::MarkDone(r);
  // As in KernelStart: a timed stop is dated by its GPU timer (gpu_end_raw,
  // converted with the offset sampled at the first start); only an untimed
  // stop (v3) reads the host clock.
  if (gpu_timer_ns != 0) return;
  rec::StampNow(&r->t_last_progress_ns);
}

FLIGHTREC_HOT_INLINE void CommRecorder::KernelPhaseBegin(uint64_t seq, uint8_t phase) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  // One event per (channel, phase); the KernelCh thread is the only writer
  // (see the top of this file). No clock: the KernelCh stop dates the end.
  if (phase == format::kPhaseCompute) {
    rec::Bump(&r->phase_compute_channels);
  } else if (phase == format::kPhaseFinalSync) {
    rec::Bump(&r->phase_final_channels);
  }
}

FLIGHTREC_HOT_INLINE void CommRecorder::ProxyOpStart(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  MarkCompletionTracked();
  rec::Bump(&r->proxy_ops_started);
  rec::AdvanceState(r, format::kOpRunning);
  rec::StampNow(&r->t_last_progress_ns);
}

FLIGHTREC_HOT_INLINE void CommRecorder::ProxyOpStop(uint64_t seq) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  const uint8_t stopped = rec::Bump(&r->proxy_ops_stopped);
  const uint8_t started = rec::LoadRelaxed(&r->proxy_ops_started);
  // Without KernelCh events the network side is all we know of completion.
  if (rec::LoadRelaxed(&r->channels_started) == 0 && started > 0 && stopped >= started) {
    rec::MarkDone(r);
  }
  rec::StampNow(&r->t_last_progress_ns);
}

FLIGHTREC_HOT_INLINE void CommRecorder::ProxyProgress(uint64_t seq, uint64_t bytes) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  rec::StoreRelaxed(&r->net_bytes, rec::LoadRelaxed(&r->net_bytes) + bytes);
  rec::StampNow(&r->t_last_progress_ns);
}

FLIGHTREC_HOT_INLINE void CommRecorder::CeProgress(uint64_t seq, uint64_t bytes) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  // A CE op has no proxy events: the user thread is the one writer of
  // net_bytes here.
  if (bytes != 0) rec::StoreRelaxed(&r->net_bytes, rec::LoadRelaxed(&r->net_bytes) + bytes);
  rec::StampNow(&r->t_last_progress_ns);
}

inline void CommRecorder::CeReached(uint64_t seq, uint8_t state, uint64_t now) {
  format::Record* r = LiveSlot(seq);
  if (r == nullptr) return;
  MarkCompletionTracked();
  if (state <= format::kOpEnqueued) return;
  rec::AdvanceState(r, state);
  rec::StoreRelaxed(&r->t_last_progress_ns, now);
}

}  // namespace flightrec

#endif  // FLIGHTREC_RECORDER_COMM_RECORDER_INL_H_

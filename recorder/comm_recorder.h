// Hot-path interface of one communicator's region. The public members below
// are the contract with plugin/ (do not change their signatures without
// changing the plugin); the private part and the inline bodies belong to the
// recorder.
//
// Every public member function here promises: no lock, no allocation, no
// syscall, no exception, bounded work (no loop longer than a fixed bound).
// They are safe to call concurrently from NCCL's user, launch and proxy
// threads. Each takes a slot sequence returned by BeginOp; when that slot has
// since been reused by a newer op (the ring wrapped), the call changes
// nothing and counts kDropStaleHandle.
#ifndef FLIGHTREC_RECORDER_COMM_RECORDER_H_
#define FLIGHTREC_RECORDER_COMM_RECORDER_H_

#include <stdint.h>

#include "flightrec/record_format.h"

namespace flightrec {

namespace rec {
struct SlabAccess;  // recorder/ring_slab.cc
}  // namespace rec

// Everything the plugin knows about one collective or p2p op at Coll/P2p
// start. Strings are already mapped to format:: enums by the plugin.
struct OpDesc {
  uint8_t func = format::kFuncUnknown;      // format::Func
  uint8_t datatype = format::kTypeUnknown;  // format::DataType
  uint8_t algo = format::kAlgoUnknown;
  uint8_t proto = format::kProtoUnknown;
  uint8_t n_channels = 0;
  uint8_t n_warps = 0;
  uint8_t flags = 0;         // format::RecordFlag (kFlagP2p for send/recv)
  int32_t root_or_peer = 0;  // root for colls, peer for p2p
  uint64_t count = 0;
  uint64_t nccl_seq = UINT64_MAX;  // NCCL seqNumber; UINT64_MAX for p2p
  uint64_t user_tag = 0;
  uint64_t t_api_ns = 0;  // 0 when no API event was matched
  uint64_t stream = 0;
  // The user's datatype from the CollApi/P2pApi event (format::DataType;
  // kTypeUnknown when none was matched): Record::api_datatype.
  uint8_t api_datatype = format::kTypeUnknown;
};

// What a CollApi/P2pApi start carries, parked until its Coll/P2p arrives.
struct ApiCall {
  uint64_t t_api_ns = 0;
  uint64_t user_tag = 0;
  uint64_t stream = 0;
  uint8_t graph_captured = 0;
  uint8_t datatype = format::kTypeUnknown;  // the call's datatype (format::DataType)
};

constexpr uint64_t kNoSlot = UINT64_MAX;

class CommRecorder {
 public:
  // Identity used to encode handles: the plugin packs (region, generation
  // low 8 bits, slot sequence) into its opaque event handles and resolves
  // them with CommByRegion().
  uint32_t region_index() const;
  uint32_t generation_low8() const;
  int32_t rank() const;
  bool finalized() const;
  // kLiveKeyBit | generation_low8() while open, 0 once finalized: the one
  // word rec::LookupComm tests.
  static constexpr uint32_t kLiveKeyBit = 0x100;
  uint32_t live_key() const;

  // Current time in CLOCK_MONOTONIC ns (cheap clock; see recorder/clock.h).
  static uint64_t NowNs();

  // CollApi/P2pApi start: parks the call's data; returns a non-zero token.
  uint64_t NoteApiCall(const ApiCall& call);
  // Coll/P2p start: fetches the parked call named by `token`. False when the
  // entry was recycled or the token is not ours; counted kDropNoApiSlot
  // when `count_miss` (a graph replay's recycled entry is expected).
  bool LookupApiCall(uint64_t token, ApiCall* out, bool count_miss = true);

  // Coll/P2p start: claims a slot, assigns op_index (per-comm collective
  // index, or per (peer, direction) index for p2p), fills and commits the
  // record with t_enqueue_ns = now and state kOpEnqueued. Returns the slot
  // sequence, or kNoSlot when the communicator is not recording.
  uint64_t BeginOp(const OpDesc& op);
  // Coll/P2p stop: NCCL has finished enqueueing (t_enqueued_ns).
  void OpEnqueued(uint64_t seq);
  // KernelCh start/stop with NCCL's GPU %globaltimer value (0 if the API
  // version carries none). Start moves the op to kOpRunning and keeps the
  // minimum GPU start; stop keeps the maximum GPU end and moves the op to
  // kOpDone once every channel has stopped.
  void KernelStart(uint64_t seq, uint64_t gpu_timer_ns);
  void KernelStop(uint64_t seq, uint64_t gpu_timer_ns);
  // KernelPhase start (API v7, symmetric kernels only): a channel entered
  // `phase` (format::KernelPhase). Counts channels whose compute phase and
  // whose final sync began (Record::phase_compute_channels /
  // phase_final_channels); the initial sync is implied by KernelStart.
  // Called on the thread that delivers the op's KernelCh events.
  void KernelPhaseBegin(uint64_t seq, uint8_t phase);
  // Network progress (ProxyOp/ProxyStep). Without KernelCh events, the op is
  // kOpDone when every started ProxyOp has stopped.
  void ProxyOpStart(uint64_t seq);
  void ProxyOpStop(uint64_t seq);
  void ProxyProgress(uint64_t seq, uint64_t bytes);
  // Copy-engine collectives (API v6+, kFlagCopyEngine records; NCCL calls
  // no recordEventState for them). CeSync/CeBatch start on the user thread:
  // t_last_progress_ns = now and net_bytes += `bytes` (CeBatch totalBytes).
  void CeProgress(uint64_t seq, uint64_t bytes);
  // A CUDA event on the op's stream completed (recorder/ce_completion.cc,
  // watchdog thread): kOpRunning (start event) or kOpDone (stop event),
  // dated `now`. kOpEnqueued only marks the region completion-tracked (the
  // op has events to wait for).
  void CeReached(uint64_t seq, uint8_t state, uint64_t now);

  void CountDrop(format::DropCause cause);
  // Sets kRegionMaskOverridden on the region (events outside the mask the
  // plugin wrote arrived: RAS's job-wide override). Idempotent.
  void NoteMaskOverridden();

  // --- everything below is the recorder's own ---
 private:
  friend class ProcessRecorder;
  friend struct rec::SlabAccess;  // owns the objects (lifetime rule: ring_slab.h)
  CommRecorder() = default;

  // One parked CollApi/P2pApi call. Fields are accessed with relaxed atomics
  // under the `token` seqlock (NoteApiCall writes, LookupApiCall reads).
  struct ApiSlot {
    uint64_t token;
    uint64_t t_api_ns;
    uint64_t user_tag;
    uint64_t stream;
    uint64_t graph_captured;
    uint64_t datatype;  // format::DataType
  };
  static constexpr uint32_t kApiSlots = 256;  // power of two
  // See NoteGpuOffset: header writes per comm are batched by this much.
  static constexpr uint64_t kGpuOffsetBatch = 64;

  // The record of slot sequence `seq` while it still belongs to `seq`;
  // otherwise counts kDropStaleHandle and returns nullptr.
  format::Record* LiveSlot(uint64_t seq);
  uint64_t NextOpIndex(const OpDesc& op);
  void WriteRecord(format::Record* slot, const OpDesc& op, uint64_t seq, uint64_t op_index,
                   uint64_t now);
  void NoteGpuOffset(uint64_t gpu_timer_ns, uint64_t now);
  // KernelStart's clock part (first channel of an op, or untimed channels).
  void KernelStartDated(format::Record* r, uint64_t gpu_timer_ns, bool first);
  void MarkCompletionTracked();

  format::FileHeader* header_ = nullptr;
  format::RegionDesc* desc_ = nullptr;
  format::Record* records_ = nullptr;  // region_capacity records
  uint64_t mask_ = 0;                  // region_capacity - 1
  uint64_t* p2p_counters_ = nullptr;   // [peer * 2 + direction], calloc'd
  uint32_t p2p_peers_ = 0;
  uint32_t region_index_ = 0;
  uint32_t generation_low8_ = 0;  // relaxed atomic: OpenComm re-arms a reused object
  int32_t rank_ = -1;             // relaxed atomic (BindCommIdentity may set it)
  uint32_t finalized_ = 0;        // relaxed atomic; set by CloseComm
  // What LookupComm compares a handle's generation against, in one load:
  // kLiveKeyBit | generation_low8_ while the comm is open, 0 once CloseComm
  // ran (relaxed atomic; written next to generation_low8_ and finalized_).
  uint32_t live_key_ = 0;
  uint32_t identity_bound_ = 0;
  // GPU offset observations not yet added to the header (proxy thread).
  // Its own cache line: the launch thread writes api_next_ and api_.
  alignas(64) uint64_t gpu_offset_pending_ = 0;
  alignas(64) uint64_t api_next_ = 0;  // relaxed atomic ticket counter, one writer
  ApiSlot api_[kApiSlots] = {};
};

}  // namespace flightrec

#include "recorder/comm_recorder_inl.h"  // IWYU pragma: export

#endif  // FLIGHTREC_RECORDER_COMM_RECORDER_H_

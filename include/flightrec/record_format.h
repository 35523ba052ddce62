// flightrec on-disk format (its version: kFormatMajor.kFormatMinor below).
//
// This header is the single definition of the bytes flightrec writes. It is
// shared by the writer (the NCCL profiler plugin, recorder/) and the readers
// (`flightrec show`, `flightrec analyze`). It contains fixed-width types only,
// no pointers, no `bool`, no `size_t`, and every size and offset is pinned with
// static_assert so that a layout change cannot slip in unnoticed. The
// version rule as practised: a field added in bytes that were reserved (and
// so read as 0 in every older file) bumps kFormatMinor, and readers take it
// only from images of that minor or newer; any change to the size, offset or
// meaning of an existing field bumps kFormatMajor.
//
// OVERVIEW
//
// Each process that loads the plugin owns one *ring file*
// (`$NCCL_FLIGHTREC_DIR/flightrec-<job>-<host>-<pid>.ring`). It is made as
// `<name>.ring.init` (header written first, process_state kProcessStarting)
// and renamed to its name only when complete (format 1.2), so a `.ring` never
// shows a half-made header. It is
// preallocated, mapped MAP_SHARED, and written in place, so its content is in
// the page cache (and therefore readable by anyone) the instant a store
// retires, even if the process is SIGKILLed a nanosecond later.
//
// A *dump* is the same image, copied while writers run, with
// FileHeader::file_kind = kFileKindDump and the dump_* fields filled, then
// compressed as one zstd frame (with the zstd content checksum) and written
// atomically (tmp name + rename). A reader that sees the zstd frame magic
// decompresses and then parses exactly as it parses a ring.
//
// LAYOUT (offsets are stored in the header; readers must use them, never
// recompute them)
//
//   0                    +-------------------------------------------+
//                        | FileHeader (4096 bytes)                   |
//   region_table_offset  +-------------------------------------------+
//                        | RegionDesc[max_regions]  (256 bytes each) |
//                        +-------------------------------------------+
//                        | padding to a 4096-byte boundary           |
//   records_offset       +-------------------------------------------+
//                        | region 0: Record[region_capacity]         |
//                        | region 1: Record[region_capacity]         |
//                        | ...                                       |
//                        | region max_regions-1                      |
//   file_size            +-------------------------------------------+
//
//   Region r's records start at records_offset + r * region_capacity *
//   record_size. region_capacity is a power of two. The record for slot
//   sequence s of region r lives at index (s & (region_capacity - 1)).
//
// REGIONS
//
// Each communicator (one NCCL profiler `init`) gets its own region, so a busy
// communicator can never evict a quiet one's last records. A region is
// claimed at init (state kRegionActive) and marked kRegionFinalized at
// finalize; a finalized region keeps its data and is reused (generation++)
// only when no free region is left. When no region can be had, the
// communicator is not recorded and kDropNoRegion is counted.
//
// RECORDS AND THE SLOT STATE MACHINE
//
// One Record per collective or p2p operation. Its slot sequence is
// RegionDesc::head at claim time (fetch_add). Bytes [8, 80) are immutable
// once committed (the checksum field included; what the checksum covers is
// stated once, at RecordChecksum); bytes [80, 128) are mutable progress
// words, each field an independent naturally aligned atomic that only moves
// forward within its lap.
//
//   commit == 0 ............ slot never written, or a claim is in progress
//   commit == seq + 1 ...... the immutable part for slot sequence `seq` is
//                            complete and `checksum` covers it
//
// Access sizes: words 0..14 (bytes [0, 120)) are only ever accessed as
// 8-byte atomics, the one-byte fields of word 15 (state, the four counters,
// api_datatype and the two phase counters) only as 1-byte atomics.
//
// api_datatype (format 1.4) lives in word 15 but is not a progress word: the
// claiming writer stores it before it publishes commit and nobody changes it
// within the lap. It is outside the checksum's range (the immutable words
// are full); a torn copy is caught by the commit re-check like the progress
// words.
//
//   writer (launch thread, Coll/P2p start: CommRecorder::BeginOp):
//     seq = head.fetch_add(1, relaxed)
//     commit.store(0, relaxed); release fence      -- invalidates the old lap
//     words 1..9 (bytes [8, 80)), RecordChecksum computed first and stored
//       in word 9; words 10..14 = 0; the counters of word 15 = 0,
//       api_datatype, then state = kOpEnqueued     -- all relaxed
//     commit.store(seq + 1, release)               -- publishes
//   progress writers (launch thread at Coll stop; proxy thread at KernelCh,
//   ProxyOp, ProxyStep events) first check commit == seq + 1 (acquire) for the
//   slot sequence their handle names, and count kDropStaleHandle otherwise.
//
//   reader of a live image, for each record (the dump copy and the watchdog:
//   recorder/record_copy.h):
//     c1 = commit (acquire)
//     copy words 1..15
//     acquire fence                                -- pairs with the writer's
//     c2 = commit                                  -- release fence
//     c1 != c2 -> the slot was reclaimed while copied: the copy is torn (a
//                 dump stores it with commit 0)
//   The progress words are covered by this re-check (there is no per-lap
//   tag): a new lap's writer resets commit and fences before it touches any
//   word of the slot. A reader of a ring FILE (`flightrec show`, `analyze`:
//   analyzer/reader/region_reader.h) does the same with pread: c1 from its
//   read of the whole file, the record from a second read of the region, c2
//   from a third; the record is used only when all three commits agree.
//
//   reader, then, for each slot sequence s in [max(0, head - capacity), head)
//   of an image (a dump, or the copy above):
//     c = commit; if c != s + 1 -> torn (claimed, not published) or
//     overwritten; else verify the checksum -> valid or torn.
//   A dump is an immutable image: reading it needs this step only.
//
// A SIGKILL at any instruction therefore costs at most the one record whose
// claim was in progress, and the reader reports it as torn, never as data.
// Records overwritten by wrap: RegionDesc::head - region_capacity when
// positive; readers align ranks exactly by slot sequence and op_index.
//
// WHO WRITES WHAT, AND WHEN
//
//   FileHeader: everything at init (before any other thread can see the file)
//     except: heartbeat_* (watchdog thread, every poll), process_state
//     (kProcessRunning just before the rename; last finalize / atexit),
//     drops[] (any thread, relaxed fetch_add), the dump budget fields
//     (watchdog),
//     gpu_offset_* (proxy thread, relaxed), dump_* (only in dump images, by
//     the dumper on its private copy), dumps_sealed (watchdog).
//   RegionDesc: identity at claim, by the init thread, published by
//     state.store(kRegionActive, release); head by the launch thread; counters
//     and drops by any thread with relaxed atomics; finalize_mono_ns and state
//     kRegionFinalized by the finalize thread.
//   Record: as above.
//
// COPY-ENGINE RECORDS (format 1.5, kFlagCopyEngine)
//
// A copy-engine collective (NCCL 2.29+, profiler API v6+: CeColl,
// docs/design/nccl.md §Copy-engine collectives) is one Record of its
// communicator, claimed at CeColl start on the user thread. It is a
// collective: op_index is the next per-comm collective index, in the user's
// call order with the kernel collectives, so members align on it as on any
// other. Immutable part: func, count, datatype and root_or_peer (root) from
// the ceColl descriptor (AllGather: count in bytes, datatype ncclInt8;
// api_datatype has the user's type), nccl_seq = ceColl.ceSeqNum (the comm's
// CE counter, +2 per CE op, not the per-function seqNumber of kernel
// collectives), algo kAlgoCeMulticast / kAlgoCeUnicast from syncStrategy
// "MC" / "UC", proto kProtoUnknown, n_channels and n_warps 0, stream =
// ceColl.stream, user_tag from ceColl.userTag (v7) or the CollApi event.
// Progress: t_enqueued_ns at CeColl stop (the copies are queued);
// t_last_progress_ns at each CeSync/CeBatch start and at each completion
// below; net_bytes sums CeBatch totalBytes (bytes given to the copy
// engines, not network traffic); the channel and proxy counters, the GPU
// timers and the phase counters stay 0. NCCL reports no completion for a
// CE op: the plugin records CUDA events on its stream and the watchdog
// thread moves state to kOpRunning when the stream reached the op and to
// kOpDone when it passed it (docs/design/recorder.md §Copy-engine
// completion). Where that is impossible (no CUDA driver in the process, or
// every pooled event in flight) the record carries kFlagNoCompletion: its
// state stays kOpEnqueued, and readers infer completion from stream order
// (a later op of the process on the same stream that started means this
// one finished) or from a clean finalize.
//
// CLOCKS
//
// All *_ns time fields in records are CLOCK_MONOTONIC nanoseconds of the
// writing host (computed from a calibrated TSC when clock_source ==
// kClockTsc, else read directly). FileHeader holds one anchor pair
// (created_wall_ns, created_mono_ns) taken at the same instant, so
// wall = mono - created_mono_ns + created_wall_ns. GPU timer values
// (gpu_start_raw, gpu_end_raw) are the raw %globaltimer nanoseconds NCCL
// reported; gpu_to_mono_offset_ns estimates mono - gpu (the minimum over
// observations of host-observe-time minus GPU timer, which bounds the true
// offset from above by the proxy's observation delay). gpu_offset_samples
// counts the observations behind it as a lower bound (0: no estimate; the
// hot path writes that shared line only when the estimate improves or at
// every 64th observation of a communicator).
#ifndef FLIGHTREC_RECORD_FORMAT_H_
#define FLIGHTREC_RECORD_FORMAT_H_

#include <stddef.h>
#include <stdint.h>

namespace flightrec {
namespace format {

// "FLIGHTRC" in little-endian byte order. The .so stores it XOR'd with
// kMagicMask and computes the real value at run time, so scanning memory or
// the library for the magic finds only real ring files.
constexpr uint64_t kMagicMask = 0x5a5a5a5a5a5a5a5aULL;
constexpr uint64_t kMagicMasked = 0x435452474948464cULL ^ kMagicMask;
constexpr uint64_t Magic() { return kMagicMasked ^ kMagicMask; }
constexpr uint32_t kEndianMarker = 0x01020304u;
constexpr uint16_t kFormatMajor = 1;
// 1.1: kDropPxnForeign.
// 1.2: rings published complete (made as `.ring.init`, renamed when done) with
//      kProcessStarting while init runs; the dump budget fields of FileHeader
//      (max_dumps .. last_refused_mono_ns).
// 1.3: the record checksum gives the slot sequence a round of its own
//      (RecordChecksum; kChecksumSeedRoundMinor).
// 1.4: Record::api_datatype (byte 125, formerly reserved; kApiDatatypeMinor).
// 1.5: copy-engine and symmetric-kernel records (kFlagCopyEngine,
//      kFlagSymmetric, kFlagNoCompletion, the CE and SYMK algos, the
//      KernelVariant in `proto`), the kernel phase counters (bytes 126, 127,
//      formerly reserved), RegionDesc::event_mask and open_at_finalize, and
//      kRegionEndedInFlight / kRegionMaskOverridden (kNcclTodayMinor).
constexpr uint16_t kFormatMinor = 5;
// The zstd frame magic as it appears in the first four bytes of a dump.
constexpr uint32_t kZstdFrameMagic = 0xFD2FB528u;

constexpr uint32_t kHeaderSize = 4096;
constexpr uint32_t kRegionDescSize = 256;
constexpr uint32_t kRecordSize = 128;
constexpr uint32_t kPageSize = 4096;

// Hard limits a reader enforces before trusting any count in a file.
constexpr uint32_t kMaxRegions = 4096;
constexpr uint64_t kMaxRegionCapacity = 1ULL << 22;
constexpr uint64_t kMaxFileSize = 1ULL << 34;  // 16 GiB

enum FileKind : uint32_t {
  kFileKindRing = 1,  // the live (or crashed) process's mapping
  kFileKindDump = 2,  // a sealed snapshot
};

enum ClockSource : uint32_t {
  kClockMonotonic = 1,
  kClockTsc = 2,
};

enum ProcessState : uint32_t {
  kProcessRunning = 1,   // set at init; still set after SIGKILL
  kProcessExited = 2,    // last finalize or exit handler ran
  kProcessDisabled = 3,  // recording turned itself off (see disable_reason)
  // Format 1.2: init not finished. Only a `.ring.init` file (a process that
  // died during init) holds it; a `.ring` is renamed into place after
  // kProcessRunning is set.
  kProcessStarting = 4,
};

enum DumpReason : uint32_t {
  kDumpNone = 0,
  kDumpTimeout = 1,  // this process saw an op stuck past the timeout
  kDumpTrigger = 2,  // another rank (or a user) left a trigger file
  kDumpExit = 3,     // dump at exit / last finalize
  kDumpRequest = 4,  // explicit API or signal request
};

// Every early return on the hot path counts one of these (process-wide in
// FileHeader::drops, per communicator in RegionDesc::drops where the region
// is known).
enum DropCause : uint32_t {
  kDropNoRegion = 0,       // communicator had no free region
  kDropNullContext = 1,    // event for a declined/failed communicator
  kDropForeignHandle = 2,  // handle/context not ours (garbage, stale pointers)
  kDropStaleHandle = 3,    // slot was reused by a newer op before the event
  kDropUnknownEvent = 4,   // event type or state we do not know
  kDropBadDescriptor = 5,  // descriptor field out of range (e.g. channel id)
  kDropAfterFinalize = 6,  // event for a communicator already finalized
  kDropDisabled = 7,       // recording disabled after an error
  kDropNoApiSlot = 8,      // API-level scratch entry was recycled (graph replays excepted)
  // Format 1.1: a ProxyOp another process handed to ours (PXN,
  // docs/design/nccl.md §PXN), declined by its pid. Not data loss: the op is the other process's.
  kDropPxnForeign = 9,
  kNumDropCauses = 16,  // array size; unused causes stay 0
};

// Operation function codes (our own, stable across NCCL versions).
enum Func : uint8_t {
  kFuncUnknown = 0,
  kFuncBroadcast = 1,
  kFuncReduce = 2,
  kFuncAllGather = 3,
  kFuncReduceScatter = 4,
  kFuncAllReduce = 5,
  kFuncSend = 6,
  kFuncRecv = 7,
  kFuncAllToAll = 8,
  kFuncGather = 9,
  kFuncScatter = 10,
  kFuncSendRecv = 11,
  kFuncAllGatherV = 12,
  kNumFuncs = 13,
};

enum DataType : uint8_t {
  kTypeUnknown = 0,
  kTypeInt8 = 1,
  kTypeUint8 = 2,
  kTypeInt32 = 3,
  kTypeUint32 = 4,
  kTypeInt64 = 5,
  kTypeUint64 = 6,
  kTypeFloat16 = 7,
  kTypeFloat32 = 8,
  kTypeFloat64 = 9,
  kTypeBfloat16 = 10,
  kTypeFloat8e4m3 = 11,
  kTypeFloat8e5m2 = 12,
  kNumDataTypes = 13,
};

enum Algo : uint8_t {
  kAlgoUnknown = 0,
  kAlgoTree = 1,
  kAlgoRing = 2,
  kAlgoCollnetDirect = 3,
  kAlgoCollnetChain = 4,
  kAlgoNvls = 5,
  kAlgoNvlsTree = 6,
  kAlgoPat = 7,
  // Format 1.5. A copy-engine collective's sync strategy ("MC": multicast,
  // "UC": unicast), the one choice NCCL reports for it.
  kAlgoCeMulticast = 8,
  kAlgoCeUnicast = 9,
  // Format 1.5: a symmetric kernel (kFlagSymmetric); its variant is in
  // Record::proto (KernelVariant).
  kAlgoSymmetric = 10,
  kNumAlgos = 11,
};

enum Proto : uint8_t {
  kProtoUnknown = 0,
  kProtoLL = 1,
  kProtoLL128 = 2,
  kProtoSimple = 3,
  kNumProtos = 4,
};

// Format 1.5: the symmetric kernel NCCL ran (API v7 `coll.kernelVariant`,
// NCCL's ncclSymkKernelId without the function, which Record::func holds).
// NCCL gives no protocol for a symmetric kernel, so a record with
// kFlagSymmetric keeps this code in Record::proto. kVariantOther: a name this
// format does not know.
enum KernelVariant : uint8_t {
  kVariantNone = 0,
  kVariantOther = 1,
  kVariantAGxLL_R = 2,             // AllReduce
  kVariantAGxLLMC_R = 3,           // AllReduce
  kVariantRSxLD_AGxST = 4,         // AllReduce
  kVariantRSxLDMC_AGxSTMC = 5,     // AllReduce
  kVariantRSxTmaLD_AGxTmaST = 6,   // AllReduce
  kVariantAllGatherLL = 7,         // AllGather "LL"
  kVariantAllGatherLLMC = 8,       // AllGather "LLMC"
  kVariantAllGatherST = 9,         // AllGather "ST"
  kVariantAllGatherSTMC = 10,      // AllGather "STMC"
  kVariantAllGatherTmaST = 11,     // AllGather "TmaST"
  kVariantAllGatherTmaSTMC = 12,   // AllGather "TmaSTMC"
  kVariantReduceScatterLL = 13,    // ReduceScatter "LL"
  kVariantReduceScatterLD = 14,    // ReduceScatter "LD"
  kVariantReduceScatterLDMC = 15,  // ReduceScatter "LDMC"
  kNumKernelVariants = 16,
};

// Format 1.5: the phases of a symmetric kernel (API v7 KernelPhase
// `phaseId`), counted per record in Record::phase_compute_channels and
// phase_final_channels.
enum KernelPhase : uint8_t {
  kPhaseInitialSync = 0,
  kPhaseCompute = 1,
  kPhaseFinalSync = 2,
  kNumKernelPhases = 3,
};

enum OpState : uint8_t {
  kOpNone = 0,
  kOpEnqueued = 1,  // Coll/P2p start seen (NCCL has the task)
  kOpRunning = 2,   // a KernelCh or ProxyOp started: the GPU/network runs it
  kOpDone = 3,      // every channel's KernelCh stopped (or every ProxyOp)
  kNumOpStates = 4,
};

// Record::flags bits.
enum RecordFlag : uint8_t {
  kFlagP2p = 1u << 0,            // a Send/Recv; op_index is per (peer, dir)
  kFlagGraphCaptured = 1u << 1,  // CollApi/P2pApi said graphCaptured
  kFlagHasApi = 1u << 2,         // t_api_ns/user_tag/stream came from *Api
  kFlagGpuTimed = 1u << 3,       // KernelCh carried GPU timers
  kFlagNetwork = 1u << 4,        // ProxyOp events were seen
  // Format 1.5.
  kFlagCopyEngine = 1u << 5,    // a copy-engine collective (CeColl, API v6+)
  kFlagSymmetric = 1u << 6,     // a symmetric kernel (`coll.isSymColl`, API v7)
  kFlagNoCompletion = 1u << 7,  // no completion event can come for this op
};

// RegionDesc::state.
enum RegionState : uint32_t {
  kRegionFree = 0,
  kRegionActive = 1,
  kRegionFinalized = 2,
};

// RegionDesc::flags bits.
enum RegionFlag : uint32_t {
  kRegionIdentityFromInit = 1u << 0,   // v4+: comm identity came from init
  kRegionCompletionTracked = 1u << 1,  // KernelCh/ProxyOp events requested
  // Format 1.5. Finalize found ops of this communicator not done: NCCL ended
  // it with work in flight (ncclCommAbort, or destroy after ncclCommRevoke);
  // RegionDesc::open_at_finalize counts them.
  kRegionEndedInFlight = 1u << 2,
  // Format 1.5. NCCL delivered events outside the mask this communicator was
  // given (RAS's job-wide mask override, NCCL 2.31+).
  kRegionMaskOverridden = 1u << 3,
};

// ---------------------------------------------------------------------------
// FileHeader: 4096 bytes at offset 0.
// ---------------------------------------------------------------------------
struct FileHeader {
  uint64_t magic;                 // Magic()
  uint32_t endian_marker;         // kEndianMarker, written native-endian
  uint16_t version_major;         // kFormatMajor
  uint16_t version_minor;         // kFormatMinor
  uint32_t header_size;           // kHeaderSize
  uint32_t record_size;           // kRecordSize
  uint32_t region_desc_size;      // kRegionDescSize
  uint32_t max_regions;           // number of RegionDesc entries
  uint64_t region_capacity;       // records per region, power of two
  uint64_t region_table_offset;   // byte offset of RegionDesc[0]
  uint64_t records_offset;        // byte offset of region 0's records
  uint64_t file_size;             // total bytes of the image
  uint32_t pointer_size;          // sizeof(void*) of the writer
  uint32_t file_kind;             // FileKind
  int64_t pid;                    // writer's pid
  uint64_t created_wall_ns;       // CLOCK_REALTIME at init  } same instant
  uint64_t created_mono_ns;       // CLOCK_MONOTONIC at init }
  uint32_t clock_source;          // ClockSource used for *_ns fields
  uint32_t api_version;           // NCCL profiler API version seen (1..7)
  uint64_t tsc_hz;                // TSC frequency when kClockTsc, else 0
  int64_t gpu_to_mono_offset_ns;  // estimate of mono - gpu timer (see top)
  uint64_t gpu_offset_samples;    // observations behind that estimate
  char host[64];                  // NUL-terminated, truncated
  char job_id[64];                // SLURM/TORCHELASTIC/NCCL_FLIGHTREC_JOB_ID
  char plugin_version[32];
  char nccl_version[32];  // "" when unknown
  char gpu_uuid[48];      // "" when no CUDA driver
  char gpu_pci_bus_id[32];
  int32_t cuda_device;         // -1 when unknown
  uint32_t process_state;      // ProcessState
  uint64_t heartbeat_mono_ns;  // watchdog refreshes every poll
  uint64_t heartbeat_wall_ns;
  uint64_t heartbeat_count;
  uint64_t dumps_sealed;           // dumps this process has written
  uint64_t drops[kNumDropCauses];  // DropCause -> count
  uint64_t watchdog_timeout_ns;    // NCCL_FLIGHTREC_TIMEOUT_S in ns
  uint64_t watchdog_poll_ns;       // poll interval (heartbeat period)
  // Dump images only (zero in a ring):
  uint32_t dump_reason;    // DumpReason
  uint32_t dump_sequence;  // 1 for the first dump of this process
  uint64_t dump_wall_ns;
  uint64_t dump_mono_ns;
  char dump_detail[128];     // e.g. "comm tp0 AllReduce #812 stuck 2.1s"
  char disable_reason[128];  // why recording turned off, if it did
  // Format 1.2, the dump budget (docs/design/recorder.md, "Dump budget");
  // zero in older files. Written by the watchdog thread (relaxed), and by the
  // closing thread for the exit dump after the watchdog was joined.
  uint32_t max_dumps;             // NCCL_FLIGHTREC_MAX_DUMPS
  uint32_t dumps_open;            // incident dumps counted against it now
  uint32_t dumps_released;        // incident dumps whose ops completed since
  uint32_t dumps_refused;         // dumps not sealed because of the budget
  uint32_t last_refused_reason;   // DumpReason of the last refused dump
  uint32_t dumps_absorbed;        // trigger changes answered by an earlier dump
  uint64_t last_refused_mono_ns;  // when the last dump was refused
  uint8_t reserved[3200];         // 4096 - 896
};

static_assert(sizeof(FileHeader) == kHeaderSize, "FileHeader size");
static_assert(alignof(FileHeader) == 8, "FileHeader align");
static_assert(offsetof(FileHeader, magic) == 0, "");
static_assert(offsetof(FileHeader, endian_marker) == 8, "");
static_assert(offsetof(FileHeader, version_major) == 12, "");
static_assert(offsetof(FileHeader, version_minor) == 14, "");
static_assert(offsetof(FileHeader, header_size) == 16, "");
static_assert(offsetof(FileHeader, record_size) == 20, "");
static_assert(offsetof(FileHeader, region_desc_size) == 24, "");
static_assert(offsetof(FileHeader, max_regions) == 28, "");
static_assert(offsetof(FileHeader, region_capacity) == 32, "");
static_assert(offsetof(FileHeader, region_table_offset) == 40, "");
static_assert(offsetof(FileHeader, records_offset) == 48, "");
static_assert(offsetof(FileHeader, file_size) == 56, "");
static_assert(offsetof(FileHeader, pointer_size) == 64, "");
static_assert(offsetof(FileHeader, file_kind) == 68, "");
static_assert(offsetof(FileHeader, pid) == 72, "");
static_assert(offsetof(FileHeader, created_wall_ns) == 80, "");
static_assert(offsetof(FileHeader, created_mono_ns) == 88, "");
static_assert(offsetof(FileHeader, clock_source) == 96, "");
static_assert(offsetof(FileHeader, api_version) == 100, "");
static_assert(offsetof(FileHeader, tsc_hz) == 104, "");
static_assert(offsetof(FileHeader, gpu_to_mono_offset_ns) == 112, "");
static_assert(offsetof(FileHeader, gpu_offset_samples) == 120, "");
static_assert(offsetof(FileHeader, host) == 128, "");
static_assert(offsetof(FileHeader, job_id) == 192, "");
static_assert(offsetof(FileHeader, plugin_version) == 256, "");
static_assert(offsetof(FileHeader, nccl_version) == 288, "");
static_assert(offsetof(FileHeader, gpu_uuid) == 320, "");
static_assert(offsetof(FileHeader, gpu_pci_bus_id) == 368, "");
static_assert(offsetof(FileHeader, cuda_device) == 400, "");
static_assert(offsetof(FileHeader, process_state) == 404, "");
static_assert(offsetof(FileHeader, heartbeat_mono_ns) == 408, "");
static_assert(offsetof(FileHeader, heartbeat_wall_ns) == 416, "");
static_assert(offsetof(FileHeader, heartbeat_count) == 424, "");
static_assert(offsetof(FileHeader, dumps_sealed) == 432, "");
static_assert(offsetof(FileHeader, drops) == 440, "");
static_assert(offsetof(FileHeader, watchdog_timeout_ns) == 568, "");
static_assert(offsetof(FileHeader, watchdog_poll_ns) == 576, "");
static_assert(offsetof(FileHeader, dump_reason) == 584, "");
static_assert(offsetof(FileHeader, dump_sequence) == 588, "");
static_assert(offsetof(FileHeader, dump_wall_ns) == 592, "");
static_assert(offsetof(FileHeader, dump_mono_ns) == 600, "");
static_assert(offsetof(FileHeader, dump_detail) == 608, "");
static_assert(offsetof(FileHeader, disable_reason) == 736, "");
static_assert(offsetof(FileHeader, max_dumps) == 864, "");
static_assert(offsetof(FileHeader, dumps_open) == 868, "");
static_assert(offsetof(FileHeader, dumps_released) == 872, "");
static_assert(offsetof(FileHeader, dumps_refused) == 876, "");
static_assert(offsetof(FileHeader, last_refused_reason) == 880, "");
static_assert(offsetof(FileHeader, dumps_absorbed) == 884, "");
static_assert(offsetof(FileHeader, last_refused_mono_ns) == 888, "");
static_assert(offsetof(FileHeader, reserved) == 896, "");

// ---------------------------------------------------------------------------
// RegionDesc: one per communicator slot, 256 bytes each.
// ---------------------------------------------------------------------------
struct RegionDesc {
  uint32_t state;         // RegionState; published last (release)
  uint32_t region_index;  // == its index in the table (cross-check)
  uint64_t comm_id;       // NCCL commHash, identical on all ranks
  int32_t rank;           // rank in this communicator
  int32_t nranks;         // 0 when unknown (API v1-v3)
  int32_t nnodes;         // 0 when unknown
  uint32_t flags;         // RegionFlag
  char comm_name[64];     // copied from init; "" when NULL
  uint64_t generation;    // process-wide init counter at claim (1-based)
  uint64_t head;          // next slot sequence to claim
  uint64_t coll_count;    // collectives claimed (next coll op_index)
  uint64_t p2p_count;     // p2p ops claimed
  uint64_t init_mono_ns;
  uint64_t finalize_mono_ns;      // 0 while active
  uint64_t drops[8];              // DropCause (< 8) -> count, this comm only
  uint64_t last_enqueue_mono_ns;  // t_enqueue_ns of the newest record
  // Format 1.5: the activation mask written at init (NCCL's ncclProfile*
  // bits); 0 in older files.
  uint32_t event_mask;
  // Format 1.5: ops not done when finalize ran (see kRegionEndedInFlight),
  // written by the finalize thread before it publishes kRegionFinalized.
  uint32_t open_at_finalize;
  uint8_t reserved[32];
};

static_assert(sizeof(RegionDesc) == kRegionDescSize, "RegionDesc size");
static_assert(alignof(RegionDesc) == 8, "RegionDesc align");
static_assert(offsetof(RegionDesc, state) == 0, "");
static_assert(offsetof(RegionDesc, region_index) == 4, "");
static_assert(offsetof(RegionDesc, comm_id) == 8, "");
static_assert(offsetof(RegionDesc, rank) == 16, "");
static_assert(offsetof(RegionDesc, nranks) == 20, "");
static_assert(offsetof(RegionDesc, nnodes) == 24, "");
static_assert(offsetof(RegionDesc, flags) == 28, "");
static_assert(offsetof(RegionDesc, comm_name) == 32, "");
static_assert(offsetof(RegionDesc, generation) == 96, "");
static_assert(offsetof(RegionDesc, head) == 104, "");
static_assert(offsetof(RegionDesc, coll_count) == 112, "");
static_assert(offsetof(RegionDesc, p2p_count) == 120, "");
static_assert(offsetof(RegionDesc, init_mono_ns) == 128, "");
static_assert(offsetof(RegionDesc, finalize_mono_ns) == 136, "");
static_assert(offsetof(RegionDesc, drops) == 144, "");
static_assert(offsetof(RegionDesc, last_enqueue_mono_ns) == 208, "");
static_assert(offsetof(RegionDesc, event_mask) == 216, "");
static_assert(offsetof(RegionDesc, open_at_finalize) == 220, "");
static_assert(offsetof(RegionDesc, reserved) == 224, "");

// ---------------------------------------------------------------------------
// Record: one collective or p2p operation, 128 bytes (two cache lines).
// ---------------------------------------------------------------------------
struct Record {
  // Publication word (see the state machine above).
  uint64_t commit;  // 0 or slot sequence + 1
  // Immutable part (what the checksum covers: RecordChecksum).
  uint64_t op_index;      // coll: per-comm collective index (0-based);
                          // p2p: per (comm, peer, direction) index
  uint64_t nccl_seq;      // coll: NCCL seqNumber; p2p: UINT64_MAX
  uint64_t count;         // elements as NCCL's Coll/P2p event gave it
  uint64_t user_tag;      // v7 userTag (frameworks: training step)
  uint64_t t_api_ns;      // CollApi/P2pApi start (0 if none)
  uint64_t t_enqueue_ns;  // Coll/P2p start
  uint64_t stream;        // opaque stream id from the API event
  int32_t root_or_peer;   // coll: root; p2p: peer rank
  uint8_t func;           // Func
  uint8_t datatype;       // DataType
  uint8_t algo;           // Algo
  uint8_t proto;          // Proto
  uint8_t n_channels;
  uint8_t n_warps;
  uint8_t flags;      // RecordFlag
  uint8_t type_size;  // bytes per element (0 unknown)
  uint32_t checksum;  // RecordChecksum(record, seq): see there for its range
  // Mutable progress words (each monotonic, independent).
  uint64_t t_enqueued_ns;       // Coll/P2p stop: NCCL finished enqueueing
  uint64_t gpu_start_raw;       // min KernelCh start timer (GPU ns), 0 none
  uint64_t gpu_end_raw;         // max KernelCh stop timer (GPU ns), 0 none
  uint64_t t_last_progress_ns;  // host time of the newest KernelCh/Proxy event
  uint64_t net_bytes;           // sum of ProxyStep transSize
  uint8_t state;                // OpState
  uint8_t channels_started;
  uint8_t channels_stopped;
  uint8_t proxy_ops_started;
  uint8_t proxy_ops_stopped;
  // Format 1.4: the datatype of the user's call as the CollApi/P2pApi event
  // (API v5+) gave it (DataType); kTypeUnknown (0) when no API event was
  // matched to the op, NCCL named a type the format does not know, or the
  // file is older (the byte was reserved, never written: 0). Differs from
  // `datatype` where NCCL's Coll event converts the call: AllGather and
  // Broadcast are given in bytes as ncclInt8 (docs/design/nccl.md). Readers
  // take it from images with version_minor >= kApiDatatypeMinor only.
  uint8_t api_datatype;
  // Format 1.5, progress counters of a symmetric kernel (API v7 KernelPhase
  // events): channels whose compute phase began, and channels whose final
  // sync began. Channels started minus phase_compute_channels are still in
  // the initial sync; phase_final_channels == channels_started with the op
  // not done means every channel waits in the final barrier (a peer never
  // arrived). 0 in older files and for ops without phase events.
  uint8_t phase_compute_channels;
  uint8_t phase_final_channels;
};

static_assert(sizeof(Record) == kRecordSize, "Record size");
static_assert(alignof(Record) == 8, "Record align");
static_assert(offsetof(Record, commit) == 0, "");
static_assert(offsetof(Record, op_index) == 8, "");
static_assert(offsetof(Record, nccl_seq) == 16, "");
static_assert(offsetof(Record, count) == 24, "");
static_assert(offsetof(Record, user_tag) == 32, "");
static_assert(offsetof(Record, t_api_ns) == 40, "");
static_assert(offsetof(Record, t_enqueue_ns) == 48, "");
static_assert(offsetof(Record, stream) == 56, "");
static_assert(offsetof(Record, root_or_peer) == 64, "");
static_assert(offsetof(Record, func) == 68, "");
static_assert(offsetof(Record, datatype) == 69, "");
static_assert(offsetof(Record, algo) == 70, "");
static_assert(offsetof(Record, proto) == 71, "");
static_assert(offsetof(Record, n_channels) == 72, "");
static_assert(offsetof(Record, n_warps) == 73, "");
static_assert(offsetof(Record, flags) == 74, "");
static_assert(offsetof(Record, type_size) == 75, "");
static_assert(offsetof(Record, checksum) == 76, "");
static_assert(offsetof(Record, t_enqueued_ns) == 80, "");
static_assert(offsetof(Record, gpu_start_raw) == 88, "");
static_assert(offsetof(Record, gpu_end_raw) == 96, "");
static_assert(offsetof(Record, t_last_progress_ns) == 104, "");
static_assert(offsetof(Record, net_bytes) == 112, "");
static_assert(offsetof(Record, state) == 120, "");
static_assert(offsetof(Record, channels_started) == 121, "");
static_assert(offsetof(Record, channels_stopped) == 122, "");
static_assert(offsetof(Record, proxy_ops_started) == 123, "");
static_assert(offsetof(Record, proxy_ops_stopped) == 124, "");
static_assert(offsetof(Record, api_datatype) == 125, "");
static_assert(offsetof(Record, phase_compute_channels) == 126, "");
static_assert(offsetof(Record, phase_final_channels) == 127, "");

constexpr uint32_t kRecordImmutableBegin = 8;   // after commit
constexpr uint32_t kRecordChecksumOffset = 76;  // offsetof(Record, checksum)
// The first format minor that writes Record::api_datatype.
constexpr uint16_t kApiDatatypeMinor = 4;
// The first format minor that writes the 1.5 fields (copy-engine and
// symmetric records, phase counters, RegionDesc::event_mask and
// open_at_finalize): readers take them from images with version_minor >=
// kNcclTodayMinor only.
constexpr uint16_t kNcclTodayMinor = 5;

// Checksum of a record's immutable part. This is the one statement of its
// range: it covers bytes [8, 76) (op_index through type_size), neither the
// commit word nor the checksum field nor any progress word. Computed as a
// 64-bit multiply-xorshift mix: the slot sequence is mixed in first, as a
// round of its own, then the nine 8-byte words in [8, 80), loaded in host
// byte order, with the checksum field's four bytes masked out (the mask is
// the high half of the word at 72, i.e. bytes [76, 80) on a little-endian
// host): ten rounds, a few ns on the hot path, and any flipped word changes
// the result. Because the sequence has its own round, a record is bound to
// its lap even where op_index equals the slot sequence (a communicator with
// collectives only): a copy holding one lap's commit and op_index with
// another lap's other words does not verify.
//
// Formats 1.0 to 1.2 (kFormatMinor < kChecksumSeedRoundMinor) XOR the
// sequence into the start value instead of giving it a round; there the
// sequence and op_index cancel when equal, and the checksum does not tell
// laps apart. Readers pick the rule by the image's version_minor
// (RecordChecksumFor).
constexpr uint16_t kChecksumSeedRoundMinor = 3;
constexpr uint64_t kChecksumStart = 0x9e3779b97f4a7c15ULL;
constexpr uint64_t kChecksumMultiplier = 0xff51afd7ed558ccdULL;

inline uint64_t RecordChecksumRound(uint64_t h, uint64_t w) {
  h ^= w;
  h *= kChecksumMultiplier;
  return h ^ (h >> 33);
}

inline uint32_t RecordChecksumFrom(uint64_t h, const unsigned char* rec) {
  for (uint32_t off = kRecordImmutableBegin; off < 80; off += 8) {
    uint64_t w = 0;
    __builtin_memcpy(&w, rec + off, sizeof(w));
    if (off == 72) w &= 0x00000000ffffffffULL;  // drop the checksum bytes
    h = RecordChecksumRound(h, w);
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

// The checksum this format version writes.
inline uint32_t RecordChecksum(const unsigned char* rec, uint64_t slot_seq) {
  return RecordChecksumFrom(RecordChecksumRound(kChecksumStart, slot_seq), rec);
}

// The checksum of an image written as format 1.<version_minor>.
inline uint32_t RecordChecksumFor(uint16_t version_minor, const unsigned char* rec,
                                  uint64_t slot_seq) {
  if (version_minor < kChecksumSeedRoundMinor)
    return RecordChecksumFrom(kChecksumStart ^ slot_seq, rec);
  return RecordChecksum(rec, slot_seq);
}

// Per-type tables must have one entry per enumerator (Tracy's QueueDataSize
// check): the name tables live in record_names.h and assert against these.
constexpr uint32_t kFuncNameCount = kNumFuncs;
constexpr uint32_t kDataTypeNameCount = kNumDataTypes;

}  // namespace format
}  // namespace flightrec

#endif  // FLIGHTREC_RECORD_FORMAT_H_

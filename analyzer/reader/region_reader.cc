#include "analyzer/reader/region_reader.h"

#include <stddef.h>
#include <string.h>

#include <algorithm>
#include <atomic>

#include "analyzer/reader/byte_buffer.h"
#include "analyzer/reader/file_read.h"
#include "analyzer/reader/record_buffers.h"
#include "analyzer/reader/window_rules.h"
#include "flightrec/record_format.h"
#include "flightrec/record_names.h"

namespace flightrec {
namespace reader_internal {
namespace {

using format::Record;
using format::RegionDesc;

std::string RegionPrefix(uint32_t index) { return "region " + std::to_string(index) + ": "; }

// An enum byte, with values the format does not define replaced by 0
// ("Unknown"/"none").
uint8_t InRange(uint8_t value, uint8_t limit) { return value < limit ? value : 0; }

// InRange, counting the values it replaced.
uint8_t CheckedEnum(uint8_t value, uint8_t limit, uint64_t* bad) {
  if (value < limit) return value;
  ++*bad;
  return 0;
}

// A field of the record whose bytes start at `rec` (memcpy: the image
// makes no alignment promise).
template <typename T>
T FieldAt(const uint8_t* rec, size_t offset) {
  T v;
  memcpy(&v, rec + offset, sizeof(T));
  return v;
}

// How many enum values of the record at `rec` ToOpRecord shows as Unknown:
// one count per InRange there that replaced its value.
uint64_t BadEnums(const uint8_t* rec, uint16_t version_minor) {
  const uint8_t func = rec[offsetof(Record, func)];
  const uint8_t datatype = rec[offsetof(Record, datatype)];
  const uint8_t algo = rec[offsetof(Record, algo)];
  const uint8_t proto = rec[offsetof(Record, proto)];
  const uint8_t state = rec[offsetof(Record, state)];
  uint64_t bad = uint64_t{func >= format::kNumFuncs} + (datatype >= format::kNumDataTypes) +
                 (algo >= format::kNumAlgos) + (proto >= format::kNumProtos) +
                 (state >= format::kNumOpStates);
  if (version_minor >= format::kApiDatatypeMinor) {
    bad += rec[offsetof(Record, api_datatype)] >= format::kNumDataTypes;
  }
  if (version_minor >= format::kNcclTodayMinor &&
      (rec[offsetof(Record, flags)] & format::kFlagSymmetric) != 0) {
    bad += proto >= format::kNumKernelVariants;
  }
  return bad;
}

uint64_t BytesOf(const Record& r) {
  uint64_t size = format::DataTypeSize(r.datatype);
  if (size == 0) size = r.type_size;
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(r.count, size, &bytes)) return 0;
  return bytes;
}

// How far a record's GPU start may convert outside its own host window
// before the file's single GPU offset is judged not to apply to it: far
// beyond an observation delay and beyond what GPU-timer drift against the
// host clock (parts per million) adds up to over a run of days, so only a
// step of the GPU timer trips it.
constexpr uint64_t kGpuSlackNs = 60000000000ULL;

// GPU timer -> wall for one record. The header's offset is one number for
// the whole run (the smallest observed host-minus-GPU time), which holds
// while the GPU timer runs with the host's monotonic clock. A GPU timer that
// steps (it approximates Unix time: the emulator's follows CLOCK_REALTIME, so
// an NTP or `date -s` step moves it) breaks that: across the step the offset
// puts the kernel hours before its own op was enqueued. The kernel started
// after the enqueue (t_enqueue_ns) and before the host saw it start
// (t_last_progress_ns, stamped at the first KernelCh start or a later event).
// A start that converts outside that window by more than kGpuSlackNs is
// converted with the offset the record's own observation implies instead:
// start = that host time, end = start + the raw GPU duration, both within
// the op's own span. Raw timers are kept as they were either way.
struct GpuWall {
  uint64_t start_ns;
  uint64_t end_ns;
};
GpuWall ConvertGpuTimes(const Record& r, const ImageLayout& layout) {
  GpuWall out{layout.GpuToWall(r.gpu_start_raw), layout.GpuToWall(r.gpu_end_raw)};
  if (out.start_ns == 0 || r.t_enqueue_ns == 0 || r.t_last_progress_ns < r.t_enqueue_ns) {
    return out;
  }
  const uint64_t start = r.gpu_start_raw + static_cast<uint64_t>(layout.gpu_to_mono_offset_ns);
  const bool early = start < r.t_enqueue_ns && r.t_enqueue_ns - start > kGpuSlackNs;
  const bool late = start > r.t_last_progress_ns && start - r.t_last_progress_ns > kGpuSlackNs;
  if (!early && !late) return out;
  const uint64_t own_offset = r.t_last_progress_ns - r.gpu_start_raw;  // mono - gpu, mod 2^64
  out.start_ns = layout.MonoToWall(r.t_last_progress_ns);
  out.end_ns = r.gpu_end_raw != 0 ? layout.MonoToWall(r.gpu_end_raw + own_offset) : 0;
  return out;
}

// The record of slot sequence `seq` as the analyzer sees it; the enum
// values it replaces are counted in *bad (BadEnums).
OpRecord ToOpRecord(const Record& r, uint64_t seq, const ImageLayout& layout, uint64_t* bad) {
  OpRecord op;
  op.slot_seq = seq;
  op.op_index = r.op_index;
  op.nccl_seq = r.nccl_seq;
  op.count = r.count;
  op.bytes = BytesOf(r);
  op.user_tag = r.user_tag;
  op.stream = r.stream;
  op.root_or_peer = r.root_or_peer;
  op.func = InRange(r.func, format::kNumFuncs);
  op.datatype = InRange(r.datatype, format::kNumDataTypes);
  op.algo = InRange(r.algo, format::kNumAlgos);
  op.proto = InRange(r.proto, format::kNumProtos);
  op.state = InRange(r.state, format::kNumOpStates);
  op.n_channels = r.n_channels;
  op.n_warps = r.n_warps;
  op.flags = r.flags;
  op.channels_started = r.channels_started;
  op.channels_stopped = r.channels_stopped;
  op.proxy_ops_started = r.proxy_ops_started;
  op.proxy_ops_stopped = r.proxy_ops_stopped;
  // Reserved (never written) before format 1.4: not read from older files.
  if (layout.version_minor >= format::kApiDatatypeMinor) {
    op.api_datatype = InRange(r.api_datatype, format::kNumDataTypes);
  }
  // Format 1.5: a symmetric kernel keeps its variant where the protocol
  // would be; the phase counters were reserved bytes before.
  if (layout.version_minor >= format::kNcclTodayMinor) {
    if ((r.flags & format::kFlagSymmetric) != 0) {
      op.kernel_variant = InRange(r.proto, format::kNumKernelVariants);
      op.proto = format::kProtoUnknown;
    }
    op.phase_compute_channels = r.phase_compute_channels;
    op.phase_final_channels = r.phase_final_channels;
  }
  *bad += BadEnums(reinterpret_cast<const uint8_t*>(&r), layout.version_minor);
  op.t_api_ns = layout.MonoToWall(r.t_api_ns);
  op.t_enqueue_ns = layout.MonoToWall(r.t_enqueue_ns);
  op.t_enqueued_ns = layout.MonoToWall(r.t_enqueued_ns);
  op.t_last_progress_ns = layout.MonoToWall(r.t_last_progress_ns);
  op.gpu_start_raw = r.gpu_start_raw;
  op.gpu_end_raw = r.gpu_end_raw;
  const GpuWall gpu = ConvertGpuTimes(r, layout);
  op.gpu_start_ns = gpu.start_ns;
  op.gpu_end_ns = gpu.end_ns;
  op.net_bytes = r.net_bytes;
  return op;
}

// Of ToOpRecord's fields, those a collective's signature reads
// (ReadWindow::signature), decoded by the same rules from the record whose
// bytes start at `rec`.
OpRecord SignatureFields(const uint8_t* rec, const ImageLayout& layout) {
  OpRecord op;
  op.op_index = FieldAt<uint64_t>(rec, offsetof(Record, op_index));
  op.nccl_seq = FieldAt<uint64_t>(rec, offsetof(Record, nccl_seq));
  op.count = FieldAt<uint64_t>(rec, offsetof(Record, count));
  op.root_or_peer = FieldAt<int32_t>(rec, offsetof(Record, root_or_peer));
  op.func = InRange(rec[offsetof(Record, func)], format::kNumFuncs);
  op.datatype = InRange(rec[offsetof(Record, datatype)], format::kNumDataTypes);
  op.flags = rec[offsetof(Record, flags)];
  if (layout.version_minor >= format::kApiDatatypeMinor) {
    op.api_datatype = InRange(rec[offsetof(Record, api_datatype)], format::kNumDataTypes);
  }
  return op;
}

// Whether two SignatureFields have the same arguments: all they hold but
// op_index and nccl_seq.
bool SameArguments(const OpRecord& a, const OpRecord& b) {
  return a.count == b.count && a.root_or_peer == b.root_or_peer && a.func == b.func &&
         a.datatype == b.datatype && a.flags == b.flags && a.api_datatype == b.api_datatype;
}

// ToOpRecord's rules, applied to only the fields a LiveOp holds.
LiveOp ToLiveOp(const Record& r, uint64_t seq, const ImageLayout& layout, uint64_t* bad) {
  LiveOp op;
  op.slot_seq = seq;
  op.bytes = BytesOf(r);
  op.t_enqueue_ns = layout.MonoToWall(r.t_enqueue_ns);
  op.gpu_start_ns = ConvertGpuTimes(r, layout).start_ns;
  op.gpu_start_raw = r.gpu_start_raw;
  op.gpu_end_raw = r.gpu_end_raw;
  op.func = CheckedEnum(r.func, format::kNumFuncs, bad);
  op.state = CheckedEnum(r.state, format::kNumOpStates, bad);
  return op;
}

void CopyIdentity(BoundedView desc_view, const RegionDesc& d, const ImageLayout& layout,
                  CommSnapshot* comm) {
  comm->region_index = d.region_index;
  comm->state = d.state;
  comm->flags = d.flags;
  comm->comm_id = d.comm_id;
  comm->name = desc_view.ReadString(offsetof(RegionDesc, comm_name), sizeof(d.comm_name));
  comm->rank = d.rank;
  comm->nranks = d.nranks;
  comm->nnodes = d.nnodes;
  comm->generation = d.generation;
  comm->capacity = layout.capacity;
  comm->coll_count = d.coll_count;
  comm->p2p_count = d.p2p_count;
  comm->init_wall_ns = layout.MonoToWall(d.init_mono_ns);
  comm->finalize_wall_ns = layout.MonoToWall(d.finalize_mono_ns);
  comm->last_enqueue_wall_ns = layout.MonoToWall(d.last_enqueue_mono_ns);
  for (size_t i = 0; i < comm->drops.size(); ++i) comm->drops[i] = d.drops[i];
  if (layout.version_minor >= format::kNcclTodayMinor) {  // reserved bytes before 1.5
    comm->event_mask = d.event_mask;
    comm->open_at_finalize = d.open_at_finalize;
  }
}

// A live region's slots [0, n) read twice more from its file after the
// image (LiveFile): `data`, then `after`. Either view is empty when the read
// failed or came up short (the file shrank): its slots then count as torn.
struct LiveSlots {
  BoundedView data;
  BoundedView after;
};

LiveSlots RereadSlots(const LiveFile& live, uint64_t offset, uint64_t n) {
  // Reused by every region this thread reads, like the image buffers.
  thread_local ByteBuffer data_buf;
  thread_local ByteBuffer after_buf;
  const uint64_t len = n * format::kRecordSize;  // n <= capacity: bounded by the file size
  LiveSlots out;
  std::string error;
  uint64_t done = 0;
  data_buf.Resize(static_cast<size_t>(len));
  after_buf.Resize(static_cast<size_t>(len));
  // The image's read of these slots (the first commit) is done before the
  // reads below start. Pairs with the release store of commit in
  // CommRecorder::BeginOp (the first commit is the reader's acquire).
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!PreadFully(live.fd, offset, data_buf.data(), len, &done, &error) || done != len) return out;
  // The data read is done before the commits are read again. Pairs with the
  // release fence in CommRecorder::BeginOp.
  std::atomic_thread_fence(std::memory_order_acquire);
  if (!PreadFully(live.fd, offset, after_buf.data(), len, &done, &error) || done != len) return out;
  out.data = BoundedView{data_buf.data(), static_cast<size_t>(len)};
  out.after = BoundedView{after_buf.data(), static_cast<size_t>(len)};
  return out;
}

// The slot-state-machine check of record_format.h for slot sequence `seq`:
// commit == seq + 1 in `first` (the first read), and, for a live ring, in
// the two re-reads `data` and `after` (LiveSlots), the record being taken
// from `data`; then the checksum over the immutable part, bound to seq by
// the rule of the image's format version (RecordChecksumFor).
// `live` false: `first` is an immutable image and holds the record. True
// with *rec filled when the record is valid; *changed set when it was
// committed in the first read and changed in a later one.
bool CheckSlot(BoundedView first, bool live, const LiveSlots& reread, uint64_t first_off,
               uint64_t slot_off, uint64_t seq, uint16_t version_minor, Record* rec,
               bool* changed) {
  BoundedView rec_view;
  uint64_t commit = 0;
  if (!first.Sub(first_off, format::kRecordSize, &rec_view) || !rec_view.Read(0, &commit) ||
      commit != seq + 1) {
    return false;
  }
  if (!live) {
    if (!rec_view.Read(0, rec)) return false;
  } else {
    uint64_t after = 0;
    if (!reread.data.Sub(slot_off, format::kRecordSize, &rec_view) || !rec_view.Read(0, rec) ||
        !reread.after.Read(slot_off, &after) || rec->commit != seq + 1 || after != seq + 1) {
      *changed = true;
      return false;
    }
  }
  return format::RecordChecksumFor(version_minor, rec_view.data, seq) == rec->checksum;
}

// Slot k of `first` holds commit seq + 1 (the first step of CheckSlot).
bool CommittedIn(BoundedView first, uint64_t k, uint64_t seq) {
  uint64_t commit = 0;
  return first.Read(k * format::kRecordSize, &commit) && commit == seq + 1;
}

// Slots ReadLiveSlots reads per pread (64 KiB per copy).
constexpr uint64_t kLiveChunkSlots = 512;

uint64_t RegionBase(const ImageLayout& layout, uint32_t index) {
  return layout.records_offset + uint64_t{index} * layout.capacity * format::kRecordSize;
}

// Every slot of the region's last lap, [max(0, head - capacity), head), from
// the image (re-checked against the file when `live`).
void ReadRecords(BoundedView image, const ImageLayout& layout, uint32_t index, uint64_t head,
                 const LiveFile* live, CommSnapshot* comm, uint64_t* bad_enums, uint64_t* changed) {
  uint64_t first = head > layout.capacity ? head - layout.capacity : 0;
  comm->overwritten = first;
  comm->records = TakeRecordBuffer(static_cast<size_t>(head - first));  // <= capacity
  const uint64_t region_base = RegionBase(layout, index);
  const uint64_t used = head < layout.capacity ? head : layout.capacity;
  LiveSlots reread;
  if (live != nullptr && used > 0) reread = RereadSlots(*live, region_base, used);
  for (uint64_t seq = first; seq < head; ++seq) {
    const uint64_t slot_off = (seq & (layout.capacity - 1)) * format::kRecordSize;
    Record rec;
    bool was_changed = false;
    if (!CheckSlot(image, live != nullptr, reread, region_base + slot_off, slot_off, seq,
                   layout.version_minor, &rec, &was_changed)) {
      *changed += was_changed ? 1 : 0;
      ++comm->torn;
      continue;
    }
    comm->records.push_back(ToOpRecord(rec, seq, layout, bad_enums));
  }
}

// ReadLiveSlots and ReadLiveRecords: the slot loop, `decode` turning each
// valid record into what *out holds.
template <typename Op, typename Decode>
uint64_t ReadLiveRange(const LiveFile& live, const ImageLayout& layout, uint32_t index,
                       uint64_t begin, uint64_t end, std::vector<Op>* out, Decode decode) {
  // Reused by every call on this thread, like RereadSlots' buffers.
  thread_local ByteBuffer first_buf;
  if (end > begin && end - begin > layout.capacity) begin = end - layout.capacity;
  const uint64_t mask = layout.capacity - 1;
  const uint64_t region_base = RegionBase(layout, index);
  uint64_t torn = 0;
  while (begin < end) {
    // One contiguous run of slots, up to the end of the region's array and
    // at most kLiveChunkSlots: its three copies stay in L2 while checked.
    const uint64_t to_wrap = layout.capacity - (begin & mask);
    uint64_t n = end - begin < to_wrap ? end - begin : to_wrap;
    if (n > kLiveChunkSlots) n = kLiveChunkSlots;
    const uint64_t offset = region_base + (begin & mask) * format::kRecordSize;
    const uint64_t len = n * format::kRecordSize;
    first_buf.Resize(static_cast<size_t>(len));
    uint64_t done = 0;
    std::string error;
    BoundedView first;
    if (PreadFully(live.fd, offset, first_buf.data(), len, &done, &error)) {
      first = BoundedView{first_buf.data(), static_cast<size_t>(done)};
    }
    // Slots not committed with their own sequence in the first read
    // (overwritten by a later lap, or still being written) cannot become
    // valid: only the span between the first and the last slot that was is
    // read again.
    uint64_t lo = 0;
    uint64_t hi = n;
    while (lo < hi && !CommittedIn(first, lo, begin + lo)) ++lo;
    while (hi > lo && !CommittedIn(first, hi - 1, begin + hi - 1)) --hi;
    torn += n - (hi - lo);
    if (hi > lo) {
      const LiveSlots reread = RereadSlots(live, offset + lo * format::kRecordSize, hi - lo);
      for (uint64_t k = lo; k < hi; ++k) {
        const uint64_t seq = begin + k;
        Record rec;
        bool changed = false;
        if (!CheckSlot(first, true, reread, k * format::kRecordSize, (k - lo) * format::kRecordSize,
                       seq, layout.version_minor, &rec, &changed)) {
          ++torn;
          continue;
        }
        out->push_back(decode(rec, seq));
      }
    }
    begin += n;
  }
  return torn;
}

// ReadRegion's warnings about the records of region `index`.
void RecordWarnings(uint32_t index, uint64_t bad_enums, uint64_t torn, uint64_t changed,
                    std::vector<std::string>* warnings) {
  if (bad_enums > 0) {
    warnings->push_back(RegionPrefix(index) + std::to_string(bad_enums) +
                        " out-of-range enum values in valid records, shown as Unknown");
  }
  if (torn > 0) {
    std::string line =
        RegionPrefix(index) + std::to_string(torn) + " torn or in-flight records skipped";
    if (changed > 0) line += " (" + std::to_string(changed) + " changed while the file was read)";
    warnings->push_back(line);
  }
}

// What the windowed read's cut needs of one valid record.
struct WindowEntry {
  uint64_t seq;
  uint64_t t_enqueue_ns;  // wall, as OpRecord::t_enqueue_ns
  uint64_t op_index;
  CollSig sig;    // of a collective (ReadWindow::signature)
  uint8_t state;  // as OpRecord::state
  bool p2p;
};

}  // namespace

RegionOutcome ReadRegionDesc(BoundedView image, const ImageLayout& layout, uint32_t index,
                             CommSnapshot* comm, std::vector<std::string>* warnings) {
  BoundedView desc_view;
  RegionDesc d;
  uint64_t desc_off = layout.table_offset + uint64_t{index} * format::kRegionDescSize;
  if (!image.Sub(desc_off, format::kRegionDescSize, &desc_view) || !desc_view.Read(0, &d)) {
    warnings->push_back(RegionPrefix(index) + "descriptor outside the image; skipped");
    return RegionOutcome::kSkipped;
  }
  if (d.state == format::kRegionFree) return RegionOutcome::kFree;
  if (d.state != format::kRegionActive && d.state != format::kRegionFinalized) {
    warnings->push_back(RegionPrefix(index) + "unknown state " + std::to_string(d.state) +
                        "; skipped");
    return RegionOutcome::kSkipped;
  }
  if (d.region_index != index) {
    warnings->push_back(RegionPrefix(index) + "region_index says " +
                        std::to_string(d.region_index) + " (duplicate or corrupt); skipped");
    return RegionOutcome::kSkipped;
  }
  uint64_t head = d.head;
  if (head > kMaxPlausibleHead) {
    warnings->push_back(RegionPrefix(index) + "implausible head " + std::to_string(head) +
                        " clamped to " + std::to_string(kMaxPlausibleHead));
    head = kMaxPlausibleHead;
  }
  CopyIdentity(desc_view, d, layout, comm);
  comm->head = head;
  comm->overwritten = head > layout.capacity ? head - layout.capacity : 0;
  return RegionOutcome::kRead;
}

RegionOutcome ReadRegion(BoundedView image, const ImageLayout& layout, uint32_t index,
                         CommSnapshot* comm, std::vector<std::string>* warnings,
                         const LiveFile* live) {
  const RegionOutcome outcome = ReadRegionDesc(image, layout, index, comm, warnings);
  if (outcome != RegionOutcome::kRead) return outcome;
  uint64_t bad_enums = 0;
  uint64_t changed = 0;
  ReadRecords(image, layout, index, comm->head, live, comm, &bad_enums, &changed);
  RecordWarnings(index, bad_enums, comm->torn, changed, warnings);
  return RegionOutcome::kRead;
}

bool ReadRegionsWindowed(BoundedView image, const ImageLayout& layout, const ReadWindow& window,
                         ProcessSnapshot* snapshot) {
  // One per reader thread, reused file after file (like the image buffer).
  thread_local std::vector<WindowEntry> entries;
  thread_local std::vector<size_t> ends;  // per comm: its entries end here
  entries.clear();
  ends.clear();
  bool inferred = false;
  OpRecord last_fields;
  uint32_t last_hash = 0;
  bool have_last = false;
  // Pass 1: every slot checked as ReadRecords does, with the same warnings;
  // a valid record leaves only what the cut needs.
  for (uint32_t index = 0; index < layout.max_regions; ++index) {
    CommSnapshot comm;
    if (ReadRegionDesc(image, layout, index, &comm, &snapshot->warnings) != RegionOutcome::kRead) {
      continue;
    }
    const uint64_t region_base = RegionBase(layout, index);
    uint64_t bad_enums = 0;
    for (uint64_t seq = comm.overwritten; seq < comm.head; ++seq) {
      const uint64_t slot_off = (seq & (layout.capacity - 1)) * format::kRecordSize;
      // CheckSlot's test for an immutable image, on the bytes in place.
      BoundedView slot;
      if (!image.Sub(region_base + slot_off, format::kRecordSize, &slot) ||
          FieldAt<uint64_t>(slot.data, offsetof(Record, commit)) != seq + 1 ||
          format::RecordChecksumFor(layout.version_minor, slot.data, seq) !=
              FieldAt<uint32_t>(slot.data, offsetof(Record, checksum))) {
        ++comm.torn;
        continue;
      }
      const uint8_t* rec = slot.data;
      bad_enums += BadEnums(rec, layout.version_minor);
      const uint8_t flags = rec[offsetof(Record, flags)];
      WindowEntry e;
      e.seq = seq;
      e.t_enqueue_ns = layout.MonoToWall(FieldAt<uint64_t>(rec, offsetof(Record, t_enqueue_ns)));
      e.op_index = FieldAt<uint64_t>(rec, offsetof(Record, op_index));
      e.state = InRange(rec[offsetof(Record, state)], format::kNumOpStates);
      e.p2p = (flags & format::kFlagP2p) != 0;
      if ((flags & format::kFlagNoCompletion) != 0 && e.state < format::kOpDone) inferred = true;
      // A collective's signature is taken now, while its bytes are in cache:
      // pass 2 then reads only the records it keeps. Consecutive
      // collectives of a comm mostly repeat their arguments: the hash is
      // then the previous one's (ReadWindow::signature).
      if (!e.p2p && window.signature != nullptr) {
        const OpRecord fields = SignatureFields(rec, layout);
        if (!have_last || !SameArguments(fields, last_fields)) {
          last_hash = window.signature(fields).sig;
          last_fields = fields;
          have_last = true;
        }
        e.sig = CollSig{last_hash, static_cast<uint32_t>(fields.nccl_seq)};
      }
      entries.push_back(e);
    }
    RecordWarnings(index, bad_enums, comm.torn, 0, &snapshot->warnings);
    snapshot->comms.push_back(std::move(comm));
    ends.push_back(entries.size());
  }
  // The cut (record_window.cc, CutTime): the enqueue time of the newest
  // `full` records of the file. Ops whose completion stream order decides
  // need every record (InferStreamOrderCompletion): then nothing is cut.
  const bool trim = !inferred && entries.size() > window.full;
  window_rules::Cut cut;
  if (trim) {
    thread_local std::vector<uint64_t> times;
    times.resize(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) times[i] = entries[i].t_enqueue_ns;
    const size_t drop = times.size() - static_cast<size_t>(window.full);
    std::nth_element(times.begin(), times.begin() + static_cast<std::ptrdiff_t>(drop), times.end());
    cut.time = times[drop];
    cut.p2p = entries.size() <= window.share;
  }
  // Pass 2: the kept records decoded, the dropped collectives' signatures
  // kept by op index (record_window.cc, Trim).
  thread_local std::vector<CollSig> sigs;
  uint64_t unused_bad = 0;  // counted in pass 1
  size_t begin = 0;
  for (size_t k = 0; k < snapshot->comms.size(); ++k) {
    CommSnapshot& c = snapshot->comms[k];
    const size_t end = ends[k];
    const uint64_t region_base = RegionBase(layout, c.region_index);
    // The bytes of slot sequence `seq`, inside the image (checked in pass 1).
    auto bytes_at = [&](uint64_t seq) {
      return image.data + region_base + (seq & (layout.capacity - 1)) * format::kRecordSize;
    };
    auto kept = [&](const WindowEntry& e) {
      return !trim || window_rules::Kept(cut, c.flags, e.t_enqueue_ns, e.state, e.p2p);
    };
    uint64_t lo = UINT64_MAX, hi = 0;
    size_t n_kept = 0;
    for (size_t i = begin; i < end; ++i) {
      const WindowEntry& e = entries[i];
      if (kept(e)) {
        ++n_kept;
      } else if (!e.p2p) {
        lo = std::min(lo, e.op_index);
        hi = std::max(hi, e.op_index);
      }
    }
    const bool history =
        window.signature != nullptr && lo != UINT64_MAX && hi - lo < window_rules::kMaxHistorySpan;
    if (history) {
      c.history_first = lo;
      sigs.assign(static_cast<size_t>(hi - lo + 1), CollSig{});
    }
    c.records.reserve(n_kept);
    for (size_t i = begin; i < end; ++i) {
      const WindowEntry& e = entries[i];
      if (kept(e)) {
        Record rec;
        memcpy(&rec, bytes_at(e.seq), sizeof(rec));
        c.records.push_back(ToOpRecord(rec, e.seq, layout, &unused_bad));
        continue;
      }
      ++c.trimmed;
      if (!history || e.p2p) continue;
      CollSig& slot = sigs[static_cast<size_t>(e.op_index - lo)];
      // Once per index, the first record (as JobIndex::FindColl picks).
      if (!slot.held()) slot = e.sig;
    }
    if (history) c.history.Assign(sigs);
    begin = end;
  }
  return !inferred;
}

uint64_t ReadLiveSlots(const LiveFile& live, const ImageLayout& layout, uint32_t index,
                       uint64_t begin, uint64_t end, std::vector<LiveOp>* out,
                       uint64_t* bad_enums) {
  return ReadLiveRange(live, layout, index, begin, end, out, [&](const Record& rec, uint64_t seq) {
    return ToLiveOp(rec, seq, layout, bad_enums);
  });
}

uint64_t ReadLiveRecords(const LiveFile& live, const ImageLayout& layout, uint32_t index,
                         uint64_t begin, uint64_t end, std::vector<OpRecord>* out,
                         uint64_t* bad_enums) {
  return ReadLiveRange(live, layout, index, begin, end, out, [&](const Record& rec, uint64_t seq) {
    return ToOpRecord(rec, seq, layout, bad_enums);
  });
}

}  // namespace reader_internal
}  // namespace flightrec

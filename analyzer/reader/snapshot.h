// What a reader makes of one ring file or dump: plain, validated values.
//
// The reader (snapshot_reader.h) is the only code that touches file bytes; it
// goes through BoundedView and copies every field it trusts into these
// structs. Everything downstream (`flightrec show`, the analyzer, the
// timeline) sees only this model, never raw bytes.
#ifndef FLIGHTREC_ANALYZER_READER_SNAPSHOT_H_
#define FLIGHTREC_ANALYZER_READER_SNAPSHOT_H_

#include <stdint.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "analyzer/reader/coll_history.h"
#include "flightrec/record_format.h"

namespace flightrec {

struct PytorchFrInfo;  // analyzer/reader/fr_reader.h

// One committed, checksum-verified record. Times are wall-clock ns
// (CLOCK_REALTIME domain of the writing host, converted with the header's
// anchor pair, or with the dump's / last heartbeat's pair when the wall clock
// stepped since init: see ChooseAnchor in image_header.cc, which also leaves
// a warning); 0 means "not observed". GPU times are converted to the same
// domain with the header's gpu_to_mono_offset_ns, or, for a record that
// offset would put a minute or more outside its own host times (the GPU
// timer stepped), with the record's own host observation (region_reader.cc);
// gpu_*_raw keep NCCL's values.
struct OpRecord {
  uint64_t slot_seq = 0;  // position in the region (absolute)
  uint64_t op_index = 0;  // per-comm coll index / per-(peer,dir) p2p index
  uint64_t nccl_seq = UINT64_MAX;
  uint64_t count = 0;
  uint64_t bytes = 0;  // count * type size (0 when unknown)
  uint64_t user_tag = 0;
  uint64_t stream = 0;
  int32_t root_or_peer = 0;
  uint8_t func = 0;      // format::Func
  uint8_t datatype = 0;  // format::DataType
  uint8_t algo = 0;
  uint8_t proto = 0;
  uint8_t n_channels = 0;
  uint8_t n_warps = 0;
  uint8_t flags = 0;  // format::RecordFlag
  uint8_t state = 0;  // format::OpState
  uint8_t channels_started = 0;
  uint8_t channels_stopped = 0;
  uint8_t proxy_ops_started = 0;
  uint8_t proxy_ops_stopped = 0;
  // The user's datatype from the CollApi/P2pApi event (format 1.4+, API
  // v5+); format::kTypeUnknown when the record has none (older file, no API
  // event matched, or a type the format does not know).
  uint8_t api_datatype = 0;
  // Format 1.5 (0 in older files): the symmetric kernel's variant
  // (format::KernelVariant, from Record::proto of a kFlagSymmetric record;
  // `proto` is then kProtoUnknown) and the phase counters.
  uint8_t kernel_variant = 0;
  uint8_t phase_compute_channels = 0;
  uint8_t phase_final_channels = 0;
  uint64_t t_api_ns = 0;
  uint64_t t_enqueue_ns = 0;
  uint64_t t_enqueued_ns = 0;
  uint64_t gpu_start_ns = 0;
  uint64_t gpu_end_ns = 0;
  uint64_t gpu_start_raw = 0;
  uint64_t gpu_end_raw = 0;
  uint64_t t_last_progress_ns = 0;
  uint64_t net_bytes = 0;

  bool is_p2p() const { return (flags & format::kFlagP2p) != 0; }
  bool is_copy_engine() const { return (flags & format::kFlagCopyEngine) != 0; }
  bool is_symmetric() const { return (flags & format::kFlagSymmetric) != 0; }
  // When the op last moved. The hot path stamps t_last_progress_ns only at
  // the first KernelCh start, so a finished op's GPU end is newer.
  uint64_t last_progress_ns() const {
    return t_last_progress_ns > gpu_end_ns ? t_last_progress_ns : gpu_end_ns;
  }
};

// CollSig and CollHistory: analyzer/reader/coll_history.h.

// One communicator region.
struct CommSnapshot {
  uint32_t region_index = 0;
  uint32_t state = 0;  // format::RegionState
  uint32_t flags = 0;  // format::RegionFlag
  uint64_t comm_id = 0;
  std::string name;
  int32_t rank = -1;
  int32_t nranks = 0;
  int32_t nnodes = 0;
  uint64_t generation = 0;
  uint64_t head = 0;  // slot sequences claimed
  uint64_t capacity = 0;
  uint64_t overwritten = 0;  // head > capacity ? head - capacity : 0
  uint64_t coll_count = 0;
  uint64_t p2p_count = 0;
  uint64_t torn = 0;  // claimed slots that failed commit/checksum
  uint64_t init_wall_ns = 0;
  uint64_t finalize_wall_ns = 0;
  uint64_t last_enqueue_wall_ns = 0;
  // Format 1.5 (0 in older files): the activation mask written at init, and
  // the ops not done when finalize ran (format::kRegionEndedInFlight).
  uint32_t event_mask = 0;
  uint32_t open_at_finalize = 0;
  std::array<uint64_t, 8> drops{};
  std::vector<OpRecord> records;  // valid records, ascending slot_seq
  // Filled only by a windowed load: the collectives it took out of
  // `records`, by op index (history[k] is op history_first + k), and how
  // many records it took out in all (p2p ones are not kept at all).
  uint64_t history_first = 0;
  CollHistory history;
  uint64_t trimmed = 0;
};

// One file (ring or dump) from one process.
struct ProcessSnapshot {
  std::string path;
  bool is_dump = false;  // file_kind == kFileKindDump
  uint16_t version_major = 0;
  uint16_t version_minor = 0;
  int64_t pid = 0;
  std::string host;
  std::string job_id;
  std::string plugin_version;
  std::string nccl_version;
  std::string gpu_uuid;
  std::string gpu_pci_bus_id;
  int32_t cuda_device = -1;
  uint32_t api_version = 0;
  uint32_t clock_source = 0;
  uint32_t process_state = 0;  // format::ProcessState
  uint64_t created_wall_ns = 0;
  uint64_t created_mono_ns = 0;
  int64_t gpu_to_mono_offset_ns = 0;
  uint64_t gpu_offset_samples = 0;
  uint64_t heartbeat_wall_ns = 0;
  uint64_t heartbeat_count = 0;
  uint64_t watchdog_timeout_ns = 0;
  uint64_t watchdog_poll_ns = 0;
  uint64_t dumps_sealed = 0;
  // The dump budget (format 1.2; all zero in older files).
  uint32_t max_dumps = 0;
  uint32_t dumps_open = 0;
  uint32_t dumps_released = 0;
  uint32_t dumps_refused = 0;
  uint32_t last_refused_reason = 0;  // format::DumpReason
  uint32_t dumps_absorbed = 0;
  uint64_t last_refused_mono_ns = 0;
  uint32_t max_regions = 0;
  uint64_t region_capacity = 0;
  uint64_t file_size = 0;
  std::array<uint64_t, format::kNumDropCauses> drops{};
  // Dump images only.
  uint32_t dump_reason = 0;  // format::DumpReason
  uint32_t dump_sequence = 0;
  uint64_t dump_wall_ns = 0;
  std::string dump_detail;
  std::string disable_reason;

  // Added by the reader for `flightrec show --explain` (every header field).
  uint32_t file_kind = 0;        // format::FileKind as stored
  bool compressed = false;       // the file was a zstd frame
  uint64_t compressed_size = 0;  // bytes on disk when compressed
  uint32_t pointer_size = 0;
  uint64_t tsc_hz = 0;
  uint64_t heartbeat_mono_ns = 0;
  uint64_t dump_mono_ns = 0;
  uint64_t region_table_offset = 0;
  uint64_t records_offset = 0;

  std::vector<CommSnapshot> comms;    // regions not kRegionFree
  std::vector<std::string> warnings;  // non-fatal problems found while reading

  // A PyTorch Flight Recorder dump (fr_reader.h): what FR records beyond
  // this model (Python frames, process groups); null for flightrec files.
  std::shared_ptr<const PytorchFrInfo> pytorch_fr;
};

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_SNAPSHOT_H_

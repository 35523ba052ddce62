#include "analyzer/reader/live_ring.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "analyzer/reader/bounded_view.h"
#include "analyzer/reader/file_read.h"
#include "analyzer/reader/region_reader.h"
#include "flightrec/record_format.h"

namespace flightrec {
namespace {

bool Fail(const std::string& path, RingProblem what, const std::string& problem,
          RingProblem* out_problem, std::string* error) {
  *out_problem = what;
  *error = path + ": " + problem;
  return false;
}

// The header and region table of a valid ring end well before this; a
// records_offset beyond it is rejected by ParseHeaderPrefix's layout checks
// anyway, so reading only this much keeps a garbage offset from sizing a
// read.
constexpr uint64_t kMaxPrefix = format::kHeaderSize +
                                uint64_t{format::kMaxRegions} * format::kRegionDescSize +
                                format::kPageSize;

}  // namespace

const char* RingProblemName(RingProblem p) {
  switch (p) {
    case RingProblem::kNone:
      return "none";
    case RingProblem::kVanished:
      return "vanished";
    case RingProblem::kUnreadable:
      return "unreadable";
    case RingProblem::kForeign:
      return "foreign";
    case RingProblem::kTruncated:
      return "truncated";
    case RingProblem::kInvalid:
      return "invalid";
  }
  return "unknown";
}

LiveRing::~LiveRing() {
  if (fd_ >= 0) close(fd_);
}

bool LiveRing::Open(const std::string& path, RingProblem* problem, std::string* error) {
  path_ = path;
  struct stat st;
  std::string why;
  fileio::OpenStatus status = fileio::OpenStatus::kOk;
  fd_ = reader_internal::OpenTrusted(path, &st, &why, &status);
  if (fd_ < 0) {
    const RingProblem what =
        status == fileio::OpenStatus::kMissing ? RingProblem::kVanished : RingProblem::kUnreadable;
    return Fail(path, what, why, problem, error);
  }
  dev_ = st.st_dev;
  ino_ = st.st_ino;
  return true;
}

bool LiveRing::ReadHead(ProcessSnapshot* snapshot, RingProblem* problem, std::string* error) {
  head_ok_ = false;
  struct stat st;
  if (fd_ < 0 || fstat(fd_, &st) != 0) {
    return Fail(path_, RingProblem::kUnreadable, "cannot stat", problem, error);
  }
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  // The header first, then only the region table (up to records_offset),
  // never the records after it.
  uint64_t want = file_bytes < format::kHeaderSize ? file_bytes : format::kHeaderSize;
  uint64_t done = 0;
  std::string read_error;
  prefix_.Resize(static_cast<size_t>(want));
  if (!reader_internal::PreadFully(fd_, 0, prefix_.data(), want, &done, &read_error)) {
    return Fail(path_, RingProblem::kUnreadable, read_error, problem, error);
  }
  BoundedView prefix{prefix_.data(), static_cast<size_t>(done)};
  uint64_t magic = 0;
  if (done == 0) return Fail(path_, RingProblem::kTruncated, "empty file", problem, error);
  if (!prefix.Read(0, &magic)) {
    return Fail(path_, RingProblem::kTruncated, "too short for a header", problem, error);
  }
  if (magic != format::Magic()) {
    return Fail(path_, RingProblem::kForeign, "not a flightrec ring (bad magic)", problem, error);
  }
  uint32_t kind = 0;
  uint64_t records_offset = 0;
  if (prefix.Read(offsetof(format::FileHeader, file_kind), &kind) &&
      kind != format::kFileKindRing) {
    return Fail(path_, RingProblem::kForeign, "not a ring (file_kind " + std::to_string(kind) + ")",
                problem, error);
  }
  if (prefix.Read(offsetof(format::FileHeader, records_offset), &records_offset)) {
    // The region table: at most kMaxPrefix bytes in all, so that a garbage
    // records_offset cannot size a read (ParseHeaderPrefix rejects it).
    uint64_t end = records_offset < kMaxPrefix ? records_offset : kMaxPrefix;
    if (end > file_bytes) end = file_bytes;
    if (end > done) {
      prefix_.Resize(static_cast<size_t>(end));
      uint64_t more = 0;
      if (!reader_internal::PreadFully(fd_, done, prefix_.data() + done, end - done, &more,
                                       &read_error)) {
        return Fail(path_, RingProblem::kUnreadable, read_error, problem, error);
      }
      prefix = BoundedView{prefix_.data(), static_cast<size_t>(done + more)};
    } else if (records_offset < prefix.size) {
      prefix.size = static_cast<size_t>(records_offset);
    }
  }
  ProcessSnapshot s;
  s.path = path_;
  std::string parse_error;
  if (!reader_internal::ParseHeaderPrefix(prefix, file_bytes, format::kMaxFileSize, &s, &layout_,
                                          &parse_error)) {
    const RingProblem what =
        parse_error.rfind("truncated", 0) == 0 ? RingProblem::kTruncated : RingProblem::kInvalid;
    return Fail(path_, what, parse_error, problem, error);
  }
  for (uint32_t i = 0; i < layout_.max_regions; ++i) {
    CommSnapshot comm;
    if (reader_internal::ReadRegionDesc(prefix, layout_, i, &comm, &s.warnings) ==
        reader_internal::RegionOutcome::kRead) {
      s.comms.push_back(std::move(comm));
    }
  }
  *snapshot = std::move(s);
  head_ok_ = true;
  return true;
}

uint64_t LiveRing::ReadSlots(uint32_t region_index, uint64_t begin, uint64_t end,
                             std::vector<LiveOp>* out) {
  if (!head_ok_ || region_index >= layout_.max_regions || end <= begin) return 0;
  uint64_t bad_enums = 0;
  const reader_internal::LiveFile live{fd_};
  return reader_internal::ReadLiveSlots(live, layout_, region_index, begin, end, out, &bad_enums);
}

uint64_t LiveRing::ReadRecords(uint32_t region_index, uint64_t begin, uint64_t end,
                               std::vector<OpRecord>* out, uint64_t* bad_enums) {
  if (!head_ok_ || region_index >= layout_.max_regions || end <= begin) return 0;
  const reader_internal::LiveFile live{fd_};
  return reader_internal::ReadLiveRecords(live, layout_, region_index, begin, end, out, bad_enums);
}

}  // namespace flightrec

// The windowed load (analyzer/model/record_window.h): files trimmed to a few
// full records must lead to the same findings as the files read whole, the
// older ops compared through their signatures and re-read when described.
#include <gtest/gtest.h>

#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <vector>

#include "analyzer/model/analyzer.h"
#include "analyzer/model/coll_signature.h"
#include "analyzer/model/job_index.h"
#include "analyzer/model/record_window.h"
#include "analyzer/reader/snapshot_reader.h"
#include "tests/unit/reader/image_builder.h"
#include "unit/analyzer/synthetic_job.h"

namespace flightrec {
namespace testing {
namespace {

using analysis::Finding;
using analysis::FindingKind;
using analysis::Verdict;

constexpr uint64_t kWindow = 30;  // full records kept per file

JobSpec LongJob(Fault fault) {
  JobSpec spec;
  spec.nranks = 8;
  spec.steps = 120;  // 360 ops per rank, 12x the window
  spec.fault = fault;
  return spec;
}

// Reads records back from the untrimmed snapshots, as FileRecordSource does
// from the files; counts the reads.
struct Source {
  explicit Source(std::vector<ProcessSnapshot> whole) : whole(std::move(whole)) {}
  analysis::RecordSource Make() {
    return [this](const ProcessSnapshot& p, const CommSnapshot& comm, uint64_t op, OpRecord* out) {
      ++reads;
      for (const ProcessSnapshot& w : whole) {
        if (w.pid != p.pid) continue;
        for (const CommSnapshot& c : w.comms) {
          if (c.region_index != comm.region_index || c.comm_id != comm.comm_id) continue;
          for (const OpRecord& r : c.records) {
            if (!r.is_p2p() && r.op_index == op) {
              *out = r;
              return true;
            }
          }
        }
      }
      return false;
    };
  }
  std::vector<ProcessSnapshot> whole;
  std::atomic<int> reads{0};  // the detectors run on several threads
};

struct WindowRun {
  WindowRun(std::vector<ProcessSnapshot> p, analysis::RecordSource source)
      : procs(std::move(p)), index(procs) {
    index.set_record_source(std::move(source));
    result = analysis::Analyze(index);
  }
  std::vector<ProcessSnapshot> procs;
  analysis::JobIndex index;
  analysis::Analysis result;
};

std::vector<ProcessSnapshot> Trimmed(std::vector<ProcessSnapshot> procs, uint64_t window) {
  for (ProcessSnapshot& p : procs) analysis::TrimToWindow(window, &p);
  return procs;
}

size_t Records(const ProcessSnapshot& p) {
  size_t n = 0;
  for (const CommSnapshot& c : p.comms) n += c.records.size();
  return n;
}

void ExpectSameFindings(const analysis::Analysis& whole, const analysis::Analysis& windowed) {
  EXPECT_EQ(windowed.verdict, whole.verdict);
  ASSERT_EQ(windowed.findings.size(), whole.findings.size());
  for (size_t i = 0; i < whole.findings.size(); ++i) {
    const Finding& a = whole.findings[i];
    const Finding& b = windowed.findings[i];
    EXPECT_EQ(b.kind, a.kind);
    EXPECT_EQ(b.summary, a.summary);
    EXPECT_EQ(b.fields, a.fields);
    EXPECT_EQ(b.op.index, a.op.index);
    ASSERT_EQ(b.ranks.size(), a.ranks.size());
    for (size_t r = 0; r < a.ranks.size(); ++r) EXPECT_EQ(b.ranks[r].process, a.ranks[r].process);
  }
  ASSERT_EQ(windowed.culprits.size(), whole.culprits.size());
  for (size_t c = 0; c < whole.culprits.size(); ++c) {
    EXPECT_EQ(windowed.culprits[c].process, whole.culprits[c].process);
  }
}

// Analyzes `spec`'s job whole and windowed: same verdict `expected`, same
// findings, and rank 5 (pid 4005) the first culprit. Returns the re-reads.
int ExpectWindowedLikeWhole(const JobSpec& spec, Verdict expected) {
  const std::vector<ProcessSnapshot> whole = MakeJob(spec);
  WindowRun reference(whole, nullptr);
  EXPECT_EQ(reference.result.verdict, expected);
  Source source(whole);
  WindowRun windowed(Trimmed(whole, kWindow), source.Make());
  ExpectSameFindings(reference.result, windowed.result);
  EXPECT_FALSE(windowed.result.culprits.empty());
  if (!windowed.result.culprits.empty()) {
    EXPECT_EQ(windowed.procs[windowed.result.culprits[0].process].pid, 4005);
  }
  return source.reads;
}

TEST(RecordWindowTest, RecordsPerFileSharesTheBudgetWithAFloor) {
  EXPECT_EQ(analysis::RecordsPerFile(0, 100), UINT64_MAX);
  EXPECT_EQ(analysis::RecordsPerFile(uint64_t{1} << 30, 1024),
            (uint64_t{1} << 30) / sizeof(OpRecord) / 1024);
  EXPECT_EQ(analysis::RecordsPerFile(1024, 16384), analysis::kMinWindowRecords);
  // Beyond 16,384 files the floor's records are shared, down to 64 a file.
  EXPECT_EQ(analysis::RecordsPerFile(1024, 32768), analysis::kMinWindowRecords / 2);
  EXPECT_EQ(analysis::RecordsPerFile(1024, 65536), analysis::kMinFloorRecords);
  EXPECT_EQ(analysis::RecordsPerFile(1024, 1 << 20), analysis::kMinFloorRecords);
  // A budget above the floor is still shared as it says.
  EXPECT_EQ(analysis::RecordsPerFile(uint64_t{1} << 34, 65536),
            (uint64_t{1} << 34) / sizeof(OpRecord) / 65536);
}

TEST(RecordWindowTest, WindowForTakesTheSmallerOfWindowAndMemoryShare) {
  const uint64_t gib = uint64_t{1} << 30;
  // No limit at all.
  analysis::WindowPolicy p = analysis::WindowFor(0, 0, 64);
  EXPECT_EQ(p.full, UINT64_MAX);
  EXPECT_EQ(p.share, UINT64_MAX);
  // The window alone (no memory limit): p2p records never need dropping.
  p = analysis::WindowFor(0, 1024, 64);
  EXPECT_EQ(p.full, 1024u);
  EXPECT_EQ(p.share, UINT64_MAX);
  // A few files: the window is the smaller; the share stays the memory's.
  p = analysis::WindowFor(gib, 1024, 64);
  EXPECT_EQ(p.full, 1024u);
  EXPECT_EQ(p.share, analysis::RecordsPerFile(gib, 64));
  // Many files: the memory share is the smaller, and both are it.
  p = analysis::WindowFor(uint64_t{128} << 20, 1024, 16384);
  EXPECT_EQ(p.full, analysis::kMinWindowRecords);
  EXPECT_EQ(p.share, analysis::kMinWindowRecords);
}

// A history that repeats (one signature, nccl_seq up by one per op) is kept
// as runs, far smaller than a signature per op, and reads back exactly;
// holes read as not held.
TEST(CollHistoryTest, RepeatingOpsAreKeptAsRunsAndReadBackExactly) {
  std::vector<CollSig> by_position(4096);
  for (size_t k = 0; k < by_position.size(); ++k) {
    by_position[k] = CollSig{k < 2048 ? 0x1234u : 0x5678u, static_cast<uint32_t>(1000 + k)};
  }
  by_position[100] = CollSig{};      // a torn record: a hole
  by_position.push_back(CollSig{});  // holes at the end are not covered
  CollHistory h;
  h.Assign(by_position);
  EXPECT_EQ(h.size(), 4096u);
  EXPECT_LT(h.bytes(), 4096u);  // 3 runs, not 32 KiB
  for (size_t k = 0; k < by_position.size() + 3; ++k) {
    const CollSig want = k < by_position.size() ? by_position[k] : CollSig{};
    EXPECT_EQ(h[k].sig, want.sig) << k;
    EXPECT_EQ(h[k].seq_lo, want.seq_lo) << k;
  }
  EXPECT_EQ(h.FirstHeld(), 0u);
  EXPECT_EQ(h.LastHeld(), 4095u);
  size_t held = 0, expect = 0;
  h.ForEach([&](size_t k, CollSig s) {
    if (expect == 100) ++expect;
    EXPECT_EQ(k, expect++);
    EXPECT_EQ(s.sig, by_position[k].sig);
    EXPECT_EQ(s.seq_lo, by_position[k].seq_lo);
    ++held;
  });
  EXPECT_EQ(held, 4095u);
}

// A history with no repetition stays a signature per op, holes included.
TEST(CollHistoryTest, AHistoryThatDoesNotRepeatIsKeptPerOp) {
  std::vector<CollSig> by_position(64);
  for (size_t k = 2; k < by_position.size(); ++k) {
    by_position[k] = CollSig{static_cast<uint32_t>(k + 1), 7};
  }
  CollHistory h;
  h.Assign(by_position);
  EXPECT_EQ(h.size(), 64u);
  EXPECT_EQ(h.FirstHeld(), 2u);
  EXPECT_LE(h.bytes(), 64 * sizeof(CollSig));
  for (size_t k = 0; k < 64; ++k) {
    EXPECT_EQ(h[k].sig, by_position[k].sig) << k;
    EXPECT_EQ(h[k].seq_lo, by_position[k].seq_lo) << k;
  }
  h.Assign(std::vector<CollSig>(5));
  EXPECT_TRUE(h.empty());
  EXPECT_EQ(h.FirstHeld(), 0u);
  EXPECT_FALSE(h[0].held());
}

// One comm of `n` done ops enqueued 1 us apart, every other one a Send #k
// to rank 1 (the rest collectives #k), as a p2p-heavy pipeline rank holds.
ProcessSnapshot MixedRank(uint64_t n) {
  ProcessSnapshot p;
  p.pid = 1;
  CommSnapshot c;
  c.comm_id = 9;
  c.nranks = 2;
  c.rank = 0;
  c.flags = format::kRegionCompletionTracked;
  for (uint64_t i = 0; i < n; ++i) {
    OpRecord r;
    r.slot_seq = i;
    r.op_index = i / 2;
    r.nccl_seq = i;
    r.count = 100 + i;
    r.state = format::kOpDone;
    r.t_enqueue_ns = 1000 + i * 1000;
    if (i % 2 == 1) {
      r.flags = format::kFlagP2p;
      r.func = format::kFuncSend;
      r.root_or_peer = 1;
    } else {
      r.func = format::kFuncAllReduce;
    }
    c.records.push_back(r);
  }
  c.head = n;
  c.coll_count = (n + 1) / 2;
  c.p2p_count = n / 2;
  p.comms.push_back(std::move(c));
  return p;
}

TEST(RecordWindowTest, WithinItsMemoryShareAFileKeepsEveryP2pRecord) {
  ProcessSnapshot p = MixedRank(40);
  analysis::TrimToWindow(analysis::WindowPolicy{10, UINT64_MAX}, &p);
  const CommSnapshot& c = p.comms[0];
  // The newest 10 ops, and the 15 older Sends, which have no signature.
  ASSERT_EQ(c.records.size(), 25u);
  EXPECT_EQ(c.trimmed, 15u);
  size_t sends = 0;
  for (const OpRecord& r : c.records) sends += r.is_p2p();
  EXPECT_EQ(sends, 20u);
  // The 15 older collectives are signatures, by op index.
  EXPECT_EQ(c.history_first, 0u);
  ASSERT_EQ(c.history.size(), 15u);
  for (size_t k = 0; k < c.history.size(); ++k) EXPECT_TRUE(c.history[k].held());
  // Ascending slot order is kept.
  for (size_t i = 1; i < c.records.size(); ++i) {
    EXPECT_LT(c.records[i - 1].slot_seq, c.records[i].slot_seq);
  }
}

TEST(RecordWindowTest, OverItsMemoryShareAFileDropsOlderP2pRecords) {
  ProcessSnapshot p = MixedRank(40);
  analysis::TrimToWindow(analysis::WindowPolicy{10, 20}, &p);
  const CommSnapshot& c = p.comms[0];
  ASSERT_EQ(c.records.size(), 10u);
  EXPECT_EQ(c.trimmed, 30u);
  EXPECT_EQ(c.records.front().slot_seq, 30u);
  EXPECT_EQ(c.history.size(), 15u);
}

TEST(RecordWindowTest, AFileWithinItsShareIsLeftExactlyAsRead) {
  const std::vector<ProcessSnapshot> whole = MakeJob(LongJob(Fault::kNone));
  std::vector<ProcessSnapshot> same = whole;
  analysis::TrimToWindow(Records(whole[0]), &same[0]);
  ASSERT_EQ(same[0].comms.size(), whole[0].comms.size());
  for (size_t c = 0; c < whole[0].comms.size(); ++c) {
    EXPECT_EQ(same[0].comms[c].records.size(), whole[0].comms[c].records.size());
    EXPECT_TRUE(same[0].comms[c].history.empty());
    EXPECT_EQ(same[0].comms[c].trimmed, 0u);
  }
}

TEST(RecordWindowTest, KeepsTheNewestByTimeAndEveryPendingOp) {
  JobSpec spec = LongJob(Fault::kStuckBeforeOp);
  spec.op = 3 * 110;  // rank 5 stops at step 110: its peers pend from there
  const std::vector<ProcessSnapshot> whole = MakeJob(spec);
  const std::vector<ProcessSnapshot> cut = Trimmed(whole, kWindow);
  for (size_t p = 0; p < whole.size(); ++p) {
    SCOPED_TRACE(whole[p].pid);
    uint64_t newest_trimmed = 0, oldest_kept = UINT64_MAX, trimmed = 0;
    size_t pending_whole = 0, pending_kept = 0;
    for (size_t c = 0; c < whole[p].comms.size(); ++c) {
      const CommSnapshot& w = whole[p].comms[c];
      const CommSnapshot& k = cut[p].comms[c];
      trimmed += k.trimmed;
      EXPECT_EQ(k.records.size() + k.trimmed, w.records.size());
      for (const OpRecord& r : w.records) pending_whole += r.state < format::kOpDone;
      for (const OpRecord& r : k.records) {
        pending_kept += r.state < format::kOpDone;
        if (r.state >= format::kOpDone) oldest_kept = std::min(oldest_kept, r.t_enqueue_ns);
      }
      // Every trimmed collective is in the history with its signature.
      for (const OpRecord& r : w.records) {
        const bool kept = std::any_of(k.records.begin(), k.records.end(),
                                      [&](const OpRecord& x) { return x.slot_seq == r.slot_seq; });
        if (kept) continue;
        newest_trimmed = std::max(newest_trimmed, r.t_enqueue_ns);
        ASSERT_GE(r.op_index, k.history_first);
        ASSERT_LT(r.op_index - k.history_first, k.history.size());
        const CollSig sig = k.history[r.op_index - k.history_first];
        EXPECT_EQ(sig.sig, analysis::SigOf(r).sig);
        EXPECT_EQ(sig.seq_lo, static_cast<uint32_t>(r.nccl_seq));
      }
    }
    EXPECT_GT(trimmed, 0u);
    EXPECT_EQ(pending_kept, pending_whole);
    EXPECT_LE(Records(cut[p]), kWindow + pending_whole);
    EXPECT_LT(newest_trimmed, oldest_kept);  // one time cut across comms
  }
}

TEST(RecordWindowTest, HealthyLongRunStaysHealthy) {
  const std::vector<ProcessSnapshot> whole = MakeJob(LongJob(Fault::kNone));
  Source source(whole);
  WindowRun run(Trimmed(whole, kWindow), source.Make());
  EXPECT_EQ(run.result.verdict, Verdict::kHealthy);
  EXPECT_TRUE(run.result.findings.empty()) << run.result.findings.front().summary;
  EXPECT_EQ(source.reads, 0);
  // The report says the files were windowed, and how much was kept.
  ASSERT_EQ(run.result.notes.size(), 1u);
  EXPECT_NE(run.result.notes[0].find("8 of 8 files held more records"), std::string::npos)
      << run.result.notes[0];
  EXPECT_NE(run.result.notes[0].find(std::to_string(8 * kWindow) + " newest records"),
            std::string::npos)
      << run.result.notes[0];
}

TEST(RecordWindowTest, AnOldMismatchIsFoundAndDescribedFromTheFile) {
  for (const char* field : {"count", "datatype", "root", "func"}) {
    SCOPED_TRACE(field);
    JobSpec spec = LongJob(Fault::kMismatch);
    spec.field = field;
    spec.op = std::string(field) == "count" || std::string(field) == "func" ? 6 : 8;
    const int reads = ExpectWindowedLikeWhole(spec, Verdict::kDesync);
    // One read per distinct signature at the op, not one per member.
    EXPECT_GT(reads, 0);
    EXPECT_LE(reads, 2);
  }
}

TEST(RecordWindowTest, WithoutTheFileAnOldMismatchIsNamedBySignature) {
  JobSpec spec = LongJob(Fault::kMismatch);
  spec.op = 6;
  WindowRun windowed(Trimmed(MakeJob(spec), kWindow), nullptr);
  EXPECT_EQ(windowed.result.verdict, Verdict::kDesync);
  const Finding* f = nullptr;
  for (const Finding& x : windowed.result.findings) {
    if (x.kind == FindingKind::kMismatch) f = &x;
  }
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->fields, std::vector<std::string>{"signature"});
  ASSERT_EQ(f->ranks.size(), 1u);
  EXPECT_EQ(windowed.procs[f->ranks[0].process].pid, 4005);
  EXPECT_EQ(f->op.index, 2u);
  EXPECT_NE(f->summary.find("could not be re-read"), std::string::npos) << f->summary;
}

TEST(RecordWindowTest, AnOldSkipIsStillTheRootCause) {
  JobSpec spec = LongJob(Fault::kSkipOp);
  spec.tp = 0;  // one comm: the skip shifts every later index
  spec.op = 3;
  spec.count_period = 5;  // else every op looks alike and a skip is invisible
  // The op it skipped is described from the file: re-read.
  EXPECT_GT(ExpectWindowedLikeWhole(spec, Verdict::kHang), 0);
  const WindowRun whole(MakeJob(spec), nullptr);
  ASSERT_FALSE(whole.result.findings.empty());
  EXPECT_NE(whole.result.findings[0].summary.find("it skipped Broadcast #3"), std::string::npos)
      << whole.result.findings[0].summary;
}

// 512 processes and 259 comm groups: the per-process and per-group passes
// run on every core (model/parallel.h). The findings must not depend on it:
// the same as the whole read, and the same on every run.
TEST(RecordWindowTest, ABigJobRunsThePassesInParallelWithTheSameFindings) {
  JobSpec spec = LongJob(Fault::kMismatch);
  spec.nranks = 512;
  spec.tp = 2;
  spec.steps = 40;
  spec.op = 8;  // the world op of step 2: 511 members agree, rank 5 is odd
  spec.field = "datatype";
  ExpectWindowedLikeWhole(spec, Verdict::kDesync);
  const std::vector<ProcessSnapshot> whole = MakeJob(spec);
  const WindowRun a(whole, nullptr), b(whole, nullptr);
  ASSERT_EQ(a.result.findings.size(), b.result.findings.size());
  for (size_t i = 0; i < a.result.findings.size(); ++i) {
    EXPECT_EQ(a.result.findings[i].summary, b.result.findings[i].summary);
  }
}

// A dump as the recorder leaves it after a long run: wrapped regions, a
// torn slot, out-of-range enums, p2p records in a region that does not
// track completion, and ops not done, the comms' enqueue times interleaved
// so that the one time cut falls inside each of them.
test_support::ImageBuilder LongDump() {
  using test_support::ImageBuilder;
  using test_support::kCreatedMono;
  ImageBuilder b(4, 64);
  b.Claim(0, 0x10, 0, 8, "world").flags = format::kRegionCompletionTracked;
  b.Claim(1, 0x20, 1, 2, "tp").flags = format::kRegionCompletionTracked;
  b.Claim(2, 0x30, 0, 2, "pp");  // region 3 stays free
  for (uint64_t i = 0; i < 100; ++i) {
    format::Record r = ImageBuilder::Coll(i, 100 + i);
    r.t_enqueue_ns = kCreatedMono + 3000 * (i + 1);
    r.state = i < 97 ? format::kOpDone : format::kOpRunning;
    if (i == 60) r.func = 200;  // out of range: Unknown, counted
    if (i == 70) r.api_datatype = 99;
    if (i == 41) r.state = format::kOpEnqueued;  // old, pending: kept
    b.Append(0, r);
  }
  b.Slot(0, 80).count = 7;  // after the checksum: torn
  for (uint64_t i = 0; i < 50; ++i) {
    format::Record r = ImageBuilder::Coll(i, 10);
    r.t_enqueue_ns = kCreatedMono + 6000 * (i + 1) + 1000;
    r.state = format::kOpDone;
    if (i == 10) r.datatype = 99;
    r.func = i % 3 == 0 ? format::kFuncBroadcast : format::kFuncAllReduce;
    r.root_or_peer = static_cast<int32_t>(i % 2);
    b.Append(1, r);
  }
  for (uint64_t i = 0; i < 40; ++i) {
    format::Record r = ImageBuilder::Coll(i / 2, 5 + i);
    r.t_enqueue_ns = kCreatedMono + 7000 * (i + 1) + 2000;
    if (i % 2 == 1) {
      r.flags = format::kFlagP2p;
      r.func = format::kFuncSend;
      r.root_or_peer = 1;
    }
    b.Append(2, r);
  }
  return b;
}

std::string WriteScratchFile(const std::string& name, const std::vector<uint8_t>& bytes) {
  const char* dir = getenv("TMPDIR");
  const std::string path = std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
  FILE* f = fopen(path.c_str(), "wb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return path;
  EXPECT_EQ(fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  fclose(f);
  return path;
}

void ExpectSameRecord(const OpRecord& a, const OpRecord& b) {
  EXPECT_EQ(a.slot_seq, b.slot_seq);
  EXPECT_EQ(a.op_index, b.op_index);
  EXPECT_EQ(a.nccl_seq, b.nccl_seq);
  EXPECT_EQ(a.count, b.count);
  EXPECT_EQ(a.bytes, b.bytes);
  EXPECT_EQ(a.root_or_peer, b.root_or_peer);
  EXPECT_EQ(a.func, b.func);
  EXPECT_EQ(a.datatype, b.datatype);
  EXPECT_EQ(a.api_datatype, b.api_datatype);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.state, b.state);
  EXPECT_EQ(a.t_enqueue_ns, b.t_enqueue_ns);
  EXPECT_EQ(a.gpu_start_ns, b.gpu_start_ns);
  EXPECT_EQ(a.t_last_progress_ns, b.t_last_progress_ns);
}

// Everything the windowed load keeps of a file: warnings, counts, records,
// signatures.
void ExpectSameSnapshot(const ProcessSnapshot& a, const ProcessSnapshot& b) {
  EXPECT_EQ(a.warnings, b.warnings);
  ASSERT_EQ(a.comms.size(), b.comms.size());
  for (size_t c = 0; c < a.comms.size(); ++c) {
    SCOPED_TRACE(a.comms[c].name);
    const CommSnapshot& x = a.comms[c];
    const CommSnapshot& y = b.comms[c];
    EXPECT_EQ(x.region_index, y.region_index);
    EXPECT_EQ(x.head, y.head);
    EXPECT_EQ(x.overwritten, y.overwritten);
    EXPECT_EQ(x.torn, y.torn);
    EXPECT_EQ(x.trimmed, y.trimmed);
    EXPECT_EQ(x.history_first, y.history_first);
    ASSERT_EQ(x.history.size(), y.history.size());
    for (size_t k = 0; k < x.history.size(); ++k) {
      EXPECT_EQ(x.history[k].sig, y.history[k].sig) << k;
      EXPECT_EQ(x.history[k].seq_lo, y.history[k].seq_lo) << k;
    }
    ASSERT_EQ(x.records.size(), y.records.size());
    for (size_t i = 0; i < x.records.size(); ++i) ExpectSameRecord(x.records[i], y.records[i]);
  }
}

// The windowed read of a dump (ReadWindow: dropped records checked but
// never decoded) keeps exactly what TrimToWindow keeps of the dump read
// whole, whatever the window and the memory share.
TEST(RecordWindowTest, AWindowedReadOfADumpKeepsWhatTrimmingTheWholeReadKeeps) {
  const std::string path = WriteScratchFile("windowed.frdump", LongDump().DumpBytes());
  const ReadResult whole = ReadSnapshotFile(path);
  ASSERT_TRUE(whole.ok) << whole.error;
  EXPECT_FALSE(whole.windowed);
  ASSERT_FALSE(whole.snapshot.warnings.empty());  // the enums and the torn slot
  for (const analysis::WindowPolicy policy :
       {analysis::WindowPolicy{10, UINT64_MAX}, analysis::WindowPolicy{10, 20},
        analysis::WindowPolicy{57, 80}, analysis::WindowPolicy{1, 1},
        analysis::WindowPolicy{500, 500}}) {
    SCOPED_TRACE(std::to_string(policy.full) + "/" + std::to_string(policy.share));
    ProcessSnapshot trimmed = whole.snapshot;
    analysis::TrimToWindow(policy, &trimmed);
    const ReadWindow window = analysis::ReadWindowFor(policy);
    const ReadResult windowed = ReadSnapshotFile(path, ReadLimits{}, &window);
    ASSERT_TRUE(windowed.ok) << windowed.error;
    EXPECT_TRUE(windowed.windowed);
    ExpectSameSnapshot(trimmed, windowed.snapshot);
    uint64_t dropped = 0, signatures = 0;
    for (const CommSnapshot& c : windowed.snapshot.comms) {
      dropped += c.trimmed;
      signatures += c.history.size();
    }
    EXPECT_EQ(dropped > 0, policy.full < 100);
    EXPECT_EQ(signatures > 0, policy.full < 100);
  }
  // A ring is re-checked against its file: read whole, trimmed afterwards.
  const std::string ring = WriteScratchFile("windowed.ring", LongDump().Bytes());
  const ReadWindow window = analysis::ReadWindowFor(analysis::WindowPolicy{10, 20});
  const ReadResult r = ReadSnapshotFile(ring, ReadLimits{}, &window);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_FALSE(r.windowed);
}

// An op whose completion stream order decides (kFlagNoCompletion, not
// done) needs every record of its process: such a dump is returned whole,
// not windowed, and trimmed after the inference.
TEST(RecordWindowTest, ADumpWithOpsCompletedByStreamOrderIsReadWhole) {
  test_support::ImageBuilder b = LongDump();
  format::Record r = test_support::ImageBuilder::Coll(50, 1);
  r.flags = format::kFlagNoCompletion;
  r.stream = 5;
  r.t_enqueue_ns = test_support::kCreatedMono + 1;
  b.Append(1, r);
  const std::string path = WriteScratchFile("inferred.frdump", b.DumpBytes());
  const ReadWindow window = analysis::ReadWindowFor(analysis::WindowPolicy{10, 20});
  const ReadResult windowed = ReadSnapshotFile(path, ReadLimits{}, &window);
  ASSERT_TRUE(windowed.ok) << windowed.error;
  EXPECT_FALSE(windowed.windowed);
  const ReadResult whole = ReadSnapshotFile(path);
  ASSERT_TRUE(whole.ok) << whole.error;
  ExpectSameSnapshot(whole.snapshot, windowed.snapshot);
  for (const CommSnapshot& c : windowed.snapshot.comms) EXPECT_EQ(c.trimmed, 0u);
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

// The streamed timeline (analyzer/report/timeline.h) and the JSON text writer
// under it: valid JSON whatever the input bytes, the same trace however it is
// chunked, a rank subset that draws only those ranks, and a windowed load
// that says what it left out.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "analyzer/model/progress.h"
#include "analyzer/model/record_window.h"
#include "analyzer/report/json_writer.h"
#include "analyzer/report/timeline.h"
#include "integration/trace_check.h"
#include "unit/analyzer/analyzer_test_util.h"

namespace flightrec {
namespace testing {
namespace {

using nlohmann::json;
using report::JsonWriter;

std::string Text(JsonWriter* w) {
  std::string out;
  w->TakeIfLarger(0, &out);
  return out;
}

TEST(JsonWriterTest, NestsWithCommasAndWritesExactMicroseconds) {
  JsonWriter w;
  w.BeginObject();
  w.Key("a").BeginArray();
  w.Int(-3);
  w.Uint(18446744073709551615ULL);
  w.Bool(true);
  w.BeginObject();
  w.EndObject();
  w.EndArray();
  w.Key("ts").Micros(1234567);
  w.Key("small").Micros(5);
  w.EndObject();
  EXPECT_EQ(Text(&w), R"({"a":[-3,18446744073709551615,true,{}],"ts":1234.567,"small":0.005})");
}

TEST(JsonWriterTest, EscapesAnyBytesAsTheJsonReportsDo) {
  const std::vector<std::string> inputs = {"plain name",
                                           "quote \" and back \\ slash",
                                           std::string("nul \0 and \x01\n\t", 13),
                                           "bad \xff\xfe utf-8",
                                           "cut \xe2\x82",
                                           "caf\xc3\xa9 \xf0\x9f\x98\x80"};
  for (const std::string& s : inputs) {
    JsonWriter w;
    w.BeginArray();
    w.String(s);
    w.EndArray();
    const std::string text = Text(&w);
    const json expected =
        json::array({json::parse(json(s).dump(-1, ' ', false, json::error_handler_t::replace))});
    ASSERT_TRUE(json::accept(text)) << text;
    EXPECT_EQ(json::parse(text), expected) << text;
  }
}

TEST(JsonWriterTest, HandsOverTextOnlyOnceAChunkIsFull) {
  JsonWriter w;
  w.BeginArray();
  std::string chunk;
  EXPECT_FALSE(w.TakeIfLarger(64, &chunk));
  for (int i = 0; i < 20; ++i) w.Uint(1000000);
  ASSERT_TRUE(w.TakeIfLarger(64, &chunk));
  EXPECT_EQ(chunk.rfind("[1000000,1000000", 0), 0u);
  w.Uint(7);  // the comma state survives the hand-over
  w.EndArray();
  EXPECT_EQ(Text(&w), ",7]");
}

JobSpec Stuck(int nranks, int steps) {
  JobSpec spec;
  spec.nranks = nranks;
  spec.steps = steps;
  spec.fault = Fault::kStuckBeforeOp;
  spec.op = 3 * steps - 2;
  return spec;
}

struct Traced {
  explicit Traced(std::vector<ProcessSnapshot> p)
      : job(std::move(p)), progress(analysis::ComputeProgress(job.index, {})) {}
  json Trace(const report::TimelineOptions& options = {}) const {
    return json::parse(report::TimelineTrace(job.index, progress, options));
  }
  Analyzed job;
  analysis::JobProgress progress;
};

bool IsEnqueueSlice(const json& e) {
  return e["ph"] == "X" && e["args"].value("phase", "") == "enqueue";
}

// Perfetto's reading (integration/trace_check.h): on every track slices
// nest, flows run forward from a slice to a slice. Each op's span from
// enqueue to GPU end on one thread, as the trace once drew them, overlaps
// the next op's.
TEST(TimelineTest, TheViewerReadsNestedTracksAndForwardFlows) {
  for (const JobSpec& spec : {Stuck(16, 200), Stuck(8, 6)}) {
    Traced t(MakeJob(spec));
    const json j = t.Trace();
    const itest::TraceCheck check = itest::CheckTrace(j);
    EXPECT_TRUE(check.ok()) << check.Describe();
    EXPECT_GT(check.flows, 0u);
    size_t enqueue = 0, gpu = 0, unfinished = 0;
    for (const json& e : j["traceEvents"]) {
      if (e["ph"] != "X") continue;
      enqueue += IsEnqueueSlice(e) ? 1 : 0;
      gpu += e["args"]["phase"] == "gpu" ? 1 : 0;
      unfinished += e["args"].value("unfinished", false) ? 1 : 0;
    }
    EXPECT_GT(enqueue, 0u);
    EXPECT_GT(gpu, 0u);
    EXPECT_GT(unfinished, 0u);  // the ranks waiting on the culprit
  }
}

// At 1,024 ranks the viewer's reading holds as at 16 (nesting per track,
// forward flows), and the trace grows with the ops drawn, not faster than the
// ranks: flows are capped per comm, so bytes per op at 1,024 ranks stay those
// of 64 ranks running the same schedule.
TEST(TimelineTest, AThousandRanksReadCleanlyAndTheSizeFollowsTheOps) {
  auto bytes_per_op = [](int nranks, itest::TraceCheck* check) {
    Traced t(MakeJob(Stuck(nranks, 8)));
    const std::string text = report::TimelineTrace(t.job.index, t.progress);
    if (check != nullptr) *check = itest::CheckTrace(json::parse(text));
    size_t records = 0;
    for (const ProcessSnapshot& p : t.job.procs) {
      for (const CommSnapshot& c : p.comms) records += c.records.size();
    }
    return static_cast<double>(text.size()) / static_cast<double>(records);
  };
  itest::TraceCheck check;
  const double at_1024 = bytes_per_op(1024, &check);
  EXPECT_TRUE(check.ok()) << check.Describe();
  EXPECT_GT(check.flows, 0u);
  EXPECT_GT(check.tracks, 1024u);
  const double at_64 = bytes_per_op(64, nullptr);
  EXPECT_LE(at_1024, 1.1 * at_64) << at_1024 << " bytes per op at 1,024 ranks, " << at_64
                                  << " at 64";
}

TEST(TimelineTest, ChunksStreamedToTheSinkMakeTheWholeTrace) {
  Traced t(MakeJob(Stuck(16, 200)));  // ~9,600 ops: a few MiB of trace
  std::vector<std::string> chunks;
  ASSERT_TRUE(report::WriteTimeline(t.job.index, t.progress, {}, [&chunks](std::string_view s) {
    chunks.emplace_back(s);
    return true;
  }));
  EXPECT_GE(chunks.size(), 3u);
  std::string joined;
  for (const std::string& c : chunks) joined += c;
  EXPECT_EQ(joined, report::TimelineTrace(t.job.index, t.progress));
  const json j = json::parse(joined);
  size_t slices = 0;  // one enqueue slice per op
  for (const json& e : j["traceEvents"]) slices += IsEnqueueSlice(e) ? 1 : 0;
  size_t records = 0;
  for (const ProcessSnapshot& p : t.job.procs) {
    for (const CommSnapshot& c : p.comms) records += c.records.size();
  }
  EXPECT_EQ(slices, records);
}

TEST(TimelineTest, ASinkThatFailsStopsTheWriter) {
  Traced t(MakeJob(Stuck(16, 200)));
  int calls = 0;
  EXPECT_FALSE(report::WriteTimeline(t.job.index, t.progress, {}, [&calls](std::string_view) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
}

TEST(TimelineTest, RanksDrawOnlyThoseRanksAndTheFlowsBetweenThem) {
  Traced t(MakeJob(Stuck(8, 6)));
  report::TimelineOptions options;
  options.ranks = {{4, 5}};
  const json j = t.Trace(options);
  std::set<int64_t> pids;
  int starts = 0, finishes = 0, stuck = 0;
  for (const json& e : j["traceEvents"]) {
    pids.insert(e["pid"].get<int64_t>());
    starts += e["ph"] == "s" ? 1 : 0;
    finishes += e["ph"] == "f" ? 1 : 0;
    stuck += e.value("cat", "") == "stuck" ? 1 : 0;
  }
  EXPECT_EQ(pids, (std::set<int64_t>{4, 5}));
  EXPECT_GT(starts, 0);  // world and dp1 hold both ranks
  EXPECT_EQ(starts, finishes);
  EXPECT_EQ(stuck, 1);  // rank 4; rank 5, the culprit, is outside NCCL
  const std::vector<size_t> drawn = report::DrawnProcesses(t.job.index, options);
  ASSERT_EQ(drawn.size(), 2u);
  EXPECT_EQ(t.job.procs[drawn[0]].pid, 4004);
  EXPECT_EQ(t.job.procs[drawn[1]].pid, 4005);
}

TEST(TimelineTest, RankRangesParseOrSayWhatIsWrong) {
  std::vector<std::pair<int64_t, int64_t>> r;
  std::string error;
  ASSERT_TRUE(report::ParseRankRanges("0-7,12,40-47", &r, &error)) << error;
  EXPECT_EQ(r, (std::vector<std::pair<int64_t, int64_t>>{{0, 7}, {12, 12}, {40, 47}}));
  for (const char* bad : {"", "1,", ",1", "7-3", "-1", "a", "1-2-3", "1 ", "99999999999999"}) {
    EXPECT_FALSE(report::ParseRankRanges(bad, &r, &error)) << bad;
    EXPECT_NE(error.find("is not a rank"), std::string::npos) << error;
  }
}

TEST(TimelineTest, AWindowedLoadSaysHowManyRecordsItLeftOut) {
  std::vector<ProcessSnapshot> procs = MakeJob(Stuck(8, 120));
  uint64_t trimmed = 0, kept = 0;
  for (ProcessSnapshot& p : procs) {
    analysis::TrimToWindow(30, &p);
    for (const CommSnapshot& c : p.comms) {
      trimmed += c.trimmed;
      kept += c.records.size();
    }
  }
  ASSERT_GT(trimmed, 0u);
  Traced t(std::move(procs));
  const json j = t.Trace();
  EXPECT_EQ(j["otherData"]["records_left_out"], trimmed);
  size_t slices = 0;
  for (const json& e : j["traceEvents"]) slices += IsEnqueueSlice(e) ? 1 : 0;
  EXPECT_EQ(slices, kept);
  EXPECT_FALSE(Traced(MakeJob(Stuck(8, 6))).Trace()["otherData"].contains("records_left_out"));
}

}  // namespace
}  // namespace testing
}  // namespace flightrec

// Completion inferred from stream order for kFlagNoCompletion ops
// (analyzer/reader/stream_order.h): copy-engine collectives of a process
// without a CUDA driver.
#include "analyzer/reader/stream_order.h"

#include <gtest/gtest.h>

#include "flightrec/record_format.h"

namespace flightrec {
namespace {

constexpr uint64_t kStream = 0x7f0000001000ULL;

OpRecord Op(uint64_t t_enqueue, uint8_t state, uint8_t flags, uint64_t stream = kStream) {
  OpRecord r;
  r.t_enqueue_ns = t_enqueue;
  r.state = state;
  r.flags = flags;
  r.stream = stream;
  return r;
}

constexpr uint8_t kCeNoCompletion = format::kFlagCopyEngine | format::kFlagNoCompletion;

CommSnapshot Comm(uint32_t state = format::kRegionActive, uint32_t flags = 0) {
  CommSnapshot c;
  c.state = state;
  c.flags = flags;
  return c;
}

TEST(StreamOrder, ALaterStartedOpOnTheSameStreamMeansDone) {
  ProcessSnapshot p;
  CommSnapshot tp = Comm();
  tp.records.push_back(Op(100, format::kOpEnqueued, kCeNoCompletion));  // inferred done
  tp.records.push_back(Op(300, format::kOpEnqueued, kCeNoCompletion));  // nothing started after
  CommSnapshot dp = Comm();
  dp.records.push_back(Op(200, format::kOpRunning, 0));  // another comm, same stream
  p.comms = {tp, dp};
  EXPECT_EQ(InferStreamOrderCompletion(&p), 1u);
  EXPECT_EQ(p.comms[0].records[0].state, format::kOpDone);
  EXPECT_EQ(p.comms[0].records[1].state, format::kOpEnqueued);
  // The flag stays: the completion was inferred.
  EXPECT_NE(p.comms[0].records[0].flags & format::kFlagNoCompletion, 0);
}

TEST(StreamOrder, OtherStreamsAndUnstartedOpsTellNothing) {
  ProcessSnapshot p;
  CommSnapshot c = Comm();
  c.records.push_back(Op(100, format::kOpEnqueued, kCeNoCompletion));
  c.records.push_back(Op(200, format::kOpDone, 0, kStream + 0x100));  // another stream
  c.records.push_back(Op(300, format::kOpEnqueued, 0));               // same stream, not started
  p.comms = {c};
  EXPECT_EQ(InferStreamOrderCompletion(&p), 0u);
  EXPECT_EQ(p.comms[0].records[0].state, format::kOpEnqueued);
}

TEST(StreamOrder, ACleanFinalizeFinishedEveryOp) {
  ProcessSnapshot p;
  CommSnapshot clean = Comm(format::kRegionFinalized);
  clean.records.push_back(Op(100, format::kOpEnqueued, kCeNoCompletion));
  CommSnapshot aborted = Comm(format::kRegionFinalized, format::kRegionEndedInFlight);
  aborted.records.push_back(Op(100, format::kOpEnqueued, kCeNoCompletion, kStream + 0x100));
  p.comms = {clean, aborted};
  EXPECT_EQ(InferStreamOrderCompletion(&p), 1u);
  EXPECT_EQ(p.comms[0].records[0].state, format::kOpDone);
  EXPECT_EQ(p.comms[1].records[0].state, format::kOpEnqueued);
}

TEST(StreamOrder, OpsWithCompletionAreLeftAlone) {
  ProcessSnapshot p;
  CommSnapshot c = Comm(format::kRegionFinalized);
  c.records.push_back(Op(100, format::kOpEnqueued, format::kFlagCopyEngine));
  c.records.push_back(Op(200, format::kOpRunning, 0));
  p.comms = {c};
  EXPECT_EQ(InferStreamOrderCompletion(&p), 0u);
  EXPECT_EQ(p.comms[0].records[0].state, format::kOpEnqueued);
}

}  // namespace
}  // namespace flightrec

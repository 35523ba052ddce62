// The per-thread spare record vectors (analyzer/reader/record_buffers.h):
// a recycled vector is handed out again only where it fits, and a thread
// never holds more than the bounds say. Capacities, not addresses, tell a
// recycled vector from a new one (a freed address may be reused).
#include "analyzer/reader/record_buffers.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace flightrec {
namespace {

std::vector<OpRecord> WithCapacity(size_t n) {
  std::vector<OpRecord> v;
  v.reserve(n);
  v.resize(n / 2);  // contents must not survive a recycle
  return v;
}

// Each test runs on a thread of its own, so spares of another test (or of
// the reader used elsewhere in this binary) cannot answer for it.
template <typename F>
void OnFreshThread(F f) {
  std::thread t(f);
  t.join();
}

TEST(RecordBuffersTest, ANewThreadGetsANewVector) {
  OnFreshThread([] {
    const std::vector<OpRecord> v = TakeRecordBuffer(100);
    EXPECT_TRUE(v.empty());
    EXPECT_GE(v.capacity(), 100u);
  });
}

TEST(RecordBuffersTest, ARecycledVectorComesBackEmptyWhereItFits) {
  OnFreshThread([] {
    RecycleRecordBuffer(WithCapacity(1000));
    const std::vector<OpRecord> v = TakeRecordBuffer(600);
    EXPECT_TRUE(v.empty());
    EXPECT_EQ(v.capacity(), 1000u);  // a new one would have 600
  });
}

TEST(RecordBuffersTest, TooSmallOrMoreThanTwiceTheNeedIsNotHandedOut) {
  OnFreshThread([] {
    RecycleRecordBuffer(WithCapacity(1000));
    EXPECT_EQ(TakeRecordBuffer(1001).capacity(), 1001u);
    EXPECT_EQ(TakeRecordBuffer(499).capacity(), 499u);
    EXPECT_EQ(TakeRecordBuffer(500).capacity(), 1000u);  // still there, and fits
  });
}

TEST(RecordBuffersTest, TheSmallestFittingSpareIsTaken) {
  OnFreshThread([] {
    RecycleRecordBuffer(WithCapacity(1900));
    RecycleRecordBuffer(WithCapacity(1200));
    RecycleRecordBuffer(WithCapacity(1500));
    EXPECT_EQ(TakeRecordBuffer(1000).capacity(), 1200u);
    EXPECT_EQ(TakeRecordBuffer(1000).capacity(), 1500u);
    EXPECT_EQ(TakeRecordBuffer(1000).capacity(), 1900u);
    EXPECT_EQ(TakeRecordBuffer(1000).capacity(), 1000u);
  });
}

TEST(RecordBuffersTest, AThreadKeepsAtMostMaxSparesAndMaxSpareBytes) {
  OnFreshThread([] {
    for (size_t i = 0; i < kMaxSpares + 3; ++i) RecycleRecordBuffer(WithCapacity(150));
    size_t recycled = 0;
    for (size_t i = 0; i < kMaxSpares + 3; ++i) recycled += TakeRecordBuffer(100).capacity() == 150;
    EXPECT_EQ(recycled, kMaxSpares);
  });
  OnFreshThread([] {
    const size_t big = kMaxSpareBytes / sizeof(OpRecord) + 1;
    RecycleRecordBuffer(WithCapacity(big));
    EXPECT_EQ(TakeRecordBuffer(big - 1).capacity(), big - 1);
  });
}

TEST(RecordBuffersTest, ReleaseFreesTheSpares) {
  OnFreshThread([] {
    RecycleRecordBuffer(WithCapacity(1000));
    ReleaseRecordBuffers();
    EXPECT_EQ(TakeRecordBuffer(600).capacity(), 600u);
  });
}

}  // namespace
}  // namespace flightrec

// The reader's non-zeroing byte buffer (analyzer/reader/byte_buffer.h):
// what a caller wrote survives growth and shrinking, and size is exact.
#include "analyzer/reader/byte_buffer.h"

#include <gtest/gtest.h>

namespace flightrec {
namespace reader_internal {
namespace {

void Fill(ByteBuffer* b, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) b->data()[i] = static_cast<uint8_t>(i * 7);
}

void ExpectFilled(ByteBuffer* b, size_t to) {
  for (size_t i = 0; i < to; ++i) {
    ASSERT_EQ(b->data()[i], static_cast<uint8_t>(i * 7)) << "byte " << i;
  }
}

TEST(ByteBufferTest, StartsEmpty) {
  ByteBuffer b;
  EXPECT_EQ(b.size(), 0u);
  b.Resize(0);
  EXPECT_EQ(b.size(), 0u);
}

TEST(ByteBufferTest, GrowthKeepsWhatWasWritten) {
  ByteBuffer b;
  b.Resize(1000);
  Fill(&b, 0, 1000);
  b.Resize(1001);  // grows (at least doubling) and copies the prefix
  EXPECT_EQ(b.size(), 1001u);
  Fill(&b, 1000, 1001);
  b.Resize(100000);
  EXPECT_EQ(b.size(), 100000u);
  ExpectFilled(&b, 1001);
}

TEST(ByteBufferTest, ShrinkingKeepsThePrefixAndTheStorage) {
  ByteBuffer b;
  b.Resize(4096);
  Fill(&b, 0, 4096);
  const uint8_t* storage = b.data();
  b.Resize(10);
  EXPECT_EQ(b.size(), 10u);
  ExpectFilled(&b, 10);
  b.Resize(4096);  // within the capacity: no new storage, the prefix intact
  EXPECT_EQ(b.data(), storage);
  ExpectFilled(&b, 10);
}

}  // namespace
}  // namespace reader_internal
}  // namespace flightrec

#include "analyzer/reader/bounded_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace flightrec {
namespace {

TEST(BoundedViewTest, ReadInsideSucceedsAndOutsideFailsWithoutTouchingOutput) {
  std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  BoundedView v{bytes.data(), bytes.size()};
  uint64_t word = 0;
  ASSERT_TRUE(v.Read(1, &word));
  EXPECT_EQ(word, 0x0908070605040302ULL);
  uint64_t untouched = 77;
  EXPECT_FALSE(v.Read(2, &untouched));
  EXPECT_EQ(untouched, 77u);
  uint8_t last = 0;
  EXPECT_TRUE(v.Read(8, &last));
  EXPECT_EQ(last, 9);
  EXPECT_FALSE(v.Read(9, &last));
}

TEST(BoundedViewTest, OffsetPlusLengthCannotOverflow) {
  std::vector<uint8_t> bytes(16);
  BoundedView v{bytes.data(), bytes.size()};
  uint32_t x = 0;
  EXPECT_FALSE(v.Read(UINT64_MAX, &x));
  EXPECT_FALSE(v.Read(UINT64_MAX - 2, &x));
  EXPECT_FALSE(v.Contains(8, UINT64_MAX));
  EXPECT_FALSE(v.Contains(UINT64_MAX, 1));
  EXPECT_TRUE(v.Contains(16, 0));
  EXPECT_FALSE(v.Contains(17, 0));
  BoundedView sub;
  EXPECT_FALSE(v.Sub(4, UINT64_MAX - 3, &sub));
}

TEST(BoundedViewTest, SubViewIsBoundedByItsOwnSize) {
  std::vector<uint8_t> bytes = {0, 1, 2, 3, 4, 5, 6, 7};
  BoundedView v{bytes.data(), bytes.size()};
  BoundedView sub;
  ASSERT_TRUE(v.Sub(2, 4, &sub));
  EXPECT_EQ(sub.size, 4u);
  uint8_t b = 0;
  EXPECT_TRUE(sub.Read(3, &b));
  EXPECT_EQ(b, 5);
  EXPECT_FALSE(sub.Read(4, &b));  // byte 6 exists in the parent, not in sub
  EXPECT_FALSE(v.Sub(5, 4, &sub));
  EXPECT_EQ(sub.size, 4u);  // untouched on failure
}

TEST(BoundedViewTest, ReadStringStopsAtNulMaxOrEndAndSanitizes) {
  std::vector<uint8_t> bytes = {'a', 'b', 0x1b, '[', 0xff, 'z', 0, 'q', 'r'};
  BoundedView v{bytes.data(), bytes.size()};
  EXPECT_EQ(v.ReadString(0, 64), "ab?[?z");
  EXPECT_EQ(v.ReadString(0, 2), "ab");
  EXPECT_EQ(v.ReadString(7, 64), "qr");  // no NUL before the end of the view
  EXPECT_EQ(v.ReadString(9, 64), "");
  EXPECT_EQ(v.ReadString(UINT64_MAX, 64), "");
}

TEST(BoundedViewTest, EmptyViewRejectsEverything) {
  BoundedView v;
  uint8_t b = 0;
  EXPECT_FALSE(v.Read(0, &b));
  EXPECT_EQ(v.ReadString(0, 8), "");
  BoundedView sub;
  EXPECT_TRUE(v.Sub(0, 0, &sub));
  EXPECT_EQ(sub.size, 0u);
}

}  // namespace
}  // namespace flightrec

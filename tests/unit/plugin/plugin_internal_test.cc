// Handle encoding and descriptor-name mapping, tested below the ABI.
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "flightrec/record_format.h"
#include "plugin/enum_map.h"
#include "plugin/handle.h"

namespace flightrec {
namespace plugin {
namespace {

TEST(HandleTest, RoundTripsEveryField) {
  const uint64_t h = EncodeHandle(HandleKind::kOp, 0xab, 4095, 0x12345678ULL);
  const DecodedHandle d = DecodeHandle(HandleToPtr(h));
  EXPECT_EQ(d.kind, HandleKind::kOp);
  EXPECT_EQ(d.generation_low8, 0xabu);
  EXPECT_EQ(d.region, 4095u);
  EXPECT_EQ(d.payload, 0x12345678ULL);
}

TEST(HandleTest, NeverNullEvenForZeroFields) {
  EXPECT_NE(HandleToPtr(EncodeHandle(HandleKind::kContext, 0, 0, 0)), nullptr);
}

TEST(HandleTest, PointersAndGarbageDecodeAsInvalid) {
  int local = 0;
  EXPECT_EQ(DecodeHandle(&local).kind, HandleKind::kInvalid);
  EXPECT_EQ(DecodeHandle(nullptr).kind, HandleKind::kInvalid);
  // Kind nibble above the last kind we issue.
  EXPECT_EQ(DecodeHandle(HandleToPtr(0xf000000000000001ULL)).kind, HandleKind::kInvalid);
}

TEST(HandleTest, WidePayloadIsTruncatedNotSpilledIntoRegion) {
  const uint64_t h = EncodeHandle(HandleKind::kApi, 1, 7, ~uint64_t{0});
  const DecodedHandle d = DecodeHandle(HandleToPtr(h));
  EXPECT_EQ(d.region, 7u);
  EXPECT_EQ(d.generation_low8, 1u);
  EXPECT_EQ(d.payload, kPayloadMask);
}

TEST(EnumMapTest, MapsNcclStringsAndCachesByPointer) {
  EXPECT_EQ(MapName(NameKind::kFunc, "AllReduce"), format::kFuncAllReduce);
  EXPECT_EQ(MapName(NameKind::kFunc, "AlltoAll"), format::kFuncAllToAll);
  EXPECT_EQ(MapName(NameKind::kDataType, "ncclBfloat16"), format::kTypeBfloat16);
  EXPECT_EQ(MapName(NameKind::kAlgo, "NVLS_TREE"), format::kAlgoNvlsTree);
  EXPECT_EQ(MapName(NameKind::kProto, "LL128"), format::kProtoLL128);
  // A second, distinct pointer with the same text maps the same way, and
  // repeated lookups of one pointer (the cached path) stay correct.
  const std::string copy = "ReduceScatter";
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(MapName(NameKind::kFunc, copy.c_str()), format::kFuncReduceScatter);
    EXPECT_EQ(MapName(NameKind::kFunc, "ReduceScatter"), format::kFuncReduceScatter);
  }
}

TEST(EnumMapTest, UnknownAndNullMapToZero) {
  EXPECT_EQ(MapName(NameKind::kFunc, nullptr), 0);
  EXPECT_EQ(MapName(NameKind::kFunc, "PutSignal"), 0);
  EXPECT_EQ(MapName(NameKind::kDataType, "Unknown"), 0);  // NCCL's name for ncclUint8
}

TEST(EnumMapTest, ManyDistinctPointersOverflowTheCacheSafely) {
  std::string names[40];
  for (auto& n : names) n = "Broadcast";
  for (int round = 0; round < 2; ++round) {
    for (const auto& n : names)
      EXPECT_EQ(MapName(NameKind::kFunc, n.c_str()), format::kFuncBroadcast);
  }
}

// A cached pointer whose memory now holds another name is not trusted.
TEST(EnumMapTest, ReusedPointerIsLookedUpAgain) {
  char buf[16] = "AllReduce";
  EXPECT_EQ(MapName(NameKind::kFunc, buf), format::kFuncAllReduce);
  std::snprintf(buf, sizeof(buf), "Broadcast");
  EXPECT_EQ(MapName(NameKind::kFunc, buf), format::kFuncBroadcast);
}

TEST(EnumMapTest, V1CodesMapToFormatEnums) {
  EXPECT_EQ(MapV1Func(4), format::kFuncAllReduce);
  EXPECT_EQ(MapV1Func(7), format::kFuncRecv);
  EXPECT_EQ(MapV1Func(8), 0);
  EXPECT_EQ(MapV1DataType(1), format::kTypeUint8);
  EXPECT_EQ(MapV1DataType(7), format::kTypeFloat32);
  EXPECT_EQ(MapV1DataType(12), 0);
  EXPECT_EQ(MapV1Algo(6), format::kAlgoPat);
  EXPECT_EQ(MapV1Algo(7), 0);
  EXPECT_EQ(MapV1Proto(2), format::kProtoSimple);
  EXPECT_EQ(MapV1Proto(3), 0);
}

}  // namespace
}  // namespace plugin
}  // namespace flightrec

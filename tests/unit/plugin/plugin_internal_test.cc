// Handle encoding and descriptor-name mapping, tested below the ABI.
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "flightrec/record_format.h"
#include "flightrec/record_names.h"
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

// The raw accessors the hot path uses agree with EncodeHandle/DecodeHandle.
TEST(HandleTest, RawAccessorsMatchDecode) {
  const uint64_t ctx = EncodeHandle(HandleKind::kContext, 0x5a, 0x9c3, 0);
  const uint64_t op = RekindHandle(ctx, HandleKind::kOp, 0xabcdef1234ULL);
  EXPECT_EQ(op, EncodeHandle(HandleKind::kOp, 0x5a, 0x9c3, 0xabcdef1234ULL));
  EXPECT_EQ(HandleKindOf(op), HandleKind::kOp);
  EXPECT_TRUE(HasKind(op, HandleKind::kOp));
  EXPECT_FALSE(HasKind(op, HandleKind::kApi));
  EXPECT_EQ(HandleGeneration(op), 0x5au);
  EXPECT_EQ(HandleRegion(op), 0x9c3u);
  EXPECT_EQ(HandlePayload(op), 0xabcdef1234ULL);
  EXPECT_TRUE(SameOwner(op, ctx));
  EXPECT_FALSE(SameOwner(op, EncodeHandle(HandleKind::kContext, 0x5b, 0x9c3, 0)));
  EXPECT_FALSE(SameOwner(op, EncodeHandle(HandleKind::kContext, 0x5a, 0x9c4, 0)));
  // A new kind keeps owner and payload.
  const uint64_t k = WithKind(op, HandleKind::kKernelTimed);
  EXPECT_EQ(k, EncodeHandle(HandleKind::kKernelTimed, 0x5a, 0x9c3, 0xabcdef1234ULL));
  // Payloads wider than 40 bits are truncated, as EncodeHandle does.
  EXPECT_EQ(RekindHandle(ctx, HandleKind::kApi, ~uint64_t{0}),
            EncodeHandle(HandleKind::kApi, 0x5a, 0x9c3, ~uint64_t{0}));
  // Invalid kinds (0, 10..15) and pointers, as DecodeHandle.
  int local = 0;
  EXPECT_EQ(HandleKindOf(HandleBits(&local)), HandleKind::kInvalid);
  EXPECT_EQ(HandleKindOf(0xf000000000000001ULL), HandleKind::kInvalid);
  EXPECT_EQ(HandleKindOf(0xa000000000000001ULL), HandleKind::kInvalid);
  EXPECT_EQ(HandleKindOf(0x9000000000000001ULL), HandleKind::kCeColl);
  EXPECT_EQ(HandleKindOf(0x8000000000000001ULL), HandleKind::kKernelPhase);
  for (uint64_t kind = 0; kind < 16; ++kind) {
    const uint64_t h = (kind << kKindShift) | 0x123;
    EXPECT_EQ(HandleKindOf(h), DecodeHandle(HandleToPtr(h)).kind) << kind;
  }
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
  // The refreshed entry serves later lookups; switching back works too.
  EXPECT_EQ(MapName(NameKind::kFunc, buf), format::kFuncBroadcast);
  std::snprintf(buf, sizeof(buf), "AllReduce");
  EXPECT_EQ(MapName(NameKind::kFunc, buf), format::kFuncAllReduce);
  EXPECT_EQ(MapName(NameKind::kFunc, buf), format::kFuncAllReduce);
}

// The freed-and-reused case the cache's key exists for: a buffer that held
// one datatype name and now holds another. Every datatype name starts with
// the same characters ("nccl"), so only a key that looks past them can
// notice (a first-character check mapped ncclFloat32 to ncclInt8's code).
TEST(EnumMapTest, ReusedPointerWithAnotherDatatypeNameIsNotMappedToTheOldCode) {
  char* buf = new char[16];
  std::snprintf(buf, 16, "ncclInt8");
  EXPECT_EQ(MapName(NameKind::kDataType, buf), format::kTypeInt8);
  EXPECT_EQ(MapName(NameKind::kDataType, buf), format::kTypeInt8);  // cached
  std::snprintf(buf, 16, "ncclFloat32");
  EXPECT_EQ(MapName(NameKind::kDataType, buf), format::kTypeFloat32);
  std::snprintf(buf, 16, "ncclFloat8e5m2");
  EXPECT_EQ(MapName(NameKind::kDataType, buf), format::kTypeFloat8e5m2);
  std::snprintf(buf, 16, "ncclFloat8e4m3");
  EXPECT_EQ(MapName(NameKind::kDataType, buf), format::kTypeFloat8e4m3);
  delete[] buf;
}

// NCCL's static strings: a pointer into the read-only pages of the object
// that holds the anchor (the logger NCCL passes at init) needs no key check;
// the object's writable data, the stack and the heap stay checked, so a
// reused buffer there is still looked up again.
const char kReadOnlyName[] = "AllGather";  // .rodata of this test binary
char g_writable_name[16] = "AllReduce";    // .data of this test binary
void AnchorInThisBinary() {}

uint64_t Bits(const void* p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

TEST(EnumMapTest, OnlyTheReadOnlyImageOfTheAnchorsObjectIsTrusted) {
  std::string heap = "AllReduce";
  const uint64_t before = detail::g_static_names.load();
  TrustNamesOfObjectAt(heap.data());  // in no loaded object: nothing changes
  EXPECT_EQ(detail::g_static_names.load(), before);

  TrustNamesOfObjectAt(reinterpret_cast<const void*>(&AnchorInThisBinary));
  EXPECT_TRUE(detail::InStaticNames(Bits(kReadOnlyName)));
  EXPECT_TRUE(detail::InStaticNames(Bits(reinterpret_cast<const void*>(&AnchorInThisBinary))));
  char stack[16] = "AllReduce";
  EXPECT_FALSE(detail::InStaticNames(Bits(g_writable_name)));
  EXPECT_FALSE(detail::InStaticNames(Bits(heap.data())));
  EXPECT_FALSE(detail::InStaticNames(Bits(stack)));

  EXPECT_EQ(MapName(NameKind::kFunc, kReadOnlyName), format::kFuncAllGather);
  EXPECT_EQ(MapName(NameKind::kFunc, kReadOnlyName), format::kFuncAllGather);  // cached
  // Writable memory of the same object is re-checked as before.
  EXPECT_EQ(MapName(NameKind::kFunc, g_writable_name), format::kFuncAllReduce);
  std::snprintf(g_writable_name, sizeof(g_writable_name), "Broadcast");
  EXPECT_EQ(MapName(NameKind::kFunc, g_writable_name), format::kFuncBroadcast);
}

// The key (length and last character) tells every name of a kind from every
// other, so the test above holds for any pair, not just the ones it tries.
TEST(EnumMapTest, EveryNameOfAKindHasItsOwnKey) {
  auto distinct = [](const char* const* names, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        EXPECT_NE(detail::NameKey(names[i]), detail::NameKey(names[j]))
            << names[i] << " / " << names[j];
      }
    }
  };
  distinct(format::kFuncNames, format::kNumFuncs);
  distinct(format::kDataTypeNames, format::kNumDataTypes);
  // The names NCCL passes as `coll.algo`; the copy-engine and symmetric
  // algos are derived from other fields (syncStrategy, isSymColl) and never
  // looked up by name.
  distinct(format::kAlgoNames, format::kAlgoCeMulticast);
  distinct(format::kProtoNames, format::kNumProtos);
}

// Pointers with the same home slot probe on and stay distinct; the names of
// one category do not leak into another.
TEST(EnumMapTest, CollidingPointersStayDistinct) {
  static char pool[8192];  // 16-byte strings, so none overlaps another
  std::vector<const char*> same_home;
  const uint32_t home = detail::NameHome(reinterpret_cast<uintptr_t>(&pool[0]));
  for (size_t off = 0; off + 16 <= sizeof(pool) && same_home.size() < 4; off += 16) {
    if (detail::NameHome(reinterpret_cast<uintptr_t>(&pool[off])) == home) {
      same_home.push_back(&pool[off]);
    }
  }
  ASSERT_EQ(same_home.size(), 4u);
  const char* names[] = {"LL", "LL128", "SIMPLE", "Bogus"};
  const uint8_t want[] = {format::kProtoLL, format::kProtoLL128, format::kProtoSimple, 0};
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 4; ++i) {
      char* p = const_cast<char*>(same_home[i]);
      if (round == 0) std::snprintf(p, 16, "%s", names[i]);
      EXPECT_EQ(MapName(NameKind::kProto, p), want[i]) << i;
      EXPECT_EQ(MapName(NameKind::kAlgo, p), 0) << i;  // not algorithm names
    }
  }
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

// Loading rules per NCCL release (docs/design/nccl.md §Loading).
#include "emulator/src/nccl_version.h"

#include <gtest/gtest.h>

namespace flightrec {
namespace emu {
namespace {

NcclVersion V(const char* s) {
  NcclVersion v;
  std::string err;
  EXPECT_TRUE(ParseNcclVersion(s, &v, &err)) << err;
  return v;
}

TEST(NcclVersion, ParsesReleasesAndRejectsNonsense) {
  EXPECT_EQ(V("2.28.9").Code(), 22809);
  EXPECT_EQ(V("2.26").Code(), 22600);
  EXPECT_EQ(V("master").Code(), 23100);
  NcclVersion v;
  std::string err;
  EXPECT_FALSE(ParseNcclVersion("2.22.1", &v, &err));
  EXPECT_NE(err.find("2.22.1"), std::string::npos);
  EXPECT_FALSE(ParseNcclVersion("banana", &v, &err));
  EXPECT_FALSE(ParseNcclVersion("2.28.9x", &v, &err));
}

TEST(NcclVersion, SymbolLookupOrderIsNewestFirstPerRelease) {
  EXPECT_EQ(SymbolLookupOrder(V("2.23.4"), 0), (std::vector<int>{1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.24.3"), 0), (std::vector<int>{2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.25.1"), 0), (std::vector<int>{2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.26.2"), 0), (std::vector<int>{3, 2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.27.7"), 0), (std::vector<int>{4, 3, 2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.28.9"), 0), (std::vector<int>{5, 4, 3, 2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.30.3"), 0), (std::vector<int>{6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("master"), 0), (std::vector<int>{7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(SymbolLookupOrder(V("2.28.9"), 3), (std::vector<int>{3}));
}

std::vector<std::string> Names(const char* env, const char* version, bool* disabled) {
  std::vector<std::string> out;
  for (const LibCandidate& c : LibraryCandidates(env, V(version), disabled)) {
    out.push_back(c.use_null ? "<NULL>" : c.name);
  }
  return out;
}

TEST(NcclVersion, LibraryNamesFollowEachReleasesRules) {
  bool disabled = false;
  EXPECT_EQ(Names(nullptr, "2.28.9", &disabled), (std::vector<std::string>{"libnccl-profiler.so"}));
  EXPECT_EQ(Names("flightrec", "2.28.9", &disabled),
            (std::vector<std::string>{"flightrec", "libnccl-profiler-flightrec.so"}));
  // 2.28+: no expansion for paths or lib*.so names.
  EXPECT_EQ(Names("/x/libp.so", "2.28.9", &disabled), (std::vector<std::string>{"/x/libp.so"}));
  EXPECT_EQ(Names("libfoo.so", "2.28.9", &disabled), (std::vector<std::string>{"libfoo.so"}));
  // 2.26-2.27 expand without that filter; 2.23-2.25 never expand.
  EXPECT_EQ(Names("libfoo.so", "2.27.3", &disabled),
            (std::vector<std::string>{"libfoo.so", "libnccl-profiler-libfoo.so.so"}));
  EXPECT_EQ(Names("flightrec", "2.25.1", &disabled),
            (std::vector<std::string>{"flightrec", "flightrec"}));
  // "none" disables only on 2.28.3+.
  EXPECT_TRUE(Names("NoNe", "2.28.3", &disabled).empty());
  EXPECT_TRUE(disabled);
  EXPECT_EQ(Names("none", "2.27.3", &disabled),
            (std::vector<std::string>{"none", "libnccl-profiler-none.so"}));
  EXPECT_FALSE(disabled);
  // The STATIC_PLUGIN prefix quirk.
  EXPECT_EQ(Names("stat", "2.28.9", &disabled), (std::vector<std::string>{"<NULL>"}));
}

TEST(NcclVersion, InitFailurePolicyPerRelease) {
  EXPECT_EQ(InitFailurePolicyFor(V("2.27.7")), InitFailurePolicy::kDisableGlobally);
  EXPECT_EQ(InitFailurePolicyFor(V("2.28.9")), InitFailurePolicy::kContinue);
  EXPECT_EQ(InitFailurePolicyFor(V("2.30.2")), InitFailurePolicy::kContinue);
  EXPECT_EQ(InitFailurePolicyFor(V("2.30.3")), InitFailurePolicy::kContinueAndUnload);
  EXPECT_TRUE(SkipsFinalizeForNullContext(V("2.28.0")));
  EXPECT_FALSE(SkipsFinalizeForNullContext(V("2.27.7")));
}

}  // namespace
}  // namespace emu
}  // namespace flightrec

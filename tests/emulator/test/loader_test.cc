// The loader opens what NCCL would open and picks the table NCCL would pick,
// using two real test plugins (test_plugin.cc).
#include "emulator/src/plugin_loader.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <gtest/gtest.h>

#include "emulator/src/nccl_logger.h"

namespace flightrec {
namespace emu {
namespace {

const std::string kV3 = std::string(EMU_PLUGIN_DIR) + "/libnccl-profiler-emutest-v3.so";
const std::string kMulti = std::string(EMU_PLUGIN_DIR) + "/libnccl-profiler-emutest-multi.so";

NcclVersion V(const char* s) {
  NcclVersion v;
  std::string err;
  EXPECT_TRUE(ParseNcclVersion(s, &v, &err));
  return v;
}

// Loads `lib` as NCCL `version` would and returns the chosen API (0: none).
int ChosenApi(const std::string& lib, const char* version, int forced = 0,
              std::string* table_name = nullptr) {
  setenv("NCCL_PROFILER_PLUGIN", lib.c_str(), 1);
  PluginLoader loader(V(version), forced);
  const ProfilerShim* shim = loader.Acquire();
  int api = shim == nullptr ? 0 : shim->plugin_api();
  if (shim != nullptr && table_name != nullptr) *table_name = shim->name();
  if (shim != nullptr) loader.Release();
  return api;
}

TEST(Loader, PicksTheNewestTableTheReleaseKnows) {
  std::string name;
  EXPECT_EQ(ChosenApi(kMulti, "2.28.9", 0, &name), 5);
  EXPECT_EQ(name, "emutest-v5");
  EXPECT_EQ(ChosenApi(kMulti, "master", 0, &name), 7);
  EXPECT_EQ(name, "emutest-v7");
  EXPECT_EQ(ChosenApi(kMulti, "2.30.3"), 5);  // v6 absent: falls to v5
  EXPECT_EQ(ChosenApi(kMulti, "2.27.7"), 3);
  EXPECT_EQ(ChosenApi(kMulti, "2.26.2"), 3);
  EXPECT_EQ(ChosenApi(kMulti, "2.25.1"), 1);
  EXPECT_EQ(ChosenApi(kMulti, "2.23.4"), 1);
  EXPECT_EQ(ChosenApi(kMulti, "2.28.9", 3), 3);  // --api 3
  EXPECT_EQ(ChosenApi(kMulti, "2.28.9", 4), 0);  // forced v4 is absent
}

TEST(Loader, AV3OnlyPluginIsInvisibleToReleasesBefore226) {
  EXPECT_EQ(ChosenApi(kV3, "2.28.9"), 3);
  EXPECT_EQ(ChosenApi(kV3, "2.26.2"), 3);
  EXPECT_EQ(ChosenApi(kV3, "2.25.1"), 0);
  EXPECT_EQ(ChosenApi(kV3, "2.23.4"), 0);
}

TEST(Loader, ExpandsShortNamesOnlyWhereNcclDoes) {
  // emulator_test's RUNPATH contains the plugin dir, as LD_LIBRARY_PATH would.
  EXPECT_EQ(ChosenApi("emutest-v3", "2.28.9"), 3);  // -> libnccl-profiler-emutest-v3.so
  EXPECT_EQ(ChosenApi("emutest-v3", "2.26.2"), 3);
  EXPECT_EQ(ChosenApi("emutest-v3", "2.25.1"), 0);  // no expansion before 2.26
}

TEST(Loader, NoneDisablesAndAFailedLoadIsNeverRetried) {
  setenv("NCCL_PROFILER_PLUGIN", "none", 1);
  PluginLoader disabled(V("2.28.9"), 0);
  EXPECT_EQ(disabled.Acquire(), nullptr);
  EXPECT_EQ(disabled.status(), PluginLoader::Status::kDisabled);

  setenv("NCCL_PROFILER_PLUGIN", "/nonexistent/libnope.so", 1);
  PluginLoader failed(V("2.28.9"), 0);
  EXPECT_EQ(failed.Acquire(), nullptr);
  setenv("NCCL_PROFILER_PLUGIN", kMulti.c_str(), 1);
  EXPECT_EQ(failed.Acquire(), nullptr);  // status "failed" sticks for the process
  EXPECT_EQ(failed.status(), PluginLoader::Status::kFailed);
}

TEST(Loader, RefcountsInitsAndUnloadsAtTheLastRelease) {
  setenv("NCCL_PROFILER_PLUGIN", kMulti.c_str(), 1);
  PluginLoader loader(V("2.28.9"), 0);
  ASSERT_NE(loader.Acquire(), nullptr);
  ASSERT_NE(loader.Acquire(), nullptr);
  EXPECT_EQ(loader.refcount(), 2);
  EXPECT_TRUE(loader.live());
  loader.Release();
  EXPECT_TRUE(loader.live());
  // Our own extra reference lets us see whether the loader's dlclose ran.
  void* probe = dlopen(kMulti.c_str(), RTLD_NOW | RTLD_NOLOAD);
  ASSERT_NE(probe, nullptr);
  dlclose(probe);
  loader.Release();
  EXPECT_FALSE(loader.live());
  EXPECT_EQ(loader.status(), PluginLoader::Status::kReady);
  EXPECT_EQ(dlopen(kMulti.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);  // unmapped
  // The next init reloads it.
  ASSERT_NE(loader.Acquire(), nullptr);
  EXPECT_EQ(loader.status(), PluginLoader::Status::kLoaded);
  loader.Release();
}

}  // namespace
}  // namespace emu
}  // namespace flightrec

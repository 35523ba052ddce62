// The one way unit tests load the built plugin: every scenario runs in a
// forked child (the recorder is process-global), which sets the recorder's
// environment, dlopens libnccl-profiler-flightrec.so as NCCL does
// (RTLD_NOW | RTLD_LOCAL) and runs the scenario; the parent reads the ring
// file the child left in the test's directory. Header-only: the plugin path
// is the including test's FLIGHTREC_PLUGIN_PATH.
#ifndef FLIGHTREC_TESTS_SUPPORT_PLUGIN_CHILD_H_
#define FLIGHTREC_TESTS_SUPPORT_PLUGIN_CHILD_H_

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "support/files.h"
#include "support/ring_image.h"

#ifndef FLIGHTREC_PLUGIN_PATH
#error "FLIGHTREC_PLUGIN_PATH must name the built plugin"
#endif

namespace flightrec {
namespace testing {

using PluginEnv = std::vector<std::pair<std::string, std::string>>;

// Child exit codes of the loader (a scenario's own codes stay below 90).
constexpr int kChildNoPlugin = 90;   // dlopen of the plugin failed
constexpr int kChildNoPreload = 91;  // dlopen of `preload` failed
constexpr int kChildWaitFailed = 99;
constexpr int kChildSignalBase = 100;  // + signal number when it died

// In a child's scenario: returns `code` (and says which step failed) unless
// `cond` holds. Scenario codes stay below kChildNoPlugin.
#define CHILD_REQUIRE(cond, code)                                   \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "child: %s failed (code %d)\n", #cond, code); \
      return code;                                                  \
    }                                                               \
  } while (0)

// Runs body(plugin_lib, preload_lib) in a forked child and returns its exit
// code. The child writes its ring and dumps to `dir` with 64 records, no
// dump on exit, no trigger, a one-hour hang timeout and job id "plugintest";
// `env` is set after (and so overrides) that. `preload`, when not null, is
// dlopened before the plugin (e.g. the emulator's fake libcuda.so.1).
template <typename Body>
int RunPluginInChild(const std::string& dir, const PluginEnv& env, const char* preload, Body body) {
  fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    const PluginEnv base = {{"NCCL_FLIGHTREC_DIR", dir},
                            {"NCCL_FLIGHTREC_DUMP_DIR", dir},
                            {"NCCL_FLIGHTREC_RECORDS", "64"},
                            {"NCCL_FLIGHTREC_DUMP_ON_EXIT", "0"},
                            {"NCCL_FLIGHTREC_TRIGGER", "0"},
                            {"NCCL_FLIGHTREC_TIMEOUT_S", "3600"},
                            {"NCCL_FLIGHTREC_JOB_ID", "plugintest"},
                            {"NCCL_FLIGHTREC_ENABLE", "1"}};
    unsetenv("NCCL_FLIGHTREC_EVENT_MASK");
    unsetenv("NCCL_FLIGHTREC_NET_STEPS");
    for (const auto& kv : base) setenv(kv.first.c_str(), kv.second.c_str(), 1);
    for (const auto& kv : env) setenv(kv.first.c_str(), kv.second.c_str(), 1);
    void* preload_lib = nullptr;
    if (preload != nullptr && (preload_lib = dlopen(preload, RTLD_NOW | RTLD_LOCAL)) == nullptr) {
      fprintf(stderr, "child: dlopen %s: %s\n", preload, dlerror());
      _exit(kChildNoPreload);
    }
    void* lib = dlopen(FLIGHTREC_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      fprintf(stderr, "child: dlopen: %s\n", dlerror());
      _exit(kChildNoPlugin);
    }
    const int code = body(lib, preload_lib);
    fflush(nullptr);
    _exit(code);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return kChildWaitFailed;
  if (WIFSIGNALED(status)) return kChildSignalBase + WTERMSIG(status);
  return WEXITSTATUS(status);
}

// A fresh directory per test for the child's ring, removed after it.
class PluginChildTest : public ::testing::Test {
 protected:
  explicit PluginChildTest(std::string tag) : tag_(std::move(tag)) {}
  void SetUp() override {
    dir_ = MakeTempDir(tag_);
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override {
    const std::string cmd = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(system(cmd.c_str()), 0);
  }

  // Loads the ring the child left and names its one claimed region.
  bool LoadRing(RingImage* ring, uint32_t* region) {
    std::string error;
    if (!ring->Load(dir_, &error)) {
      ADD_FAILURE() << error;
      return false;
    }
    const int used = ring->OnlyUsedRegion();
    if (used < 0) ADD_FAILURE() << "expected exactly one claimed region";
    *region = static_cast<uint32_t>(used);
    return used >= 0;
  }

  std::string tag_;
  std::string dir_;
};

}  // namespace testing
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_SUPPORT_PLUGIN_CHILD_H_

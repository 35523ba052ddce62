// NCCL's process-wide profiler plugin state (docs/design/nccl.md §Loading): load
// on the first communicator init, take the newest ncclProfiler_vN the release
// knows, count one reference per init, dlclose at the last release, and
// never retry after a failed load.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_PLUGIN_LOADER_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_PLUGIN_LOADER_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "emulator/src/nccl_version.h"
#include "support/profiler_shim.h"

namespace flightrec {
namespace emu {

class PluginLoader {
 public:
  enum class Status { kReady, kLoaded, kFailed, kDisabled };

  PluginLoader(const NcclVersion& v, int forced_api) : version_(v), forced_api_(forced_api) {}
  ~PluginLoader();

  // One comm init: loads on first use (reading NCCL_PROFILER_PLUGIN then),
  // takes a reference and returns the shim, or nullptr when there is no
  // usable plugin (the reason was logged once).
  const ProfilerShim* Acquire();
  // Drops one reference; the last one dlcloses the library and resets the
  // status to kReady, so a later init reloads it with fresh static state.
  void Release();
  // nccl.md §Loading, NCCL <= 2.27: a failed init clears the global table for good.
  void DisableTable();

  Status status() const;
  // Lock-free check done before every event: false once the table is
  // cleared (nccl.md §Loading) or unloaded.
  bool live() const { return live_.load(std::memory_order_acquire); }
  int refcount() const;
  std::string library() const;  // the name that was opened

 private:
  bool LoadLocked();

  NcclVersion version_;
  int forced_api_;
  mutable std::mutex mu_;
  Status status_ = Status::kReady;
  void* handle_ = nullptr;
  int refs_ = 0;
  std::string library_;
  std::unique_ptr<ProfilerShim> shim_;
  // Kept after dlclose: a comm that still holds it (2.30.3's double unload)
  // then crashes inside the unmapped plugin, as with NCCL, not in freed memory.
  std::vector<std::unique_ptr<ProfilerShim>> retired_;
  std::atomic<bool> live_{false};  // release on change, acquire in live()
};

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_PLUGIN_LOADER_H_

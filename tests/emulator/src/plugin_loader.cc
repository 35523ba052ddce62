#include "emulator/src/plugin_loader.h"

#include <dlfcn.h>

#include <cstdlib>

#include "emulator/src/nccl_logger.h"

namespace flightrec {
namespace emu {

PluginLoader::~PluginLoader() {
  // A process that never destroyed its comms keeps the library, as NCCL does.
}

bool PluginLoader::LoadLocked() {
  bool disabled = false;
  const char* env = std::getenv("NCCL_PROFILER_PLUGIN");
  std::vector<LibCandidate> names = LibraryCandidates(env, version_, &disabled);
  if (disabled) {
    EMU_INFO("Profiler plugin disabled by NCCL_PROFILER_PLUGIN=%s", env);
    status_ = Status::kDisabled;
    return false;
  }
  std::string errors;
  for (const LibCandidate& c : names) {
    handle_ = dlopen(c.use_null ? nullptr : c.name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ != nullptr) {
      library_ = c.use_null ? "(main program)" : c.name;
      break;
    }
    const char* e = dlerror();
    errors += std::string(errors.empty() ? "" : "; ") + (e != nullptr ? e : c.name);
  }
  if (handle_ == nullptr) {
    EMU_INFO("Could not find profiler plugin (%s)", errors.c_str());
    status_ = Status::kFailed;
    return false;
  }
  for (int api : SymbolLookupOrder(version_, forced_api_)) {
    std::string sym = "ncclProfiler_v" + std::to_string(api);
    void* table = dlsym(handle_, sym.c_str());
    if (table == nullptr) continue;
    shim_.reset(new ProfilerShim(table, api, MaxProfilerApi(version_)));
    EMU_INFO("PROFILER/Plugin: Loaded %s (%s) from %s", shim_->name(), sym.c_str(),
             library_.c_str());
    status_ = Status::kLoaded;
    live_.store(true, std::memory_order_release);  // pairs with live()
    return true;
  }
  EMU_INFO("PROFILER/Plugin: %s has no ncclProfiler_vN symbol NCCL %s knows", library_.c_str(),
           version_.ToString().c_str());
  dlclose(handle_);
  handle_ = nullptr;
  status_ = Status::kFailed;
  return false;
}

const ProfilerShim* PluginLoader::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_ == Status::kFailed || status_ == Status::kDisabled) return nullptr;
  if (status_ == Status::kReady && !LoadLocked()) return nullptr;
  ++refs_;
  return shim_.get();
}

void PluginLoader::Release() {
  std::lock_guard<std::mutex> lock(mu_);
  if (status_ != Status::kLoaded) return;
  if (--refs_ > 0) return;
  live_.store(false, std::memory_order_release);  // pairs with live()
  dlclose(handle_);
  handle_ = nullptr;
  retired_.push_back(std::move(shim_));
  status_ = Status::kReady;
  refs_ = 0;
}

void PluginLoader::DisableTable() {
  std::lock_guard<std::mutex> lock(mu_);
  // NCCL clears the table pointer but keeps the library mapped.
  status_ = Status::kFailed;
  live_.store(false, std::memory_order_release);  // pairs with live()
}

PluginLoader::Status PluginLoader::status() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

int PluginLoader::refcount() const {
  std::lock_guard<std::mutex> lock(mu_);
  return refs_;
}

std::string PluginLoader::library() const {
  std::lock_guard<std::mutex> lock(mu_);
  return library_;
}

}  // namespace emu
}  // namespace flightrec

#include "recorder/host_info.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "recorder/config.h"

namespace flightrec {
namespace rec {
namespace {

using NcclGetVersionFn = int (*)(int*);
using CuCtxGetDeviceFn = int (*)(int*);
using CuDeviceGetPciBusIdFn = int (*)(char*, int, int);
using CuDeviceGetUuidFn = int (*)(unsigned char*, int);

void FillNcclVersion(format::FileHeader* h) {
  void* sym = dlsym(RTLD_DEFAULT, "ncclGetVersion");
  if (sym == nullptr) return;
  NcclGetVersionFn fn = nullptr;
  memcpy(&fn, &sym, sizeof(fn));
  int code = 0;
  if (fn(&code) != 0 || code <= 0) return;
  FormatNcclVersion(code, h->nccl_version, sizeof(h->nccl_version));
}

void FormatUuid(const unsigned char* u, char* out, size_t out_len) {
  snprintf(out, out_len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
           u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
           u[14], u[15]);
}

template <typename Fn>
Fn Sym(void* lib, const char* name) {
  void* sym = dlsym(lib, name);
  Fn fn = nullptr;
  if (sym != nullptr) memcpy(&fn, &sym, sizeof(fn));
  return fn;
}

// Only asks a driver that the host already loaded: loading libcuda
// ourselves would be slow and could create a context as a side effect.
void FillGpuFacts(format::FileHeader* h) {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (lib == nullptr) return;
  auto get_device = Sym<CuCtxGetDeviceFn>(lib, "cuCtxGetDevice");
  auto get_bus = Sym<CuDeviceGetPciBusIdFn>(lib, "cuDeviceGetPCIBusId");
  auto get_uuid = Sym<CuDeviceGetUuidFn>(lib, "cuDeviceGetUuid");
  int dev = -1;
  if (get_device != nullptr && get_device(&dev) == 0 && dev >= 0) {
    h->cuda_device = dev;
    char bus[sizeof(h->gpu_pci_bus_id)] = {};
    if (get_bus != nullptr && get_bus(bus, static_cast<int>(sizeof(bus)), dev) == 0) {
      bus[sizeof(bus) - 1] = '\0';
      memcpy(h->gpu_pci_bus_id, bus, sizeof(bus));
    }
    unsigned char uuid[16] = {};
    if (get_uuid != nullptr && get_uuid(uuid, dev) == 0) {
      FormatUuid(uuid, h->gpu_uuid, sizeof(h->gpu_uuid));
    }
  }
  dlclose(lib);  // drops only the reference RTLD_NOLOAD took
}

}  // namespace

void FormatNcclVersion(int code, char* out, size_t out_len) {
  int major = 0, minor = 0, patch = 0;
  if (code >= 10000) {
    major = code / 10000;
    minor = (code % 10000) / 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
  }
  patch = code % 100;
  snprintf(out, out_len, "%d.%d.%d", major, minor, patch);
}

void FillHostFacts(format::FileHeader* h) {
  h->cuda_device = -1;
  FillNcclVersion(h);
  FillGpuFacts(h);
}

}  // namespace rec
}  // namespace flightrec

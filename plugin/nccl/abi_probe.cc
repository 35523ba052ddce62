// The generator of the layout pins: re-derives every pin of abi_pins.inc
// from the headers it is compiled against and prints it in the table's own
// form, one pin a line.
//   Built by default against our declarations (profiler_abi.h): the
//   nccl_abi_probe test checks the output equals abi_pins.inc line for line.
//   Built against NCCL's own headers, it prints the table NCCL's layout
//   gives (docs/design/nccl.md §Adding a profiler version):
//     g++ -std=c++17 -DFLIGHTREC_PROBE_NCCL -I. -I<nccl>/ext-profiler/example/nccl
//         plugin/nccl/abi_probe.cc -o abi_probe && ./abi_probe
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef FLIGHTREC_PROBE_NCCL
#include "plugin/nccl/abi_probe_nccl.h"
#define FR_PROBE_VALUE(ours, nccl) (nccl)
#else
#include "plugin/nccl/profiler_abi.h"
using namespace flightrec::nccl_abi;  // NOLINT(google-build-using-namespace)
#define FR_PROBE_VALUE(ours, nccl) (ours)
#endif

namespace {

void Print(const char* macro, const char* first, const char* second, long long value) {
  if (second != nullptr) {
    printf("%s(%s, %s, %lld)\n", macro, first, second, value);
  } else {
    printf("%s(%s, %lld)\n", macro, first, value);
  }
}

}  // namespace

int main() {
#define FR_PIN_VALUE(ours, nccl, value) \
  Print("FR_PIN_VALUE", #ours, #nccl, static_cast<long long>(FR_PROBE_VALUE(ours, nccl)));
#define FR_PIN_SIZE(type, bytes) Print("FR_PIN_SIZE", #type, nullptr, sizeof(type));
#define FR_PIN_ALIGN(type, bytes) Print("FR_PIN_ALIGN", #type, nullptr, alignof(type));
#define FR_PIN_OFFSET(type, member, offset) \
  Print("FR_PIN_OFFSET", #type, #member, offsetof(type, member));
#define FR_PIN_FIELD_SIZE(type, member, bytes) \
  Print("FR_PIN_FIELD_SIZE", #type, #member, sizeof(type::member));
#include "plugin/nccl/abi_pins.inc"
  return 0;
}

// The layout pins (abi_pins.inc) as compile-time checks: a declaration in
// profiler_v1.h .. profiler_v7.h that drifts from NCCL's layout fails the
// build instead of corrupting a descriptor at run time. Compiled into the
// plugin; defines nothing.
#include <stddef.h>
#include <stdint.h>

#include "plugin/nccl/profiler_abi.h"

namespace flightrec {
namespace nccl_abi {

#define FR_PIN_VALUE(ours, nccl, value) static_assert((ours) == (value), #nccl);
#define FR_PIN_SIZE(type, bytes) static_assert(sizeof(type) == (bytes), #type " size");
#define FR_PIN_ALIGN(type, bytes) static_assert(alignof(type) == (bytes), #type " align");
#define FR_PIN_OFFSET(type, member, offset) \
  static_assert(offsetof(type, member) == (offset), #type "." #member " offset");
#define FR_PIN_FIELD_SIZE(type, member, bytes) \
  static_assert(sizeof(type::member) == (bytes), #type "." #member " size");
#include "plugin/nccl/abi_pins.inc"

}  // namespace nccl_abi
}  // namespace flightrec

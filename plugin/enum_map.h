// NCCL descriptor values -> format:: enums.
//
// v2+ descriptors name func/datatype/algo/proto with strings that point into
// libnccl's static tables, so the same few pointers repeat forever. Each
// category keeps a tiny lock-free cache keyed by the pointer value; a miss
// takes the strcmp slow path (out of line) once per distinct pointer. v1
// descriptors carry NCCL's own uint8_t codes, mapped through fixed tables.
#ifndef FLIGHTREC_PLUGIN_ENUM_MAP_H_
#define FLIGHTREC_PLUGIN_ENUM_MAP_H_

#include <stdint.h>

namespace flightrec {
namespace plugin {

enum class NameKind : uint8_t { kFunc = 0, kDataType = 1, kAlgo = 2, kProto = 3, kCount = 4 };

// Hot path: no lock, no allocation, no syscall, no exception, bounded work
// (at most kNameCacheSlots relaxed loads; a miss runs the bounded strcmp
// slow path once per distinct pointer). Returns 0 (the format's "unknown")
// for NULL or unrecognised strings.
uint8_t MapName(NameKind kind, const char* name);

// v1 codes (nccl_abi::v1) -> format enums; out-of-range codes give 0.
uint8_t MapV1Func(uint8_t code);
uint8_t MapV1DataType(uint8_t code);
uint8_t MapV1Algo(uint8_t code);
uint8_t MapV1Proto(uint8_t code);

}  // namespace plugin
}  // namespace flightrec

#endif  // FLIGHTREC_PLUGIN_ENUM_MAP_H_

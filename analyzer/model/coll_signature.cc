#include "analyzer/model/coll_signature.h"

#include "flightrec/record_format.h"

namespace flightrec {
namespace analysis {
namespace {

// splitmix64's finalizer: every input bit reaches every output bit.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

bool Rooted(uint8_t func) {
  return func == format::kFuncBroadcast || func == format::kFuncReduce ||
         func == format::kFuncGather || func == format::kFuncScatter;
}

CollSig SigOf(const OpRecord& r) {
  const uint32_t root = Rooted(r.func) ? static_cast<uint32_t>(r.root_or_peer) : 0;
  // A copy-engine collective is another op than the kernel one of the same
  // arguments (NCCL picks one per comm; members that differ would hang).
  const uint64_t ce = r.is_copy_engine() ? uint64_t{1} << 48 : 0;
  const uint64_t small = uint64_t{r.func} | uint64_t{r.datatype} << 8 | uint64_t{root} << 16 | ce;
  const uint64_t h = Mix(Mix(r.count) ^ small);
  uint32_t hash = static_cast<uint32_t>(h ^ (h >> 32)) & CollSig::kHashMask;
  if (hash == 0) hash = 1;
  const uint32_t api = r.api_datatype < format::kNumDataTypes ? r.api_datatype : 0;
  return CollSig{hash | api << CollSig::kHashBits, static_cast<uint32_t>(r.nccl_seq)};
}

}  // namespace analysis
}  // namespace flightrec

// What makes two members' collectives "the same op": the arguments the
// user passed (func, count, datatype and, for rooted funcs, the root). Both
// the mismatch and the shift detectors compare these, on full records or
// on the signatures a windowed load keeps for older ops. The Coll event's
// own fields are hashed; the API-level datatype (Record::api_datatype) is
// kept beside the hash, because only records that have one can be compared
// on it: the mismatch detector compares it at an index only when every
// member's record there has one (docs/analyzer.md, `mismatch`).
#ifndef FLIGHTREC_ANALYZER_MODEL_COLL_SIGNATURE_H_
#define FLIGHTREC_ANALYZER_MODEL_COLL_SIGNATURE_H_

#include <stdint.h>

#include "analyzer/reader/snapshot.h"

namespace flightrec {
namespace analysis {

// Funcs whose root_or_peer is a root every member must agree on.
bool Rooted(uint8_t func);

// The signature of a collective record: never 0 (0 marks "not held"). Two
// records with equal arguments have equal hashes (CollSig::hash); different
// ones collide with probability 2^-28, which can only hide a difference.
CollSig SigOf(const OpRecord& r);

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_COLL_SIGNATURE_H_

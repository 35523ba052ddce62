// Completion inferred from stream order, for ops recorded with
// kFlagNoCompletion: copy-engine collectives of a process without a CUDA
// driver the plugin could use (docs/design/recorder.md §Copy-engine
// completion), and any other op no event can mark done. Work on one CUDA
// stream runs in order, so an op is done once a later op on the same stream
// (any communicator of the process) has started; and a communicator
// finalized without work in flight (no kRegionEndedInFlight) finished all
// of its ops.
#ifndef FLIGHTREC_ANALYZER_READER_STREAM_ORDER_H_
#define FLIGHTREC_ANALYZER_READER_STREAM_ORDER_H_

#include "analyzer/reader/snapshot.h"

namespace flightrec {

// Moves such ops of `process` to kOpDone (their kFlagNoCompletion stays, so
// reports can say the completion was inferred). Returns how many it moved.
size_t InferStreamOrderCompletion(ProcessSnapshot* process);

}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_STREAM_ORDER_H_

// PyTorch FR dumps (analyzer/reader/fr_reader.h): fuzzer bytes are a whole
// dump file, pickle or JSON. The decoder and the mapping must reject any
// input they cannot read with a message naming it, never crash, hang or
// allocate from a declared size, and whatever they accept must hold
// together (ranks inside their groups, records in order, frame indices in
// the table).
#include <string>

#include "analyzer/reader/fr_pickle.h"
#include "analyzer/reader/fr_reader.h"
#include "tests/fuzz/harnesses.h"

namespace flightrec {
namespace fuzz {

std::string FuzzFrPickle(const uint8_t* data, size_t size) {
  fr::ReadOptions options;
  options.pickle.max_input = 16u << 20;
  options.pickle.max_nodes = 1u << 20;
  options.pickle.max_string = 1u << 20;
  options.max_entries = 1u << 16;
  // The decoder alone, then the reader (PROTO 2 prefixed when missing, so
  // that mutations of a JSON seed reach the pickle path too).
  fr::PickleResult p = fr::DecodePickle(data, size, options.pickle);
  if (!p.ok && p.error.rfind("byte ", 0) != 0 &&
      p.error.find("larger than the limit") == std::string::npos) {
    return "decoder error does not name the byte: " + p.error;
  }
  if (p.ok && p.doc.root() >= p.doc.size()) return "root outside the document";
  ReadResult r = fr::ReadFrBytes(data, size, "fuzz_rank_0", options);
  if (!r.ok) return r.error.rfind("fuzz_rank_0: ", 0) == 0 ? "" : "error does not name the input";
  const ProcessSnapshot& s = r.snapshot;
  if (!s.pytorch_fr) return "an FR snapshot without its FR info";
  const PytorchFrInfo& info = *s.pytorch_fr;
  for (const CommSnapshot& c : s.comms) {
    if (c.rank < 0 || c.rank >= c.nranks) return "comm rank outside the group";
    for (size_t k = 1; k < c.records.size(); ++k) {
      if (c.records[k - 1].slot_seq > c.records[k].slot_seq) return "records out of order";
    }
    for (const OpRecord& op : c.records) {
      if (op.is_p2p() && (op.root_or_peer < 0 || op.root_or_peer >= c.nranks)) {
        return "p2p peer outside the group";
      }
      if (!op.is_p2p() && op.op_index >= c.coll_count) return "op index past coll_count";
    }
  }
  for (size_t k = 0; k < info.entries.size(); ++k) {
    const FrEntryInfo& e = info.entries[k];
    if (k > 0 && info.entries[k - 1].record_id > e.record_id) return "entries out of order";
    if (e.comm < 0 || static_cast<size_t>(e.comm) >= s.comms.size()) return "entry comm";
    for (uint32_t f : e.frames) {
      if (f >= info.frames.size()) return "frame index outside the table";
    }
  }
  std::string what;
  FrCurrentFrames(s, 8, &what);
  return "";
}

}  // namespace fuzz
}  // namespace flightrec

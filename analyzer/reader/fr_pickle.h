// A bounded decoder of the pickle subset PyTorch's Flight Recorder writes
// (docs/design/pytorch-fr.md, "The pickle"): dicts, lists, tuples, strings,
// ints, floats, booleans and None, with the memo opcodes. Nothing is
// executed and no object is constructed: GLOBAL, REDUCE, BUILD, NEWOBJ,
// PERSID and every opcode outside the subset reject the input, naming the
// opcode and its byte offset.
//
// Guarantees: never crashes, never reads outside the input, never allocates
// from an unchecked length. Every value costs one node and every node costs
// at least one input byte, so memory is linear in the input; the limits
// below bound what one file may claim. Strings are views into the input,
// which must outlive the result.
#ifndef FLIGHTREC_ANALYZER_READER_FR_PICKLE_H_
#define FLIGHTREC_ANALYZER_READER_FR_PICKLE_H_

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

namespace flightrec {
namespace fr {

struct PickleLimits {
  uint64_t max_input = 1ULL << 30;           // bytes
  uint32_t max_nodes = 64u << 20;            // values in all
  uint32_t max_mark_depth = 256;             // nested MARKs (containers being built)
  uint32_t max_stack = 1u << 20;             // values on the stack at once
  uint32_t max_memo = 16u << 20;             // memo slots (BINPUT index + 1)
  uint64_t max_string = 64ULL << 20;         // bytes in one string
  uint32_t max_container_items = 16u << 20;  // items in one list/tuple/dict (dict: pairs)
};

enum class Kind : uint8_t { kNone, kBool, kInt, kFloat, kString, kList, kTuple, kDict };
const char* KindName(Kind kind);

// One decoded value. Containers hold node indices (dicts: key, value,
// key, value...). A memoized value read again (BINGET) is the same node, so
// the graph may share nodes (and, from a hostile input, hold cycles):
// walk it with bounded loops only.
struct Node {
  Kind kind = Kind::kNone;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string_view s;
  std::vector<uint32_t> items;
};

class PickleDoc {
 public:
  const Node& node(uint32_t index) const { return nodes_[index]; }
  uint32_t root() const { return root_; }
  size_t size() const { return used_; }

  // Lookups that check kinds: nullptr when `dict` is not a dict or has no
  // string key `key` (the last of equal keys wins, as in Python).
  const Node* Get(const Node& dict, std::string_view key) const;

  // Frees the kept nodes when more than `max_nodes` are held (a reused
  // document does not keep a huge file's memory for good).
  void Trim(size_t max_nodes) {
    if (nodes_.size() <= max_nodes) return;
    std::vector<Node>().swap(nodes_);
    used_ = 0;
  }

 private:
  friend class Decoder;
  // Nodes [0, used_) are this document's; the rest are kept (with their
  // items' capacity) for the next document decoded into this one.
  std::vector<Node> nodes_;
  size_t used_ = 0;
  uint32_t root_ = 0;
};

struct PickleResult {
  bool ok = false;
  PickleDoc doc;
  std::string error;  // "byte 123: unsupported opcode 0x63 (GLOBAL)"
  uint8_t protocol = 0;
};

PickleResult DecodePickle(const uint8_t* data, size_t size, const PickleLimits& limits = {});
// The same into *doc, whose memory is reused (one per reading thread):
// false with *error on failure.
bool DecodePickleInto(const uint8_t* data, size_t size, const PickleLimits& limits, PickleDoc* doc,
                      std::string* error, uint8_t* protocol = nullptr);

// Whether the first bytes look like the start of a pickle of protocol 2 or
// later (PROTO n, 2 <= n <= 5): how FR dumps are recognized by content.
bool LooksLikePickle(const uint8_t* data, size_t size);

}  // namespace fr
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_READER_FR_PICKLE_H_

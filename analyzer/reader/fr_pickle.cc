#include "analyzer/reader/fr_pickle.h"

#include <string.h>

#include <utility>

namespace flightrec {
namespace fr {

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kNone:
      return "None";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kFloat:
      return "float";
    case Kind::kString:
      return "str";
    case Kind::kList:
      return "list";
    case Kind::kTuple:
      return "tuple";
    case Kind::kDict:
      return "dict";
  }
  return "?";
}

const Node* PickleDoc::Get(const Node& dict, std::string_view key) const {
  if (dict.kind != Kind::kDict) return nullptr;
  const Node* found = nullptr;
  for (size_t k = 0; k + 1 < dict.items.size(); k += 2) {
    const Node& key_node = nodes_[dict.items[k]];
    if (key_node.kind == Kind::kString && key_node.s == key) found = &nodes_[dict.items[k + 1]];
  }
  return found;
}

bool LooksLikePickle(const uint8_t* data, size_t size) {
  return size >= 2 && data[0] == 0x80 && data[1] >= 2 && data[1] <= 5;
}

namespace {

// Opcodes of the subset (Python's Lib/pickle.py names them).
enum Op : uint8_t {
  kMark = '(',
  kStop = '.',
  kBinFloat = 'G',
  kBinInt = 'J',
  kBinInt1 = 'K',
  kBinInt2 = 'M',
  kNoneOp = 'N',
  kBinUnicode = 'X',
  kEmptyList = ']',
  kAppend = 'a',
  kAppends = 'e',
  kBinGet = 'h',
  kLongBinGet = 'j',
  kBinPut = 'q',
  kLongBinPut = 'r',
  kSetItem = 's',
  kTuple = 't',
  kSetItems = 'u',
  kEmptyDict = '}',
  kEmptyTuple = ')',
  kProto = 0x80,
  kTuple1 = 0x85,
  kTuple2 = 0x86,
  kTuple3 = 0x87,
  kNewTrue = 0x88,
  kNewFalse = 0x89,
  kLong1 = 0x8a,
  kShortBinUnicode = 0x8c,
  kBinUnicode8 = 0x8d,
  kMemoize = 0x94,
  kFrame = 0x95,
};

// Names of opcodes outside the subset that a pickle commonly holds, for the
// rejection message.
const char* ForeignOpName(uint8_t op) {
  switch (op) {
    case 'c':
      return "GLOBAL";
    case 0x93:
      return "STACK_GLOBAL";
    case 'R':
      return "REDUCE";
    case 'b':
      return "BUILD";
    case 0x81:
      return "NEWOBJ";
    case 0x92:
      return "NEWOBJ_EX";
    case 'i':
      return "INST";
    case 'o':
      return "OBJ";
    case 'P':
      return "PERSID";
    case 'Q':
      return "BINPERSID";
    case 'B':
    case 'C':
    case 0x8e:
      return "BINBYTES";
    case 'I':
      return "INT";
    case 'L':
      return "LONG";
    case 'S':
    case 'T':
    case 'U':
      return "STRING";
    case 'V':
      return "UNICODE";
    case 'F':
      return "FLOAT";
    case 'p':
      return "PUT";
    case 'g':
      return "GET";
    case 0x8b:
      return "LONG4";
    case 0x8f:
      return "EMPTY_SET";
    case 0x90:
      return "ADDITEMS";
    case 0x91:
      return "FROZENSET";
    case '0':
      return "POP";
    case '1':
      return "POP_MARK";
    case '2':
      return "DUP";
    default:
      return nullptr;
  }
}

std::string Hex(uint8_t b) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s = "0x";
  s += kDigits[b >> 4];
  s += kDigits[b & 15];
  return s;
}

}  // namespace

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size, const PickleLimits& limits, PickleDoc* doc)
      : p_(data), size_(size), limits_(limits), doc_(*doc) {
    doc_.used_ = 0;
    doc_.root_ = 0;
  }

  bool Run(std::string* error, uint8_t* protocol) {
    if (size_ > limits_.max_input) {
      *error = "file of " + std::to_string(size_) + " bytes is larger than the limit of " +
               std::to_string(limits_.max_input);
      return false;
    }
    if (!Loop(protocol)) {
      *error = "byte " + std::to_string(op_pos_) + ": " + error_;
      doc_.used_ = 0;
      return false;
    }
    return true;
  }

 private:
  bool Fail(std::string what) {
    error_ = std::move(what);
    return false;
  }
  bool Need(uint64_t n) {
    if (n > size_ - pos_) {
      return Fail("truncated: " + std::to_string(n) + " bytes needed, " +
                  std::to_string(size_ - pos_) + " left");
    }
    return true;
  }
  uint64_t ReadLe(unsigned n) {
    uint64_t v = 0;
    for (unsigned k = 0; k < n; ++k) v |= static_cast<uint64_t>(p_[pos_ + k]) << (8 * k);
    pos_ += n;
    return v;
  }
  bool NewNode(Kind kind, uint32_t* index) {
    if (doc_.used_ >= limits_.max_nodes) {
      return Fail("more than " + std::to_string(limits_.max_nodes) + " values");
    }
    *index = static_cast<uint32_t>(doc_.used_);
    if (doc_.used_ == doc_.nodes_.size()) doc_.nodes_.emplace_back();
    Node& n = doc_.nodes_[doc_.used_++];
    n.kind = kind;
    n.b = false;
    n.i = 0;
    n.f = 0;
    n.s = std::string_view();
    n.items.clear();
    return true;
  }
  bool Push(uint32_t index) {
    if (stack_.size() >= limits_.max_stack) {
      return Fail("more than " + std::to_string(limits_.max_stack) + " values on the stack");
    }
    stack_.push_back(index);
    return true;
  }
  bool PushNew(Kind kind, Node** out) {
    uint32_t index = 0;
    if (!NewNode(kind, &index) || !Push(index)) return false;
    *out = &doc_.nodes_[index];
    return true;
  }
  bool PopMark(size_t* mark) {
    if (marks_.empty()) return Fail("no MARK to close");
    *mark = marks_.back();
    marks_.pop_back();
    return true;
  }
  // The container the items at stack_[from..] go into: stack_[from - 1].
  bool Target(size_t from, Kind want, Node** out) {
    if (from == 0 || from > stack_.size()) return Fail("nothing below the items to add them to");
    Node& target = doc_.nodes_[stack_[from - 1]];
    if (target.kind != want) {
      return Fail(std::string("adding items to a ") + KindName(target.kind) + ", not a " +
                  KindName(want));
    }
    *out = &target;
    return true;
  }
  bool AddItems(size_t from, Kind want) {
    Node* target = nullptr;
    if (!Target(from, want, &target)) return false;
    const size_t n = stack_.size() - from;
    if (want == Kind::kDict && n % 2 != 0) return Fail("odd number of items for SETITEMS");
    const uint64_t limit = want == Kind::kDict ? 2ULL * limits_.max_container_items
                                               : uint64_t{limits_.max_container_items};
    if (target->items.size() + n > limit) {
      return Fail(std::string("a ") + KindName(want) + " of more than " +
                  std::to_string(limits_.max_container_items) + " items");
    }
    target->items.insert(target->items.end(), stack_.begin() + static_cast<std::ptrdiff_t>(from),
                         stack_.end());
    stack_.resize(from);
    return true;
  }
  bool MakeTuple(size_t from) {
    if (from > stack_.size()) return Fail("stack underflow");
    const size_t n = stack_.size() - from;
    if (n > limits_.max_container_items) return Fail("a tuple of too many items");
    uint32_t index = 0;
    if (!NewNode(Kind::kTuple, &index)) return false;
    doc_.nodes_[index].items.assign(stack_.begin() + static_cast<std::ptrdiff_t>(from),
                                    stack_.end());
    stack_.resize(from);
    return Push(index);
  }
  bool String(uint64_t n) {
    if (n > limits_.max_string) {
      return Fail("a string of " + std::to_string(n) + " bytes (limit " +
                  std::to_string(limits_.max_string) + ")");
    }
    if (!Need(n)) return false;
    Node* node = nullptr;
    if (!PushNew(Kind::kString, &node)) return false;
    node->s = std::string_view(reinterpret_cast<const char*>(p_ + pos_), n);
    pos_ += n;
    return true;
  }
  bool Put(uint64_t slot) {
    if (stack_.empty()) return Fail("memo store with an empty stack");
    if (slot >= limits_.max_memo) {
      return Fail("memo slot " + std::to_string(slot) + " beyond the limit of " +
                  std::to_string(limits_.max_memo));
    }
    if (slot >= memo_.size()) memo_.resize(slot + 1, UINT32_MAX);
    memo_[slot] = stack_.back();
    return true;
  }
  bool GetMemo(uint64_t slot) {
    if (slot >= memo_.size() || memo_[slot] == UINT32_MAX) {
      return Fail("memo slot " + std::to_string(slot) + " read before it was stored");
    }
    return Push(memo_[slot]);
  }
  bool Int(int64_t v) {
    Node* node = nullptr;
    if (!PushNew(Kind::kInt, &node)) return false;
    node->i = v;
    return true;
  }

  bool Loop(uint8_t* protocol) {
    Node* node = nullptr;
    while (true) {
      op_pos_ = pos_;
      if (pos_ >= size_) return Fail("truncated: the pickle ends before STOP");
      const uint8_t op = p_[pos_++];
      switch (op) {
        case kProto:
          if (!Need(1)) return false;
          *protocol = p_[pos_++];
          if (*protocol < 2 || *protocol > 5) {
            return Fail("pickle protocol " + std::to_string(*protocol) + " (2 to 5 are read)");
          }
          break;
        case kFrame:  // protocol 4+: an 8-byte frame length, a hint only
          if (!Need(8)) return false;
          pos_ += 8;
          break;
        case kMark:
          if (marks_.size() >= limits_.max_mark_depth) {
            return Fail("MARKs nested deeper than " + std::to_string(limits_.max_mark_depth));
          }
          marks_.push_back(stack_.size());
          break;
        case kStop:
          if (stack_.size() != 1 || !marks_.empty()) {
            return Fail("STOP with " + std::to_string(stack_.size()) + " values on the stack and " +
                        std::to_string(marks_.size()) + " open MARKs");
          }
          doc_.root_ = stack_.back();
          return true;
        case kEmptyDict:
          if (!PushNew(Kind::kDict, &node)) return false;
          break;
        case kEmptyList:
          if (!PushNew(Kind::kList, &node)) return false;
          break;
        case kEmptyTuple:
          if (!PushNew(Kind::kTuple, &node)) return false;
          break;
        case kNoneOp:
          if (!PushNew(Kind::kNone, &node)) return false;
          break;
        case kNewTrue:
        case kNewFalse:
          if (!PushNew(Kind::kBool, &node)) return false;
          node->b = op == kNewTrue;
          break;
        case kBinInt1:
          if (!Need(1) || !Int(static_cast<int64_t>(ReadLe(1)))) return false;
          break;
        case kBinInt2:
          if (!Need(2) || !Int(static_cast<int64_t>(ReadLe(2)))) return false;
          break;
        case kBinInt:
          if (!Need(4) || !Int(static_cast<int32_t>(static_cast<uint32_t>(ReadLe(4))))) {
            return false;
          }
          break;
        case kLong1: {
          if (!Need(1)) return false;
          const unsigned n = p_[pos_++];
          if (n > 8) return Fail("LONG1 of " + std::to_string(n) + " bytes (at most 8 are read)");
          if (!Need(n)) return false;
          uint64_t v = ReadLe(n);
          if (n > 0 && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign
          if (!Int(static_cast<int64_t>(v))) return false;
          break;
        }
        case kBinFloat: {
          if (!Need(8)) return false;
          uint64_t bits = 0;
          for (int k = 0; k < 8; ++k) bits = (bits << 8) | p_[pos_ + k];  // big-endian
          pos_ += 8;
          if (!PushNew(Kind::kFloat, &node)) return false;
          memcpy(&node->f, &bits, sizeof(bits));
          break;
        }
        case kBinUnicode:
          if (!Need(4) || !String(ReadLe(4))) return false;
          break;
        case kShortBinUnicode:
          if (!Need(1) || !String(ReadLe(1))) return false;
          break;
        case kBinUnicode8:
          if (!Need(8) || !String(ReadLe(8))) return false;
          break;
        case kBinPut:
          if (!Need(1) || !Put(ReadLe(1))) return false;
          break;
        case kLongBinPut:
          if (!Need(4) || !Put(ReadLe(4))) return false;
          break;
        case kMemoize:
          if (!Put(memo_count_)) return false;
          ++memo_count_;
          break;
        case kBinGet:
          if (!Need(1) || !GetMemo(ReadLe(1))) return false;
          break;
        case kLongBinGet:
          if (!Need(4) || !GetMemo(ReadLe(4))) return false;
          break;
        case kAppend:
          if (stack_.size() < 2) return Fail("APPEND with fewer than 2 values on the stack");
          if (!AddItems(stack_.size() - 1, Kind::kList)) return false;
          break;
        case kSetItem:
          if (stack_.size() < 3) return Fail("SETITEM with fewer than 3 values on the stack");
          if (!AddItems(stack_.size() - 2, Kind::kDict)) return false;
          break;
        case kAppends:
        case kSetItems: {
          size_t mark = 0;
          if (!PopMark(&mark)) return false;
          if (!AddItems(mark, op == kAppends ? Kind::kList : Kind::kDict)) return false;
          break;
        }
        case kTuple: {
          size_t mark = 0;
          if (!PopMark(&mark) || !MakeTuple(mark)) return false;
          break;
        }
        case kTuple1:
        case kTuple2:
        case kTuple3: {
          const size_t n = static_cast<size_t>(op - kTuple1) + 1;
          if (stack_.size() < n) return Fail("TUPLE" + std::to_string(n) + ": stack underflow");
          if (!MakeTuple(stack_.size() - n)) return false;
          break;
        }
        default: {
          const char* name = ForeignOpName(op);
          return Fail("opcode " + Hex(op) +
                      (name != nullptr ? std::string(" (") + name + ")" : "") +
                      " is outside the Flight Recorder subset");
        }
      }
      // Items below an open MARK stay there: a MARK never sits above the stack.
      if (!marks_.empty() && marks_.back() > stack_.size()) {
        return Fail("the stack shrank below an open MARK");
      }
    }
  }

  const uint8_t* p_;
  size_t size_;
  size_t pos_ = 0;
  size_t op_pos_ = 0;
  PickleLimits limits_;
  PickleDoc& doc_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::vector<uint32_t> memo_;
  uint64_t memo_count_ = 0;
  std::string error_;
};

bool DecodePickleInto(const uint8_t* data, size_t size, const PickleLimits& limits, PickleDoc* doc,
                      std::string* error, uint8_t* protocol) {
  uint8_t proto = 0;
  return Decoder(data, size, limits, doc).Run(error, protocol != nullptr ? protocol : &proto);
}

PickleResult DecodePickle(const uint8_t* data, size_t size, const PickleLimits& limits) {
  PickleResult r;
  r.ok = DecodePickleInto(data, size, limits, &r.doc, &r.error, &r.protocol);
  return r;
}

}  // namespace fr
}  // namespace flightrec

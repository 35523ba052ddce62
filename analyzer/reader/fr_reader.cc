#include "analyzer/reader/fr_reader.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <deque>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analyzer/reader/file_read.h"
#include "flightrec/record_format.h"

namespace flightrec {

const FrEntryInfo* PytorchFrInfo::Entry(uint64_t record_id) const {
  auto it = std::lower_bound(entries.begin(), entries.end(), record_id,
                             [](const FrEntryInfo& e, uint64_t id) { return e.record_id < id; });
  return it != entries.end() && it->record_id == record_id ? &*it : nullptr;
}

const FrEntryInfo* PytorchFrInfo::Current() const {
  for (const FrEntryInfo& e : entries) {
    if (std::string_view(e.state) != "completed") return &e;
  }
  return entries.empty() ? nullptr : &entries.back();
}

std::string PytorchFrInfo::GroupName(int32_t group) const {
  if (group < 0 || static_cast<size_t>(group) >= groups.size()) return "?";
  const FrGroupInfo& g = groups[static_cast<size_t>(group)];
  if (!g.desc.empty() && g.desc != "undefined") return g.desc;
  return "pg " + g.name;
}

namespace fr {
namespace {

// What the reader takes from an entry, from the pickle or the JSON.
struct Entry {
  int64_t record_id = -1;
  std::string pg_name;
  std::string pg_desc;
  int64_t collective_seq_id = 0;
  int64_t p2p_seq_id = 0;
  std::string profiling_name;
  uint64_t time_created_ns = 0;
  uint64_t started_ns = 0;
  uint64_t completed_ns = 0;
  uint64_t count = 0;
  std::string dtype;
  int64_t timeout_ms = 0;
  bool is_p2p = false;
  bool is_p2p_known = false;
  int state = 0;                      // 0 scheduled, 1 started, 2 completed
  std::vector<uint32_t> frames;       // into Dump::frames
  uint32_t frames_node = UINT32_MAX;  // pickle: the entry's frames list, resolved when kept
};

struct Dump {
  std::string format;
  std::string version;
  std::string comm_lib_version;
  std::vector<FrGroupInfo> groups;
  std::vector<Entry> entries;
  std::vector<FrFrame> frames;
};

// Strings from the file go into reports and JSON: invalid UTF-8 and control
// characters become '?'.
std::string Clean(std::string_view in, size_t max = 4096) {
  std::string out;
  out.reserve(std::min(in.size(), max));
  for (size_t i = 0; i < in.size() && out.size() < max;) {
    const unsigned char c = static_cast<unsigned char>(in[i]);
    if (c < 0x80) {
      out += (c < 0x20 || c == 0x7f) ? '?' : static_cast<char>(c);
      ++i;
      continue;
    }
    size_t n = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    bool ok = n != 0 && i + n <= in.size();
    for (size_t k = 1; ok && k < n; ++k) {
      ok = (static_cast<unsigned char>(in[i + k]) & 0xc0) == 0x80;
    }
    if (ok) {
      out.append(in.data() + i, n);
      i += n;
    } else {
      out += '?';
      ++i;
    }
  }
  return out;
}

// "[0, 1, 2]" (pg_config's ranks) into numbers; false on anything else.
bool ParseRanks(std::string_view s, std::vector<int64_t>* out, size_t max) {
  size_t i = 0;
  auto skip = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  skip();
  if (i >= s.size() || s[i] != '[') return false;
  ++i;
  skip();
  if (i < s.size() && s[i] == ']') return true;
  while (i < s.size()) {
    skip();
    int64_t v = 0;
    size_t digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9' && digits < 12) {
      v = v * 10 + (s[i] - '0');
      ++i;
      ++digits;
    }
    if (digits == 0 || out->size() >= max) return false;
    out->push_back(v);
    skip();
    if (i < s.size() && s[i] == ',') {
      ++i;
      continue;
    }
    return i < s.size() && s[i] == ']';
  }
  return false;
}

int StateOf(std::string_view s) {
  if (s == "completed") return 2;
  if (s == "started") return 1;
  return 0;
}

uint64_t Positive(int64_t v) { return v > 0 ? static_cast<uint64_t>(v) : 0; }

// ---- pickle ----------------------------------------------------------------

class FromPickle {
 public:
  FromPickle(const PickleDoc& doc, const ReadOptions& options) : doc_(doc), options_(options) {}

  bool Run(Dump* dump, std::string* error) {
    const Node& root = doc_.node(doc_.root());
    if (root.kind != Kind::kDict) {
      *error = std::string("the pickle holds a ") + KindName(root.kind) +
               ", not the dict of a Flight Recorder dump";
      return false;
    }
    const Node* version = doc_.Get(root, "version");
    if (version == nullptr || version->kind != Kind::kString) {
      *error = "no 'version' string: not a Flight Recorder dump";
      return false;
    }
    dump->format = "pickle";
    dump->version = Clean(version->s, 64);
    if (const Node* v = doc_.Get(root, "comm_lib_version")) dump->comm_lib_version = Str(v, 256);
    if (const Node* cfg = doc_.Get(root, "pg_config")) {
      if (!Groups(*cfg, dump, error)) return false;
    }
    const Node* entries = doc_.Get(root, "entries");
    if (entries == nullptr) return true;  // a dump with nothing recorded
    if (entries->kind != Kind::kList) {
      *error = std::string("'entries' is a ") + KindName(entries->kind) + ", not a list";
      return false;
    }
    if (entries->items.size() > options_.max_entries) {
      *error = std::to_string(entries->items.size()) + " entries, more than the limit of " +
               std::to_string(options_.max_entries);
      return false;
    }
    dump->entries.reserve(entries->items.size());
    for (size_t k = 0; k < entries->items.size(); ++k) {
      const Node& e = doc_.node(entries->items[k]);
      if (e.kind != Kind::kDict) {
        *error = "entry " + std::to_string(k) + " is a " + KindName(e.kind) + ", not a dict";
        return false;
      }
      dump->entries.emplace_back();
      if (!OneEntry(e, &dump->entries.back(), error)) {
        *error = "entry " + std::to_string(k) + ": " + *error;
        return false;
      }
    }
    // Frames are resolved only for the entries a report can show: those
    // not completed and the newest of each process group.
    std::map<std::string, size_t> newest;
    for (size_t k = 0; k < dump->entries.size(); ++k) {
      const Entry& e = dump->entries[k];
      auto it = newest.find(e.pg_name);
      if (it == newest.end()) {
        newest.emplace(e.pg_name, k);
      } else if (dump->entries[it->second].record_id < e.record_id) {
        it->second = k;
      }
    }
    for (Entry& e : dump->entries) {
      if (e.state != 2) Frames(&e, dump);
    }
    for (const auto& [pg, k] : newest) Frames(&dump->entries[k], dump);
    return true;
  }

 private:
  // Strings are memoized in the pickle, so most entries' strings are the
  // same few nodes: each is cleaned once.
  const std::string& Str(const Node* n, size_t max = 4096) {
    static const std::string kEmpty;
    if (n == nullptr || n->kind != Kind::kString) return kEmpty;
    const size_t index = static_cast<size_t>(n - &doc_.node(0));
    if (str_of_.size() < doc_.size()) str_of_.resize(doc_.size(), UINT32_MAX);
    uint32_t& slot = str_of_[index];
    if (slot == UINT32_MAX || strs_[slot].second != max) {
      slot = static_cast<uint32_t>(strs_.size());
      strs_.emplace_back(Clean(n->s, max), max);
    }
    return strs_[slot].first;
  }
  void Frames(Entry* e, Dump* dump) {
    if (e->frames_node == UINT32_MAX || !e->frames.empty()) return;
    const Node& frames = doc_.node(e->frames_node);
    const size_t n = std::min<size_t>(frames.items.size(), options_.max_frames_per_entry);
    e->frames.reserve(n);
    for (size_t k = 0; k < n; ++k) {
      const uint32_t id = frames.items[k];
      auto it = frame_ids_.find(id);
      if (it == frame_ids_.end()) {
        const Node& f = doc_.node(id);
        if (f.kind != Kind::kDict) continue;
        FrFrame frame;
        frame.name = Str(doc_.Get(f, "name"), 256);
        frame.filename = Str(doc_.Get(f, "filename"), 1024);
        Int(doc_.Get(f, "line"), &frame.line);
        it = frame_ids_.emplace(id, static_cast<uint32_t>(dump->frames.size())).first;
        dump->frames.push_back(std::move(frame));
      }
      e->frames.push_back(it->second);
    }
  }
  static bool Int(const Node* n, int64_t* out) {
    if (n == nullptr || n->kind == Kind::kNone) return true;  // absent / unknown
    if (n->kind == Kind::kInt) {
      *out = n->i;
      return true;
    }
    if (n->kind == Kind::kBool) {
      *out = n->b ? 1 : 0;
      return true;
    }
    return false;
  }

  bool Groups(const Node& cfg, Dump* dump, std::string* error) {
    if (cfg.kind != Kind::kDict) {
      *error = std::string("'pg_config' is a ") + KindName(cfg.kind) + ", not a dict";
      return false;
    }
    for (size_t k = 0; k + 1 < cfg.items.size(); k += 2) {
      const Node& key = doc_.node(cfg.items[k]);
      const Node& value = doc_.node(cfg.items[k + 1]);
      FrGroupInfo g;
      g.name = Str(&key, 256);
      const Node* ranks = nullptr;
      if (value.kind == Kind::kDict) {
        if (const Node* n = doc_.Get(value, "name")) g.name = Str(n, 256);
        g.desc = Str(doc_.Get(value, "desc"), 256);
        ranks = doc_.Get(value, "ranks");
      } else if ((value.kind == Kind::kList || value.kind == Kind::kTuple) &&
                 value.items.size() == 2) {
        g.desc = Str(&doc_.node(value.items[0]), 256);  // older: (desc, ranks)
        ranks = &doc_.node(value.items[1]);
      }
      bool ok = ranks != nullptr;
      if (ok && ranks->kind == Kind::kString) {
        ok = ParseRanks(ranks->s, &g.ranks, options_.pickle.max_container_items);
      } else if (ok && ranks->kind == Kind::kList) {
        for (uint32_t r : ranks->items) {
          const Node& n = doc_.node(r);
          if (n.kind != Kind::kInt || n.i < 0) {
            ok = false;
            break;
          }
          g.ranks.push_back(n.i);
        }
      } else {
        ok = false;
      }
      if (!ok) {
        *error = "pg_config '" + g.name + "': no readable 'ranks'";
        return false;
      }
      dump->groups.push_back(std::move(g));
    }
    return true;
  }

  enum EntryKey : size_t {
    k_record_id,
    k_collective_seq_id,
    k_p2p_seq_id,
    k_time_created_ns,
    k_time_discovered_started_ns,
    k_time_discovered_completed_ns,
    k_timeout_ms,
    k_process_group,
    k_pg_id,
    k_profiling_name,
    k_state,
    k_is_p2p,
    k_input_sizes,
    k_input_dtypes,
    k_frames,
    kNumEntryKeys
  };
  static constexpr const char* kEntryKeyNames[kNumEntryKeys] = {
      "record_id",
      "collective_seq_id",
      "p2p_seq_id",
      "time_created_ns",
      "time_discovered_started_ns",
      "time_discovered_completed_ns",
      "timeout_ms",
      "process_group",
      "pg_id",
      "profiling_name",
      "state",
      "is_p2p",
      "input_sizes",
      "input_dtypes",
      "frames",
  };
  // The EntryKey of key node `node`, -1 for keys the reader does not use.
  int KeyId(uint32_t node) {
    auto it = key_ids_.find(node);
    if (it != key_ids_.end()) return it->second;
    int id = -1;
    const Node& n = doc_.node(node);
    for (size_t k = 0; n.kind == Kind::kString && k < kNumEntryKeys; ++k) {
      if (n.s == kEntryKeyNames[k]) id = static_cast<int>(k);
    }
    key_ids_.emplace(node, id);
    return id;
  }

  bool OneEntry(const Node& e, Entry* out, std::string* error) {
    struct IntKey {
      const char* key;
      size_t id;
      int64_t* dst;
    };
    // One pass over the entry's items; the keys are memoized strings, so
    // each distinct key node is compared with the names once per file.
    std::array<const Node*, kNumEntryKeys> field{};
    for (size_t k = 0; k + 1 < e.items.size(); k += 2) {
      const int id = KeyId(e.items[k]);
      if (id >= 0) field[static_cast<size_t>(id)] = &doc_.node(e.items[k + 1]);
    }
    int64_t created = 0, started = 0, completed = 0;
    const IntKey ints[] = {
        {"record_id", k_record_id, &out->record_id},
        {"collective_seq_id", k_collective_seq_id, &out->collective_seq_id},
        {"p2p_seq_id", k_p2p_seq_id, &out->p2p_seq_id},
        {"time_created_ns", k_time_created_ns, &created},
        {"time_discovered_started_ns", k_time_discovered_started_ns, &started},
        {"time_discovered_completed_ns", k_time_discovered_completed_ns, &completed},
        {"timeout_ms", k_timeout_ms, &out->timeout_ms}};
    for (const IntKey& k : ints) {
      if (!Int(field[k.id], k.dst)) {
        *error = std::string("'") + k.key + "' is not an integer";
        return false;
      }
    }
    out->time_created_ns = Positive(created);
    out->started_ns = Positive(started);
    out->completed_ns = Positive(completed);
    if (const Node* pg = field[k_process_group]) {
      if ((pg->kind == Kind::kTuple || pg->kind == Kind::kList) && pg->items.size() >= 1) {
        out->pg_name = Str(&doc_.node(pg->items[0]), 256);
        if (pg->items.size() >= 2) out->pg_desc = Str(&doc_.node(pg->items[1]), 256);
      } else if (pg->kind == Kind::kString) {
        out->pg_name = Str(pg, 256);
      } else {
        *error = std::string("'process_group' is a ") + KindName(pg->kind);
        return false;
      }
    } else {
      int64_t pg_id = -1;
      if (Int(field[k_pg_id], &pg_id) && pg_id >= 0) out->pg_name = std::to_string(pg_id);
    }
    out->profiling_name = Str(field[k_profiling_name], 256);
    out->state = StateOf(Str(field[k_state], 32));
    if (const Node* p2p = field[k_is_p2p]) {
      out->is_p2p_known = p2p->kind == Kind::kBool;
      out->is_p2p = p2p->kind == Kind::kBool && p2p->b;
    }
    // Elements: the sum over input tensors of the product of their sizes.
    const Node* sizes = field[k_input_sizes];
    if (sizes != nullptr && sizes->kind == Kind::kList) {
      uint64_t total = 0;
      const size_t tensors = std::min<size_t>(sizes->items.size(), 1024);
      for (size_t t = 0; t < tensors; ++t) {
        const Node& dims = doc_.node(sizes->items[t]);
        if (dims.kind != Kind::kList) continue;
        uint64_t n = 1;
        const size_t nd = std::min<size_t>(dims.items.size(), 16);
        for (size_t d = 0; d < nd; ++d) {
          const Node& v = doc_.node(dims.items[d]);
          const uint64_t dim = v.kind == Kind::kInt && v.i > 0 ? static_cast<uint64_t>(v.i) : 0;
          n = dim != 0 && n <= UINT64_MAX / dim ? n * dim : 0;
        }
        total += n;
      }
      out->count = total;
    }
    const Node* dtypes = field[k_input_dtypes];
    if (dtypes != nullptr && dtypes->kind == Kind::kList && !dtypes->items.empty()) {
      out->dtype = Str(&doc_.node(dtypes->items[0]), 32);
    }
    const Node* frames = field[k_frames];
    if (frames != nullptr && frames->kind == Kind::kList) {
      out->frames_node = static_cast<uint32_t>(frames - &doc_.node(0));
    }
    return true;
  }

  const PickleDoc& doc_;
  const ReadOptions& options_;
  std::unordered_map<uint32_t, uint32_t> frame_ids_;  // frame dict node -> Dump::frames
  std::unordered_map<uint32_t, int> key_ids_;         // key node -> EntryKey or -1
  std::vector<uint32_t> str_of_;                      // node -> strs_ index
  std::deque<std::pair<std::string, size_t>> strs_;   // cleaned strings, their limit
};

// ---- JSON ------------------------------------------------------------------

int64_t JsonInt(const nlohmann::json& j) {
  if (j.is_number_integer()) return j.get<int64_t>();
  if (j.is_number_unsigned())
    return static_cast<int64_t>(std::min<uint64_t>(j.get<uint64_t>(), INT64_MAX));
  if (j.is_boolean()) return j.get<bool>() ? 1 : 0;
  if (j.is_string()) {  // pg_status values are strings in JSON
    const std::string& s = j.get_ref<const std::string&>();
    int64_t v = 0;
    for (char c : s.substr(0, 18)) {
      if (c < '0' || c > '9') return 0;
      v = v * 10 + (c - '0');
    }
    return v;
  }
  return 0;
}

std::string JsonStr(const nlohmann::json& j, const char* key, size_t max = 4096) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return std::string();
  return Clean(it->get_ref<const std::string&>(), max);
}

bool FromJson(const nlohmann::json& root, const ReadOptions& options, Dump* dump,
              std::string* error) {
  if (!root.is_object() || !root.contains("version") || !root["version"].is_string()) {
    *error = "a JSON document without a 'version' string: not a Flight Recorder dump";
    return false;
  }
  dump->format = "json";
  dump->version = JsonStr(root, "version", 64);
  dump->comm_lib_version = JsonStr(root, "comm_lib_version", 256);
  auto cfg = root.find("pg_config");
  if (cfg != root.end() && cfg->is_object()) {
    for (auto it = cfg->begin(); it != cfg->end(); ++it) {
      FrGroupInfo g;
      g.name = Clean(it.key(), 256);
      if (!it->is_object()) continue;
      if (it->contains("name")) g.name = JsonStr(*it, "name", 256);
      g.desc = JsonStr(*it, "desc", 256);
      auto ranks = it->find("ranks");
      bool ok = ranks != it->end();
      if (ok && ranks->is_string()) {
        ok = ParseRanks(ranks->get_ref<const std::string&>(), &g.ranks, 1u << 24);
      } else if (ok && ranks->is_array()) {
        for (const auto& r : *ranks) g.ranks.push_back(JsonInt(r));
      } else {
        ok = false;
      }
      if (!ok) {
        *error = "pg_config '" + g.name + "': no readable 'ranks'";
        return false;
      }
      dump->groups.push_back(std::move(g));
    }
  }
  auto entries = root.find("entries");
  if (entries == root.end()) return true;
  if (!entries->is_array()) {
    *error = "'entries' is not a list";
    return false;
  }
  if (entries->size() > options.max_entries) {
    *error = std::to_string(entries->size()) + " entries, more than the limit";
    return false;
  }
  for (const auto& e : *entries) {
    if (!e.is_object()) {
      *error = "an entry that is not an object";
      return false;
    }
    Entry out;
    auto get = [&e](const char* k) -> int64_t {
      auto it = e.find(k);
      return it == e.end() ? 0 : JsonInt(*it);
    };
    out.record_id = e.contains("record_id") ? get("record_id") : -1;
    out.collective_seq_id = get("collective_seq_id");
    out.p2p_seq_id = get("p2p_seq_id");
    out.time_created_ns = Positive(get("time_created_ns"));
    out.started_ns = Positive(get("time_discovered_started_ns"));
    out.completed_ns = Positive(get("time_discovered_completed_ns"));
    out.timeout_ms = get("timeout_ms");
    auto pg = e.find("process_group");
    if (pg != e.end() && pg->is_array() && !pg->empty() && (*pg)[0].is_string()) {
      out.pg_name = Clean((*pg)[0].get_ref<const std::string&>(), 256);
      if (pg->size() >= 2 && (*pg)[1].is_string()) {
        out.pg_desc = Clean((*pg)[1].get_ref<const std::string&>(), 256);
      }
    } else if (e.contains("pg_id")) {
      out.pg_name = std::to_string(get("pg_id"));
    }
    out.profiling_name = JsonStr(e, "profiling_name", 256);
    out.state = StateOf(JsonStr(e, "state", 32));
    auto p2p = e.find("is_p2p");
    out.is_p2p_known = p2p != e.end() && p2p->is_boolean();
    out.is_p2p = out.is_p2p_known && p2p->get<bool>();
    auto sizes = e.find("input_sizes");
    if (sizes != e.end() && sizes->is_array()) {
      for (const auto& dims : *sizes) {
        if (!dims.is_array()) continue;
        uint64_t n = 1;
        for (const auto& d : dims) {
          const uint64_t dim = Positive(JsonInt(d));
          n = dim != 0 && n <= UINT64_MAX / dim ? n * dim : 0;
        }
        out.count += n;
      }
    }
    auto dtypes = e.find("input_dtypes");
    if (dtypes != e.end() && dtypes->is_array() && !dtypes->empty() && (*dtypes)[0].is_string()) {
      out.dtype = Clean((*dtypes)[0].get_ref<const std::string&>(), 32);
    }
    dump->entries.push_back(std::move(out));
  }
  return true;
}

// ---- mapping into the model -------------------------------------------------

struct TypeInfo {
  const char* name;
  uint8_t type;
  uint8_t size;
};
constexpr TypeInfo kTypes[] = {
    {"Float", format::kTypeFloat32, 4},
    {"Double", format::kTypeFloat64, 8},
    {"Half", format::kTypeFloat16, 2},
    {"BFloat16", format::kTypeBfloat16, 2},
    {"Int", format::kTypeInt32, 4},
    {"Long", format::kTypeInt64, 8},
    {"Byte", format::kTypeUint8, 1},
    {"Char", format::kTypeInt8, 1},
    {"Bool", format::kTypeUint8, 1},
    {"UInt32", format::kTypeUint32, 4},
    {"UInt64", format::kTypeUint64, 8},
    {"Float8_e4m3fn", format::kTypeFloat8e4m3, 1},
    {"Float8_e5m2", format::kTypeFloat8e5m2, 1},
};

const TypeInfo* TypeOf(const std::string& dtype) {
  for (const TypeInfo& t : kTypes) {
    if (dtype == t.name) return &t;
  }
  return nullptr;
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// "nccl:all_reduce", "nccl:_all_gather_base", "nccl:send 0->1", ...
uint8_t FuncOf(std::string_view name) {
  const size_t colon = name.find(':');
  if (colon != std::string_view::npos) name.remove_prefix(colon + 1);
  if (StartsWith(name, "_")) name.remove_prefix(1);
  if (StartsWith(name, "all_reduce") || StartsWith(name, "allreduce"))
    return format::kFuncAllReduce;
  if (StartsWith(name, "all_gather") || StartsWith(name, "allgather"))
    return format::kFuncAllGather;
  if (StartsWith(name, "reduce_scatter")) return format::kFuncReduceScatter;
  if (StartsWith(name, "all_to_all") || StartsWith(name, "alltoall")) return format::kFuncAllToAll;
  if (StartsWith(name, "broadcast")) return format::kFuncBroadcast;
  if (StartsWith(name, "reduce")) return format::kFuncReduce;
  if (StartsWith(name, "gather")) return format::kFuncGather;
  if (StartsWith(name, "scatter")) return format::kFuncScatter;
  if (StartsWith(name, "send")) return format::kFuncSend;
  if (StartsWith(name, "recv")) return format::kFuncRecv;
  return format::kFuncUnknown;
}

// The peer of "nccl:send 0->1" (1) or "nccl:recv 0<-1" (1): group ranks.
int32_t PeerOf(std::string_view name) {
  size_t at = name.rfind("->");
  if (at == std::string_view::npos) at = name.rfind("<-");
  if (at == std::string_view::npos) return -1;
  int64_t v = 0;
  size_t digits = 0;
  for (size_t i = at + 2; i < name.size() && name[i] >= '0' && name[i] <= '9' && digits < 9; ++i) {
    v = v * 10 + (name[i] - '0');
    ++digits;
  }
  return digits > 0 ? static_cast<int32_t>(v) : -1;
}

// The rank PyTorch appends to TORCH_FR_DUMP_TEMP_FILE: the number after the
// last "rank" (…rank_3, …rank3, …rank-3), else the name's trailing digits.
int64_t RankFromName(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  auto digits_at = [&base](size_t i) -> int64_t {
    int64_t v = 0;
    size_t n = 0;
    while (i < base.size() && std::isdigit(static_cast<unsigned char>(base[i])) && n < 9) {
      v = v * 10 + (base[i] - '0');
      ++i;
      ++n;
    }
    return n > 0 ? v : -1;
  };
  size_t at = base.rfind("rank");
  if (at != std::string::npos) {
    size_t i = at + 4;
    if (i < base.size() && (base[i] == '_' || base[i] == '-')) ++i;
    const int64_t v = digits_at(i);
    if (v >= 0) return v;
  }
  size_t i = base.size();
  while (i > 0 && std::isdigit(static_cast<unsigned char>(base[i - 1]))) --i;
  return i < base.size() && base.size() - i <= 9 ? digits_at(i) : -1;
}

uint64_t Fnv1a(const std::string& s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

std::string RanksText(const std::vector<int64_t>& ranks) {
  std::string s;
  for (int64_t r : ranks) s += std::to_string(r) + ",";
  return s;
}

std::string CommName(const FrGroupInfo& g) {
  if (!g.desc.empty() && g.desc != "undefined") return g.desc;
  return "pg " + g.name;
}

ReadResult Fail(const std::string& name, const std::string& problem) {
  ReadResult r;
  r.error = name + ": " + problem;
  return r;
}

ReadResult Map(Dump&& dump, const std::string& name, uint64_t file_size) {
  auto info = std::make_shared<PytorchFrInfo>();
  info->format = dump.format;
  info->path = name;
  info->version = dump.version;
  info->groups = std::move(dump.groups);
  if (info->groups.empty() && dump.entries.empty()) {
    return Fail(name, "a PyTorch Flight Recorder dump (" + info->format + ", version " +
                          info->version + ", " + std::to_string(file_size) +
                          " bytes) with no process group and no entry: nothing to analyze");
  }
  // The global rank: the one rank every process group of the file holds
  // (the file's process created only groups it is a member of), else the
  // number in the file's name, which must be one of them.
  std::set<int64_t> common;
  bool first = true;
  for (const FrGroupInfo& g : info->groups) {
    if (g.ranks.empty()) continue;
    std::set<int64_t> these(g.ranks.begin(), g.ranks.end());
    if (first) {
      common = std::move(these);
      first = false;
    } else {
      std::set<int64_t> both;
      std::set_intersection(common.begin(), common.end(), these.begin(), these.end(),
                            std::inserter(both, both.begin()));
      common = std::move(both);
    }
  }
  const int64_t named = RankFromName(name);
  if (common.size() == 1) {
    info->global_rank = *common.begin();
    info->rank_from = "the only rank in all of its process groups";
    if (named >= 0 && named != info->global_rank) {
      info->rank_from += " (its name says " + std::to_string(named) + ")";
    }
  } else if (named >= 0 && (first || common.count(named) != 0)) {
    info->global_rank = named;
    info->rank_from =
        "its name (" + std::to_string(common.size()) + " ranks are in all of its process groups)";
  } else {
    return Fail(
        name,
        std::string("a PyTorch Flight Recorder dump whose global rank cannot be "
                    "told: ") +
            (first ? "no process group lists ranks"
                   : std::to_string(common.size()) + " ranks are in all of its process groups") +
            (named >= 0 ? " and its name's rank " + std::to_string(named) + " is not one of them"
                        : " and its name carries no rank"));
  }

  ProcessSnapshot s;
  s.path = name;
  s.is_dump = true;
  s.file_kind = format::kFileKindDump;
  s.host = "pytorch-fr-rank-" + std::to_string(info->global_rank);
  s.pid = 0;
  s.plugin_version = "PyTorch Flight Recorder " + info->version + " (" + info->format + ")";
  s.nccl_version = dump.comm_lib_version;
  s.process_state = format::kProcessRunning;
  s.dump_reason = format::kDumpTimeout;
  s.dump_detail =
      "PyTorch Flight Recorder dump: no dump time in the file (the newest time it "
      "holds stands for it), discovery times are CPU-side";
  s.file_size = file_size;

  // One comm per process group the rank is in.
  std::vector<int32_t> group_of_comm;      // comm -> index into info->groups
  std::map<std::string, int32_t> comm_of;  // pg name -> index into s.comms
  for (size_t g = 0; g < info->groups.size(); ++g) {
    FrGroupInfo& group = info->groups[g];
    auto at = std::find(group.ranks.begin(), group.ranks.end(), info->global_rank);
    if (at == group.ranks.end()) continue;
    group.member = true;
    CommSnapshot c;
    c.region_index = static_cast<uint32_t>(s.comms.size());
    c.state = format::kRegionActive;
    c.flags = format::kRegionCompletionTracked;
    c.comm_id = Fnv1a(RanksText(group.ranks), Fnv1a(group.name + '\0'));
    c.name = CommName(group);
    c.rank = static_cast<int32_t>(at - group.ranks.begin());
    c.nranks = static_cast<int32_t>(group.ranks.size());
    comm_of[group.name] = static_cast<int32_t>(s.comms.size());
    group_of_comm.push_back(static_cast<int32_t>(g));
    s.comms.push_back(std::move(c));
  }

  std::sort(dump.entries.begin(), dump.entries.end(),
            [](const Entry& a, const Entry& b) { return a.record_id < b.record_id; });
  const bool wrapped = !dump.entries.empty() && dump.entries.front().record_id > 0;
  info->first_record_id = wrapped ? static_cast<uint64_t>(dump.entries.front().record_id) : 0;
  if (wrapped) {
    s.warnings.push_back("the Flight Recorder ring wrapped: entries before record " +
                         std::to_string(info->first_record_id) +
                         " were overwritten (FR counts no drops); send/recv are not matched");
  }
  // The newest entry of each comm keeps its frames (the culprit's last call).
  std::vector<int64_t> newest(s.comms.size(), -1);
  std::map<std::tuple<int32_t, int32_t, bool>, uint64_t> p2p_next;  // comm, peer, send
  uint64_t newest_time = 0, timeout_ms = 0;
  size_t unknown_pg = 0;
  info->entries.reserve(dump.entries.size());
  for (size_t k = 0; k < dump.entries.size(); ++k) {
    Entry& e = dump.entries[k];
    auto c = comm_of.find(e.pg_name);
    if (c == comm_of.end() || e.record_id < 0) {
      ++unknown_pg;
      continue;
    }
    CommSnapshot& comm = s.comms[c->second];
    OpRecord r;
    r.slot_seq = static_cast<uint64_t>(e.record_id);
    r.func = FuncOf(e.profiling_name);
    const bool p2p =
        e.is_p2p_known ? e.is_p2p : (r.func == format::kFuncSend || r.func == format::kFuncRecv);
    if (p2p) {
      const int32_t peer = PeerOf(e.profiling_name);
      if (wrapped || peer < 0 || peer >= comm.nranks) continue;
      const bool send = r.func == format::kFuncSend;
      r.flags = format::kFlagP2p;
      r.root_or_peer = peer;
      r.op_index = p2p_next[std::make_tuple(c->second, peer, send)]++;
      ++comm.p2p_count;
    } else {
      // The op index is FR's collective_seq_id (from 1), so that the reports
      // name FR's numbers; coll_count is one past the newest (index 0 never
      // exists and counts as lost to the wrap, as older ones do).
      r.op_index = Positive(e.collective_seq_id);
      comm.coll_count = std::max(comm.coll_count, r.op_index + 1);
    }
    r.count = e.count;
    if (const TypeInfo* t = TypeOf(e.dtype)) {
      r.datatype = t->type;
      r.api_datatype = t->type;
      r.bytes = e.count <= UINT64_MAX / t->size ? e.count * t->size : 0;
    }
    r.state = e.state == 2   ? format::kOpDone
              : e.state == 1 ? format::kOpRunning
                             : format::kOpEnqueued;
    r.t_api_ns = e.time_created_ns;
    r.t_enqueue_ns = e.time_created_ns;
    r.t_enqueued_ns = e.time_created_ns;
    r.t_last_progress_ns = std::max(e.started_ns, e.completed_ns);
    comm.records.push_back(r);
    comm.head += 1;
    comm.last_enqueue_wall_ns = std::max(comm.last_enqueue_wall_ns, e.time_created_ns);
    if (comm.init_wall_ns == 0 || e.time_created_ns < comm.init_wall_ns) {
      comm.init_wall_ns = e.time_created_ns;
    }
    newest_time = std::max({newest_time, e.time_created_ns, e.started_ns, e.completed_ns});
    timeout_ms = std::max<uint64_t>(timeout_ms, Positive(e.timeout_ms));

    FrEntryInfo fe;
    fe.record_id = r.slot_seq;
    fe.comm = c->second;
    fe.group = group_of_comm[static_cast<size_t>(c->second)];
    fe.profiling_name = std::move(e.profiling_name);
    fe.state = e.state == 2 ? "completed" : e.state == 1 ? "started" : "scheduled";
    fe.collective_seq_id = Positive(e.collective_seq_id);
    fe.p2p_seq_id = Positive(e.p2p_seq_id);
    if (e.state != 2) fe.frames = std::move(e.frames);
    newest[c->second] = static_cast<int64_t>(k);
    info->entries.push_back(std::move(fe));
  }
  // Frames of the newest entry of each comm, and the table trimmed to them.
  std::vector<uint32_t> remap(dump.frames.size(), UINT32_MAX);
  for (FrEntryInfo& fe : info->entries) {
    if (fe.frames.empty() && newest[fe.comm] >= 0 &&
        dump.entries[static_cast<size_t>(newest[fe.comm])].record_id ==
            static_cast<int64_t>(fe.record_id)) {
      fe.frames = std::move(dump.entries[static_cast<size_t>(newest[fe.comm])].frames);
    }
    for (uint32_t& f : fe.frames) {
      if (f >= dump.frames.size()) continue;
      if (remap[f] == UINT32_MAX) {
        remap[f] = static_cast<uint32_t>(info->frames.size());
        info->frames.push_back(dump.frames[f]);
      }
      f = remap[f];
    }
  }
  if (unknown_pg > 0) {
    s.warnings.push_back(std::to_string(unknown_pg) +
                         " entries of process groups pg_config does not list for this rank "
                         "(or without a record_id) were left out");
  }
  for (CommSnapshot& c : s.comms) {
    std::stable_sort(c.records.begin(), c.records.end(),
                     [](const OpRecord& a, const OpRecord& b) { return a.slot_seq < b.slot_seq; });
    c.capacity = c.head;
  }
  s.dump_wall_ns = newest_time;
  s.created_wall_ns = 0;
  s.watchdog_timeout_ns = timeout_ms * 1000000ULL;
  s.pytorch_fr = std::move(info);
  ReadResult r;
  r.ok = true;
  r.snapshot = std::move(s);
  return r;
}

}  // namespace

bool LooksLikeFrDump(const uint8_t* data, size_t size) {
  if (LooksLikePickle(data, size)) return true;
  size_t i = 0;
  while (i < size && (data[i] == ' ' || data[i] == '\n' || data[i] == '\r' || data[i] == '\t')) ++i;
  return i < size && data[i] == '{';
}

ReadResult ReadFrBytes(const uint8_t* data, size_t size, const std::string& name,
                       const ReadOptions& options) {
  Dump dump;
  std::string error;
  if (LooksLikePickle(data, size)) {
    // One document per reading thread: its nodes are reused file after file.
    thread_local PickleDoc doc;
    struct TrimLater {
      PickleDoc* doc;
      ~TrimLater() { doc->Trim(1u << 20); }
    } trim{&doc};
    if (!DecodePickleInto(data, size, options.pickle, &doc, &error)) {
      return Fail(name, "a pickle (" + std::to_string(size) +
                            " bytes) that is not a readable Flight Recorder dump: " + error);
    }
    if (!FromPickle(doc, options).Run(&dump, &error)) {
      return Fail(name, "a pickle that is not a Flight Recorder dump: " + error);
    }
  } else {
    nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr, false);
    if (j.is_discarded()) {
      return Fail(name,
                  "neither a flightrec file nor a Flight Recorder dump: JSON that does not "
                  "parse (" +
                      std::to_string(size) + " bytes)");
    }
    if (!FromJson(j, options, &dump, &error)) {
      return Fail(name, "JSON that is not a Flight Recorder dump: " + error);
    }
  }
  return Map(std::move(dump), name, size);
}

}  // namespace fr

namespace {
constexpr uint64_t kMaxFrFile = 1ULL << 30;
}

ReadResult ReadInputFile(const std::string& path, const ReadWindow* window) {
  ReadResult ours = ReadSnapshotFile(path, ReadLimits{}, window);
  if (ours.ok) return ours;
  struct stat st {};
  std::string error;
  const int fd = reader_internal::OpenTrusted(path, &st, &error);
  if (fd < 0) return ours;
  uint8_t head[16] = {};
  uint64_t got = 0;
  ReadResult result = ours;
  if (reader_internal::PreadFully(fd, 0, head, sizeof(head), &got, &error) &&
      fr::LooksLikeFrDump(head, got)) {
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > kMaxFrFile) {
      result = fr::Fail(path, "a " + std::to_string(size) +
                                  "-byte file that starts like a Flight Recorder dump, more "
                                  "than the limit of " +
                                  std::to_string(kMaxFrFile));
    } else {
      thread_local std::vector<uint8_t> bytes;  // reused file after file
      if (bytes.size() < size) bytes.resize(static_cast<size_t>(size));
      if (!reader_internal::PreadFully(fd, 0, bytes.data(), size, &got, &error)) {
        result = fr::Fail(path, error);
      } else {
        result = fr::ReadFrBytes(bytes.data(), static_cast<size_t>(got), path);
        // The file holds no dump time; PyTorch writes it once, at the dump.
        const uint64_t mtime = static_cast<uint64_t>(st.st_mtim.tv_sec) * 1000000000ULL +
                               static_cast<uint64_t>(st.st_mtim.tv_nsec);
        if (result.ok && mtime > result.snapshot.dump_wall_ns) {
          result.snapshot.dump_wall_ns = mtime;
          result.snapshot.dump_detail =
              "PyTorch Flight Recorder dump: dump time from the file's mtime, discovery times are "
              "CPU-side";
        }
      }
      if (bytes.size() > (64u << 20)) std::vector<uint8_t>().swap(bytes);
    }
  }
  close(fd);
  return result;
}

std::vector<std::string> FrCurrentFrames(const ProcessSnapshot& p, size_t max, std::string* what) {
  std::vector<std::string> lines;
  if (!p.pytorch_fr) return lines;
  const PytorchFrInfo& info = *p.pytorch_fr;
  const FrEntryInfo* e = info.Current();
  if (e == nullptr) return lines;
  if (what != nullptr) {
    const std::string comm = info.GroupName(e->group);
    *what = e->profiling_name + " #" + std::to_string(e->collective_seq_id) + " (" + e->state +
            ") on " + comm;
  }
  for (uint32_t f : e->frames) {
    if (lines.size() >= max) break;
    if (f >= info.frames.size()) continue;
    const FrFrame& fr = info.frames[f];
    lines.push_back(fr.name + " (" + fr.filename + ":" + std::to_string(fr.line) + ")");
  }
  return lines;
}

}  // namespace flightrec

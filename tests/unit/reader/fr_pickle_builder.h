// Builds PyTorch Flight Recorder pickles the way torch::jit::Pickler writes
// them (docs/design/pytorch-fr.md, "The pickle"): PROTO 2; strings memoized
// by value (BINUNICODE + BINPUT, then BINGET; LONG_* past 255); dicts as
// EMPTY_DICT MARK ... SETITEMS and lists as EMPTY_LIST MARK ... APPENDS;
// shared values (frame dicts) memoized after they are built; ints as
// BININT1/BININT2/BININT/LONG1; floats as big-endian BINFLOAT; STOP.
#ifndef FLIGHTREC_TESTS_UNIT_READER_FR_PICKLE_BUILDER_H_
#define FLIGHTREC_TESTS_UNIT_READER_FR_PICKLE_BUILDER_H_

#include <stdint.h>
#include <string.h>

#include <map>
#include <string>
#include <vector>

namespace flightrec {
namespace test_support {

class PickleWriter {
 public:
  PickleWriter() { out_ = {0x80, 0x02}; }

  void Int(int64_t n) {
    if (n >= 0 && n <= 255) {
      Op('K');
      out_.push_back(static_cast<uint8_t>(n));
    } else if (n >= 0 && n <= 65535) {
      Op('M');
      Le(static_cast<uint64_t>(n), 2);
    } else if (n >= INT32_MIN && n <= INT32_MAX) {
      Op('J');
      Le(static_cast<uint64_t>(static_cast<uint32_t>(static_cast<int32_t>(n))), 4);
    } else {
      Op(0x8a);
      out_.push_back(8);
      Le(static_cast<uint64_t>(n), 8);
    }
  }
  void Float(double v) {
    uint64_t bits = 0;
    memcpy(&bits, &v, sizeof(bits));
    Op('G');
    for (int k = 7; k >= 0; --k) out_.push_back(static_cast<uint8_t>(bits >> (8 * k)));
  }
  void None() { Op('N'); }
  void Bool(bool b) { Op(b ? 0x88 : 0x89); }
  void Str(const std::string& s) {
    auto it = strings_.find(s);
    if (it != strings_.end()) {
      Get(it->second);
      return;
    }
    Op('X');
    Le(s.size(), 4);
    out_.insert(out_.end(), s.begin(), s.end());
    strings_[s] = Put();
  }
  void BeginList() {
    Op(']');
    Op('(');
  }
  void EndList() { Op('e'); }
  void BeginDict() {
    Op('}');
    Op('(');
  }
  void EndDict() { Op('u'); }
  void Tuple2(const std::string& a, const std::string& b) {
    Str(a);
    Str(b);
    Op(0x86);
  }
  // A value shared by several parents (memoized by identity): true when it
  // was written before (a BINGET is emitted), else write it and call
  // EndShared(key).
  bool Shared(const std::string& key) {
    auto it = shared_.find(key);
    if (it == shared_.end()) return false;
    Get(it->second);
    return true;
  }
  void EndShared(const std::string& key) { shared_[key] = Put(); }
  std::vector<uint8_t> Finish() {
    Op('.');
    return out_;
  }

 private:
  void Op(uint8_t op) { out_.push_back(op); }
  void Le(uint64_t v, int n) {
    for (int k = 0; k < n; ++k) out_.push_back(static_cast<uint8_t>(v >> (8 * k)));
  }
  uint32_t Put() {
    if (memo_ <= 255) {
      Op('q');
      out_.push_back(static_cast<uint8_t>(memo_));
    } else {
      Op('r');
      Le(memo_, 4);
    }
    return memo_++;
  }
  void Get(uint32_t id) {
    if (id <= 255) {
      Op('h');
      out_.push_back(static_cast<uint8_t>(id));
    } else {
      Op('j');
      Le(id, 4);
    }
  }
  std::vector<uint8_t> out_;
  std::map<std::string, uint32_t> strings_;
  std::map<std::string, uint32_t> shared_;
  uint32_t memo_ = 0;
};

// The pieces of one FR entry dict that every writer of FR dumps writes the
// same way (tests/support/fr_from_job.cc and FrDumpBuilder).
// One "frames" item, memoized as PyTorch's pickler does.
inline void FrFrame(PickleWriter* w, const std::string& name, const std::string& file, int line) {
  const std::string key = name + "@" + file + ":" + std::to_string(line);
  if (w->Shared(key)) return;
  w->BeginDict();
  w->Str("name");
  w->Str(name);
  w->Str("filename");
  w->Str(file);
  w->Str("line");
  w->Int(line);
  w->EndDict();
  w->EndShared(key);
}

// record_id .. op_id of entry `k` of process group `pg` (`desc`).
inline void FrEntryIds(PickleWriter* w, int64_t k, const std::string& pg, const std::string& desc,
                       int64_t coll_seq, int64_t p2p_seq) {
  w->Str("record_id");
  w->Int(k);
  w->Str("pg_id");
  w->Int(std::stoll(pg));
  w->Str("process_group");
  w->Tuple2(pg, desc);
  w->Str("thread_name");
  w->Str("pt_main_thread");
  w->Str("thread_id");
  w->Str("140245987654321");
  w->Str("collective_seq_id");
  w->Int(coll_seq);
  w->Str("p2p_seq_id");
  w->Int(p2p_seq);
  w->Str("op_id");
  w->Int(k + 1);
}

// input_sizes/input_dtypes and output_sizes/output_dtypes of one tensor.
inline void FrSizes(PickleWriter* w, int64_t count, const std::string& dtype) {
  for (const char* key : {"input_sizes", "output_sizes"}) {
    w->Str(key);
    w->BeginList();
    w->BeginList();
    w->Int(count);
    w->EndList();
    w->EndList();
    w->Str(key[0] == 'i' ? "input_dtypes" : "output_dtypes");
    w->BeginList();
    w->Str(dtype);
    w->EndList();
  }
}

// One rank's FR dump of a job of `nranks` ranks: the default group "0"
// (default_pg, every rank) and, with tp > 1, groups "1".. (desc "tp") of
// tp consecutive ranks and "dp" groups of the ranks equal modulo tp; each step is one all_reduce
// per group. Behind(c): rank c never calls the last step's collectives (its last call, the step
// before, came from eval_step), every other rank's last step stays
// "scheduled". Buffer(n) keeps the newest n entries (FR's ring).
class FrDumpBuilder {
 public:
  FrDumpBuilder(int nranks, int tp) : nranks_(nranks), tp_(tp) {}
  FrDumpBuilder& Steps(int n) {
    steps_ = n;
    return *this;
  }
  FrDumpBuilder& Behind(int rank) {
    behind_ = rank;
    return *this;
  }
  // Rank `rank`'s last collective on default_pg has another size; the
  // last step stays "scheduled" everywhere.
  FrDumpBuilder& Mismatch(int rank) {
    mismatch_ = rank;
    return *this;
  }
  FrDumpBuilder& Buffer(int n) {
    buffer_ = n;
    return *this;
  }
  FrDumpBuilder& SendRecv(int n) {
    send_recv_ = n;
    return *this;
  }

  std::vector<uint8_t> Build(int rank) const {
    struct Group {
      std::string name, desc;
      std::vector<int> ranks;
    };
    std::vector<Group> groups;
    Group world{"0", "default_pg", {}};
    for (int r = 0; r < nranks_; ++r) world.ranks.push_back(r);
    groups.push_back(world);
    if (tp_ > 1) {
      const int g = rank / tp_;
      Group tp{std::to_string(g + 1), "tp", {}};
      for (int r = g * tp_; r < g * tp_ + tp_; ++r) tp.ranks.push_back(r);
      groups.push_back(tp);
      Group dp{std::to_string(nranks_ / tp_ + 1 + rank % tp_), "dp", {}};
      for (int r = rank % tp_; r < nranks_; r += tp_) dp.ranks.push_back(r);
      groups.push_back(dp);
    }
    struct E {
      std::string pg, desc, name;
      int64_t seq, p2p_seq;
      bool done, p2p, eval;
      int64_t size;
    };
    std::vector<E> entries;
    std::map<std::string, int64_t> seq;
    int64_t p2p_seq = 0;
    for (int s = 0; s < steps_; ++s) {
      const bool last = s == steps_ - 1;
      if (last && rank == behind_) break;
      for (const Group& g : groups) {
        const bool eval = behind_ == rank && s == steps_ - 2;
        const bool odd = last && rank == mismatch_ && g.name == "0";
        entries.push_back({g.name, g.desc, "nccl:all_reduce", ++seq[g.name], 0,
                           !(last && (behind_ >= 0 || mismatch_ >= 0)), false, eval,
                           odd ? 1000 : 1024});
      }
    }
    for (int k = 0; k < send_recv_; ++k) {
      const int peer = (rank + 1) % nranks_;
      entries.push_back({"0", "default_pg",
                         "nccl:send " + std::to_string(rank) + "->" + std::to_string(peer),
                         seq["0"], ++p2p_seq, true, true, false, 1024});
      entries.push_back({"0", "default_pg",
                         "nccl:recv " + std::to_string(rank) + "<-" + std::to_string(peer),
                         seq["0"], ++p2p_seq, true, true, false, 1024});
    }
    const size_t first =
        buffer_ > 0 && entries.size() > static_cast<size_t>(buffer_) ? entries.size() - buffer_ : 0;

    PickleWriter w;
    w.BeginDict();
    w.Str("version");
    w.Str("2.10");
    w.Str("pg_config");
    w.BeginDict();
    for (const Group& g : groups) {
      w.Str(g.name);
      w.BeginDict();
      w.Str("name");
      w.Str(g.name);
      w.Str("desc");
      w.Str(g.desc);
      w.Str("ranks");
      std::string ranks = "[";
      for (size_t k = 0; k < g.ranks.size(); ++k) {
        ranks += (k ? ", " : "") + std::to_string(g.ranks[k]);
      }
      w.Str(ranks + "]");
      w.EndDict();
    }
    w.EndDict();
    w.Str("comm_lib_version");
    w.Str("2.27.5");
    w.Str("pg_status");
    w.BeginDict();
    for (const Group& g : groups) {
      w.Str(g.name);
      w.BeginDict();
      w.Str("last_enqueued_collective");
      w.Int(seq[g.name]);
      w.Str("last_started_collective");
      w.Int(seq[g.name] - 1);
      w.Str("last_completed_collective");
      w.Int(seq[g.name] - 1);
      w.EndDict();
    }
    w.EndDict();
    w.Str("entries");
    w.BeginList();
    for (size_t k = first; k < entries.size(); ++k) {
      const E& e = entries[k];
      const int64_t t = 1764280000000000000LL + static_cast<int64_t>(k) * 1000000 + rank * 1000;
      w.BeginDict();
      w.Str("frames");
      w.BeginList();
      Frame(&w, "all_reduce", "/torch/distributed/distributed_c10d.py", 2806);
      Frame(&w, "wrapper", "/torch/distributed/c10d_logger.py", 81);
      if (e.eval) {
        Frame(&w, "eval_step", "/job/train.py", 97);
      } else {
        Frame(&w, "train_step", "/job/train.py", 42);
      }
      Frame(&w, "main", "/job/train.py", 120);
      w.EndList();
      FrEntryIds(&w, static_cast<int64_t>(k), e.pg, e.desc, e.seq, e.p2p_seq);
      w.Str("profiling_name");
      w.Str(e.name);
      w.Str("time_created_ns");
      w.Int(t);
      w.Str("duration_ms");
      w.Float(0.25);
      FrSizes(&w, e.size, "Float");
      w.Str("state");
      w.Str(e.done ? "completed" : "scheduled");
      w.Str("time_discovered_started_ns");
      if (e.done) {
        w.Int(t + 50000);
      } else {
        w.None();
      }
      w.Str("time_discovered_completed_ns");
      if (e.done) {
        w.Int(t + 90000);
      } else {
        w.None();
      }
      w.Str("retired");
      w.Bool(e.done);
      w.Str("timeout_ms");
      w.Int(600000);
      w.Str("is_p2p");
      w.Bool(e.p2p);
      w.EndDict();
    }
    w.EndList();
    w.EndDict();
    return w.Finish();
  }

 private:
  static void Frame(PickleWriter* w, const std::string& name, const std::string& file, int line) {
    FrFrame(w, name, file, line);
  }

  int nranks_;
  int tp_;
  int steps_ = 4;
  int behind_ = -1;
  int mismatch_ = -1;
  int buffer_ = 0;
  int send_recv_ = 0;
};

}  // namespace test_support
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_UNIT_READER_FR_PICKLE_BUILDER_H_

// The pickle decoder of PyTorch FR dumps (analyzer/reader/fr_pickle.h) and
// the FR reader (fr_reader.h), on bytes built here opcode by opcode the way
// torch::jit::Pickler writes them (docs/design/pytorch-fr.md).
#include "analyzer/reader/fr_pickle.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "analyzer/reader/fr_reader.h"
#include "tests/unit/reader/fr_pickle_builder.h"

namespace flightrec {
namespace {

using fr::DecodePickle;
using fr::Kind;
using fr::PickleResult;
using test_support::FrDumpBuilder;
using test_support::PickleWriter;

PickleResult Decode(const std::vector<uint8_t>& b, const fr::PickleLimits& limits = {}) {
  return DecodePickle(b.data(), b.size(), limits);
}

TEST(FrPickle, DecodesEveryScalarEncodingTorchWrites) {
  PickleWriter w;
  w.BeginList();
  for (int64_t v :
       {int64_t{0}, int64_t{255}, int64_t{256}, int64_t{65535}, int64_t{65536}, int64_t{-1},
        int64_t{-2147483648LL}, int64_t{1764280000123456789LL}, int64_t{-5000000000LL}}) {
    w.Int(v);
  }
  w.Float(2.5);
  w.None();
  w.Bool(true);
  w.Bool(false);
  w.Str("nccl:all_reduce");
  w.Str("nccl:all_reduce");  // memoized: BINGET
  w.EndList();
  const std::vector<uint8_t> bytes = w.Finish();
  PickleResult r = Decode(bytes);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.protocol, 2);
  const fr::Node& list = r.doc.node(r.doc.root());
  ASSERT_EQ(list.kind, Kind::kList);
  ASSERT_EQ(list.items.size(), 15u);
  const int64_t want[] = {
      0, 255, 256, 65535, 65536, -1, -2147483648LL, 1764280000123456789LL, -5000000000LL};
  for (size_t k = 0; k < 9; ++k) {
    EXPECT_EQ(r.doc.node(list.items[k]).kind, Kind::kInt);
    EXPECT_EQ(r.doc.node(list.items[k]).i, want[k]) << k;
  }
  EXPECT_EQ(r.doc.node(list.items[9]).f, 2.5);
  EXPECT_EQ(r.doc.node(list.items[10]).kind, Kind::kNone);
  EXPECT_TRUE(r.doc.node(list.items[11]).b);
  EXPECT_FALSE(r.doc.node(list.items[12]).b);
  EXPECT_EQ(r.doc.node(list.items[13]).s, "nccl:all_reduce");
  EXPECT_EQ(list.items[13], list.items[14]);  // the same node, not a copy
}

TEST(FrPickle, LongMemoIndicesPast255UseLongBinPutAndGet) {
  PickleWriter w;
  w.BeginList();
  for (int k = 0; k < 300; ++k) w.Str("s" + std::to_string(k));
  for (int k = 0; k < 300; ++k) w.Str("s" + std::to_string(k));
  w.EndList();
  const std::vector<uint8_t> bytes = w.Finish();
  PickleResult r = Decode(bytes);
  ASSERT_TRUE(r.ok) << r.error;
  const fr::Node& list = r.doc.node(r.doc.root());
  ASSERT_EQ(list.items.size(), 600u);
  EXPECT_EQ(r.doc.node(list.items[599]).s, "s299");
  EXPECT_EQ(list.items[299], list.items[599]);
}

TEST(FrPickle, ReadsWhatPythonsPicklerWritesAtProtocol4) {
  // pickle.dumps({"version": "2.10", "t": (1, 2)}, protocol=4)
  const std::vector<uint8_t> bytes = {0x80, 0x04, 0x95, 0x1c, 0,   0,   0,    0,    0,    0,    0,
                                      '}',  0x94, '(',  0x8c, 7,   'v', 'e',  'r',  's',  'i',  'o',
                                      'n',  0x94, 0x8c, 4,    '2', '.', '1',  '0',  0x94, 0x8c, 1,
                                      't',  0x94, 'K',  1,    'K', 2,   0x86, 0x94, 'u',  '.'};
  PickleResult r = Decode(bytes);
  ASSERT_TRUE(r.ok) << r.error;
  const fr::Node& root = r.doc.node(r.doc.root());
  const fr::Node* v = r.doc.Get(root, "version");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v->s, "2.10");
  const fr::Node* t = r.doc.Get(root, "t");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->kind, Kind::kTuple);
}

TEST(FrPickle, RejectsCodeAndObjectOpcodesNamingTheByte) {
  // GLOBAL 'os\nsystem\n' ... REDUCE: what a malicious pickle starts with.
  std::vector<uint8_t> bytes = {0x80, 0x02, 'c', 'o', 's', '\n', 's',
                                'y',  's',  't', 'e', 'm', '\n'};
  PickleResult r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  EXPECT_EQ(r.error, "byte 2: opcode 0x63 (GLOBAL) is outside the Flight Recorder subset");
  for (uint8_t op :
       {uint8_t{'R'}, uint8_t{'b'}, uint8_t{0x81}, uint8_t{0x93}, uint8_t{'Q'}, uint8_t{0xff}}) {
    bytes = {0x80, 0x02, 'N', op};
    r = Decode(bytes);
    ASSERT_FALSE(r.ok);
    EXPECT_NE(r.error.find("byte 3: opcode"), std::string::npos) << r.error;
  }
}

TEST(FrPickle, EveryPrefixOfADumpIsRejectedWithoutCrashing) {
  const std::vector<uint8_t> whole = FrDumpBuilder(4, 2).Behind(1).Steps(6).Build(2);
  ASSERT_TRUE(Decode(whole).ok);
  for (size_t n = 0; n < whole.size(); ++n) {
    std::vector<uint8_t> prefix(whole.begin(), whole.begin() + static_cast<std::ptrdiff_t>(n));
    PickleResult r = Decode(prefix);
    EXPECT_FALSE(r.ok) << n;
    EXPECT_EQ(r.error.rfind("byte ", 0), 0u) << r.error;
  }
}

TEST(FrPickle, EverySingleByteChangeDecodesOrFailsCleanly) {
  const std::vector<uint8_t> whole = FrDumpBuilder(4, 2).Behind(1).Steps(3).Build(2);
  for (size_t n = 0; n < whole.size(); ++n) {
    for (uint8_t v : {uint8_t{0x00}, uint8_t{0xff}, uint8_t{'('}, uint8_t{'e'}, uint8_t{'h'}}) {
      std::vector<uint8_t> bad = whole;
      bad[n] = v;
      PickleResult r = Decode(bad);
      EXPECT_TRUE(r.ok || !r.error.empty());
      // The reader on top never crashes either.
      ReadResult rr = fr::ReadFrBytes(bad.data(), bad.size(), "trace_rank_2");
      EXPECT_TRUE(rr.ok || !rr.error.empty());
    }
  }
}

TEST(FrPickle, HugeDeclaredLengthsAreRefusedBeforeAnyAllocation) {
  // BINUNICODE claiming 4 GiB - 1 in a 7-byte file.
  std::vector<uint8_t> bytes = {0x80, 0x02, 'X', 0xff, 0xff, 0xff, 0xff};
  PickleResult r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("a string of 4294967295 bytes"), std::string::npos) << r.error;
  // BINUNICODE8 claiming 2^63.
  bytes = {0x80, 0x02, 0x8d, 0, 0, 0, 0, 0, 0, 0, 0x80};
  r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  // LONG_BINPUT to slot 2^32 - 1: the memo does not grow to it.
  bytes = {0x80, 0x02, 'N', 'r', 0xff, 0xff, 0xff, 0xff};
  r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("memo slot 4294967295 beyond the limit"), std::string::npos) << r.error;
  // LONG1 of 255 bytes.
  bytes = {0x80, 0x02, 0x8a, 0xff};
  r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("LONG1 of 255 bytes"), std::string::npos);
}

TEST(FrPickle, DeepNestingAndWrongStructureAreRejected) {
  std::vector<uint8_t> bytes = {0x80, 0x02};
  for (int k = 0; k < 10000; ++k) {
    bytes.push_back(']');
    bytes.push_back('(');
  }
  PickleResult r = Decode(bytes);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("MARKs nested deeper than 256"), std::string::npos) << r.error;
  // APPENDS into a dict, SETITEMS with an odd count, BINGET of an empty
  // slot, STOP with two values.
  const std::vector<std::vector<uint8_t>> bad = {
      {0x80, 0x02, '}', '(', 'N', 'e', '.'},
      {0x80, 0x02, '}', '(', 'N', 'u', '.'},
      {0x80, 0x02, 'h', 3, '.'},
      {0x80, 0x02, 'N', 'N', '.'},
      {0x80, 0x02, 'e'},
      {0x80, 0x09, 'N', '.'},
  };
  for (const auto& b : bad) {
    r = Decode(b);
    EXPECT_FALSE(r.ok);
    EXPECT_EQ(r.error.rfind("byte ", 0), 0u) << r.error;
  }
}

TEST(FrPickle, NodeLimitBoundsMemory) {
  PickleWriter w;
  w.BeginList();
  for (int k = 0; k < 1000; ++k) w.None();
  w.EndList();
  fr::PickleLimits limits;
  limits.max_nodes = 100;
  PickleResult r = Decode(w.Finish(), limits);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("more than 100 values"), std::string::npos);
}

TEST(FrPickle, SelfReferencesDoNotHangTheReader) {
  // A list that contains itself, as 'entries' and as frames.
  const std::vector<uint8_t> bytes = {0x80, 0x02, '}', 'q', 0,   '(', 'X', 7, 0,   0,   0,   'v',
                                      'e',  'r',  's', 'i', 'o', 'n', 'X', 4, 0,   0,   0,   '2',
                                      '.',  '1',  '0', 'X', 7,   0,   0,   0, 'e', 'n', 't', 'r',
                                      'i',  'e',  's', ']', 'q', 1,   'h', 1, 'a', 'u', '.'};
  PickleResult r = Decode(bytes);
  ASSERT_TRUE(r.ok) << r.error;
  ReadResult rr = fr::ReadFrBytes(bytes.data(), bytes.size(), "x_rank_0");
  EXPECT_FALSE(rr.ok);
}

// ---- the reader: FR content into the model ----------------------------------

TEST(FrReader, MapsGroupsEntriesStatesAndFrames) {
  const std::vector<uint8_t> b = FrDumpBuilder(8, 4).Steps(5).Behind(5).Build(2);
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "/dumps/whatever");
  ASSERT_TRUE(r.ok) << r.error;
  const ProcessSnapshot& s = r.snapshot;
  ASSERT_TRUE(s.pytorch_fr);
  EXPECT_EQ(s.pytorch_fr->global_rank, 2);
  EXPECT_EQ(s.pytorch_fr->rank_from, "the only rank in all of its process groups");
  EXPECT_EQ(s.pytorch_fr->version, "2.10");
  EXPECT_TRUE(s.is_dump);
  ASSERT_EQ(s.comms.size(), 3u);  // default_pg, its tp group and its dp group
  EXPECT_EQ(s.comms[0].name, "default_pg");
  EXPECT_EQ(s.comms[0].rank, 2);
  EXPECT_EQ(s.comms[0].nranks, 8);
  EXPECT_EQ(s.comms[1].name, "tp");
  EXPECT_EQ(s.comms[1].rank, 2);
  EXPECT_EQ(s.comms[1].nranks, 4);
  EXPECT_EQ(s.comms[2].name, "dp");
  EXPECT_EQ(s.comms[2].rank, 0);
  EXPECT_EQ(s.comms[2].nranks, 2);
  EXPECT_NE(s.comms[0].comm_id, s.comms[1].comm_id);
  EXPECT_TRUE(s.comms[0].flags & format::kRegionCompletionTracked);
  ASSERT_EQ(s.comms[0].records.size(), 5u);
  const OpRecord& last = s.comms[0].records.back();
  EXPECT_EQ(last.op_index, 5u);  // FR's collective_seq_id
  EXPECT_EQ(s.comms[0].coll_count, 6u);
  EXPECT_EQ(last.func, format::kFuncAllReduce);
  EXPECT_EQ(last.state, format::kOpEnqueued);  // "scheduled": stuck
  EXPECT_EQ(last.count, 1024u);
  EXPECT_EQ(last.datatype, format::kTypeFloat32);
  EXPECT_EQ(last.bytes, 4096u);
  EXPECT_EQ(s.comms[0].records.front().state, format::kOpDone);
  std::string what;
  const std::vector<std::string> frames = FrCurrentFrames(s, 8, &what);
  EXPECT_EQ(what, "nccl:all_reduce #5 (scheduled) on default_pg");
  ASSERT_GE(frames.size(), 3u);
  EXPECT_EQ(frames[0], "all_reduce (/torch/distributed/distributed_c10d.py:2806)");
  EXPECT_EQ(frames[2], "train_step (/job/train.py:42)");
}

TEST(FrReader, TheCulpritsLastCallKeepsItsFrames) {
  const std::vector<uint8_t> b = FrDumpBuilder(4, 1).Steps(5).Behind(3).Build(3);
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "nccl_trace_rank_3");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.pytorch_fr->global_rank, 3);
  EXPECT_EQ(r.snapshot.pytorch_fr->rank_from.rfind("its name", 0), 0u);
  std::string what;
  const std::vector<std::string> frames = FrCurrentFrames(r.snapshot, 8, &what);
  EXPECT_EQ(what, "nccl:all_reduce #4 (completed) on default_pg");
  ASSERT_FALSE(frames.empty());
  EXPECT_EQ(frames[2], "eval_step (/job/train.py:97)");
}

TEST(FrReader, GlobalRankFromTheNameWhenContentCannotTell) {
  const std::vector<uint8_t> b = FrDumpBuilder(4, 1).Steps(2).Build(1);
  for (const auto& [name, want] :
       std::map<std::string, int64_t>{{"/x/comm_lib_trace_rank_1", 1},
                                      {"/x/nccl_trace_rank_1", 1},
                                      {"/x/node07.cluster_trace_rank1", 1},
                                      {"/x/host-a.example.com-rank-1", 1},
                                      {"/x/dump1", 1}}) {
    ReadResult r = fr::ReadFrBytes(b.data(), b.size(), name);
    ASSERT_TRUE(r.ok) << name << ": " << r.error;
    EXPECT_EQ(r.snapshot.pytorch_fr->global_rank, want) << name;
  }
  for (const std::string name : {"/x/no_digits", "/x/trace_rank_17"}) {
    ReadResult r = fr::ReadFrBytes(b.data(), b.size(), name);
    ASSERT_FALSE(r.ok) << name;
    EXPECT_NE(r.error.find("global rank cannot be told"), std::string::npos) << r.error;
  }
}

TEST(FrReader, AnEmptyDumpIsRejectedWithAReason) {
  PickleWriter w;
  w.BeginDict();
  w.Str("version");
  w.Str("2.10");
  w.Str("pg_config");
  w.BeginDict();
  w.EndDict();
  w.Str("comm_lib_version");
  w.Str("2.21.5");
  w.Str("pg_status");
  w.BeginDict();
  w.EndDict();
  w.EndDict();
  const std::vector<uint8_t> b = w.Finish();
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "trace_rank_0");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no process group and no entry"), std::string::npos) << r.error;
}

TEST(FrReader, WrongTypesInKnownKeysAreRejected) {
  PickleWriter w;
  w.BeginDict();
  w.Str("version");
  w.Str("2.10");
  w.Str("entries");
  w.Str("not a list");
  w.EndDict();
  std::vector<uint8_t> b = w.Finish();
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "trace_rank_0");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("'entries' is a str, not a list"), std::string::npos) << r.error;
  PickleWriter v;
  v.BeginDict();
  v.Str("entries");
  v.BeginList();
  v.EndList();
  v.EndDict();
  b = v.Finish();
  r = fr::ReadFrBytes(b.data(), b.size(), "trace_rank_0");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("no 'version'"), std::string::npos) << r.error;
}

TEST(FrReader, AWrappedRingIsReportedAndItsSendRecvLeftOut) {
  const std::vector<uint8_t> b = FrDumpBuilder(4, 1).Steps(30).Buffer(10).Build(0);
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "trace_rank_0");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.pytorch_fr->first_record_id, 20u);
  ASSERT_FALSE(r.snapshot.warnings.empty());
  EXPECT_NE(r.snapshot.warnings[0].find("wrapped"), std::string::npos);
  EXPECT_EQ(r.snapshot.comms[0].records.front().op_index, 21u);
}

TEST(FrReader, ReadsTheJsonVariant) {
  const std::string json = R"({"version":"2.10","comm_lib_version":"2.27.5",
    "pg_config":{"0":{"name":"0","desc":"default_pg","ranks":"[0, 1]"}},
    "pg_status":{"0":{"last_enqueued_collective":"2","last_started_collective":"1",
                      "last_completed_collective":"1"}},
    "entries":[{"record_id":0,"pg_id":0,"process_group":["0","default_pg"],
                "collective_seq_id":1,"p2p_seq_id":0,"op_id":1,
                "profiling_name":"nccl:all_reduce","time_created_ns":100,
                "input_sizes":[[4,4]],"input_dtypes":["BFloat16"],"output_sizes":[[4,4]],
                "output_dtypes":["BFloat16"],"state":"completed",
                "time_discovered_started_ns":110,"time_discovered_completed_ns":120,
                "retired":true,"timeout_ms":600000,"is_p2p":false},
               {"record_id":1,"pg_id":0,"process_group":["0","default_pg"],
                "collective_seq_id":2,"p2p_seq_id":0,"op_id":2,
                "profiling_name":"nccl:_all_gather_base","time_created_ns":200,
                "input_sizes":[[4]],"input_dtypes":["Float"],"output_sizes":[[8]],
                "output_dtypes":["Float"],"state":"scheduled",
                "time_discovered_started_ns":0,"time_discovered_completed_ns":0,
                "retired":false,"timeout_ms":600000,"is_p2p":false}]})";
  ReadResult r = fr::ReadFrBytes(reinterpret_cast<const uint8_t*>(json.data()), json.size(),
                                 "/x/fr_rank_1.json");
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.snapshot.pytorch_fr->format, "json");
  EXPECT_EQ(r.snapshot.pytorch_fr->global_rank, 1);
  ASSERT_EQ(r.snapshot.comms.size(), 1u);
  ASSERT_EQ(r.snapshot.comms[0].records.size(), 2u);
  EXPECT_EQ(r.snapshot.comms[0].records[0].count, 16u);
  EXPECT_EQ(r.snapshot.comms[0].records[0].datatype, format::kTypeBfloat16);
  EXPECT_EQ(r.snapshot.comms[0].records[1].func, format::kFuncAllGather);
  EXPECT_EQ(r.snapshot.comms[0].records[1].state, format::kOpEnqueued);
  EXPECT_EQ(r.snapshot.watchdog_timeout_ns, 600000ULL * 1000000ULL);
  const std::string broken = R"({"version": "2.10", "entries": [)";
  r = fr::ReadFrBytes(reinterpret_cast<const uint8_t*>(broken.data()), broken.size(), "x");
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.error.find("does not parse"), std::string::npos) << r.error;
}

TEST(FrReader, SendRecvBecomePerPeerIndices) {
  const std::vector<uint8_t> b = FrDumpBuilder(2, 1).Steps(2).SendRecv(3).Build(0);
  ReadResult r = fr::ReadFrBytes(b.data(), b.size(), "trace_rank_0");
  ASSERT_TRUE(r.ok) << r.error;
  const CommSnapshot& c = r.snapshot.comms[0];
  std::vector<uint64_t> sends;
  for (const OpRecord& op : c.records) {
    if (op.is_p2p() && op.func == format::kFuncSend) {
      EXPECT_EQ(op.root_or_peer, 1);
      sends.push_back(op.op_index);
    }
  }
  EXPECT_EQ(sends, (std::vector<uint64_t>{0, 1, 2}));
}

}  // namespace
}  // namespace flightrec

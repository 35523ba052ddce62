// Writes the seed corpus: `make_fuzz_corpus DIR` creates DIR/fuzz_snapshot_reader/
// (small valid rings and dumps from the test image builder) and
// DIR/fuzz_ring_layout/ (instruction streams). Run by hand when the format
// changes; the output is committed under tests/fuzz/corpus/.
#include <sys/stat.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "tests/unit/reader/image_builder.h"

namespace {

using flightrec::test_support::ImageBuilder;
namespace format = flightrec::format;

bool WriteFile(const std::string& path, const std::vector<uint8_t>& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  return std::fclose(f) == 0 && ok;
}

ImageBuilder Wrapped() {
  ImageBuilder b(2, 4);
  b.Claim(0, 0x5eed, 0, 2, "tp0");
  b.Claim(1, 0xfeed, 1, 2, "pp0").state = format::kRegionFinalized;
  for (uint64_t i = 0; i < 7; ++i) b.Append(0, ImageBuilder::Coll(i, 64 << i));
  format::Record send = ImageBuilder::Coll(0, 8);
  send.func = format::kFuncSend;
  send.flags = format::kFlagP2p;
  send.nccl_seq = UINT64_MAX;
  b.Append(1, send);
  b.header().gpu_offset_samples = 1;
  return b;
}

ImageBuilder Torn() {
  ImageBuilder b(1, 8);
  b.Claim(0, 0x7047, 3, 4, "torn");
  for (uint64_t i = 0; i < 5; ++i) b.Append(0, ImageBuilder::Coll(i, 1));
  b.Slot(0, 2).commit = 0;
  b.Slot(0, 3).count ^= 1;
  b.region(0).head = 6;
  return b;
}

// Format 1.4: AllGather/Broadcast in bytes as int8 with the call's datatype
// in api_datatype (one out of range: read as Unknown and counted).
ImageBuilder ApiDatatypes() {
  ImageBuilder b(1, 8);
  b.Claim(0, 0xa91, 1, 4, "tp0");
  const uint8_t types[] = {format::kTypeBfloat16, format::kTypeFloat32, 0, 200};
  for (uint64_t i = 0; i < 4; ++i) {
    format::Record r = ImageBuilder::Coll(i, 2048);
    r.func = i % 2 == 0 ? format::kFuncAllGather : format::kFuncBroadcast;
    r.datatype = format::kTypeInt8;
    r.api_datatype = types[i];
    b.Append(0, r);
  }
  return b;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_corpus DIR\n");
    return 2;
  }
  std::string dir = argv[1];
  std::string reader = dir + "/fuzz_snapshot_reader/";
  std::string layout = dir + "/fuzz_ring_layout/";
  mkdir(dir.c_str(), 0755);
  mkdir(reader.c_str(), 0755);
  mkdir(layout.c_str(), 0755);
  ImageBuilder wrapped = Wrapped();
  ImageBuilder empty(1, 1);
  bool ok = WriteFile(reader + "wrapped.ring", wrapped.Bytes()) &&
            WriteFile(reader + "wrapped.zst", wrapped.DumpBytes(2)) &&
            WriteFile(reader + "torn.ring", Torn().Bytes()) &&
            WriteFile(reader + "torn.zst", Torn().DumpBytes(1)) &&
            WriteFile(reader + "empty.ring", empty.Bytes()) &&
            WriteFile(reader + "api_datatype.ring", ApiDatatypes().Bytes());
  // Layout seeds: deterministic pseudo-random instruction streams of a few
  // sizes, plus one that asks for 4 regions of capacity 16, all active.
  std::mt19937 rng(2024);
  for (int i = 0; i < 6 && ok; ++i) {
    std::vector<uint8_t> seed(64u << (i % 4));
    for (uint8_t& x : seed) x = static_cast<uint8_t>(rng());
    ok = WriteFile(layout + "random" + std::to_string(i) + ".bin", seed);
  }
  std::vector<uint8_t> full = {3, 4};
  for (int r = 0; r < 4; ++r) {
    full.insert(full.end(), {1, 1, 2, 3, 4, 5, 6, 7, 8, 0, 20});
    for (int op = 0; op < 20; ++op) {
      std::vector<uint8_t> rec(128, static_cast<uint8_t>(op));
      rec[68] = 5;  // func AllReduce
      full.insert(full.end(), rec.begin(), rec.end());
      full.push_back(1);  // commit it
    }
    full.push_back(1);  // keep head
  }
  ok = ok && WriteFile(layout + "four_regions.bin", full);
  if (!ok) {
    std::perror("make_fuzz_corpus");
    return 1;
  }
  return 0;
}

#include "recorder/ring_slab.h"

#include <stdlib.h>

#include <new>

#include "recorder/atomics.h"

namespace flightrec {
namespace rec {

struct RetiredArray {
  uint64_t* words;
  RetiredArray* next;
};

// CommRecorder's constructor and p2p fields are private; this is the slab's
// access (declared a friend in comm_recorder.h).
struct SlabAccess {
  static CommRecorder* New() { return new (std::nothrow) CommRecorder(); }
  static void Delete(CommRecorder* c) {
    free(c->p2p_counters_);
    delete c;
  }
  static uint64_t*& Counters(CommRecorder* c) { return c->p2p_counters_; }
  static uint32_t& Peers(CommRecorder* c) { return c->p2p_peers_; }
};

namespace {

RingSlab* g_parked = nullptr;  // guarded by the recorder mutex
constexpr uint32_t kMinP2pPeers = 64;

bool SameLayout(const RingLayout& a, const RingLayout& b) {
  return a.max_regions == b.max_regions && a.region_capacity == b.region_capacity &&
         a.region_table_offset == b.region_table_offset && a.records_offset == b.records_offset &&
         a.file_size == b.file_size;
}

uint32_t RoundUpPeers(uint32_t peers) {
  uint32_t cap = kMinP2pPeers;
  while (cap < peers && cap < (1u << 30)) cap <<= 1;
  return cap;
}

}  // namespace

RingSlab* TakeParkedSlab(const RingLayout& l) {
  for (RingSlab** p = &g_parked; *p != nullptr; p = &(*p)->next) {
    RingSlab* s = *p;
    if (!SameLayout(s->ring.layout, l)) continue;
    *p = s->next;
    s->next = nullptr;
    return s;
  }
  return nullptr;
}

// One CommRecorder* per region (a named size: clang-tidy reads
// sizeof(CommRecorder*) as a likely sizeof mistake).
constexpr size_t kPointerBytes = sizeof(void*);

RingSlab* NewSlab(uint32_t max_regions) {
  RingSlab* s = new (std::nothrow) RingSlab();
  if (s == nullptr) return nullptr;
  s->comms = static_cast<CommRecorder**>(calloc(max_regions, kPointerBytes));
  s->p2p_capacity = static_cast<uint32_t*>(calloc(max_regions, sizeof(uint32_t)));
  if (s->comms == nullptr || s->p2p_capacity == nullptr) {
    FreeUnmappedSlab(s);
    return nullptr;
  }
  return s;
}

void FreeUnmappedSlab(RingSlab* s) {
  free(s->comms);
  free(s->p2p_capacity);
  delete s;
}

void ParkSlab(RingSlab* s) {
  s->next = g_parked;
  g_parked = s;
}

CommRecorder* SlabComm(RingSlab* s, uint32_t r, uint32_t peers) {
  CommRecorder* c = s->comms[r];
  if (c == nullptr) {
    c = SlabAccess::New();
    if (c == nullptr) return nullptr;
    s->comms[r] = c;
  }
  uint64_t*& counters = SlabAccess::Counters(c);
  if (counters == nullptr || s->p2p_capacity[r] < peers) {
    const uint32_t cap = RoundUpPeers(peers);
    uint64_t* fresh = static_cast<uint64_t*>(calloc(static_cast<size_t>(cap) * 2, 8));
    RetiredArray* node = counters != nullptr ? new (std::nothrow) RetiredArray() : nullptr;
    if (fresh == nullptr || (counters != nullptr && node == nullptr)) {
      free(fresh);
      delete node;
      return nullptr;
    }
    if (node != nullptr) {  // a late launch thread may still hold the old one
      node->words = counters;
      node->next = s->retired;
      s->retired = node;
    }
    // Pairs with the acquire load of p2p_counters_ in NextOpIndex (a late
    // writer of the previous comm sees the array zeroed).
    __atomic_store_n(&counters, fresh, __ATOMIC_RELEASE);
    s->p2p_capacity[r] = cap;
  } else {
    const uint64_t words = static_cast<uint64_t>(s->p2p_capacity[r]) * 2;
    for (uint64_t i = 0; i < words; ++i) StoreRelaxed(&counters[i], uint64_t{0});
  }
  // After the array: pairs with the acquire load of p2p_peers_ in
  // NextOpIndex, so no reader pairs this count with a smaller, older array.
  __atomic_store_n(&SlabAccess::Peers(c), peers, __ATOMIC_RELEASE);
  return c;
}

void FreeParkedSlabs() {
  while (g_parked != nullptr) {
    RingSlab* s = g_parked;
    g_parked = s->next;
    UnmapRing(&s->ring);
    for (uint32_t r = 0; r < s->ring.layout.max_regions; ++r) {
      if (s->comms[r] != nullptr) SlabAccess::Delete(s->comms[r]);
    }
    while (s->retired != nullptr) {
      RetiredArray* a = s->retired;
      s->retired = a->next;
      free(a->words);
      delete a;
    }
    FreeUnmappedSlab(s);
  }
}

}  // namespace rec
}  // namespace flightrec

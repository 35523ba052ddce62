// The job's coordination file (<job-dir>/coord.shm), mapped MAP_SHARED by the
// launcher and every rank. Per communicator and member it holds monotonic
// counters that make collectives truly block:
//
//   enqueued[m]  launches the member's user thread has enqueued on the comm
//   reached[m]   collective tasks whose kernel has started on the member's GPU stream
//   done[m]      collective tasks whose kernel has done its own share of the work
//
// Collectives pair task by task (each collective of a group moves its own data
// over the comm's connections): a kernel whose tasks end at the member's k-th
// collective task finishes only when every member's done >= k, and does its
// share only after every member's reached >= k. A member that never arrives
// (stuck, killed, skipped) or never does its share (gpu-hang) holds every
// other member inside the kernel, as on a GPU; one that left a call out of a
// group pairs its next collective with the others' left-out one.
//
// Per rank it holds the pid, op progress and per-comm record counters that the
// launcher and the tests read, and a PXN mailbox (PxnMailbox). Waiters sleep
// on a per-comm futex word.
#ifndef FLIGHTREC_TESTS_EMULATOR_SRC_COORD_H_
#define FLIGHTREC_TESTS_EMULATOR_SRC_COORD_H_

#include <stdint.h>

#include <mutex>
#include <string>
#include <vector>

namespace flightrec {
namespace emu {

constexpr uint64_t kCoordMagic = 0x44524f4f43554d45ULL;  // "EMUCOORD"
constexpr uint32_t kCoordVersion = 3;
constexpr int kCoordCounters = 4;  // enqueued, reached, done, p2p

enum RankState : uint32_t {
  kRankStarting = 0,
  kRankRunning = 1,
  kRankStuck = 2,     // a stuck fault holds the user thread
  kRankFinished = 3,  // every op done, communicators finalized
  kRankAborted = 4,   // --on-hang abort|revoke: the framework ended its comms
};

struct CoordHeader {
  uint64_t magic;
  uint32_t version;
  uint32_t nranks;
  uint32_t ncomms;
  uint32_t reserved;
  uint64_t start_wall_ns;
  char job_id[64];
};

struct RankSlot {
  int64_t pid;
  uint32_t state;  // RankState
  uint32_t reserved;
  uint64_t ops_enqueued;      // op numbers the user thread has handed to NCCL
  uint64_t ops_completed;     // launches the GPU stream finished
  uint64_t mark_wall_ns;      // CLOCK_REALTIME when op --mark-op was enqueued
  uint64_t records_begun[3];  // per CommKind: Coll/P2p startEvent calls returned
  uint64_t progress_wall_ns;  // last change of ops_completed
};

// --pxn (docs/design/nccl.md §PXN): a network send that a rank hands to its local
// partner's proxy, which reports it to the partner's own plugin with the
// originator's context, parent and pid: pointers of another address space.
struct PxnOp {
  int64_t pid;       // the originator's
  uint64_t context;  // the originator's context pointer, as bits
  uint64_t parent;   // the originator's Coll/P2p handle, as bits
  int32_t rank;      // the originator's comm rank
  int32_t channel;
  int32_t peer;
  int32_t n_steps;
  uint64_t trans_size;  // bytes per step
};

// One ring per rank. Its producer is the rank's one PXN partner process, whose
// proxy threads (one per comm) take Coord::pxn_post_mu_ to post, so one
// thread writes at a time; its consumer is the rank's own comm-0 proxy thread.
constexpr uint64_t kPxnSlots = 256;
struct PxnMailbox {
  uint64_t posted;  // ops written; release-stored after the op (PxnPost)
  uint64_t taken;   // ops read; release-stored after the read (PxnTake)
  PxnOp ops[kPxnSlots];
};

struct CommSlot {
  uint32_t futex_word;  // bumped after every counter change
  uint32_t reserved;
};

// A mapped coordination file. All accessors are atomic (the file is shared
// by processes); counters only grow.
class Coord {
 public:
  Coord() = default;
  ~Coord();
  Coord(const Coord&) = delete;
  Coord& operator=(const Coord&) = delete;

  // Creates (truncating) the file for `nranks` ranks and `ncomms` comms.
  bool Create(const std::string& path, int nranks, int ncomms, const std::string& job_id,
              std::string* error);
  // Maps an existing file and validates its header against its size.
  bool Open(const std::string& path, std::string* error);

  int nranks() const { return static_cast<int>(header_->nranks); }
  int ncomms() const { return static_cast<int>(header_->ncomms); }
  const CoordHeader& header() const { return *header_; }

  RankSlot* rank(int r) const { return &ranks_[r]; }
  // Counter of comm `c` for member `m` (comm rank); members < nranks.
  uint64_t* enqueued(int c, int m) const { return Counter(c, 0, m); }
  uint64_t* reached(int c, int m) const { return Counter(c, 1, m); }
  uint64_t* done(int c, int m) const { return Counter(c, 2, m); }
  uint64_t* p2p(int c, int m) const { return Counter(c, 3, m); }

  // Stores `value` (relaxed is not enough: waiters read with acquire, see
  // WaitAll) and wakes the comm's waiters.
  void Publish(int c, uint64_t* counter, uint64_t value);
  // Blocks until counters[c][member] >= target for every member < n, where
  // `which` selects the array (0 enqueued, 1 reached, 2 done, 3 p2p). Returns
  // false if `*stop` becomes true first (polled at least every 100 ms).
  bool WaitAll(int c, int which, int n, uint64_t target, const volatile bool* stop);
  // The same for the listed members only.
  bool WaitMembers(int c, int which, const std::vector<int>& members, uint64_t target,
                   const volatile bool* stop);

  // PXN: appends `op` to rank `target`'s mailbox; false (nothing written)
  // when it is full, i.e. that rank's proxy is gone or far behind. Any thread
  // of the one process that posts to `target` may call it.
  bool PxnPost(int target, const PxnOp& op);
  // PXN: takes the oldest op of rank `self`'s mailbox; false when empty.
  bool PxnTake(int self, PxnOp* op);
  // PXN ops rank r's partner posted to it, and how many r's proxy took.
  uint64_t PxnPosted(int r) const { return Load(&pxn_[r].posted); }
  uint64_t PxnTaken(int r) const { return Load(&pxn_[r].taken); }

  static uint64_t Load(const uint64_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
  static void Store(uint64_t* p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

 private:
  uint64_t* Counter(int c, int which, int m) const;
  // Sleeps on comm c's futex word until ready() holds or *stop is set.
  template <typename Ready>
  bool WaitUntil(int c, Ready ready, const volatile bool* stop);
  bool Map(int fd, size_t size, std::string* error);

  void* base_ = nullptr;
  size_t size_ = 0;
  CoordHeader* header_ = nullptr;
  RankSlot* ranks_ = nullptr;
  CommSlot* comms_ = nullptr;
  uint64_t* counters_ = nullptr;
  PxnMailbox* pxn_ = nullptr;
  // Serializes this process's posters: the mailbox has one writer at a time.
  std::mutex pxn_post_mu_;
};

size_t CoordFileSize(int nranks, int ncomms);

}  // namespace emu
}  // namespace flightrec

#endif  // FLIGHTREC_TESTS_EMULATOR_SRC_COORD_H_

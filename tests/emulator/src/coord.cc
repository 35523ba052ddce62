#include "emulator/src/coord.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstring>

namespace flightrec {
namespace emu {

size_t CoordFileSize(int nranks, int ncomms) {
  return sizeof(CoordHeader) + sizeof(RankSlot) * nranks + sizeof(CommSlot) * ncomms +
         sizeof(uint64_t) * kCoordCounters * static_cast<size_t>(ncomms) * nranks +
         sizeof(PxnMailbox) * nranks;
}

Coord::~Coord() {
  if (base_ != nullptr) munmap(base_, size_);
}

bool Coord::Map(int fd, size_t size, std::string* error) {
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    *error = std::string("mmap coordination file: ") + std::strerror(errno);
    return false;
  }
  base_ = p;
  size_ = size;
  char* b = static_cast<char*>(p);
  header_ = reinterpret_cast<CoordHeader*>(b);
  b += sizeof(CoordHeader);
  ranks_ = reinterpret_cast<RankSlot*>(b);
  return true;
}

bool Coord::Create(const std::string& path, int nranks, int ncomms, const std::string& job_id,
                   std::string* error) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  size_t size = CoordFileSize(nranks, ncomms);
  // Zero-filled by ftruncate on a fresh file; the file lives on a local fs.
  bool ok = ftruncate(fd, static_cast<off_t>(size)) == 0;
  if (!ok) *error = path + ": ftruncate: " + std::strerror(errno);
  ok = ok && Map(fd, size, error);
  close(fd);
  if (!ok) return false;
  header_->version = kCoordVersion;
  header_->nranks = static_cast<uint32_t>(nranks);
  header_->ncomms = static_cast<uint32_t>(ncomms);
  std::strncpy(header_->job_id, job_id.c_str(), sizeof(header_->job_id) - 1);
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  header_->start_wall_ns = static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + ts.tv_nsec;
  comms_ = reinterpret_cast<CommSlot*>(ranks_ + nranks);
  counters_ = reinterpret_cast<uint64_t*>(comms_ + ncomms);
  pxn_ = reinterpret_cast<PxnMailbox*>(counters_ +
                                       static_cast<size_t>(kCoordCounters) * ncomms * nranks);
  // Publishes the layout; pairs with the acquire load of magic in Open().
  __atomic_store_n(&header_->magic, kCoordMagic, __ATOMIC_RELEASE);
  return true;
}

bool Coord::Open(const std::string& path, std::string* error) {
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  bool ok = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) >= sizeof(CoordHeader);
  if (!ok) *error = path + ": not a coordination file (too small)";
  ok = ok && Map(fd, static_cast<size_t>(st.st_size), error);
  close(fd);
  if (!ok) return false;
  // Pairs with the release store of magic in Create().
  uint64_t magic = __atomic_load_n(&header_->magic, __ATOMIC_ACQUIRE);
  uint32_t nranks = header_->nranks, ncomms = header_->ncomms;
  if (magic != kCoordMagic || header_->version != kCoordVersion || nranks == 0 || nranks > 4096 ||
      ncomms == 0 || ncomms > 8192 || CoordFileSize(nranks, ncomms) != size_) {
    *error = path + ": bad coordination header (magic, version or size)";
    return false;
  }
  comms_ = reinterpret_cast<CommSlot*>(ranks_ + nranks);
  counters_ = reinterpret_cast<uint64_t*>(comms_ + ncomms);
  pxn_ = reinterpret_cast<PxnMailbox*>(counters_ +
                                       static_cast<size_t>(kCoordCounters) * ncomms * nranks);
  return true;
}

bool Coord::PxnPost(int target, const PxnOp& op) {
  std::lock_guard<std::mutex> lock(pxn_post_mu_);
  PxnMailbox* m = &pxn_[target];
  // Only this process, under pxn_post_mu_, stores posted: relaxed suffices.
  const uint64_t posted = __atomic_load_n(&m->posted, __ATOMIC_RELAXED);
  // Acquire: pairs with the release store of taken in PxnTake, so the slot
  // is reused only after its op was read.
  if (posted - __atomic_load_n(&m->taken, __ATOMIC_ACQUIRE) >= kPxnSlots) return false;
  m->ops[posted % kPxnSlots] = op;
  // Release: pairs with the acquire load of posted in PxnTake.
  __atomic_store_n(&m->posted, posted + 1, __ATOMIC_RELEASE);
  return true;
}

bool Coord::PxnTake(int self, PxnOp* op) {
  PxnMailbox* m = &pxn_[self];
  const uint64_t taken = __atomic_load_n(&m->taken, __ATOMIC_RELAXED);  // ours alone
  // Acquire: pairs with the release store of posted in PxnPost.
  if (__atomic_load_n(&m->posted, __ATOMIC_ACQUIRE) == taken) return false;
  *op = m->ops[taken % kPxnSlots];
  // Release: pairs with the acquire load of taken in PxnPost.
  __atomic_store_n(&m->taken, taken + 1, __ATOMIC_RELEASE);
  return true;
}

uint64_t* Coord::Counter(int c, int which, int m) const {
  size_t n = header_->nranks;
  return counters_ + (static_cast<size_t>(c) * kCoordCounters + which) * n + m;
}

void Coord::Publish(int c, uint64_t* counter, uint64_t value) {
  // Release: pairs with the acquire loads in WaitAll.
  Store(counter, value);
  __atomic_fetch_add(&comms_[c].futex_word, 1, __ATOMIC_RELEASE);
  syscall(SYS_futex, &comms_[c].futex_word, FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

template <typename Ready>
bool Coord::WaitUntil(int c, Ready ready, const volatile bool* stop) {
  for (;;) {
    // Acquire: pairs with the release increment in Publish, so a change made
    // after this read makes the futex wait below return at once.
    uint32_t word = __atomic_load_n(&comms_[c].futex_word, __ATOMIC_ACQUIRE);
    if (ready()) return true;
    // Acquire: pairs with the release store of the abort flag (lifecycle.cc).
    if (stop != nullptr && __atomic_load_n(stop, __ATOMIC_ACQUIRE)) return false;
    timespec timeout{0, 100 * 1000 * 1000};
    syscall(SYS_futex, &comms_[c].futex_word, FUTEX_WAIT, word, &timeout, nullptr, 0);
  }
}

bool Coord::WaitAll(int c, int which, int n, uint64_t target, const volatile bool* stop) {
  return WaitUntil(
      c,
      [&] {
        for (int m = 0; m < n; ++m) {
          if (Load(Counter(c, which, m)) < target) return false;
        }
        return true;
      },
      stop);
}

bool Coord::WaitMembers(int c, int which, const std::vector<int>& members, uint64_t target,
                        const volatile bool* stop) {
  return WaitUntil(
      c,
      [&] {
        for (int m : members) {
          if (Load(Counter(c, which, m)) < target) return false;
        }
        return true;
      },
      stop);
}

}  // namespace emu
}  // namespace flightrec

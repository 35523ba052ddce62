// Steady state makes no allocation, takes no lock and makes no syscall: an
// assertion test (counts must be 0), not a timing test.
//
// * Allocations and locks: this binary interposes malloc/calloc/realloc/free,
//   the aligned allocators, operator new/delete and pthread_mutex_lock/
//   trylock/rwlock locks (exported with -rdynamic, so the dlopen'd plugin
//   binds to them) and counts the calls made by the measuring thread while
//   a million collectives (every event of docs/design/nccl.md §Call sequences v5) run
//   through the real ncclProfiler_v5 table.
// * Syscalls: strace -f over the benchmark binary's --marker-loop mode; the
//   loop thread must make no syscall between the two marker syscalls.
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <new>
#include <sstream>
#include <string>

#include "bench/bench_plugin.h"
#include "flightrec/record_format.h"

extern "C" {
void* __libc_malloc(size_t n);
void* __libc_calloc(size_t n, size_t s);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t a, size_t n);
void __libc_free(void* p);
}

namespace {

// Only the measuring thread counts (the watchdog thread may do slow-path work).
thread_local bool t_counting = false;
std::atomic<uint64_t> g_allocs{0};
std::atomic<uint64_t> g_frees{0};
std::atomic<uint64_t> g_locks{0};

inline void CountAlloc() {
  if (t_counting) g_allocs.fetch_add(1, std::memory_order_relaxed);
}

template <typename Fn>
Fn Next(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

using LockFn = int (*)(pthread_mutex_t*);
using RwFn = int (*)(pthread_rwlock_t*);

}  // namespace

extern "C" {
void* malloc(size_t n) {
  CountAlloc();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t s) {
  CountAlloc();
  return __libc_calloc(n, s);
}
void* realloc(void* p, size_t n) {
  CountAlloc();
  return __libc_realloc(p, n);
}
void free(void* p) {
  if (t_counting && p != nullptr) g_frees.fetch_add(1, std::memory_order_relaxed);
  __libc_free(p);
}
int posix_memalign(void** out, size_t a, size_t n) {
  CountAlloc();
  *out = __libc_memalign(a, n);
  return *out == nullptr ? ENOMEM : 0;
}
void* aligned_alloc(size_t a, size_t n) {
  CountAlloc();
  return __libc_memalign(a, n);
}
void* memalign(size_t a, size_t n) {
  CountAlloc();
  return __libc_memalign(a, n);
}
int pthread_mutex_lock(pthread_mutex_t* m) {
  static LockFn next = Next<LockFn>("pthread_mutex_lock");
  if (t_counting) g_locks.fetch_add(1, std::memory_order_relaxed);
  return next(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  static LockFn next = Next<LockFn>("pthread_mutex_trylock");
  if (t_counting) g_locks.fetch_add(1, std::memory_order_relaxed);
  return next(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  static RwFn next = Next<RwFn>("pthread_rwlock_rdlock");
  if (t_counting) g_locks.fetch_add(1, std::memory_order_relaxed);
  return next(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  static RwFn next = Next<RwFn>("pthread_rwlock_wrlock");
  if (t_counting) g_locks.fetch_add(1, std::memory_order_relaxed);
  return next(l);
}
}  // extern "C"

// operator new/delete go through the counted malloc/free.
void* operator new(size_t n) {
  void* p = malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return malloc(n == 0 ? 1 : n); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return malloc(n == 0 ? 1 : n); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }

namespace flightrec {
namespace bench {
namespace {

constexpr uint64_t kCollectives = 1000000;
constexpr uint64_t kWarmup = 10000;
constexpr uint64_t kCommId = 0x57EAD1;

struct Counts {
  uint64_t allocs, frees, locks;
};

template <typename F>
Counts CountDuring(F body) {
  const Counts before{g_allocs.load(), g_frees.load(), g_locks.load()};
  t_counting = true;
  body();
  t_counting = false;
  return Counts{g_allocs.load() - before.allocs, g_frees.load() - before.frees,
                g_locks.load() - before.locks};
}

// Removes the files of a flat scratch directory, then the directory.
void RemoveFlatDir(const std::string& dir) {
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (e->d_name[0] != '.') unlink((dir + "/" + e->d_name).c_str());
    }
    closedir(d);
  }
  rmdir(dir.c_str());
}

// The region head of communicator `comm_id` in this process's ring file.
uint64_t RegionHead(const std::string& dir, uint64_t comm_id) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return 0;
  const std::string suffix = "-" + std::to_string(getpid()) + ".ring";
  std::string path;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      path = dir + "/" + name;
    }
  }
  closedir(d);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct stat st;
  fstat(fd, &st);
  void* m = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (m == MAP_FAILED) return 0;
  const auto* h = static_cast<const format::FileHeader*>(m);
  const auto* regions = reinterpret_cast<const format::RegionDesc*>(
      static_cast<const unsigned char*>(m) + h->region_table_offset);
  uint64_t head = 0;
  for (uint32_t r = 0; r < h->max_regions; ++r) {
    if (regions[r].comm_id == comm_id) head = __atomic_load_n(&regions[r].head, __ATOMIC_RELAXED);
  }
  munmap(m, static_cast<size_t>(st.st_size));
  return head;
}

TEST(SteadyState, CountersSeeWhatTheyCount) {
  // Positive controls: the interposers are really in the path.
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  const Counts c = CountDuring([&] {
    void* volatile p = malloc(16);
    free(p);
    int* q = new int(3);
    delete q;
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
  });
  EXPECT_EQ(c.allocs, 2u);
  EXPECT_EQ(c.frees, 2u);
  EXPECT_EQ(c.locks, 1u);
}

TEST(SteadyState, NoAllocationNoLockOverAMillionCollectives) {
  char dir[] = "/tmp/flightrec-steady-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("NCCL_FLIGHTREC_DIR", dir, 1);
  setenv("NCCL_FLIGHTREC_DUMP_ON_EXIT", "0", 1);
  Plugin plugin;
  std::string err;
  ASSERT_TRUE(LoadPlugin(FLIGHTREC_PLUGIN_PATH, &plugin, &err)) << err;
  Comm comm;
  ASSERT_TRUE(comm.Init(plugin, kCommId, 0, 8)) << "flightrec declined the communicator";
  for (uint64_t i = 0; i < kWarmup; ++i) comm.Collective(true);
  const Counts c = CountDuring([&] {
    for (uint64_t i = 0; i < kCollectives; ++i) comm.Collective(true);
  });
  EXPECT_EQ(c.allocs, 0u) << "allocations in steady state";
  EXPECT_EQ(c.frees, 0u) << "frees in steady state";
  EXPECT_EQ(c.locks, 0u) << "lock acquisitions in steady state";
  // The loop really recorded: every collective claimed a slot.
  EXPECT_EQ(RegionHead(dir, kCommId), kWarmup + kCollectives);
  comm.Finalize();
  RemoveFlatDir(dir);
}

// Lines of the loop thread strictly between the begin and end markers.
std::string SyscallsBetweenMarkers(const std::string& trace_path, int* marker_lines) {
  std::ifstream in(trace_path);
  std::string line, tid, found;
  *marker_lines = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string line_tid;
    fields >> line_tid;
    if (!inside) {
      if (line.find("/flightrec-steady-state-begin") != std::string::npos) {
        tid = line_tid;
        inside = true;
        ++*marker_lines;
      }
      continue;
    }
    if (line_tid != tid) continue;
    if (line.find("/flightrec-steady-state-end") != std::string::npos) {
      ++*marker_lines;
      break;
    }
    if (line.find("resumed>") != std::string::npos && line.find("access") != std::string::npos &&
        found.empty()) {
      continue;  // the begin marker's own completion, split by another thread
    }
    found += line + "\n";
  }
  return found;
}

TEST(SteadyState, NoSyscallOverAMillionCollectives) {
  char dir[] = "/tmp/flightrec-strace-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string trace = std::string(dir) + "/trace.txt";
  const std::string cmd = std::string("NCCL_FLIGHTREC_DIR=") + dir + " " + FLIGHTREC_STRACE +
                          " -f -qq -o " + trace + " " + FLIGHTREC_BENCH_PATH +
                          " --marker-loop=1000000 > " + dir + "/out.txt 2>&1";
  ASSERT_EQ(system(cmd.c_str()), 0) << cmd;
  int markers = 0;
  const std::string syscalls = SyscallsBetweenMarkers(trace, &markers);
  ASSERT_EQ(markers, 2) << "marker syscalls not found in " << trace;
  EXPECT_EQ(syscalls, "") << "syscalls made by the loop thread in steady state";
  if (!HasFailure()) RemoveFlatDir(dir);  // kept for inspection otherwise
}

}  // namespace
}  // namespace bench
}  // namespace flightrec

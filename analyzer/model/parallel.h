// Runs the analysis's independent per-process and per-group passes on every
// core. Each call fn(i) may only write state owned by index i; callers merge
// per-index results in index order, so the output never depends on which
// thread ran what.
#ifndef FLIGHTREC_ANALYZER_MODEL_PARALLEL_H_
#define FLIGHTREC_ANALYZER_MODEL_PARALLEL_H_

#include <stddef.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace flightrec {
namespace analysis {

// Below this many items a pass runs on the calling thread: starting a
// thread (~50 us) costs more than the work.
constexpr size_t kMinParallelItems = 16;

template <typename Fn>
void ParallelFor(size_t n, Fn&& fn) {
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = n < kMinParallelItems ? 1 : std::min(cores, n / kMinParallelItems);
  // Items are handed out in blocks so that neighbours (often the same
  // process's comms) stay on one core; at least 8 blocks per thread, so one
  // heavy item (the world comm) does not leave the other cores idle.
  const size_t block = std::min<size_t>(64, std::max<size_t>(1, n / (threads * 8)));
  std::atomic<size_t> next{0};
  auto worker = [&]() {
    for (size_t lo = next.fetch_add(block, std::memory_order_relaxed); lo < n;
         lo = next.fetch_add(block, std::memory_order_relaxed)) {
      const size_t hi = std::min(n, lo + block);
      for (size_t i = lo; i < hi; ++i) fn(i);
    }
  };
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
}

}  // namespace analysis
}  // namespace flightrec

#endif  // FLIGHTREC_ANALYZER_MODEL_PARALLEL_H_

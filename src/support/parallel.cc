#include "support/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace tlm {
namespace {

// Runs body(t) on threads t = 0..threads-1 (t = 0 on the caller's thread); rethrows the first
// exception. `stop` is called once when an exception is caught, so that the others can end early.
void run_threads(int threads, const std::function<void(int)>& body,
                 const std::function<void()>& stop) {
  std::exception_ptr first;
  std::mutex mu;
  auto guarded = [&](int t) {
    try {
      body(t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!first) first = std::current_exception();
      stop();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; t++) pool.emplace_back(guarded, t);
  guarded(0);
  for (std::thread& th : pool) th.join();
  if (first) std::rethrow_exception(first);
}

}  // namespace

void parallel_for(int64_t n, int threads, const std::function<void(int64_t)>& fn) {
  if (n <= 0) return;
  std::atomic<int64_t> next{0};
  int t = (int)std::max<int64_t>(1, std::min<int64_t>(threads, n));
  run_threads(
      t,
      [&](int) {
        for (int64_t i; (i = next++) < n;) fn(i);
      },
      [&] { next = n; });
}

void parallel_ranges(int64_t n, int threads, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int t = (int)std::max<int64_t>(1, std::min<int64_t>(threads, n));
  if (t == 1) {
    fn(0, n);
    return;
  }
  run_threads(
      t, [&](int k) { fn(n * k / t, n * (k + 1) / t); }, [] {});
}

}  // namespace tlm

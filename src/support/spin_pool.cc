// Self-contained (the C++ standard library only): deploy/artifact.cc copies this file and its
// header into every artifact, where it runs the AOT-compiled tasks' parallel loops.
#include "support/spin_pool.h"

#include <immintrin.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace tlm {
namespace {

// A job is split into one share per thread, each share a 64-bit word in its own cache line:
// generation (20 bits) | end (22) | next index (22). A thread claims an index of exactly the job
// it saw (a worker that wakes late holds a stale generation and its compare-exchange fails); the
// job's fields stay valid while any claimed index is unfinished, because the caller returns only
// after `finished` reaches the extent.
constexpr int kIdxBits = 22, kEndBits = 22, kGenBits = 64 - kIdxBits - kEndBits;
constexpr uint64_t kIdxMask = (1ull << kIdxBits) - 1, kEndMask = (1ull << kEndBits) - 1;
constexpr uint64_t kGenMask = (1ull << kGenBits) - 1;
constexpr int kMaxExtent = (int)kIdxMask;

uint64_t gen_of(uint64_t s) { return s >> (kIdxBits + kEndBits); }
uint64_t end_of(uint64_t s) { return (s >> kIdxBits) & kEndMask; }
uint64_t idx_of(uint64_t s) { return s & kIdxMask; }

thread_local bool t_in_job = false;

// The loop on the calling thread alone; loops its body starts run serially too.
int run_serially(const ParJob& job, int min, int extent) {
  const bool was = t_in_job;
  t_in_job = true;
  int err = 0;
  for (int i = min; i < min + extent && err == 0; i++) err = job.run(job, i);
  t_in_job = was;
  return err;
}

class Pool {
 public:
  explicit Pool(int workers)
      : spin_(std::chrono::microseconds(spin_microseconds())), slots_(workers + 1) {
    for (int w = 0; w < workers; w++) threads_.emplace_back([this, w] { work(w + 1); });
  }
  // Never destroyed (workers live for the process; Halide may run loops during static teardown).

  int run(const ParJob& job, int min, int extent) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock() || threads_.empty()) return run_serially(job, min, extent);
    job_ = job;
    min_ = min;
    error_.store(0, std::memory_order_relaxed);
    finished_.store(0, std::memory_order_relaxed);
    const uint64_t gen = (gen_.load(std::memory_order_relaxed) + 1) & kGenMask;
    // Thread k's share: [k E / n, (k + 1) E / n), the same part of every loop, so a task that
    // reads what the previous one wrote at the same indices finds it in its own core's caches.
    const uint64_t n = slots_.size(), E = (uint64_t)extent;
    for (uint64_t k = 0; k < n; k++)
      slots_[k].s.store((gen << (kIdxBits + kEndBits)) | ((k + 1) * E / n) << kIdxBits | (k * E / n),
                        std::memory_order_relaxed);
    gen_.store(gen, std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_seq_cst) > 0) {
      std::lock_guard<std::mutex> lock(sleep_mu_);
      wake_.notify_all();
    }
    t_in_job = true;
    claim_all(gen, 0);
    t_in_job = false;
    while (finished_.load(std::memory_order_acquire) < extent) _mm_pause();
    return error_.load(std::memory_order_relaxed);
  }

 private:
  // Runs indices of job `gen`: thread `self`'s own share first (its slot's cache line stays in
  // its core), then whatever is left in the others' (a late or slow thread's share is stolen
  // index by index). Counts what it ran into `finished_` once, at the end.
  void claim_all(uint64_t gen, size_t self) {
    int ran = 0;
    for (size_t j = 0; j < slots_.size(); j++) {
      std::atomic<uint64_t>& slot = slots_[(self + j) % slots_.size()].s;
      uint64_t s = slot.load(std::memory_order_acquire);
      while (gen_of(s) == gen && idx_of(s) < end_of(s)) {
        if (!slot.compare_exchange_weak(s, s + 1, std::memory_order_acq_rel)) continue;
        const int r = job_.run(job_, min_ + (int)idx_of(s));
        if (r != 0) {
          int zero = 0;
          error_.compare_exchange_strong(zero, r, std::memory_order_relaxed);
        }
        ran++;
        s = slot.load(std::memory_order_acquire);
      }
    }
    if (ran) finished_.fetch_add(ran, std::memory_order_release);
  }

  void work(size_t self) {
    t_in_job = true;  // a loop a job's body starts runs serially
    uint64_t seen = 0;  // the generation at construction: a job published before this thread
                        // got going is still this worker's to help with
    for (;;) {
      uint64_t gen = gen_.load(std::memory_order_acquire);
      if (gen == seen) {
        const auto deadline = std::chrono::steady_clock::now() + spin_;
        for (int k = 0; gen == seen; k++) {
          _mm_pause();
          if ((k & 63) == 63 && std::chrono::steady_clock::now() > deadline) break;
          gen = gen_.load(std::memory_order_acquire);
        }
      }
      if (gen == seen) {
        std::unique_lock<std::mutex> lock(sleep_mu_);
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        wake_.wait(lock, [&] { return gen_.load(std::memory_order_seq_cst) != seen; });
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        gen = gen_.load(std::memory_order_acquire);
      }
      seen = gen;
      claim_all(seen, self);
    }
  }

  const std::chrono::microseconds spin_;
  std::vector<std::thread> threads_;
  std::mutex busy_;  // one job at a time; another caller runs serially
  ParJob job_{};
  int min_ = 0;
  struct alignas(64) Slot {
    std::atomic<uint64_t> s{0};
  };
  std::vector<Slot> slots_;    // per thread (0: the caller): gen | end | next index of its share
  std::atomic<uint64_t> gen_{0};  // the generation of the latest job (what workers wait on)
  std::atomic<int> finished_{0}, error_{0}, sleepers_{0};
  std::mutex sleep_mu_;
  std::condition_variable wake_;
};

// Halide's rule: HL_NUM_THREADS when set (tlm always sets it: support/threads.h), else the cores.
int pool_threads() {
  if (const char* env = std::getenv("HL_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1, (int)std::thread::hardware_concurrency());
}

// The pool of this process. A forked child (the measurement workers) has none of the parent's
// threads: the child handler drops the pointer (leaking the parent's pool, whose locks may be
// held) and the child's first loop starts a pool of its own -- without it, the child's loops
// would silently run on one thread.
std::atomic<Pool*> g_pool{nullptr};
std::mutex g_create;

void forget_pool_in_child() {
  g_pool.store(nullptr);
  new (&g_create) std::mutex();
}

Pool& pool() {
  if (Pool* p = g_pool.load(std::memory_order_acquire)) return *p;
  std::lock_guard<std::mutex> lock(g_create);
  if (Pool* p = g_pool.load(std::memory_order_acquire)) return *p;
  static const bool registered = pthread_atfork(nullptr, nullptr, forget_pool_in_child) == 0;
  (void)registered;
  Pool* p = new Pool(pool_threads() - 1);
  g_pool.store(p, std::memory_order_release);
  return *p;
}

}  // namespace

int spin_microseconds() {
  if (const char* env = std::getenv("TLM_SPIN_US")) {
    char* end = nullptr;
    const long us = std::strtol(env, &end, 10);
    if (end != env && *end == '\0' && us >= 0 && us <= 10000000) return (int)us;
  }
  return 2000;  // unset, or not a whole number of microseconds (not silently 0)
}

int spin_par_for(const ParJob& job, int min, int extent) {
  if (extent <= 0) return 0;
  if (t_in_job || extent == 1 || extent > kMaxExtent) return run_serially(job, min, extent);
  return pool().run(job, min, extent);
}

}  // namespace tlm

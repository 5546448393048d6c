// support/spin_pool.h: every index runs exactly once, errors come back, nested and concurrent
// calls run serially instead of deadlocking, and a worker that slept wakes for the next job.
#include "support/spin_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace tlm {
namespace {

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(int n) : hits(n) {}
};

int count_index(const ParJob& job, int i) {
  static_cast<Counts*>(job.ctx)->hits.at(i).fetch_add(1);
  return 0;
}

ParJob counting(Counts* c) { return ParJob{count_index, nullptr, c, nullptr}; }

TEST(SpinPool, EveryIndexRunsOnceAcrossManyJobs) {
  for (int round = 0; round < 200; round++) {
    const int min = round % 7, extent = 1 + (round * 37) % 300;
    Counts c(min + extent);
    ASSERT_EQ(spin_par_for(counting(&c), min, extent), 0);
    for (int i = 0; i < min + extent; i++)
      ASSERT_EQ(c.hits[i].load(), i >= min ? 1 : 0) << "round " << round << " index " << i;
  }
}

int fail_at_13(const ParJob& job, int i) {
  static_cast<std::atomic<int>*>(job.ctx)->fetch_add(1);
  return i == 13 ? -7 : 0;
}

TEST(SpinPool, ReturnsTheBodysError) {
  std::atomic<int> ran{0};
  EXPECT_EQ(spin_par_for(ParJob{fail_at_13, nullptr, &ran, nullptr}, 0, 64), -7);
  EXPECT_GE(ran.load(), 14);
  std::atomic<int> ok{0};
  EXPECT_EQ(spin_par_for(ParJob{fail_at_13, nullptr, &ok, nullptr}, 20, 10), 0);
  EXPECT_EQ(ok.load(), 10);
}

int nested(const ParJob& job, int i) {
  Counts* inner = static_cast<Counts*>(job.ctx);
  Counts local(8);
  int err = spin_par_for(counting(&local), 0, 8);  // from inside a job: serial, no deadlock
  for (int k = 0; k < 8; k++)
    if (local.hits[k].load() != 1) err = 1;
  inner->hits.at(i).fetch_add(1);
  return err;
}

TEST(SpinPool, NestedLoopsRunSerially) {
  Counts c(32);
  EXPECT_EQ(spin_par_for(ParJob{nested, nullptr, &c, nullptr}, 0, 32), 0);
  for (int i = 0; i < 32; i++) EXPECT_EQ(c.hits[i].load(), 1);
}

TEST(SpinPool, ConcurrentCallersEachGetTheirJobDone) {
  std::vector<std::thread> callers;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; t++)
    callers.emplace_back([&] {
      for (int round = 0; round < 100; round++) {
        Counts c(50);
        if (spin_par_for(counting(&c), 0, 50) != 0) bad++;
        for (int i = 0; i < 50; i++)
          if (c.hits[i].load() != 1) bad++;
      }
    });
  for (auto& th : callers) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST(SpinPool, WorkersThatSleptWakeForTheNextJob) {
  // Longer than the spin (2 ms unless TLM_SPIN_US says otherwise), so the workers sleep.
  for (int round = 0; round < 3; round++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(spin_microseconds() / 1000 + 20));
    Counts c(100);
    ASSERT_EQ(spin_par_for(counting(&c), 0, 100), 0);
    for (int i = 0; i < 100; i++) ASSERT_EQ(c.hits[i].load(), 1);
  }
}

}  // namespace
}  // namespace tlm

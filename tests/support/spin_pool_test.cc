// support/spin_pool.h: every index runs exactly once, errors come back, nested and concurrent
// calls run serially instead of deadlocking, a worker that slept wakes for the next job, and a
// forked child (a measurement worker) gets threads of its own.
#include "support/spin_pool.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <set>
#include <string>
#include <utility>
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

struct Threads {
  std::mutex mu;
  std::set<std::thread::id> ids;
};

int note_thread(const ParJob& job, int) {
  Threads* t = static_cast<Threads*>(job.ctx);
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::lock_guard<std::mutex> lock(t->mu);
  t->ids.insert(std::this_thread::get_id());
  return 0;
}

// How many threads ran a loop of 20 indices of 1 ms each.
int threads_used() {
  Threads t;
  if (spin_par_for(ParJob{note_thread, nullptr, &t, nullptr}, 0, 20) != 0) return -1;
  return (int)t.ids.size();
}

TEST(SpinPool, RunsOnTwoThreadsInTheProcessAndInAForkedChild) {
  setenv("HL_NUM_THREADS", "2", 1);  // before this process's pool starts
  ASSERT_EQ(threads_used(), 2);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) _exit(threads_used() == 2 ? 0 : 1);  // the parent's worker does not exist here
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the forked child's loop ran on one thread";
  EXPECT_EQ(threads_used(), 2);
}

TEST(SpinPool, SpinMicrosecondsReadsOnlyWholeNumbers) {
  const char* saved = std::getenv("TLM_SPIN_US");
  const std::string keep = saved ? saved : "";
  for (auto [text, want] : std::vector<std::pair<const char*, int>>{
           {"0", 0}, {"150", 150}, {"abc", 2000}, {"", 2000}, {"-5", 2000}, {"12x", 2000}}) {
    setenv("TLM_SPIN_US", text, 1);
    EXPECT_EQ(spin_microseconds(), want) << "TLM_SPIN_US='" << text << "'";
  }
  if (saved) setenv("TLM_SPIN_US", keep.c_str(), 1);
  else unsetenv("TLM_SPIN_US");
}

}  // namespace
}  // namespace tlm

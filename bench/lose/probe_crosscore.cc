// Probe: what the VM's "slow mode" makes expensive (BENCHMARKS.md, "The slow mode" and "Huge
// pages ..."). Inside ResNet-50 at two threads, the 1x1 convolutions that read a large activation
// run up to 2x their time alone in the slow mode. Measured with the flush mended (BENCHMARKS.md,
// "Inside the model at two threads"): in the fast mode CPU 1 reads what CPU 0 wrote as fast as
// its own lines (the vCPUs share a last-level cache), in the slow mode only at memory speed (they
// do not). Not part of tlm: two threads pinned to CPUs 0 and 1, one
// buffer the size of a 56x56x256 fp32 activation (3.2 MB), and every second one line with the
// read bandwidth of CPU 1 in five situations:
//
//   own      CPU 1 wrote the whole buffer, CPU 1 reads it
//   remote   CPU 0 wrote the whole buffer, CPU 1 reads it
//   halves   each CPU wrote one half, CPU 1 reads all of it (a consumer split across the
//            producer's split: half of it remote)
//   aligned  each CPU wrote one half and reads the same half back (producer and consumer split
//            alike); the read time of the slower half
//   memory   CPU 1 wrote it, then rewrote 64 MiB elsewhere; CPU 1 reads it (from memory)
//
//   c++ -O2 -march=native -std=c++17 bench/lose/probe_crosscore.cc -o /tmp/probe_crosscore \
//       -lpthread && /tmp/probe_crosscore [SECONDS=60]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kFloats = 56 * 56 * 256;
constexpr size_t kFlushBytes = size_t(64) << 20;

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

void write_range(float* p, size_t n, float v) {
  for (size_t i = 0; i < n; i++) p[i] = v + (float)(i & 7);
}

float read_range(const float* p, size_t n) {
  float s[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (size_t i = 0; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; k++) s[k] += p[i + k];
  return s[0] + s[1] + s[2] + s[3] + s[4] + s[5] + s[6] + s[7];
}

// CPU 0's side: does what the main thread (CPU 1) asks, step by step.
struct Helper {
  std::atomic<int> cmd{0};   // 0 idle, 1 write all, 2 write first half, 3 read first half, -1 quit
  std::atomic<int> done{0};  // incremented when a command finished
  float* buf = nullptr;
  double read_s = 0;
  volatile float sink = 0;
  void loop() {
    pin(0);
    int seen = 0;
    for (;;) {
      int c;
      while ((c = cmd.load(std::memory_order_acquire)) == 0) {
      }
      if (c < 0) return;
      if (c == 1) write_range(buf, kFloats, (float)++seen);
      if (c == 2) write_range(buf, kFloats / 2, (float)++seen);
      if (c == 3) {
        auto t0 = Clock::now();
        sink = read_range(buf, kFloats / 2);
        read_s = std::chrono::duration<double>(Clock::now() - t0).count();
      }
      cmd.store(0, std::memory_order_relaxed);
      done.fetch_add(1, std::memory_order_release);
    }
  }
  void run(int c) {
    int before = done.load(std::memory_order_acquire);
    cmd.store(c, std::memory_order_release);
    while (done.load(std::memory_order_acquire) == before) {
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 60;
  std::vector<float> buf(kFloats);
  std::vector<char> flush(kFlushBytes);
  volatile char* flushed = flush.data();
  Helper h;
  h.buf = buf.data();
  std::thread worker([&] { h.loop(); });
  pin(1);
  volatile float sink = 0;
  auto timed_read = [&](const float* p, size_t n) {
    auto t0 = Clock::now();
    sink = read_range(p, n);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  const double gb = kFloats * sizeof(float) / 1e9;
  std::printf("time  GB/s read by CPU 1 (3.2 MB): own remote halves aligned memory\n");
  auto start = Clock::now();
  for (int sec = 1; std::chrono::duration<double>(Clock::now() - start).count() < seconds; sec++) {
    std::vector<double> t[5];
    auto until = start + std::chrono::seconds(sec);
    float v = 0;
    while (Clock::now() < until) {
      write_range(buf.data(), kFloats, ++v);  // own
      t[0].push_back(timed_read(buf.data(), kFloats));
      h.run(1);  // remote
      t[1].push_back(timed_read(buf.data(), kFloats));
      h.run(2);  // halves
      write_range(buf.data() + kFloats / 2, kFloats / 2, ++v);
      t[2].push_back(timed_read(buf.data(), kFloats));
      h.run(2);  // aligned: each reads the half it wrote, one after the other (no overlap)
      write_range(buf.data() + kFloats / 2, kFloats / 2, ++v);
      h.run(3);
      double mine = timed_read(buf.data() + kFloats / 2, kFloats / 2);
      t[3].push_back(2 * std::max(mine, h.read_s));
      // memory: CPU 1 writes the buffer (no other core keeps a copy), then rewrites one byte per
      // line of 64 MiB, which evicts it. (A memset would not: glibc's memset of this size uses
      // streaming stores that bypass the caches, and "memory" read like "halves" until 2026-11-26.)
      write_range(buf.data(), kFloats, ++v);
      for (size_t i = 0; i < flush.size(); i += 64) flushed[i] = (char)(flushed[i] + 1);
      t[4].push_back(timed_read(buf.data(), kFloats));
    }
    std::printf("%4ds", sec);
    for (auto& x : t) {
      std::sort(x.begin(), x.end());
      std::printf(" %7.1f", x.empty() ? 0.0 : gb / x[x.size() / 2]);
    }
    std::printf("\n");
    std::fflush(stdout);
  }
  h.cmd.store(-1, std::memory_order_release);
  worker.join();
  return sink > 0 ? 0 : 0;
}

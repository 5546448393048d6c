#include "support/threads.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <string>
#include <thread>

#include "support/error.h"

namespace tlm {
namespace {

std::atomic<int> g_explicit{0};  // set_compute_threads(); 0: not set

}  // namespace

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int n = CPU_COUNT(&set);
    if (n > 0) return n;
  }
  return (int)std::max(1u, std::thread::hardware_concurrency());
}

int compute_threads() {
  if (int n = g_explicit.load()) return n;
  if (const char* env = std::getenv("HL_NUM_THREADS")) {
    int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return usable_cores();
}

void set_compute_threads(int n) {
  TLM_USER_CHECK(n >= 1) << "--threads must be >= 1, got " << n;
  g_explicit = n;
  setenv("HL_NUM_THREADS", std::to_string(n).c_str(), 1);
}

void export_halide_threads() {
  if (!std::getenv("HL_NUM_THREADS"))
    setenv("HL_NUM_THREADS", std::to_string(compute_threads()).c_str(), 1);
}

}  // namespace tlm

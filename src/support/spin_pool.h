// The thread pool that runs the parallel loops of compiled programs (lower/lower.cc installs it
// as the JIT pipelines' do_par_for), in place of Halide's own.
//
// Why: a model is a chain of short programs (ResNet-50: 56 of them, most 0.1-1.5 ms at two
// threads). Halide's pool lets its workers spin only a few dozen iterations before they sleep on a
// condition variable, so every program's parallel loop first wakes a sleeping worker -- tens of
// microseconds on a VM, paid at every task boundary and not in a task timed alone. ONNX Runtime's
// pool spins its workers between kernels for the same reason. Here workers spin (with `pause`) for
// spin_microseconds() after their last job before they sleep, so back-to-back programs find them
// awake; a model called sporadically still pays one wake-up. Claiming every index from one shared
// counter (as Halide's queue does) moves a cache line between the cores per index: ~350 ns a
// round trip between the two vCPUs of an AMD Zen 5 VM.
//
//   spin_par_for(job, min, extent)  job.run(job, i) for i in [min, min + extent) on HL_NUM_THREADS
//                                   threads (else the cores), the caller one of them; thread k
//                                   runs the k-th contiguous share first (the same part of every
//                                   loop: what a task wrote, the next one reading the same indices
//                                   finds in the same core's caches; MLAS partitions statically
//                                   too), then steals what is left of the others' index by index;
//                                   returns the first nonzero result
//                                   (Halide's error code), 0 when all succeeded. A call from inside
//                                   a job, or while another thread's job runs, runs serially.
//   spin_microseconds()             how long an idle worker spins: TLM_SPIN_US if it is a whole
//                                   number (0 - 10^7), else 2000;
//                                   0 leaves the pipelines on Halide's own pool.
//
// Workers start on the first call and live for the process. The JIT pipelines (lower/lower.cc) and
// the AOT artifacts (deploy/artifact.cc: par_for.cc) both run on it, so a task timed by the tuner
// and the same task inside a deployed model use the same pool.
#pragma once

#include <cstdint>

namespace tlm {

struct ParJob {
  int (*run)(const ParJob& job, int index);  // calls fn
  void* fn;                                  // the program's loop body
  void* ctx;                                 // its user context
  uint8_t* closure;                          // its closure
};

int spin_par_for(const ParJob& job, int min, int extent);
int spin_microseconds();

}  // namespace tlm

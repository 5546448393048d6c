// The one threads knob. Everything in tlm that runs work on several cores asks compute_threads():
// Halide's thread pool (through HL_NUM_THREADS, written only here), the parallel JIT compiles of a
// model's tasks, the measurement workers' parallel compiles, the reference interpreter, the
// sampler's default parallelism and libtorch (src/model).
//
//   compute_threads()         the value in effect: set_compute_threads() if called (tlm --threads
//                             N), else HL_NUM_THREADS if the user exported it, else the cores this
//                             process may run on (sched_getaffinity). Always >= 1.
//   set_compute_threads(n)    tlm --threads N. Call it before Halide's thread pool first starts.
//   export_halide_threads()   writes HL_NUM_THREADS = compute_threads() unless the user set it;
//                             called by host_target() (lower/lower.h) before any Halide JIT use,
//                             because Halide reads the variable once, when its pool starts.
//   usable_cores()            the cores this process may run on
#pragma once

namespace tlm {

int compute_threads();
void set_compute_threads(int n);
void export_halide_threads();
int usable_cores();

}  // namespace tlm

// Timing one function robustly enough to rank tensor programs on a small, noisy machine.
//
// time_function(f, options) runs f `warmup` times untimed, then takes `repeats` samples; each
// sample calls f `inner` times back to back and divides, where `inner` is chosen from the warm-up
// calls so that one sample lasts at least min_repeat_ms (or, with before_sample, each sample is
// one call after an untimed before_sample()). Result: median/min/max per call and the
// relative spread (IQR / median) of the samples.
//
// Why this shape (for a 2-vCPU VM shared with other jobs):
//  - warm-up takes cold caches, page faults of fresh buffers and lazy initialization (JIT, thread
//    pool start-up) out of the samples;
//  - min_repeat_ms (20 ms by default) makes each sample long compared with the clock's
//    resolution and with a scheduler tick (1-4 ms), so one interruption costs a few percent, not
//    a factor of two;
//  - the median of several samples ignores the one or two samples hit by a noisy neighbour or a
//    vCPU steal, where a mean would absorb them; min is reported too (the best case the hardware
//    allows) but ranking uses the median, which is steadier across runs;
//  - spread tells the caller when a measurement is not to be trusted (e.g. > 0.1): re-measure
//    later or with more repeats instead of recording noise as a difference between programs.
// Callers measuring untrusted code run this inside run_isolated_phases() (measure/worker.h).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace tlm {

struct TimingOptions {
  int warmup = 1;               // untimed calls first; their times also choose `inner` (>= 1)
  int repeats = 5;              // timed samples; the result is their median (>= 1)
  double min_repeat_ms = 20;    // each sample repeats f until it spans at least this (>= 0)
  int64_t max_inner = 1 << 20;  // cap on calls per sample, for functions faster than the clock
  // When set: called untimed before every sample, and every sample is one call (min_repeat_ms
  // and max_inner do not apply). For timings that want the caches in a given state before each
  // call (e.g. flushed: measure/harness.h MeasureOptions::model_cache) rather than the state
  // the previous call left.
  std::function<void()> before_sample;
};

struct TimingStats {
  double median_s = 0;            // per call, median over samples
  double min_s = 0;               // per call, fastest sample
  double max_s = 0;               // per call, slowest sample
  double spread = 0;              // (q3 - q1) / median over samples: 0.03 means 3% noise
  int64_t inner = 1;              // calls per sample
  int64_t calls = 0;              // total calls of f: warmup + repeats * inner
  std::vector<double> samples_s;  // per-call time of each sample, in the order taken
};

// UserError for options outside the ranges above.
TimingStats time_function(const std::function<void()>& f, const TimingOptions& options = {});

// The statistics part alone: median, min, max and spread of per-call sample times (non-empty).
TimingStats stats_from_samples(std::vector<double> samples_s);

}  // namespace tlm

// The measured fp32 peak (bench/peak.cc).
#pragma once

#include <cstdint>

namespace tlm::bench {

struct PeakResult {
  int threads = 0;
  int lanes = 0;              // floats per vector of the loop that ran (16: AVX-512)
  double median_gflops = 0;   // over repeats
  double max_gflops = 0;      // the best repeat: the number "fraction of peak" divides by
  float checksum = 0;
};
// `iters` x 24 FMAs per thread and repeat (the default: ~0.1-0.2 s); shorter repeats, more of
// them, find the clean windows of a core shared with other work (--peak-only).
PeakResult measure_fp32_peak(int threads, int repeats, int64_t iters = 20'000'000);

}  // namespace tlm::bench

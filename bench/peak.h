// The measured fp32 peak (bench/peak.cc).
#pragma once

namespace tlm::bench {

struct PeakResult {
  int threads = 0;
  int lanes = 0;              // floats per vector of the loop that ran (16: AVX-512)
  double median_gflops = 0;   // over repeats
  double max_gflops = 0;      // the best repeat: the number "fraction of peak" divides by
  float checksum = 0;
};
PeakResult measure_fp32_peak(int threads, int repeats);

}  // namespace tlm::bench

// fp32 peak of this machine, measured: every core runs independent chains of fused multiply-adds
// on full-width vectors (AVX-512: 16 floats, else AVX2: 8), enough chains to hide the FMA latency
// on both FMA ports (latency 4-5 cycles x 2 ports needs >= 10) while every chain and the two
// constants stay in the register file: 24 of AVX-512's 32 zmm, 12 of AVX2's 16 ymm (24 chains
// there spill to the stack, and the loads and stores made the "peak" slower than MLAS).
// GFLOP/s = 2 x lanes x FMAs / time. This is the denominator of the kernel benchmark's "fraction
// of peak"; it is measured in the same run, never assumed.
//
// Built with -mavx512f -mfma for this file only; measure_fp32_peak() checks the CPU at run time
// and falls back to the AVX2 loop.
#include "peak.h"

#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "support/clock.h"

namespace tlm::bench {
namespace {

constexpr int kAvx512Chains = 24, kAvx2Chains = 12;

// Independent accumulators x `iters` FMAs each; returns a value so the loop is not removed.
__attribute__((target("avx512f"))) float fma_loop_avx512(int64_t iters) {
  __m512 a[kAvx512Chains];
  for (int i = 0; i < kAvx512Chains; i++) a[i] = _mm512_set1_ps(1.0f + i * 1e-3f);
  const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-7f);
  for (int64_t t = 0; t < iters; t++) {
#pragma GCC unroll 24
    for (int i = 0; i < kAvx512Chains; i++) a[i] = _mm512_fmadd_ps(a[i], m, c);
  }
  __m512 s = a[0];
  for (int i = 1; i < kAvx512Chains; i++) s = _mm512_add_ps(s, a[i]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) float fma_loop_avx2(int64_t iters) {
  __m256 a[kAvx2Chains];
  for (int i = 0; i < kAvx2Chains; i++) a[i] = _mm256_set1_ps(1.0f + i * 1e-3f);
  const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-7f);
  for (int64_t t = 0; t < iters; t++) {
#pragma GCC unroll 12
    for (int i = 0; i < kAvx2Chains; i++) a[i] = _mm256_fmadd_ps(a[i], m, c);
  }
  __m256 s = a[0];
  for (int i = 1; i < kAvx2Chains; i++) s = _mm256_add_ps(s, a[i]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

}  // namespace

PeakResult measure_fp32_peak(int threads, int repeats, int64_t iters) {
  PeakResult r;
  r.threads = threads;
  const bool avx512 = __builtin_cpu_supports("avx512f");
  r.lanes = avx512 ? 16 : 8;
  auto loop = avx512 ? fma_loop_avx512 : fma_loop_avx2;
  const int chains = avx512 ? kAvx512Chains : kAvx2Chains;
  std::atomic<float> sink{0};
  std::vector<double> gflops;
  loop(iters / 10);  // warm-up: wake the cores, settle the clock
  for (int k = 0; k < repeats; k++) {
    double t0 = now_s();
    std::vector<std::thread> ts;
    for (int i = 0; i < threads; i++) ts.emplace_back([&] { sink = sink + loop(iters); });
    for (std::thread& t : ts) t.join();
    double dt = now_s() - t0;
    gflops.push_back(2.0 * r.lanes * chains * iters * threads / dt * 1e-9);
  }
  std::sort(gflops.begin(), gflops.end());
  r.median_gflops = gflops[gflops.size() / 2];
  r.max_gflops = gflops.back();
  r.checksum = sink;
  return r;
}

}  // namespace tlm::bench

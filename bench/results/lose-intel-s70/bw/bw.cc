// Read bandwidth: T threads each sum a disjoint part of a large buffer (fresh from DRAM).
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
int main(int argc, char** argv) {
  int T = argc > 1 ? atoi(argv[1]) : 1;
  size_t bytes = (size_t)1 << 30;
  float* buf = (float*)aligned_alloc(64, bytes);
  memset(buf, 1, bytes);
  size_t n = bytes / 4;
  for (int rep = 0; rep < 5; rep++) {
    std::vector<std::thread> th;
    std::vector<float> out(T);
    auto t0 = std::chrono::steady_clock::now();
    for (int t = 0; t < T; t++)
      th.emplace_back([&, t] {
        size_t lo = n / T * t, hi = n / T * (t + 1);
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
        for (size_t i = lo; i < hi; i += 64) {
          a0 = _mm512_add_ps(a0, _mm512_load_ps(buf + i));
          a1 = _mm512_add_ps(a1, _mm512_load_ps(buf + i + 16));
          a2 = _mm512_add_ps(a2, _mm512_load_ps(buf + i + 32));
          a3 = _mm512_add_ps(a3, _mm512_load_ps(buf + i + 48));
        }
        out[t] = _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
      });
    for (auto& x : th) x.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("threads %d: %.1f GB/s (%g)\n", T, bytes / s / 1e9, out[0]);
  }
}

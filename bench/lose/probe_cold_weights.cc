// Probe: why ResNet-50's weight-heavy late convolutions run up to 2x slower inside the model
// than alone on AMD Zen 5 (BENCHMARKS.md, "Channel-blocked activations (NCHW16c) on AMD Zen 5").
// Inside the model their weights come from DRAM (ResNet-50 reads ~100 MB of weights per run);
// alone they stay in L3. Not part of tlm: a hand-written Halide pipeline of task 24 (3x3 conv
// 512 -> 512 at 7x7, pad 1, NCHW16c, + bias + ReLU) scheduled like tlm's best program for it
// (2 channel blocks x 7 pixels per register block, the reduction whole inside it, rows and
// channel-block pairs in parallel), with its weights stored two ways:
//
//   tlm    [Co/16][Ci][kh][kw][16]       (ConvNchwc's W): the lane loop over 16 input channels
//                                        steps through the weights 9 x 64 bytes apart
//   mlas   [Co/16][Ci/16][kh][kw][16][16] (MLAS's / oneDNN's OIhw16i16o): the lane loop reads
//                                        16 consecutive 64-byte lines
//
// each timed hot (the same weights every call, as `tlm measure` does) and cold (a different
// copy of the weights every call, 12 copies = 113 MB, more than the L3: as inside the model).
//
//   c++ -O2 -std=c++17 -I/usr/include/halide14 bench/lose/probe_cold_weights.cc \
//       -o /tmp/probe_cold -lHalide14 -lpthread -ldl && HL_NUM_THREADS=2 taskset -c 0-1 /tmp/probe_cold
#include <Halide.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

using namespace Halide;

namespace {

constexpr int kC = 512, kH = 7, kW = 7, kB = 16, kK = 3, kCopies = 12;

// Median over 15 rounds of the mean of 8 calls; call k uses copy k % copies.
double time_ms(const std::function<void(int)>& f, int copies) {
  std::vector<double> rounds;
  int k = 0;
  for (int r = 0; r < 15; r++) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 8; i++) f(k++ % copies);
    rounds.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
        8);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

}  // namespace

int main() {
  Target t = get_host_target();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  // x: NCHW16c [C/16][H][W][16]; w: [Co][Ci][kh][kw]; bias [Co].
  Buffer<float> x(kB, kW, kH, kC / kB), bias(kC);
  x.for_each_value([&](float& v) { v = u(rng); });
  bias.for_each_value([&](float& v) { v = u(rng); });
  std::vector<float> w((size_t)kC * kC * kK * kK);
  for (float& v : w) v = u(rng) * 0.05f;
  auto W = [&](int co, int ci, int kh, int kw) {
    return w[(((size_t)co * kC + ci) * kK + kh) * kK + kw];
  };
  // Reference output, NCHW16c.
  Buffer<float> ref(kB, kW, kH, kC / kB);
  for (int co = 0; co < kC; co++)
    for (int h = 0; h < kH; h++)
      for (int ww = 0; ww < kW; ww++) {
        float s = bias(co);
        for (int ci = 0; ci < kC; ci++)
          for (int kh = 0; kh < kK; kh++)
            for (int kw = 0; kw < kK; kw++) {
              int ih = h + kh - 1, iw = ww + kw - 1;
              if (ih < 0 || ih >= kH || iw < 0 || iw >= kW) continue;
              s += W(co, ci, kh, kw) * x(ci % kB, iw, ih, ci / kB);
            }
        ref(co % kB, ww, h, co / kB) = std::max(s, 0.f);
      }

  for (bool mlas : {false, true}) {
    // Weight copies in the variant's layout (Halide order, innermost first).
    std::vector<Buffer<float>> copies;
    for (int c = 0; c < kCopies; c++) {
      Buffer<float> b = mlas ? Buffer<float>(kB, kB, kK, kK, kC / kB, kC / kB)
                             : Buffer<float>(kB, kK, kK, kC, kC / kB);
      for (int co = 0; co < kC; co++)
        for (int ci = 0; ci < kC; ci++)
          for (int kh = 0; kh < kK; kh++)
            for (int kw = 0; kw < kK; kw++) {
              if (mlas)
                b(co % kB, ci % kB, kw, kh, ci / kB, co / kB) = W(co, ci, kh, kw);
              else
                b(co % kB, kw, kh, ci, co / kB) = W(co, ci, kh, kw);
            }
      copies.push_back(std::move(b));
    }
    ImageParam X(Float(32), 4), Wt(Float(32), mlas ? 6 : 5), Bs(Float(32), 1);
    Var l("l"), xx("x"), y("y"), cb("cb"), cbo("cbo"), cbi("cbi"), par("par");
    RDom r(0, kB, 0, kK, 0, kK, 0, kC / kB);  // lane, kw, kh, input block (innermost first)
    Func in = BoundaryConditions::constant_exterior(X, 0.f, {{0, kB}, {0, kW}, {0, kH}, {0, kC / kB}});
    Func acc("acc"), out("out");
    Expr wv = mlas ? Wt(l, r[0], r[1], r[2], r[3], cb) : Wt(l, r[1], r[2], r[3] * kB + r[0], cb);
    acc(l, xx, y, cb) = Bs(cb * kB + l);
    acc(l, xx, y, cb) += wv * in(r[0], xx + r[1] - 1, y + r[2] - 1, r[3]);
    out(l, xx, y, cb) = max(acc(l, xx, y, cb), 0.f);
    for (int d = 0, s = 1; d < 4; d++) {
      const int e[4] = {kB, kW, kH, kC / kB};
      X.dim(d).set_bounds(0, e[d]).set_stride(s);
      out.output_buffer().dim(d).set_bounds(0, e[d]).set_stride(s);
      s *= e[d];
    }
    out.split(cb, cbo, cbi, 2).reorder(l, xx, cbi, y, cbo).vectorize(l).fuse(y, cbo, par).parallel(par);
    acc.compute_at(out, par).vectorize(l);
    acc.update().reorder(l, xx, cb, r[0], r[1], r[2], r[3]).vectorize(l).unroll(xx).unroll(cb);
    out.compile_jit(t);
    X.set(x);
    Bs.set(bias);
    Buffer<float> o(kB, kW, kH, kC / kB);
    Wt.set(copies[0]);
    out.realize(o);
    double err = 0;
    o.for_each_element([&](int a, int b2, int c, int d) {
      err = std::max(err, (double)std::fabs(o(a, b2, c, d) - ref(a, b2, c, d)));
    });
    if (err > 1e-2) {
      std::fprintf(stderr, "%s wrong: max error %g\n", mlas ? "mlas" : "tlm", err);
      return 1;
    }
    auto call = [&](int k) {
      Wt.set(copies[k]);
      out.realize(o);
    };
    const double hot = time_ms(call, 1), cold = time_ms(call, kCopies);
    const double gflop = 2.0 * kC * kC * kK * kK * kH * kW * 1e-9;
    std::printf("%-5s weights: hot %.3f ms (%.0f GFLOP/s), cold %.3f ms (%.0f GFLOP/s, %.1f GB/s of weights)\n",
                mlas ? "mlas" : "tlm", hot, gflop / hot * 1e3, cold, gflop / cold * 1e3,
                kC * kC * kK * kK * 4.0 / cold * 1e-6);
  }
  return 0;
}

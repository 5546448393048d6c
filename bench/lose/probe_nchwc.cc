// Probe: what a channel-blocked activation layout (NCHW16c, as ONNX Runtime's NCHWc transformer
// and oneDNN use) would buy a 1x1 convolution with a residual epilogue -- ResNet-50's task 5
// (1x1 conv 64->256 at 56x56 + bias + residual add + ReLU), the task that loses the most to ORT
// (BENCHMARKS.md, "Blocked weights, an arena in the artifact..."). Not part of tlm: a hand-written
// Halide pipeline, timed against the same computation in NCHW written the way tlm's best
// program for that task computes it (output channels vectorized, accumulator transposed back
// to NCHW in the epilogue), both checked against a plain reference first.
//
//   c++ -O2 -std=c++17 -I/usr/include/halide14 bench/lose/probe_nchwc.cc -o /tmp/probe_nchwc \
//       -lHalide14 -lpthread -ldl && HL_NUM_THREADS=2 taskset -c 0-1 /tmp/probe_nchwc
//
// Prints the median of 9 rounds (each the mean over >= 30 ms of back-to-back calls) for each
// variant; the inputs stay in cache (warm, like `tlm measure`).
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

constexpr int kCi = 64, kCo = 256, kH = 56, kW = 56, kB = 16;

double time_ms(const std::function<void()>& f) {
  std::vector<double> rounds;
  for (int r = 0; r < 9; r++) {
    int n = 0;
    auto t0 = std::chrono::steady_clock::now();
    double ms = 0;
    do {
      f();
      n++;
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } while (ms < 30);
    rounds.push_back(ms / n);
  }
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

// Static dense bounds and strides on a parameter or the output, as tlm's lowering sets them
// (without them Halide cannot keep the accumulators at constant offsets, i.e. in registers).
template <typename P>
void dense(P p, const std::vector<int>& extents) {
  int stride = 1;
  for (size_t d = 0; d < extents.size(); d++) {
    p.dim((int)d).set_bounds(0, extents[d]).set_stride(stride);
    stride *= extents[d];
  }
}

// The largest |got(co, p) - ref| over the output (ref: NCHW, p = pixel index h * W + w).
double max_error(const std::function<float(int, int)>& got, const std::vector<float>& ref) {
  double err = 0;
  for (int co = 0; co < kCo; co++)
    for (int p = 0; p < kH * kW; p++)
      err = std::max(err, (double)std::fabs(got(co, p) - ref[co * kH * kW + p]));
  return err;
}

// An NCHW tensor of `channels` as NCHW16c: [C/16][H][W][16] (Halide order (16, W, H, C/16)).
Buffer<float> blocked(const std::vector<float>& nchw, int channels) {
  Buffer<float> out(kB, kW, kH, channels / kB);
  for (int c = 0; c < channels; c++)
    for (int p = 0; p < kH * kW; p++) out(c % kB, p % kW, p / kW, c / kB) = nchw[c * kH * kW + p];
  return out;
}

}  // namespace

int main() {
  Target t = get_host_target();
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  // Dense NCHW data (batch 1) and the reference.
  std::vector<float> x(kCi * kH * kW), r(kCo * kH * kW), w(kCo * kCi), b(kCo);
  for (float& v : x) v = u(rng);
  for (float& v : r) v = u(rng);
  for (float& v : w) v = u(rng) * 0.1f;
  for (float& v : b) v = u(rng);
  std::vector<float> ref(kCo * kH * kW);
  for (int co = 0; co < kCo; co++)
    for (int p = 0; p < kH * kW; p++) {
      float s = b[co];
      for (int ci = 0; ci < kCi; ci++) s += w[co * kCi + ci] * x[ci * kH * kW + p];
      ref[co * kH * kW + p] = std::max(s + r[co * kH * kW + p], 0.f);
    }
  Buffer<float> bias(b.data(), kCo);

  // --- NCHW, output channels vectorized (tlm's best program for this task, in Halide terms):
  // weights blocked [co/64][ci][64], a 4x64 register block (4 pixels along W x 64 channels),
  // the accumulator stored channel-innermost and read back across W for the NCHW epilogue.
  Buffer<float> xn(x.data(), kW, kH, kCi), rn(r.data(), kW, kH, kCo);
  Buffer<float> wb(64, kCi, kCo / 64);
  for (int co = 0; co < kCo; co++)
    for (int ci = 0; ci < kCi; ci++) wb(co % 64, ci, co / 64) = w[co * kCi + ci];
  Buffer<float> on(kW, kH, kCo);
  double nchw_ms = 0;
  {
    ImageParam X(Float(32), 3), R(Float(32), 3), Wt(Float(32), 3), Bs(Float(32), 1);
    Var xx("x"), y("y"), c("c"), xo, xi, co_, ci_, ho;
    RDom k(0, kCi);
    Func acc("acc"), out("out");
    acc(xx, y, c) = Bs(c);
    acc(xx, y, c) += Wt(c % 64, k, c / 64) * X(xx, y, k);
    out(xx, y, c) = max(acc(xx, y, c) + R(xx, y, c), 0.f);
    dense(X, {kW, kH, kCi}), dense(R, {kW, kH, kCo}), dense(Wt, {64, kCi, kCo / 64});
    dense(Bs, {kCo}), dense(out.output_buffer(), {kW, kH, kCo});
    out.split(xx, xo, xi, 28)
        .split(c, co_, ci_, 128)
        .reorder(xi, ci_, xo, y, co_)
        .vectorize(xi, 4)
        .parallel(y);
    acc.compute_at(out, xo).reorder_storage(c, xx, y).vectorize(c, 16);
    Var uo, ui, wo2, wi2;
    acc.update()
        .split(c, uo, ui, 64)
        .split(xx, wo2, wi2, 4)
        .reorder(ui, wi2, k, uo, wo2)
        .vectorize(ui, 16)
        .unroll(ui)
        .unroll(wi2);
    out.compile_jit(t);
    X.set(xn), R.set(rn), Wt.set(wb), Bs.set(bias);
    out.realize(on);
    const double err = max_error([&](int co, int p) { return on(p % kW, p / kW, co); }, ref);
    if (err > 1e-3) {
      std::fprintf(stderr, "NCHW variant wrong: max error %g\n", err);
      return 1;
    }
    nchw_ms = time_ms([&] { out.realize(on); });
  }

  // --- NCHW16c: x, r and the output as [C/16][H][W][16]; weights [co/16][ci][16]; the output
  // tiled by (pixels x channel blocks) per variant, each tile written back as whole vectors.
  Buffer<float> xc = blocked(x, kCi), rc = blocked(r, kCo), oc(kB, kW, kH, kCo / kB);
  Buffer<float> wc(kB, kCi, kCo / kB);
  for (int co = 0; co < kCo; co++)
    for (int ci = 0; ci < kCi; ci++) wc(co % kB, ci, co / kB) = w[co * kCi + ci];
  struct Variant {
    const char* name;
    int wtile, cbtile;
  };
  std::vector<std::pair<const char*, double>> results;
  for (Variant v : {Variant{"nchw16c 7px x 4blk", 7, 4}, Variant{"nchw16c 14px x 2blk", 14, 2},
                    Variant{"nchw16c 8px x 2blk", 8, 2}, Variant{"nchw16c 28px x 1blk", 28, 1}}) {
    ImageParam X(Float(32), 4), R(Float(32), 4), Wt(Float(32), 3), Bs(Float(32), 1);
    Var l("l"), xx("x"), y("y"), cb("cb"), xo, xi, cbo, cbi;
    RDom k(0, kCi);
    Func acc("acc"), out("out");
    acc(l, xx, y, cb) = Bs(cb * kB + l);
    acc(l, xx, y, cb) += Wt(l, k, cb) * X(k % kB, xx, y, k / kB);
    out(l, xx, y, cb) = max(acc(l, xx, y, cb) + R(l, xx, y, cb), 0.f);
    dense(X, {kB, kW, kH, kCi / kB}), dense(R, {kB, kW, kH, kCo / kB});
    dense(Wt, {kB, kCi, kCo / kB}), dense(Bs, {kCo});
    dense(out.output_buffer(), {kB, kW, kH, kCo / kB});
    out.split(xx, xo, xi, v.wtile)
        .split(cb, cbo, cbi, v.cbtile)
        .reorder(l, xi, cbi, xo, y, cbo)
        .vectorize(l, kB);
    Var par;
    out.fuse(y, cbo, par).parallel(par);
    acc.compute_at(out, xo).vectorize(l, kB);
    // The reduction split at the channel blocks, so that the input's (k % 16, k / 16) becomes
    // (ki, ko): no integer division in the inner loop.
    RVar ko("ko"), ki("ki");
    acc.update()
        .split(k, ko, ki, kB)
        .reorder(l, xx, cb, ki, ko)
        .vectorize(l, kB)
        .unroll(xx)
        .unroll(cb);
    out.compile_jit(t);
    X.set(xc), R.set(rc), Wt.set(wc), Bs.set(bias);
    out.realize(oc);
    const double err =
        max_error([&](int co, int p) { return oc(co % kB, p % kW, p / kW, co / kB); }, ref);
    if (err > 1e-3) {
      std::fprintf(stderr, "%s wrong: max error %g\n", v.name, err);
      return 1;
    }
    results.push_back({v.name, time_ms([&] { out.realize(oc); })});
  }
  const double gflop = 2.0 * kCi * kCo * kH * kW * 1e-9;
  std::printf("nchw (tlm-like)        %.3f ms  %.1f GFLOP/s\n", nchw_ms, gflop / nchw_ms * 1e3);
  for (auto& [name, ms] : results)
    std::printf("%-22s %.3f ms  %.1f GFLOP/s  (%.2fx the NCHW variant)\n", name, ms,
                gflop / ms * 1e3, nchw_ms / ms);
  return 0;
}

// time_program: the small harness benchmarks and hand-written schedules use to see how fast one
// program of a task's space runs: lower, build the space, apply, JIT-compile (timed), run once to
// warm up, then take `repeats` samples and report the median. A sample repeats the call until it
// spans at least 10 ms so that fast tasks are not lost in clock noise. Inputs are random
// (gather indices included: the lowering clamps them).
//
// Knobs: HL_NUM_THREADS (Halide's thread pool size, read once by the runtime).
#include <algorithm>
#include <chrono>

#include "space/space_internal.h"

namespace tlm {

namespace {
double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProgramTiming time_program(const Subgraph& sub, const HardwareInfo& hw, const Program& p,
                           int repeats) {
  TLM_USER_CHECK(repeats >= 1) << "time_program: repeats must be >= 1";
  ProgramTiming r;
  LoweredTask t = lower_subgraph(sub);
  TaskSpace space = build_space(t, hw);
  double t0 = now_s();
  apply_program(t, space, p);
  CompiledTask ct = compile_task(t, host_target());
  r.compile_s = now_s() - t0;

  const Graph& g = sub.graph;
  std::vector<Tensor> inputs;
  std::vector<Halide::Buffer<>> bufs;
  for (size_t i = 0; i < g.inputs.size(); i++) {
    const Value& v = g.value(g.inputs[i]);
    inputs.push_back(random_tensor(v.dtype, v.shape, 1000 + i));
  }
  for (Tensor& x : inputs) bufs.push_back(halide_view(x.dtype(), x.raw(), x.shape()));
  const Value& ov = g.value(g.outputs.at(0));
  Tensor out(ov.dtype, ov.shape);
  Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());

  double w0 = now_s();
  ct.run(bufs, ob);
  double once = std::max(now_s() - w0, 1e-7);
  int inner = (int)std::clamp(0.010 / once, 1.0, 1000.0);
  std::vector<double> samples;
  for (int k = 0; k < repeats; k++) {
    double s0 = now_s();
    for (int i = 0; i < inner; i++) ct.run(bufs, ob);
    samples.push_back((now_s() - s0) / inner);
  }
  std::sort(samples.begin(), samples.end());
  r.median_s = samples[samples.size() / 2];
  r.min_s = samples.front();
  r.gflops = sub.flops / r.median_s * 1e-9;
  return r;
}

}  // namespace tlm

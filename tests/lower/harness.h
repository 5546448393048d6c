// The shared runner of the lowering tests (after ggml's test-backend-ops): one LowerCase per
// case -- a small Graph built with Graph::add (shapes from shape inference), one output -- and
// check_case(), which lowers it, applies the default schedule, JIT-compiles, runs on random
// inputs and compares with the reference interpreter. Optionally the unscheduled program too.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "lower/lower.h"

namespace tlm::testing_lower {

// Attribute values without variant ambiguity.
inline AttrValue I(int64_t v) { return v; }
inline AttrValue F(float v) { return v; }
inline AttrValue Is(std::vector<int64_t> v) { return v; }

struct LowerCase {
  std::string name;
  Graph g;
  // Value range of random inputs (per input index; default [-1, 1)).
  std::map<int, std::pair<double, double>> ranges;
  double atol = 1e-4, rtol = 1e-4;
};

// A named case builder for parameterized tests: `build` adds inputs and nodes and returns the
// output value; `ranges` sets input value ranges by input index.
struct Builder {
  std::string name;
  std::function<ValueId(Graph&)> build;
  std::map<int, std::pair<double, double>> ranges = {};
  LowerCase make() const {
    LowerCase c;
    c.name = name;
    c.g.name = name;
    c.g.mark_output(build(c.g));
    c.ranges = ranges;
    return c;
  }
};
inline void PrintTo(const Builder& b, std::ostream* os) { *os << b.name; }
inline std::string builder_name(const ::testing::TestParamInfo<Builder>& i) { return i.param.name; }

inline ValueId in(Graph& g, const Shape& s, DType t = DType::F32) {
  return g.add_input(g.unique_name("in"), t, s);
}

inline Subgraph as_subgraph(const Graph& g) {
  Subgraph s;
  s.graph = g;
  s.kind = "test";
  s.key = g.name;
  return s;
}

inline std::vector<Tensor> random_inputs(const LowerCase& c, uint64_t seed) {
  std::vector<Tensor> ins;
  for (size_t i = 0; i < c.g.inputs.size(); i++) {
    const Value& v = c.g.value(c.g.inputs[i]);
    double lo = -1, hi = 1;
    auto it = c.ranges.find((int)i);
    if (it != c.ranges.end()) std::tie(lo, hi) = it->second;
    ins.push_back(random_tensor(v.dtype, v.shape, seed + 17 * i, lo, hi));
  }
  return ins;
}

// Lowers, optionally schedules, compiles and runs `sub` on `inputs`.
inline Tensor run_lowered(const Subgraph& sub, std::vector<Tensor>& inputs, bool schedule) {
  LoweredTask t = lower_subgraph(sub);
  if (schedule) apply_default_schedule(t, host_target());
  CompiledTask ct = compile_task(t, host_target());
  std::vector<Halide::Buffer<>> bufs;
  for (Tensor& x : inputs) bufs.push_back(halide_view(x.dtype(), x.raw(), x.shape()));
  const Value& ov = sub.graph.value(sub.graph.outputs[0]);
  Tensor out(ov.dtype, ov.shape);
  Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
  ct.run(bufs, ob);
  return out;
}

// Runs the case scheduled (and unscheduled when asked) and compares with interpret().
inline void check_case(const LowerCase& c, bool also_unscheduled = false) {
  SCOPED_TRACE(c.name);
  ASSERT_EQ(c.g.outputs.size(), 1u);
  ASSERT_FALSE(c.g.nodes.empty()) << "case folded away entirely";
  std::vector<Tensor> inputs = random_inputs(c, 1234);
  Tensor ref = interpret(c.g, inputs).at(0);
  Subgraph sub = as_subgraph(c.g);
  Tensor got = run_lowered(sub, inputs, true);
  ASSERT_EQ(got.shape(), ref.shape());
  EXPECT_LE(max_rel_violation(got, ref, c.atol, c.rtol), 1.0) << graph_str(c.g);
  if (also_unscheduled) {
    Tensor plain = run_lowered(sub, inputs, false);
    EXPECT_LE(max_rel_violation(plain, ref, c.atol, c.rtol), 1.0) << "unscheduled\n"
                                                                  << graph_str(c.g);
  }
}

}  // namespace tlm::testing_lower

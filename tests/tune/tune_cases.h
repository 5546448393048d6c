// Small tasks and models for the tuning tests, fast measurement options, and temporary files.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>

#include "graph/graph.h"
#include "partition/partition.h"
#include "tune/bench.h"

namespace tlm::testing_tune {

using V = std::vector<int64_t>;

inline ValueId weight(Graph& g, const Shape& s, uint64_t seed) {
  return g.add_constant(g.unique_name("w"), random_tensor(DType::F32, s, seed));
}

// dense: x[16,48] @ w[48,32] + b, then relu.
inline Graph matmul_graph() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {16, 48});
  ValueId y =
      g.add(Op::Gemm, {x, weight(g, {48, 32}, 1), weight(g, {32}, 2)},
            {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t(0)}, {"transB", int64_t(0)}});
  g.mark_output(g.add(Op::Relu, {y}));
  return g;
}

// conv2d 3x3, pad 1: x[1,8,12,12] -> [1,16,12,12], then relu.
inline Graph conv_graph() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 8, 12, 12});
  ValueId y = g.add(Op::Conv, {x, weight(g, {16, 8, 3, 3}, 3), weight(g, {16}, 4)},
                    {{"strides", V{1, 1}},
                     {"dilations", V{1, 1}},
                     {"pads", V{1, 1, 1, 1}},
                     {"group", int64_t(1)}});
  g.mark_output(g.add(Op::Relu, {y}));
  return g;
}

// A three-task model: conv + relu, global average pool, dense.
inline Graph tiny_model() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 8, 8});
  ValueId c = g.add(Op::Conv, {x, weight(g, {8, 4, 3, 3}, 5), weight(g, {8}, 6)},
                    {{"strides", V{1, 1}},
                     {"dilations", V{1, 1}},
                     {"pads", V{1, 1, 1, 1}},
                     {"group", int64_t(1)}});
  ValueId r = g.add(Op::Relu, {c});
  ValueId p = g.add(Op::GlobalAveragePool, {r});
  ValueId f = g.add(Op::Flatten, {p}, {{"axis", int64_t(1)}});
  g.mark_output(
      g.add(Op::Gemm, {f, weight(g, {8, 10}, 7), weight(g, {10}, 8)},
            {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t(0)}, {"transB", int64_t(0)}}));
  return g;
}

// The first task of a one-anchor graph.
inline Subgraph only_task(const Graph& g) {
  Partition p = partition_graph(g);
  EXPECT_EQ(p.tasks.size(), 1u);
  return p.tasks.at(0).sub;
}

// Short timing: the tests check records, not speed.
inline MeasureOptions fast_measure() {
  MeasureOptions o;
  o.timing.warmup = 1;
  o.timing.repeats = 3;
  o.timing.min_repeat_ms = 2;
  return o;
}

// A fresh path under TMPDIR, removed when the object dies.
class TempFile {
 public:
  explicit TempFile(const std::string& stem) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/tlm_tune_" + stem + "_" +
            std::to_string(getpid()) + ".jsonl";
    std::remove(path_.c_str());
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace tlm::testing_tune

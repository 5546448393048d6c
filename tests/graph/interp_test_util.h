// Helpers for the interpreter tests: run one node on given tensors, build attribute sets.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/interpreter.h"

namespace tlm {
namespace testing_graph {

using I = std::vector<int64_t>;
using F = std::vector<float>;

// Builds a graph with one runtime input per tensor, one node, and interprets it (so the
// whole-graph driver and input checks run too, not only evaluate_node).
inline Tensor run_op(Op op, const std::vector<Tensor>& ins, Attrs attrs) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t k = 0; k < ins.size(); k++)
    ids.push_back(g.add_input("in" + std::to_string(k), ins[k].dtype(), ins[k].shape()));
  g.mark_output(g.add(op, ids, std::move(attrs), "node"));
  return interpret(g, ins).at(0);
}

// Tensor::from<bool> cannot take a std::vector<bool> (no data()); this writes the bytes.
inline Tensor bool_tensor(Shape shape, const std::vector<int>& values) {
  Tensor t(DType::Bool, std::move(shape));
  EXPECT_EQ((int64_t)values.size(), t.numel());
  for (size_t i = 0; i < values.size(); i++) t.raw()[i] = values[i] ? 1 : 0;
  return t;
}

inline std::vector<float> floats_of(const Tensor& t) {
  std::vector<float> v;
  for (int64_t i = 0; i < t.numel(); i++) v.push_back((float)t.get_f(i));
  return v;
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want,
                        float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

inline Attrs conv_attrs(I strides, I dil, I pads, int64_t group) {
  return {{"strides", strides}, {"dilations", dil}, {"pads", pads}, {"group", group}};
}

}  // namespace testing_graph
}  // namespace tlm

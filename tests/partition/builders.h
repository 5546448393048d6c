// Small graph builders for the partition tests: every node goes through Graph::add(), so shapes
// come from shape inference, as in real models.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "partition/partition.h"

namespace tlm::testing_partition {

inline ValueId weight(Graph& g, const Shape& s, uint64_t seed) {
  return g.add_constant(g.unique_name("w"), random_tensor(DType::F32, s, seed));
}

inline ValueId scalar(Graph& g, float v) {
  return g.add_constant(g.unique_name("s"), Tensor::scalar<float>(v));
}

// Conv with a k x k kernel, "same" padding for odd k when stride is 1.
inline ValueId conv(Graph& g, ValueId x, ValueId w, ValueId b = kNoValue, int64_t stride = 1,
                    int64_t group = 1) {
  int64_t k = g.value(w).shape[2], p = k / 2;
  std::vector<ValueId> ins = {x, w};
  if (b != kNoValue) ins.push_back(b);
  return g.add(Op::Conv, ins,
               {{"strides", std::vector<int64_t>{stride, stride}},
                {"dilations", std::vector<int64_t>{1, 1}},
                {"pads", std::vector<int64_t>{p, p, p, p}},
                {"group", group}});
}

inline ValueId unary(Graph& g, Op op, ValueId x) { return g.add(op, {x}); }
inline ValueId binary(Graph& g, Op op, ValueId a, ValueId b) { return g.add(op, {a, b}); }

inline ValueId transpose(Graph& g, ValueId x, std::vector<int64_t> perm) {
  return g.add(Op::Transpose, {x}, {{"perm", perm}});
}
inline ValueId reshape(Graph& g, ValueId x, std::vector<int64_t> shape) {
  return g.add(Op::Reshape, {x}, {{"shape", shape}});
}

// Kinds of the instances, in execution order.
inline std::vector<std::string> instance_kinds(const Partition& p) {
  std::vector<std::string> k;
  for (const TaskInstance& inst : p.instances) k.push_back(p.tasks.at(inst.task).sub.kind);
  return k;
}

// Ops of a task's subgraph, in order.
inline std::vector<Op> sub_ops(const Subgraph& s) {
  std::vector<Op> ops;
  for (const Node& n : s.graph.nodes) ops.push_back(n.op);
  return ops;
}

}  // namespace tlm::testing_partition

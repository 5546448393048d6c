// Fusion rules of partition_graph(): epilogues, prologues, where fusion stops, anchorless groups,
// and the invariants every partition keeps (cover, single output, execution order).
#include <gtest/gtest.h>

#include <set>

#include "partition/builders.h"

namespace tlm {
namespace {

using namespace testing_partition;
using Kinds = std::vector<std::string>;

TEST(Fuse, ConvBiasReluIsOneGroup) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId w = weight(g, {4, 3, 3, 3}, 1), b = weight(g, {1, 4, 1, 1}, 2);
  ValueId y = unary(g, Op::Relu, binary(g, Op::Add, conv(g, x, w), b));
  g.mark_output(y);

  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 1u);
  ASSERT_EQ(p.tasks.size(), 1u);
  const Subgraph& s = p.tasks[0].sub;
  EXPECT_EQ(s.kind, "conv2d_add_relu");
  EXPECT_EQ(sub_ops(s), (std::vector<Op>{Op::Conv, Op::Add, Op::Relu}));
  EXPECT_EQ(p.instances[0].inputs, (std::vector<ValueId>{x, w, b}));
  EXPECT_EQ(p.instances[0].output, y);
  EXPECT_EQ(p.instances[0].ops, (std::vector<std::string>{g.nodes[0].name, g.nodes[1].name,
                                                          g.nodes[2].name}));
  // Canonical names and copied types: activation first, then weights in first-use order.
  ASSERT_EQ(s.graph.inputs.size(), 3u);
  EXPECT_EQ(s.graph.value(s.graph.inputs[0]).name, "in0");
  EXPECT_EQ(s.graph.value(s.graph.inputs[1]).name, "w0");
  EXPECT_EQ(s.graph.value(s.graph.inputs[2]).name, "w1");
  EXPECT_EQ(s.graph.value(s.graph.inputs[1]).shape, (Shape{4, 3, 3, 3}));
  EXPECT_FALSE(s.graph.value(s.graph.inputs[1]).is_constant());  // weights are runtime inputs
  ASSERT_EQ(s.graph.outputs.size(), 1u);
  EXPECT_EQ(s.graph.value(s.graph.outputs[0]).shape, (Shape{1, 4, 8, 8}));
  EXPECT_EQ(s.graph.nodes[0].name, "n0");
}

// conv -> relu -> conv -> add(skip) -> relu: the residual add joins the second conv's group and
// reads the block input as an external activation.
TEST(Fuse, ResidualAddJoinsSecondConv) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 8, 8, 8});
  ValueId w1 = weight(g, {8, 8, 3, 3}, 1), b1 = weight(g, {8}, 2);
  ValueId w2 = weight(g, {8, 8, 3, 3}, 3), b2 = weight(g, {8}, 4);
  ValueId r1 = unary(g, Op::Relu, conv(g, x, w1, b1));
  ValueId y = unary(g, Op::Relu, binary(g, Op::Add, conv(g, r1, w2, b2), x));
  g.mark_output(y);

  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d_relu", "conv2d_add_relu"}));
  ASSERT_EQ(p.instances.size(), 2u);
  EXPECT_EQ(p.instances[0].output, r1);
  EXPECT_EQ(p.instances[1].inputs, (std::vector<ValueId>{r1, x, w2, b2}));
  EXPECT_EQ(p.instances[1].output, y);
  const Graph& sg = p.tasks[p.instances[1].task].sub.graph;
  EXPECT_EQ(sg.value(sg.inputs[1]).name, "in1");
  EXPECT_EQ(sg.nodes[1].op, Op::Add);
  EXPECT_EQ(sg.nodes[1].inputs[1], sg.inputs[1]);  // the skip value
}

TEST(Fuse, TwoConsumersStopTheEpilogue) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId r = unary(g, Op::Relu, conv(g, x, weight(g, {4, 3, 3, 3}, 1)));
  ValueId s = unary(g, Op::Sigmoid, r);
  ValueId y = binary(g, Op::Add, s, unary(g, Op::Tanh, r));
  g.mark_output(y);

  Partition p = partition_graph(g);
  // The sigmoid/tanh/add tree ends in one value: one elemwise group.
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d_relu", "elemwise_sigmoid_tanh_add"}));
  EXPECT_EQ(p.instances[0].output, r);
  EXPECT_EQ(p.instances[1].inputs, (std::vector<ValueId>{r}));
}

// SiLU after a conv, x * sigmoid(x): the two readers of the conv's output gate it and join its
// epilogue; a gate whose function reads another activation, or a third reader, stops it.
TEST(Fuse, GatedEpilogueJoinsTheAnchor) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId c = conv(g, x, weight(g, {4, 3, 3, 3}, 1));
  ValueId y = unary(g, Op::Relu, binary(g, Op::Mul, c, unary(g, Op::Sigmoid, c)));
  g.mark_output(y);
  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d_sigmoid_mul_relu"}));

  // Sigmoid first in the Mul, and a scalar constant in the gate's function: still one group.
  Graph g2;
  ValueId x2 = g2.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId c2 = conv(g2, x2, weight(g2, {4, 3, 3, 3}, 1));
  ValueId f2 = unary(g2, Op::Sigmoid, binary(g2, Op::Mul, c2, scalar(g2, 1.702f)));
  g2.mark_output(binary(g2, Op::Mul, f2, c2));
  p = partition_graph(g2);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d", "elemwise_mul_sigmoid_mul"}))
      << "the gate's function is two nodes: not a gate";

  // The function reads a second activation: conv, then an elemwise tree.
  Graph g3;
  ValueId x3 = g3.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId z3 = g3.add_input("z", DType::F32, {1, 4, 8, 8});
  ValueId c3 = conv(g3, x3, weight(g3, {4, 3, 3, 3}, 1));
  g3.mark_output(binary(g3, Op::Mul, c3, binary(g3, Op::Add, c3, z3)));
  p = partition_graph(g3);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d", "elemwise_add_mul"}));

  // A third reader of the conv's output.
  Graph g4;
  ValueId x4 = g4.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId c4 = conv(g4, x4, weight(g4, {4, 3, 3, 3}, 1));
  ValueId m4 = binary(g4, Op::Mul, c4, unary(g4, Op::Sigmoid, c4));
  g4.mark_output(binary(g4, Op::Add, m4, unary(g4, Op::Neg, c4)));
  p = partition_graph(g4);
  EXPECT_EQ(p.instances.size(), 2u);
  EXPECT_EQ(instance_kinds(p)[0], "conv2d");
}

// A Reshape that merges two row dims of a computed value (flatten_matmul_rows' token grid) stays
// out of the dense's prologue and pulls in none of its producers: a view task of its own, and
// the dense reads [1, 6, K] directly. One that only drops a unit dim, or reads a Transpose
// (BERT's heads merged back), joins the dense.
TEST(Fuse, MergingReshapeIsNotADensePrologue) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 2, 3, 8});
  ValueId r = reshape(g, unary(g, Op::Relu, x), {1, 6, 8});
  g.mark_output(g.add(Op::MatMul, {r, weight(g, {8, 5}, 1)}));
  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"elemwise_relu", "injective_reshape", "dense"}));
  const Graph& dense = p.tasks[p.instances[2].task].sub.graph;
  EXPECT_EQ(dense.value(dense.inputs[0]).shape, (Shape{1, 6, 8}));

  Graph g2;
  ValueId x2 = g2.add_input("x", DType::F32, {1, 6, 8});
  ValueId r2 = reshape(g2, unary(g2, Op::Relu, x2), {6, 8});
  g2.mark_output(g2.add(Op::MatMul, {r2, weight(g2, {8, 5}, 1)}));
  EXPECT_EQ(instance_kinds(partition_graph(g2)), (Kinds{"elemwise_relu", "dense"}));

  Graph g3;
  ValueId x3 = g3.add_input("x", DType::F32, {1, 2, 3, 8});
  ValueId r3 = reshape(g3, transpose(g3, x3, {0, 2, 1, 3}), {1, 3, 16});
  g3.mark_output(g3.add(Op::MatMul, {r3, weight(g3, {16, 5}, 1)}));
  EXPECT_EQ(instance_kinds(partition_graph(g3)), (Kinds{"dense"}));
}

TEST(Fuse, GraphOutputInTheMiddleStopsFusion) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId c = conv(g, x, weight(g, {4, 3, 3, 3}, 1));
  ValueId r = unary(g, Op::Relu, c);
  ValueId n = unary(g, Op::Neg, r);
  g.mark_output(r);
  g.mark_output(n);
  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d_relu", "elemwise_neg"}));

  // Marking the conv output itself keeps relu out of the conv group.
  g.outputs = {c, n};
  p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"conv2d", "elemwise_relu_neg"}));
}

TEST(Fuse, GraphOutputProducerIsNotAPrologue) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {4, 8});
  ValueId t = transpose(g, x, {1, 0});
  ValueId m = g.add(Op::MatMul, {t, weight(g, {4, 5}, 1)});
  g.outputs = {t, m};
  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"injective_transpose", "dense"}));
}

TEST(Fuse, InjectivePrologueJoinsMatMul) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 12});
  ValueId t = transpose(g, reshape(g, x, {2, 3, 4}), {0, 2, 1});  // [2,4,3]
  ValueId w = weight(g, {3, 5}, 1);
  ValueId y = g.add(Op::MatMul, {t, w});
  g.mark_output(y);

  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 1u);
  const Subgraph& s = p.tasks[0].sub;
  EXPECT_EQ(s.kind, "dense");  // prologue ops are not named; rhs without batch dims
  EXPECT_EQ(sub_ops(s), (std::vector<Op>{Op::Reshape, Op::Transpose, Op::MatMul}));
  EXPECT_EQ(p.instances[0].inputs, (std::vector<ValueId>{x, w}));
}

TEST(Fuse, AttentionScoresAreBatchMatmulWithEpilogue) {
  Graph g;
  ValueId q = g.add_input("q", DType::F32, {2, 4, 8});
  ValueId k = g.add_input("k", DType::F32, {2, 4, 8});
  ValueId s = g.add(Op::MatMul, {q, transpose(g, k, {0, 2, 1})});
  ValueId y = g.add(Op::Softmax, {binary(g, Op::Div, s, scalar(g, 8.f))}, {{"axis", int64_t{2}}});
  g.mark_output(y);

  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"batch_matmul_div", "softmax"}));
  const Subgraph& mm = p.tasks[p.instances[0].task].sub;
  EXPECT_EQ(sub_ops(mm), (std::vector<Op>{Op::Transpose, Op::MatMul, Op::Div}));
  // The scalar divisor stays inside: two activation inputs, no weights.
  EXPECT_EQ(p.instances[0].inputs, (std::vector<ValueId>{k, q}));
}

TEST(Fuse, StandaloneInjectiveChainIsOneGroup) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 3, 4});
  ValueId y = reshape(g, transpose(g, reshape(g, x, {6, 4}), {1, 0}), {24});
  g.mark_output(y);
  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p), (Kinds{"injective_reshape_transpose_reshape"}));
  EXPECT_EQ(p.tasks[0].sub.flops, 0);
}

TEST(Fuse, KindNames) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 8, 8});
  ValueId d = conv(g, x, weight(g, {4, 1, 3, 3}, 1), kNoValue, 1, 4);
  ValueId gc = conv(g, d, weight(g, {4, 2, 3, 3}, 2), kNoValue, 1, 2);
  ValueId e = gc;  // six elementwise ops: the name lists four, then "_etc"
  for (Op op : {Op::Relu, Op::Neg, Op::Abs, Op::Exp, Op::Sigmoid, Op::Tanh}) e = unary(g, op, e);
  ValueId pool = g.add(Op::MaxPool, {e},
                       {{"kernel_shape", std::vector<int64_t>{2, 2}},
                        {"strides", std::vector<int64_t>{2, 2}},
                        {"pads", std::vector<int64_t>{0, 0, 0, 0}},
                        {"dilations", std::vector<int64_t>{1, 1}},
                        {"ceil_mode", int64_t{0}}});
  ValueId gap = g.add(Op::GlobalAveragePool, {pool});
  ValueId flat = reshape(g, gap, {1, 4});
  ValueId fc =
      g.add(Op::Gemm, {flat, weight(g, {4, 10}, 3), weight(g, {10}, 4)},
            {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t{0}}, {"transB", int64_t{0}}});
  ValueId ln = g.add(Op::LayerNormalization, {fc, weight(g, {10}, 5)},
                     {{"axis", int64_t{1}}, {"epsilon", 1e-5f}});
  ValueId mean =
      g.add(Op::ReduceMean, {ln}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{1}}});
  g.mark_output(mean);

  Partition p = partition_graph(g);
  EXPECT_EQ(instance_kinds(p),
            (Kinds{"depthwise_conv2d", "group_conv2d_relu_neg_abs_exp_etc", "max_pool2d",
                   "global_avg_pool2d", "dense", "layer_norm", "reduce_mean"}));
  // The flatten-like reshape before Gemm is its prologue.
  EXPECT_EQ(sub_ops(p.tasks[p.instances[4].task].sub), (std::vector<Op>{Op::Reshape, Op::Gemm}));
}

// Elementwise producers are not a prologue: fused into a conv they would be recomputed for every
// read; they form their own group that runs once before it.
TEST(Fuse, ElemwiseProducersOfAnAnchorAreNotPrologue) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId scaled = binary(g, Op::Mul, x, scalar(g, 0.5f));
  ValueId y =
      conv(g, binary(g, Op::Sub, scaled, weight(g, {1, 3, 1, 1}, 1)), weight(g, {4, 3, 3, 3}, 2));
  g.mark_output(y);
  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 2u);
  EXPECT_EQ(sub_ops(p.tasks[p.instances[0].task].sub), (std::vector<Op>{Op::Mul, Op::Sub}));
  EXPECT_EQ(p.tasks[p.instances[1].task].sub.kind, "conv2d");
  EXPECT_EQ(sub_ops(p.tasks[p.instances[1].task].sub), (std::vector<Op>{Op::Conv}));
}

// A ResNet-like stem and two blocks, the second with a strided downsample branch, plus a head:
// every node lands in exactly one group, every group has one output that no other group
// computes, and each instance runs after the producers of its inputs.
TEST(Fuse, CoverAndExecutionOrder) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 16, 16});
  ValueId h = unary(g, Op::Relu, conv(g, x, weight(g, {8, 4, 3, 3}, 1), weight(g, {8}, 2)));
  ValueId r = unary(g, Op::Relu, conv(g, h, weight(g, {8, 8, 3, 3}, 3)));
  h = unary(g, Op::Relu, binary(g, Op::Add, conv(g, r, weight(g, {8, 8, 3, 3}, 4)), h));
  // Downsample branch built *before* the main path's second conv, so topological node order
  // and group order differ.
  ValueId skip = conv(g, h, weight(g, {16, 8, 1, 1}, 5), kNoValue, 2);
  r = unary(g, Op::Relu, conv(g, h, weight(g, {16, 8, 3, 3}, 6), kNoValue, 2));
  ValueId main = conv(g, r, weight(g, {16, 16, 3, 3}, 7));
  h = unary(g, Op::Relu, binary(g, Op::Add, main, skip));
  ValueId flat = reshape(g, g.add(Op::GlobalAveragePool, {h}), {1, 16});
  ValueId logits = g.add(Op::MatMul, {flat, weight(g, {16, 10}, 8)});
  g.mark_output(g.add(Op::Softmax, {logits}, {{"axis", int64_t{1}}}));

  std::vector<FusedGroup> groups = fuse_groups(g);
  std::vector<int> seen(g.nodes.size(), 0);
  for (const FusedGroup& grp : groups)
    for (int i : grp.nodes) seen.at(i)++;
  for (size_t i = 0; i < seen.size(); i++) EXPECT_EQ(seen[i], 1) << "node " << i;

  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), groups.size());
  std::set<ValueId> ready(g.inputs.begin(), g.inputs.end());
  for (size_t v = 0; v < g.values.size(); v++)
    if (g.values[v].is_constant()) ready.insert((ValueId)v);
  for (const TaskInstance& inst : p.instances) {
    for (ValueId in : inst.inputs) EXPECT_TRUE(ready.count(in)) << "input " << in << " not ready";
    EXPECT_FALSE(ready.count(inst.output)) << "value " << inst.output << " computed twice";
    ready.insert(inst.output);
    EXPECT_EQ(p.tasks[inst.task].sub.graph.inputs.size(), inst.inputs.size());
  }
  // Each instance names the nodes it computes: the group's, in node order, every node once.
  for (size_t i = 0; i < groups.size(); i++) {
    std::vector<std::string> names;
    for (int n : groups[i].nodes) names.push_back(g.nodes[n].name);
    EXPECT_EQ(p.instances[i].ops, names) << "instance " << i;
  }
  EXPECT_TRUE(ready.count(g.outputs[0]));
  // The residual add joined whichever conv came first in node order: the downsample one.
  EXPECT_EQ(instance_kinds(p),
            (Kinds{"conv2d_relu", "conv2d_relu", "conv2d_add_relu", "conv2d_relu", "conv2d",
                   "conv2d_add_relu", "global_avg_pool2d", "dense", "softmax"}));
}

}  // namespace
}  // namespace tlm

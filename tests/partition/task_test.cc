// Tasks: de-duplication by canonical key, what enters the key, FLOP counts, and the task table.
#include <gtest/gtest.h>

#include <sstream>

#include "graph/passes.h"
#include "partition/builders.h"

namespace tlm {
namespace {

using namespace testing_partition;

TEST(Task, SameShapesDifferentWeightsAreOneTask) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 8, 8});
  ValueId h = unary(g, Op::Relu, conv(g, x, weight(g, {4, 4, 3, 3}, 1), weight(g, {4}, 2)));
  ValueId y = unary(g, Op::Relu, conv(g, h, weight(g, {4, 4, 3, 3}, 3), weight(g, {4}, 4)));
  g.mark_output(y);

  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 2u);
  ASSERT_EQ(p.tasks.size(), 1u);
  EXPECT_EQ(p.tasks[0].weight, 2);
  EXPECT_EQ(p.tasks[0].id, 0);
  EXPECT_EQ(p.instances[0].task, 0);
  EXPECT_EQ(p.instances[1].task, 0);
  EXPECT_NE(p.instances[0].inputs[1], p.instances[1].inputs[1]);  // each binds its own weights
}

TEST(Task, ScalarConstantsAreInlineAndPartOfTheKey) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 8});
  ValueId a = binary(g, Op::Mul, x, scalar(g, 2.f));
  ValueId b = binary(g, Op::Mul, x, scalar(g, 3.f));
  ValueId c = binary(g, Op::Mul, x, scalar(g, 2.f));  // another constant, same value as a's
  for (ValueId v : {a, b, c}) g.mark_output(v);

  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 3u);
  ASSERT_EQ(p.tasks.size(), 2u);
  EXPECT_NE(p.tasks[0].sub.key, p.tasks[1].sub.key);
  EXPECT_EQ(p.tasks[0].weight, 2);
  EXPECT_EQ(p.tasks[1].weight, 1);
  EXPECT_EQ(p.instances[2].task, p.instances[0].task);
  const Graph& sg = p.tasks[0].sub.graph;
  ASSERT_EQ(sg.inputs.size(), 1u);  // only x: the scalar stays a constant inside
  const Value& k = sg.value(sg.nodes[0].inputs[1]);
  ASSERT_TRUE(k.is_constant());
  EXPECT_EQ(k.data->get_f(0), 2.0);
  EXPECT_EQ(p.tasks[0].sub.kind, "elemwise_mul");
}

TEST(Task, KeySeesShapesAttributesAndRolesButNotWeightValues) {
  auto build = [](Shape x_shape, int64_t stride, uint64_t seed, bool weight_as_input) {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, x_shape);
    ValueId w = weight_as_input ? g.add_input("w", DType::F32, {4, 3, 3, 3})
                                : weight(g, {4, 3, 3, 3}, seed);
    g.mark_output(conv(g, x, w, kNoValue, stride));
    Partition p = partition_graph(g);
    TLM_CHECK(p.tasks.size() == 1) << "one task expected";
    return p.tasks[0].sub.key;
  };
  std::string base = build({1, 3, 8, 8}, 1, 1, false);
  EXPECT_EQ(base, build({1, 3, 8, 8}, 1, 99, false));
  EXPECT_NE(base, build({1, 3, 16, 16}, 1, 1, false));
  EXPECT_NE(base, build({1, 3, 8, 8}, 2, 1, false));
  EXPECT_NE(base, build({1, 3, 8, 8}, 1, 1, true));
  EXPECT_NE(base.find("Conv"), std::string::npos);
  EXPECT_NE(base.find("strides=[1,1]"), std::string::npos);
}

// Exporters differ in operand order (PyTorch writes a Linear's bias add as Add(bias, matmul)):
// after prepare_graph both orders are one task, with the weight second; a scalar stays first.
TEST(Task, CommutedWeightOperandIsTheSameTask) {
  auto build = [](bool bias_first) {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 16, 32});
    ValueId mm = g.add(Op::MatMul, {x, weight(g, {32, 48}, 1)});
    ValueId b = weight(g, {48}, 2);
    ValueId y = bias_first ? binary(g, Op::Add, b, mm) : binary(g, Op::Add, mm, b);
    ValueId s = weight(g, {48}, 3);
    ValueId z = bias_first ? binary(g, Op::Mul, s, y) : binary(g, Op::Mul, y, s);
    g.mark_output(binary(g, Op::Mul, scalar(g, 0.5f), z));
    prepare_graph(g);
    Partition p = partition_graph(g);
    TLM_CHECK(p.tasks.size() == 1) << "one task expected";
    return p.tasks[0].sub.key;
  };
  const std::string key = build(false);
  EXPECT_EQ(build(true), key);
  EXPECT_NE(key.find("Add(%0, w1)"), std::string::npos) << key;
  EXPECT_NE(key.find("Mul(%1, w2)"), std::string::npos) << key;
  EXPECT_NE(key.find("Mul(f32[]=0x1p-1, %2)"), std::string::npos) << key;
}

// is_view_subgraph: a group of Reshape/Flatten/Squeeze/Unsqueeze only re-labels its input's bytes;
// any other movement (a transpose, a slice) or arithmetic makes it a real task.
TEST(ViewSubgraph, OnlyRowMajorReshapesAreViews) {
  auto only = [](Graph g) {
    Partition p = partition_graph(g);
    EXPECT_EQ(p.tasks.size(), 1u);
    return is_view_subgraph(p.tasks.at(0).sub.graph);
  };
  auto input = [](Graph& g) { return g.add_input("x", DType::F32, {2, 3, 4}); };
  {
    Graph g;
    ValueId r = reshape(g, input(g), {6, 4});
    ValueId u = g.add(Op::Unsqueeze, {r}, {{"axes", std::vector<int64_t>{0}}});
    ValueId f = g.add(Op::Flatten, {u}, {{"axis", int64_t(1)}});
    g.mark_output(g.add(Op::Squeeze, {f}, {{"axes", std::vector<int64_t>{0}}}));
    EXPECT_TRUE(only(g)) << "reshape, unsqueeze, flatten, squeeze";
  }
  {
    Graph g;
    g.mark_output(transpose(g, input(g), {0, 2, 1}));
    EXPECT_FALSE(only(g)) << "a transpose moves bytes";
  }
  {
    Graph g;
    g.mark_output(unary(g, Op::Relu, reshape(g, input(g), {6, 4})));
    EXPECT_FALSE(only(g)) << "reshape then relu computes";
  }
  {
    Graph g;
    g.mark_output(g.add(Op::Slice, {input(g)},
                        {{"starts", std::vector<int64_t>{0, 0, 0}},
                         {"ends", std::vector<int64_t>{2, 3, 2}},
                         {"steps", std::vector<int64_t>{1, 1, 1}}}));
    EXPECT_FALSE(only(g)) << "a slice drops bytes";
  }
}

TEST(Flops, ConvExact) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 8, 8});
  ValueId y = conv(g, x, weight(g, {4, 3, 3, 3}, 1), weight(g, {4}, 2));  // [1,4,8,8]
  ValueId z = conv(g, y, weight(g, {4, 2, 3, 3}, 3), kNoValue, 2, 2);     // [1,4,4,4]
  g.mark_output(unary(g, Op::Relu, z));
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.value(z).shape, (Shape{1, 4, 4, 4}));
  EXPECT_EQ(node_flops(g, g.nodes[0]), 2.0 * 256 * 27 + 256);  // 2*|Y|*Cin*k*k + bias
  EXPECT_EQ(node_flops(g, g.nodes[1]), 2.0 * 64 * 2 * 9);      // Cin/group = 2
  EXPECT_EQ(node_flops(g, g.nodes[2]), 64.0);
  Partition p = partition_graph(g);
  ASSERT_EQ(p.instances.size(), 2u);
  EXPECT_EQ(p.tasks[p.instances[1].task].sub.flops, 2.0 * 64 * 2 * 9 + 64);
}

TEST(Flops, MatMulAndGemmExact) {
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {2, 3, 4});
  ValueId m = g.add(Op::MatMul, {a, weight(g, {4, 5}, 1)});  // [2,3,5]
  ValueId b = g.add_input("b", DType::F32, {4, 3});
  ValueId gm =
      g.add(Op::Gemm, {b, weight(g, {4, 5}, 2), weight(g, {5}, 3)},
            {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t{1}}, {"transB", int64_t{0}}});
  g.mark_output(m);
  g.mark_output(gm);
  EXPECT_EQ(node_flops(g, g.nodes[0]), 2.0 * 2 * 3 * 5 * 4);   // 2 * batch * M * N * K
  EXPECT_EQ(node_flops(g, g.nodes[1]), 2.0 * 3 * 5 * 4 + 15);  // transA: K = A.shape[0]
}

TEST(Flops, ReductionsAndDataMovement) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 6});
  ValueId s = g.add(Op::Softmax, {x}, {{"axis", int64_t{1}}});
  ValueId r =
      g.add(Op::ReduceSum, {s}, {{"axes", std::vector<int64_t>{1}}, {"keepdims", int64_t{0}}});
  ValueId t = transpose(g, x, {1, 0});
  g.mark_output(r);
  g.mark_output(t);
  EXPECT_EQ(node_flops(g, g.nodes[0]), 5.0 * 12);
  EXPECT_EQ(node_flops(g, g.nodes[1]), 12.0);
  EXPECT_EQ(node_flops(g, g.nodes[2]), 0.0);
}

TEST(TaskTable, ColumnsAndShares) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 8, 8});
  ValueId h = x;
  for (uint64_t i = 0; i < 3; i++)
    h = unary(g, Op::Relu, conv(g, h, weight(g, {4, 4, 3, 3}, i), weight(g, {4}, 10 + i)));
  ValueId flat = reshape(g, g.add(Op::GlobalAveragePool, {h}), {1, 4});
  g.mark_output(g.add(Op::MatMul, {flat, weight(g, {4, 10}, 20)}));

  Partition p = partition_graph(g);
  ASSERT_EQ(p.tasks.size(), 3u);
  std::string table = task_table(p);
  std::istringstream lines(table);
  std::string header;
  std::getline(lines, header);
  for (const char* col : {"id", "kind", "output", "inputs", "FLOPs", "weight", "share"})
    EXPECT_NE(header.find(col), std::string::npos) << col;

  double share_sum = 0;
  int rows = 0;
  std::string line;
  std::string total_line;
  while (std::getline(lines, line)) {
    if (line.rfind("total:", 0) == 0) {
      total_line = line;
      continue;
    }
    rows++;
    size_t pct = line.rfind('%');
    ASSERT_NE(pct, std::string::npos) << line;
    size_t start = line.rfind(' ', pct);
    share_sum += std::stod(line.substr(start + 1, pct - start - 1));
  }
  EXPECT_EQ(rows, 3);
  EXPECT_NEAR(share_sum, 100.0, 0.2);
  EXPECT_EQ(table.find("conv2d_add_relu"), std::string::npos) << table;  // bias is a Conv input
  EXPECT_NE(table.find("conv2d_relu"), std::string::npos);
  EXPECT_NE(table.find("w[4,4,3,3]"), std::string::npos);
  EXPECT_NE(table.find("KFLOP"), std::string::npos);
  EXPECT_EQ(total_line, "total: 3 tasks, 5 instances, 57.2 KFLOP");
}

}  // namespace
}  // namespace tlm

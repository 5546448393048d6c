// Graph passes: fold_batchnorm preserves results (interpret before/after on random inputs) and
// removes the BN where it should; fold_constants, canonicalize_operands, remove_dead and
// prepare_graph's checks; fold_zero_padding moves zero borders into their Conv or AveragePool
// and leaves every other padding alone (results compared before/after); flatten_matmul_rows
// flattens narrow token grids only.
#include "graph/passes.h"

#include <gtest/gtest.h>

#include "graph/interp_test_util.h"

namespace tlm {
namespace {

using namespace testing_graph;

int count_op(const Graph& g, Op op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

// A BN over `x` with random constant parameters (positive variance).
ValueId add_bn(Graph& g, ValueId x, int64_t channels, uint64_t seed) {
  auto c = [&](double lo, double hi, uint64_t s) {
    return g.add_constant(g.unique_name("bnp"),
                          random_tensor(DType::F32, {channels}, seed + s, lo, hi));
  };
  return g.add(Op::BatchNormalization, {x, c(0.5, 2, 1), c(-1, 1, 2), c(-1, 1, 3), c(0.1, 2, 4)},
               {{"epsilon", 1e-5f}});
}

void expect_same_results(const Graph& before, const Graph& after, const std::vector<Tensor>& in) {
  std::vector<Tensor> a = interpret(before, in), b = interpret(after, in);
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); k++) EXPECT_LE(max_rel_violation(b[k], a[k], 1e-5, 1e-4), 1.0);
}

TEST(FoldBatchnorm, ConvFoldsIntoWeights) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 4, 7, 7});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {6, 2, 3, 3}, 1));
  ValueId b = g.add_constant("b", random_tensor(DType::F32, {6}, 2));
  ValueId conv = g.add(Op::Conv, {x, w, b}, conv_attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 2));
  ValueId bn = add_bn(g, conv, 6, 10);
  g.mark_output(g.add(Op::Relu, {bn}));
  Graph before = g;
  fold_batchnorm(g);
  EXPECT_EQ(count_op(g, Op::BatchNormalization), 0);
  EXPECT_EQ(count_op(g, Op::Mul), 0);
  EXPECT_EQ(g.nodes.size(), 2u);  // Conv, Relu
  g.remove_dead();
  expect_same_results(before, g, {random_tensor(DType::F32, {2, 4, 7, 7}, 3)});
}

TEST(FoldBatchnorm, ConvWithoutBiasAndConvTranspose) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 5, 5});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {3, 4, 1, 1}, 1));
  ValueId c1 = g.add(Op::Conv, {x, w}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1));
  ValueId b1 = add_bn(g, c1, 3, 20);
  Attrs ta = conv_attrs({2, 2}, {1, 1}, {0, 1, 1, 0}, 1);
  ta["output_padding"] = I{1, 0};
  ValueId wt = g.add_constant("wt", random_tensor(DType::F32, {3, 2, 3, 3}, 4));
  ValueId bt = g.add_constant("bt", random_tensor(DType::F32, {2}, 5));
  ValueId ct = g.add(Op::ConvTranspose, {b1, wt, bt}, ta);
  g.mark_output(add_bn(g, ct, 2, 30));
  Graph before = g;
  fold_batchnorm(g);
  EXPECT_EQ(count_op(g, Op::BatchNormalization), 0);
  EXPECT_EQ(g.nodes.size(), 2u);
  expect_same_results(before, g, {random_tensor(DType::F32, {1, 4, 5, 5}, 6)});
}

TEST(FoldBatchnorm, GroupedConvTranspose) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 4, 3, 3});
  Attrs ta = conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 2);
  ta["output_padding"] = I{0, 0};
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {4, 3, 2, 2}, 7));
  ValueId ct = g.add(Op::ConvTranspose, {x, w}, ta);
  g.mark_output(add_bn(g, ct, 6, 40));
  Graph before = g;
  fold_batchnorm(g);
  EXPECT_EQ(g.nodes.size(), 1u);
  expect_same_results(before, g, {random_tensor(DType::F32, {1, 4, 3, 3}, 8)});
}

TEST(FoldBatchnorm, OtherBatchnormsBecomeMulAdd) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 3, 4, 4});
  // (1) BN on a graph input; (2) BN after a conv whose output has a second reader.
  ValueId bn1 = add_bn(g, x, 3, 50);
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {3, 3, 1, 1}, 9));
  ValueId conv = g.add(Op::Conv, {bn1, w}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1));
  ValueId bn2 = add_bn(g, conv, 3, 60);
  g.mark_output(g.add(Op::Add, {bn2, conv}));
  Graph before = g;
  fold_batchnorm(g);
  EXPECT_EQ(count_op(g, Op::BatchNormalization), 0);
  EXPECT_EQ(count_op(g, Op::Mul), 2);
  EXPECT_EQ(count_op(g, Op::Add), 3);
  for (const Node& n : g.nodes) {
    if (n.op == Op::Mul) {
      EXPECT_EQ(g.value(n.inputs[1]).shape, (Shape{1, 3, 1, 1}));
    }
  }
  expect_same_results(before, g, {random_tensor(DType::F32, {2, 3, 4, 4}, 10)});
}

TEST(Passes, FoldConstantsAfterEdit) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {3});
  ValueId a = g.add(Op::Relu, {x});
  ValueId y = g.add(Op::Add, {a, a});
  g.mark_output(y);
  // Rewire the Relu to a constant input: fold_constants should evaluate Relu and then Add.
  g.nodes[0].inputs[0] = g.add_constant("k", Tensor::from<float>({3}, {-1, 2, 3}));
  fold_constants(g);
  EXPECT_TRUE(g.nodes.empty());
  ASSERT_TRUE(g.value(y).is_constant());
  expect_near(floats_of(*g.value(y).data), {0, 4, 6});
}

TEST(Passes, CanonicalizeOperandsPutsWeightsSecond) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 3});
  ValueId y = g.add_input("y", DType::F32, {2, 3});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {3}, 1));
  ValueId a = g.add(Op::Add, {w, x});                                                // swapped
  ValueId m = g.add(Op::Mul, {w, a});                                                // swapped
  ValueId s = g.add(Op::Mul, {g.add_constant("s", Tensor::scalar<float>(2.f)), m});  // scalar: kept
  ValueId d = g.add(Op::Sub, {w, s});     // not commutative: kept
  g.mark_output(g.add(Op::Add, {y, d}));  // activations: kept
  Graph before = g;
  canonicalize_operands(g);
  ASSERT_EQ(g.nodes.size(), 5u);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<ValueId>{x, w}));
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<ValueId>{a, w}));
  EXPECT_EQ(g.nodes[2].inputs[1], m);
  EXPECT_EQ(g.nodes[3].inputs, (std::vector<ValueId>{w, s}));
  EXPECT_EQ(g.nodes[4].inputs, (std::vector<ValueId>{y, d}));
  expect_same_results(before, g,
                      {random_tensor(DType::F32, {2, 3}, 2), random_tensor(DType::F32, {2, 3}, 3)});
}

TEST(Passes, RemoveDead) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {3});
  ValueId unused_in = g.add_input("u", DType::F32, {2});
  g.add(Op::Exp, {x});  // dead
  g.add_constant("dead_const", Tensor::from<float>({1}, {1}));
  ValueId y = g.add(Op::Neg, {x});
  g.mark_output(y);
  g.remove_dead();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, Op::Neg);
  EXPECT_EQ(g.values.size(), 3u);  // x, u (inputs stay), neg output
  EXPECT_EQ(g.inputs.size(), 2u);
  (void)unused_in;
  expect_near(
      floats_of(interpret(g, {Tensor::from<float>({3}, {1, 2, 3}), Tensor(DType::F32, {2})})[0]),
      {-1, -2, -3});
}

// x padded with constant borders along H (1 before, 2 after) and then W (2 before, 1 after), as
// the importer writes an ONNX Pad; `fill` the border value.
ValueId pad_hw(Graph& g, ValueId x, float fill) {
  Shape s = g.value(x).shape;
  auto border = [&](int64_t axis, int64_t n) {
    Shape b = s;
    b[axis] = n;
    return g.add_constant(g.unique_name("border"),
                          Tensor::from<float>(b, std::vector<float>(numel(b), fill)));
  };
  ValueId h = g.add(Op::Concat, {border(2, 1), x, border(2, 2)}, {{"axis", (int64_t)2}});
  s = g.value(h).shape;
  return g.add(Op::Concat, {border(3, 2), h, border(3, 1)}, {{"axis", (int64_t)3}});
}

Attrs pool_attrs(I pads, int64_t count_include_pad, int64_t ceil_mode) {
  return {{"kernel_shape", I{3, 3}}, {"strides", I{2, 2}}, {"pads", pads},
          {"count_include_pad", count_include_pad}, {"ceil_mode", ceil_mode}};
}

TEST(Passes, ZeroPaddingFoldsIntoConvAndAveragePool) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 7, 8});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {4, 3, 3, 3}, 1));
  ValueId conv = g.add(Op::Conv, {pad_hw(g, x, 0.f), w}, conv_attrs({1, 1}, {1, 1}, {1, 0, 0, 1}, 1));
  ValueId pool = g.add(Op::AveragePool, {pad_hw(g, x, 0.f)}, pool_attrs({0, 0, 0, 0}, 0, 0));
  g.mark_output(conv);
  g.mark_output(pool);
  Graph before = g;
  EXPECT_EQ(fold_zero_padding(g), 2);
  g.remove_dead();
  EXPECT_EQ(count_op(g, Op::Concat), 0);
  for (const Node& n : g.nodes) {
    EXPECT_EQ(n.inputs[0], g.inputs[0]) << op_name(n.op);
    if (n.op == Op::Conv) EXPECT_EQ(n.ints("pads"), (I{2, 2, 2, 2}));  // its own + the border
    if (n.op == Op::AveragePool) {
      EXPECT_EQ(n.ints("pads"), (I{1, 2, 2, 1}));
      EXPECT_EQ(n.i("count_include_pad"), 1);  // the Pad's zeros are counted
    }
  }
  expect_same_results(before, g, {random_tensor(DType::F32, {1, 3, 7, 8}, 2)});
}

TEST(Passes, OtherPaddingStaysData) {
  // A border that is not zero, a MaxPool (its pads are -inf), an AveragePool that excludes its
  // own pads or lets ceil_mode windows run past the border: nothing folds, results unchanged.
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 2, 6, 6});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {2, 2, 3, 3}, 3));
  g.mark_output(g.add(Op::Conv, {pad_hw(g, x, 0.5f), w}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)));
  g.mark_output(g.add(Op::MaxPool, {pad_hw(g, x, 0.f)},
                      {{"kernel_shape", I{3, 3}}, {"strides", I{1, 1}}, {"pads", I{0, 0, 0, 0}},
                       {"dilations", I{1, 1}}, {"ceil_mode", (int64_t)0}}));
  g.mark_output(g.add(Op::AveragePool, {pad_hw(g, x, 0.f)}, pool_attrs({1, 1, 1, 1}, 0, 0)));
  g.mark_output(g.add(Op::AveragePool, {pad_hw(g, x, 0.f)}, pool_attrs({0, 0, 0, 0}, 0, 1)));
  Graph before = g;
  EXPECT_EQ(fold_zero_padding(g), 0);
  EXPECT_EQ(count_op(g, Op::Concat), 8);
  expect_same_results(before, g, {random_tensor(DType::F32, {1, 2, 6, 6}, 4)});
}

// ConvNeXt's MLP over 7 x 7 tokens: the MatMul runs over [1, 49, K] with its bias add and scale
// (per-column constants), then one Reshape back into the value the GELU-like tail reads; a
// MatMul over [1, 12, K] (one row dim: BERT's form), one over 56-wide rows, and one whose weight
// is computed stay as they are. Results unchanged.
TEST(Passes, MatMulsOverNarrowTokenGridsRunOverTheRowsFlattened) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 7, 7, 8});
  ValueId w = g.add_constant("w", random_tensor(DType::F32, {8, 24}, 1));
  ValueId b = g.add_constant("b", random_tensor(DType::F32, {24}, 2));
  ValueId s = g.add_constant("s", random_tensor(DType::F32, {24}, 3));
  ValueId y = g.add(Op::Mul, {g.add(Op::Add, {g.add(Op::MatMul, {x, w}), b}), s});
  ValueId gelu_like = g.add(Op::Mul, {y, g.add(Op::Sigmoid, {y})});
  g.mark_output(gelu_like);
  ValueId t = g.add_input("t", DType::F32, {1, 12, 8});
  g.mark_output(g.add(Op::Add, {g.add(Op::MatMul, {t, w}), b}));
  ValueId wide = g.add_input("wide", DType::F32, {1, 2, 56, 8});
  g.mark_output(g.add(Op::MatMul, {wide, w}));
  ValueId wx = g.add_input("wx", DType::F32, {8, 24});
  g.mark_output(g.add(Op::MatMul, {x, wx}));
  Graph before = g;
  EXPECT_EQ(flatten_matmul_rows(g), 1);
  g.remove_dead();
  int flat_matmuls = 0;
  for (const Node& n : g.nodes) {
    const Shape& os = g.value(n.outputs[0]).shape;
    if (n.op == Op::MatMul && os == Shape{1, 49, 24}) flat_matmuls++;
    if (n.op == Op::Add && os == Shape{1, 49, 24}) EXPECT_EQ(n.inputs[1], b);
    if (n.op == Op::Mul && os == Shape{1, 49, 24}) EXPECT_EQ(n.inputs[1], s);
  }
  EXPECT_EQ(flat_matmuls, 1);
  EXPECT_EQ(count_op(g, Op::Reshape), 2);  // x to the rows, the scaled product back
  EXPECT_EQ(count_op(g, Op::MatMul), 4);
  expect_same_results(before, g,
                      {random_tensor(DType::F32, {1, 7, 7, 8}, 4),
                       random_tensor(DType::F32, {1, 12, 8}, 5),
                       random_tensor(DType::F32, {1, 2, 56, 8}, 6),
                       random_tensor(DType::F32, {8, 24}, 7)});
}

TEST(Passes, PrepareGraphRejectsZeroSizeAndConstantOutputs) {
  {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {4});
    ValueId s =
        g.add(Op::Slice, {x}, {{"starts", I{3}}, {"ends", I{1}}, {"steps", I{1}}}, "empty_slice");
    g.mark_output(g.add(Op::Relu, {s}));
    try {
      prepare_graph(g);
      FAIL() << "no error";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("empty_slice"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("zero-size"), std::string::npos) << e.what();
    }
  }
  {
    Graph g;
    g.add_input("x", DType::F32, {4});
    g.mark_output(g.add(Op::Relu, {g.add_constant("c", Tensor::from<float>({1}, {1}))}));
    EXPECT_THROW(prepare_graph(g), UserError);
  }
  {
    // A normal graph passes, with its BN folded and dead nodes removed.
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 2, 3, 3});
    g.add(Op::Exp, {x});
    g.mark_output(add_bn(g, x, 2, 70));
    prepare_graph(g);
    EXPECT_EQ(g.nodes.size(), 2u);  // Mul, Add
    EXPECT_EQ(count_op(g, Op::Exp), 0);
  }
}

}  // namespace
}  // namespace tlm

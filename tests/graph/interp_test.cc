// Reference interpreter: hand-computed cases for the elementwise, reduction and data-movement
// families, broadcasting, dtype rules, and the whole-graph driver's input checks.
#include <gtest/gtest.h>

#include <cmath>

#include "graph/interp_test_util.h"

namespace tlm {
namespace {

using namespace testing_graph;

TEST(InterpElemwise, BroadcastBinary) {
  Tensor a = Tensor::from<float>({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::from<float>({2, 1}, {10, 20});
  Tensor y = run_op(Op::Add, {a, b}, {});
  EXPECT_EQ(y.shape(), (Shape{2, 2, 3}));
  expect_near(floats_of(y), {11, 12, 13, 21, 22, 23, 14, 15, 16, 24, 25, 26});
  expect_near(floats_of(run_op(Op::Sub, {b, Tensor::scalar<float>(1)}, {})), {9, 19});
  expect_near(floats_of(run_op(Op::Mul, {a, b}, {})),
              {10, 20, 30, 20, 40, 60, 40, 50, 60, 80, 100, 120});
  expect_near(floats_of(run_op(Op::Div, {b, Tensor::from<float>({2}, {4, 8})}, {})),
              {2.5f, 1.25f, 5, 2.5f});
  Tensor p = Tensor::from<float>({3}, {2, 3, 4});
  expect_near(floats_of(run_op(Op::Pow, {p, Tensor::scalar<float>(2)}, {})), {4, 9, 16});
  expect_near(floats_of(run_op(Op::Pow, {p, Tensor::scalar<int64_t>(3)}, {})), {8, 27, 64});
  Tensor q = Tensor::from<float>({3}, {3, 3, 3});
  expect_near(floats_of(run_op(Op::Max, {p, q}, {})), {3, 3, 4});
  expect_near(floats_of(run_op(Op::Min, {p, q}, {})), {2, 3, 3});
}

TEST(InterpElemwise, IntegerOps) {
  Tensor a = Tensor::from<int64_t>({4}, {7, -7, 6, -1});
  Tensor b = Tensor::from<int64_t>({4}, {2, 2, -4, 3});
  EXPECT_EQ(run_op(Op::Div, {a, b}, {}).to_i64_vector(), (I{3, -3, -1, 0}));
  EXPECT_EQ(run_op(Op::Sub, {a, b}, {}).to_i64_vector(), (I{5, -9, 10, -4}));
  EXPECT_EQ(run_op(Op::Relu, {a}, {}).to_i64_vector(), (I{7, 0, 6, 0}));
  EXPECT_EQ(run_op(Op::Abs, {a}, {}).to_i64_vector(), (I{7, 7, 6, 1}));
  EXPECT_EQ(run_op(Op::Clip, {a}, {{"min", -2.f}, {"max", 6.f}}).to_i64_vector(),
            (I{6, -2, 6, -1}));
  EXPECT_THROW(run_op(Op::Div, {a, Tensor::scalar<int64_t>(0)}, {}), UserError);
}

TEST(InterpElemwise, ComparisonsAndWhere) {
  Tensor a = Tensor::from<float>({3}, {1, 2, 3});
  Tensor b = Tensor::from<float>({3, 1}, {2, 2, 2});
  Tensor lt = run_op(Op::Less, {a, b}, {});
  EXPECT_EQ(lt.dtype(), DType::Bool);
  EXPECT_EQ(lt.to_i64_vector(), (I{1, 0, 0, 1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(run_op(Op::Greater, {a, Tensor::scalar<float>(1.5f)}, {}).to_i64_vector(),
            (I{0, 1, 1}));
  EXPECT_EQ(run_op(Op::Equal, {a, Tensor::scalar<float>(2)}, {}).to_i64_vector(), (I{0, 1, 0}));
  Tensor cond = bool_tensor({2, 1}, {1, 0});
  Tensor y = run_op(Op::Where, {cond, a, Tensor::scalar<float>(-1)}, {});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  expect_near(floats_of(y), {1, 2, 3, -1, -1, -1});
}

TEST(InterpElemwise, UnaryMath) {
  Tensor x = Tensor::from<float>({5}, {-3, -1, 0, 1, 3});
  expect_near(floats_of(run_op(Op::HardSwish, {x}, {})), {0, -1.f / 3, 0, 2.f / 3, 3});
  expect_near(floats_of(run_op(Op::HardSigmoid, {x}, {{"alpha", 0.2f}, {"beta", 0.5f}})),
              {0, 0.3f, 0.5f, 0.7f, 1});
  expect_near(floats_of(run_op(Op::LeakyRelu, {x}, {{"alpha", 0.1f}})), {-0.3f, -0.1f, 0, 1, 3});
  expect_near(floats_of(run_op(Op::Clip, {x}, {{"min", -1.f}, {"max", INFINITY}})),
              {-1, -1, 0, 1, 3});
  expect_near(floats_of(run_op(Op::Relu, {x}, {})), {0, 0, 0, 1, 3});
  expect_near(floats_of(run_op(Op::Neg, {x}, {})), {3, 1, 0, -1, -3});
  expect_near(floats_of(run_op(Op::Abs, {x}, {})), {3, 1, 0, 1, 3});
  expect_near(floats_of(run_op(Op::Sigmoid, {x}, {})),
              {0.0474259f, 0.2689414f, 0.5f, 0.7310586f, 0.9525741f});
  expect_near(floats_of(run_op(Op::Tanh, {x}, {})),
              {-0.9950548f, -0.7615942f, 0, 0.7615942f, 0.9950548f});
  expect_near(floats_of(run_op(Op::Erf, {x}, {})),
              {-0.9999779f, -0.8427008f, 0, 0.8427008f, 0.9999779f});
  Tensor pos = Tensor::from<float>({3}, {0.25f, 1, 4});
  expect_near(floats_of(run_op(Op::Sqrt, {pos}, {})), {0.5f, 1, 2});
  expect_near(floats_of(run_op(Op::Reciprocal, {pos}, {})), {4, 1, 0.25f});
  expect_near(floats_of(run_op(Op::Log, {pos}, {})), {std::log(0.25f), 0, std::log(4.f)});
  expect_near(floats_of(run_op(Op::Exp, {pos}, {})), {std::exp(0.25f), std::exp(1.f), 54.59815f},
              1e-4f);
}

TEST(InterpElemwise, Cast) {
  Tensor x = Tensor::from<float>({4}, {-2.7f, 0, 0.5f, 3.9f});
  Tensor i = run_op(Op::Cast, {x}, {{"to", int64_t(1)}});
  EXPECT_EQ(i.dtype(), DType::I64);
  EXPECT_EQ(i.to_i64_vector(), (I{-2, 0, 0, 3}));  // truncation toward zero
  Tensor b = run_op(Op::Cast, {x}, {{"to", int64_t(2)}});
  EXPECT_EQ(b.to_i64_vector(), (I{1, 0, 1, 1}));
  expect_near(floats_of(run_op(Op::Cast, {b}, {{"to", int64_t(0)}})), {1, 0, 1, 1});
}

TEST(InterpElemwise, BatchNormalization) {
  // Channel 0: scale 2, B 1, mean 1, var 3 (eps 1) -> 2*(x-1)/2+1 = x; channel 1: identity.
  Tensor x = Tensor::from<float>({1, 2, 1, 2}, {1, 3, 5, 7});
  Tensor y = run_op(Op::BatchNormalization,
                    {x, Tensor::from<float>({2}, {2, 1}), Tensor::from<float>({2}, {1, 0}),
                     Tensor::from<float>({2}, {1, 0}), Tensor::from<float>({2}, {3, 0})},
                    {{"epsilon", 1.f}});
  expect_near(floats_of(y), {1, 3, 5, 7});
}

TEST(InterpReduce, ReduceMeanSum) {
  Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor m = run_op(Op::ReduceMean, {x}, {{"axes", I{1}}, {"keepdims", int64_t(1)}});
  EXPECT_EQ(m.shape(), (Shape{2, 1}));
  expect_near(floats_of(m), {2, 5});
  Tensor s = run_op(Op::ReduceSum, {x}, {{"axes", I{0}}, {"keepdims", int64_t(0)}});
  EXPECT_EQ(s.shape(), (Shape{3}));
  expect_near(floats_of(s), {5, 7, 9});
  Tensor all = run_op(Op::ReduceSum, {x}, {{"axes", I{0, 1}}, {"keepdims", int64_t(0)}});
  EXPECT_EQ(all.shape(), (Shape{}));
  expect_near(floats_of(all), {21});
  Tensor xi = Tensor::from<int64_t>({3}, {1, 2, 4});
  EXPECT_EQ(
      run_op(Op::ReduceMean, {xi}, {{"axes", I{0}}, {"keepdims", int64_t(0)}}).to_i64_vector(),
      (I{2}));  // 7 / 3 truncated
}

TEST(InterpReduce, Softmax) {
  const float ln2 = std::log(2.f);
  Tensor x = Tensor::from<float>({2, 2}, {0, ln2, 0, 0});
  expect_near(floats_of(run_op(Op::Softmax, {x}, {{"axis", int64_t(1)}})),
              {1.f / 3, 2.f / 3, 0.5f, 0.5f});
  // Along axis 0: column 1 is softmax(ln2, 0) = (2/3, 1/3).
  expect_near(floats_of(run_op(Op::Softmax, {x}, {{"axis", int64_t(0)}})),
              {0.5f, 2.f / 3, 0.5f, 1.f / 3});
  // Large values must not overflow (max is subtracted).
  Tensor big = Tensor::from<float>({2}, {1000, 1000});
  expect_near(floats_of(run_op(Op::Softmax, {big}, {{"axis", int64_t(0)}})), {0.5f, 0.5f});
}

TEST(InterpReduce, LayerNormalization) {
  // Row [1, 2, 3, 4]: mean 2.5, variance 1.25.
  Tensor x = Tensor::from<float>({2, 4}, {1, 2, 3, 4, 4, 3, 2, 1});
  Tensor scale = Tensor::from<float>({4}, {1, 1, 2, 2});
  Tensor bias = Tensor::from<float>({4}, {0, 0, 0, 1});
  Tensor y =
      run_op(Op::LayerNormalization, {x, scale, bias}, {{"axis", int64_t(1)}, {"epsilon", 0.f}});
  const float r = 1.f / std::sqrt(1.25f);
  expect_near(floats_of(y), {-1.5f * r, -0.5f * r, 2 * 0.5f * r, 2 * 1.5f * r + 1,  //
                             1.5f * r, 0.5f * r, -2 * 0.5f * r, -2 * 1.5f * r + 1});
  // Over two axes with a broadcast scale, no bias.
  Tensor x3 = Tensor::from<float>({1, 2, 2}, {1, 2, 3, 4});
  Tensor y3 = run_op(Op::LayerNormalization, {x3, Tensor::from<float>({1}, {2})},
                     {{"axis", int64_t(1)}, {"epsilon", 0.f}});
  expect_near(floats_of(y3), {-3 * r, -r, r, 3 * r});
}

TEST(InterpMovement, GatherNegativeIndex) {
  Tensor d = Tensor::from<float>({3, 2}, {1, 2, 3, 4, 5, 6});
  Tensor y = run_op(Op::Gather, {d, Tensor::from<int64_t>({2}, {-1, 0})}, {{"axis", int64_t(0)}});
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  expect_near(floats_of(y), {5, 6, 1, 2});
  Tensor z =
      run_op(Op::Gather, {d, Tensor::from<int64_t>({1, 2}, {1, -2})}, {{"axis", int64_t(1)}});
  EXPECT_EQ(z.shape(), (Shape{3, 1, 2}));
  expect_near(floats_of(z), {2, 1, 4, 3, 6, 5});
  Tensor s = run_op(Op::Gather, {d, Tensor::scalar<int64_t>(1)}, {{"axis", int64_t(0)}});
  EXPECT_EQ(s.shape(), (Shape{2}));
  expect_near(floats_of(s), {3, 4});
  EXPECT_THROW(run_op(Op::Gather, {d, Tensor::scalar<int64_t>(-4)}, {{"axis", int64_t(0)}}),
               UserError);
}

TEST(InterpMovement, SliceNegativeStep) {
  F v;
  for (int i = 0; i < 10; i++) v.push_back((float)i);
  Tensor x = Tensor::from<float>({10}, v);
  auto slice = [&](int64_t s, int64_t e, int64_t st) {
    return floats_of(run_op(Op::Slice, {x}, {{"starts", I{s}}, {"ends", I{e}}, {"steps", I{st}}}));
  };
  expect_near(slice(8, 1, -3), {8, 5, 2});
  expect_near(slice(-1, INT64_MIN, -1), {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  expect_near(slice(-3, 100, 2), {7, 9});
  expect_near(slice(20, -20, -4), {9, 5, 1});
  Tensor m = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = run_op(Op::Slice, {m}, {{"starts", I{1, 0}}, {"ends", I{2, 3}}, {"steps", I{1, 2}}});
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  expect_near(floats_of(y), {4, 6});
}

TEST(InterpMovement, TransposeConcatExpandReshape) {
  Tensor x = Tensor::from<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  expect_near(floats_of(run_op(Op::Transpose, {x}, {{"perm", I{1, 0}}})), {1, 4, 2, 5, 3, 6});
  Tensor t3 = random_tensor(DType::F32, {2, 3, 4}, 5);
  Tensor p = run_op(Op::Transpose, {t3}, {{"perm", I{2, 0, 1}}});
  ASSERT_EQ(p.shape(), (Shape{4, 2, 3}));
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < 4; c++)
        EXPECT_EQ(p.data<float>()[(c * 2 + a) * 3 + b], t3.data<float>()[(a * 3 + b) * 4 + c]);
  Tensor y = Tensor::from<float>({2, 1}, {7, 8});
  expect_near(floats_of(run_op(Op::Concat, {x, y}, {{"axis", int64_t(1)}})),
              {1, 2, 3, 7, 4, 5, 6, 8});
  expect_near(floats_of(run_op(Op::Concat, {x, x}, {{"axis", int64_t(0)}})),
              {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6});
  Tensor e = run_op(Op::Expand, {y}, {{"shape", I{2, 2, 3}}});
  EXPECT_EQ(e.shape(), (Shape{2, 2, 3}));
  expect_near(floats_of(e), {7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8});
  Tensor r = run_op(Op::Reshape, {x}, {{"shape", I{3, 2}}});
  EXPECT_EQ(r.shape(), (Shape{3, 2}));
  expect_near(floats_of(r), {1, 2, 3, 4, 5, 6});
  Tensor f = run_op(Op::Flatten, {t3}, {{"axis", int64_t(1)}});
  EXPECT_EQ(f.shape(), (Shape{2, 12}));
  Tensor b = bool_tensor({2}, {1, 0});
  EXPECT_EQ(run_op(Op::Unsqueeze, {b}, {{"axes", I{1}}}).shape(), (Shape{2, 1}));
}

TEST(Interpret, WholeGraphAndInputChecks) {
  // y = relu(x @ w + b), then softmax over the last axis; intermediate values are freed.
  Graph g;
  g.name = "mlp";
  ValueId x = g.add_input("x", DType::F32, {2, 3});
  ValueId w = g.add_constant("w", Tensor::from<float>({3, 2}, {1, 0, 0, 1, 1, -1}));
  ValueId b = g.add_constant("b", Tensor::from<float>({2}, {0, std::log(2.f)}));
  ValueId h = g.add(Op::Add, {g.add(Op::MatMul, {x, w}), b});
  ValueId r = g.add(Op::Relu, {h});
  g.mark_output(g.add(Op::Softmax, {r}, {{"axis", int64_t(1)}}));
  g.mark_output(r);
  Tensor in = Tensor::from<float>({2, 3}, {0, 0, 0, 1, 1, 1});
  std::vector<Tensor> out = interpret(g, {in});
  ASSERT_EQ(out.size(), 2u);
  // Row 0: h = [0, ln2] -> softmax [1/3, 2/3]. Row 1: h = [2, ln2] -> [2, ln2].
  expect_near(floats_of(out[1]), {0, std::log(2.f), 2, std::log(2.f)});
  const float e2 = std::exp(2.f);
  expect_near(floats_of(out[0]), {1.f / 3, 2.f / 3, e2 / (e2 + 2), 2 / (e2 + 2)});

  EXPECT_THROW(interpret(g, {}), UserError);
  try {
    interpret(g, {Tensor(DType::F32, {3, 2})});
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(interpret(g, {Tensor(DType::I64, {2, 3})}), UserError);
}

}  // namespace
}  // namespace tlm

// Elementwise, reduction and injective ops through lower -> default schedule -> JIT -> run,
// against the reference interpreter: every Elemwise op with numpy broadcasting (f32, i64, bool),
// Cast in all directions, BatchNormalization; ReduceSum/Mean (axes, keepdims, to rank 0),
// Softmax along every kind of axis, LayerNormalization; Reshape/Flatten/Squeeze/Unsqueeze,
// Transpose, Concat, Slice with negative starts and steps, Gather with negative i64 indices,
// Expand.
#include <cmath>
#include <limits>

#include "lower/harness.h"

namespace tlm::testing_lower {
namespace {

constexpr DType kF = DType::F32, kI = DType::I64, kB = DType::Bool;

ValueId bin(Graph& g, Op op, const Shape& a, const Shape& b, DType t = kF) {
  return g.add(op, {in(g, a, t), in(g, b, t)});
}
ValueId un(Graph& g, Op op, const Shape& a, DType t = kF, Attrs at = {}) {
  return g.add(op, {in(g, a, t)}, at);
}

std::vector<Builder> elementwise_cases() {
  using R = std::map<int, std::pair<double, double>>;
  const Shape a = {2, 1, 5}, b = {3, 1};  // broadcast to [2, 3, 5]
  std::vector<Builder> v = {
      {"add_bcast", [=](Graph& g) { return bin(g, Op::Add, a, b); }},
      {"sub_bcast", [=](Graph& g) { return bin(g, Op::Sub, a, b); }},
      {"mul_bcast", [=](Graph& g) { return bin(g, Op::Mul, a, b); }},
      {"div_bcast", [=](Graph& g) { return bin(g, Op::Div, a, b); }, R{{1, {0.5, 2}}}},
      {"pow_bcast", [=](Graph& g) { return bin(g, Op::Pow, a, b); },
       R{{0, {0.1, 2}}, {1, {-2, 2}}}},
      {"pow_const_exponent_negative_base",
       [](Graph& g) {
         ValueId three = g.add_constant("three", Tensor::scalar<float>(3.f));
         return g.add(Op::Pow, {in(g, {4, 7}), three});
       },
       R{{0, {-2, 2}}}},
      {"pow_negative_base_integer_exponent",  // exponents are data, not constants
       [](Graph& g) {
         ValueId e = g.add(Op::Cast, {in(g, {13}, kI)}, {{"to", I(0)}});
         return g.add(Op::Pow, {in(g, {3, 13}), e});
       },
       R{{0, {-2, 2}}, {1, {-3, 4}}}},
      {"max_bcast", [=](Graph& g) { return bin(g, Op::Max, a, b); }},
      {"min_bcast", [=](Graph& g) { return bin(g, Op::Min, a, b); }},
      {"equal_i64", [=](Graph& g) { return bin(g, Op::Equal, a, b, kI); },
       R{{0, {0, 3}}, {1, {0, 3}}}},
      {"less_f32", [=](Graph& g) { return bin(g, Op::Less, a, b); }},
      {"greater_i64", [=](Graph& g) { return bin(g, Op::Greater, a, b, kI); },
       R{{0, {-3, 3}}, {1, {-3, 3}}}},
      {"equal_bool", [=](Graph& g) { return bin(g, Op::Equal, a, b, kB); }},
      {"where_bool_bcast",
       [](Graph& g) {
         return g.add(Op::Where, {in(g, {7, 1}, kB), in(g, {7, 13}), in(g, {13})});
       }},
      {"where_i64",
       [](Graph& g) {
         return g.add(Op::Where, {in(g, {5}, kB), in(g, {5}, kI), in(g, {}, kI)});
       },
       R{{1, {-9, 9}}, {2, {-9, 9}}}},
      {"sqrt",
       [](Graph& g) {
         return un(g, Op::Sqrt, {3, 13});
       },
       R{{0, {0, 4}}}},
      {"erf",
       [](Graph& g) {
         return un(g, Op::Erf, {3, 13});
       },
       R{{0, {-3, 3}}}},
      {"exp",
       [](Graph& g) {
         return un(g, Op::Exp, {3, 13});
       },
       R{{0, {-5, 5}}}},
      {"log",
       [](Graph& g) {
         return un(g, Op::Log, {3, 13});
       },
       R{{0, {0.01, 5}}}},
      {"tanh",
       [](Graph& g) {
         return un(g, Op::Tanh, {3, 13});
       },
       R{{0, {-4, 4}}}},
      // The lowering switches formulas at |x| = 1/8 (elementwise.cc): both sides, and saturation.
      {"tanh_near_zero",
       [](Graph& g) {
         return un(g, Op::Tanh, {3, 13});
       },
       R{{0, {-0.3, 0.3}}}},
      {"tanh_saturating",
       [](Graph& g) {
         return un(g, Op::Tanh, {3, 13});
       },
       R{{0, {-40, 40}}}},
      {"sigmoid",
       [](Graph& g) {
         return un(g, Op::Sigmoid, {3, 13});
       },
       R{{0, {-8, 8}}}},
      {"relu",
       [](Graph& g) {
         return un(g, Op::Relu, {3, 13});
       }},
      {"neg_i64",
       [](Graph& g) {
         return un(g, Op::Neg, {3, 13}, kI);
       },
       R{{0, {-9, 9}}}},
      {"abs_f32",
       [](Graph& g) {
         return un(g, Op::Abs, {3, 13});
       }},
      {"abs_i64",
       [](Graph& g) {
         return un(g, Op::Abs, {3, 13}, kI);
       },
       R{{0, {-9, 9}}}},
      {"reciprocal",
       [](Graph& g) {
         return un(g, Op::Reciprocal, {3, 13});
       },
       R{{0, {0.5, 2}}}},
      {"clip",
       [](Graph& g) {
         return un(g, Op::Clip, {3, 13}, kF, {{"min", F(-0.5f)}, {"max", F(0.3f)}});
       }},
      {"clip_unbounded_max",
       [](Graph& g) {
         return un(g, Op::Clip, {3, 13}, kF, {{"min", F(-0.2f)}, {"max", F(INFINITY)}});
       }},
      {"hardsigmoid",
       [](Graph& g) {
         return un(g, Op::HardSigmoid, {3, 13}, kF, {{"alpha", F(0.3f)}, {"beta", F(0.4f)}});
       },
       R{{0, {-4, 4}}}},
      {"hardswish",
       [](Graph& g) {
         return un(g, Op::HardSwish, {3, 13});
       },
       R{{0, {-4, 4}}}},
      {"leakyrelu",
       [](Graph& g) {
         return un(g, Op::LeakyRelu, {3, 13}, kF, {{"alpha", F(0.1f)}});
       }},
      {"cast_f32_i64",
       [](Graph& g) {
         return un(g, Op::Cast, {3, 13}, kF, {{"to", I(1)}});
       },
       R{{0, {-5, 5}}}},
      {"cast_i64_f32",
       [](Graph& g) {
         return un(g, Op::Cast, {3, 13}, kI, {{"to", I(0)}});
       },
       R{{0, {-50, 50}}}},
      {"cast_f32_bool",
       [](Graph& g) {
         return un(g, Op::Cast, {3, 13}, kF, {{"to", I(2)}});
       },
       R{{0, {-1, 2}}}},
      {"cast_bool_f32",
       [](Graph& g) {
         return un(g, Op::Cast, {3, 13}, kB, {{"to", I(0)}});
       }},
      {"cast_i64_bool",
       [](Graph& g) {
         return un(g, Op::Cast, {3, 13}, kI, {{"to", I(2)}});
       },
       R{{0, {-1, 2}}}},
      {"batchnorm",
       [](Graph& g) {
         std::vector<ValueId> ins = {in(g, {2, 3, 5, 7})};
         for (int k = 0; k < 4; k++) ins.push_back(in(g, {3}));
         return g.add(Op::BatchNormalization, ins, {{"epsilon", F(1e-3f)}});
       },
       R{{4, {0.1, 1}}}},
      {"add_i64", [=](Graph& g) { return bin(g, Op::Add, a, b, kI); },
       R{{0, {-99, 99}}, {1, {-99, 99}}}},
      {"div_i64_truncates", [=](Graph& g) { return bin(g, Op::Div, a, b, kI); },
       R{{0, {-20, 20}}, {1, {1, 5}}}},
  };
  return v;
}

std::vector<Builder> reduction_cases() {
  auto reduce = [](Op op, Shape s, std::vector<int64_t> axes, int64_t keep) {
    return [=](Graph& g) {
      return g.add(op, {in(g, s)}, {{"axes", Is(axes)}, {"keepdims", I(keep)}});
    };
  };
  auto softmax = [](Shape s, int64_t axis) {
    return [=](Graph& g) { return g.add(Op::Softmax, {in(g, s)}, {{"axis", I(axis)}}); };
  };
  return {
      {"reduce_sum_keepdims", reduce(Op::ReduceSum, {2, 3, 4}, {1}, 1)},
      {"reduce_mean_multi_axes", reduce(Op::ReduceMean, {2, 7, 4, 3}, {0, 2}, 0)},
      {"reduce_sum_all_rank0", reduce(Op::ReduceSum, {3, 13}, {0, 1}, 0)},
      {"reduce_mean_rank5_last", reduce(Op::ReduceMean, {2, 1, 3, 2, 13}, {4}, 1)},
      {"softmax_last", softmax({2, 3, 13}, 2), {{0, {-5, 5}}}},
      {"softmax_axis1", softmax({2, 7, 5}, 1), {{0, {-5, 5}}}},
      {"softmax_rank1", softmax({13}, 0), {{0, {-30, 30}}}},
      {"layernorm_last",
       [](Graph& g) {
         return g.add(Op::LayerNormalization, {in(g, {2, 5, 16}), in(g, {16}), in(g, {16})},
                      {{"axis", I(2)}, {"epsilon", F(1e-5f)}});
       }},
      {"layernorm_2d_rows3",  // Reused stages of extent 3: a vector tail
       [](Graph& g) {
         return g.add(Op::LayerNormalization, {in(g, {3, 4}), in(g, {4}), in(g, {4})},
                      {{"axis", I(1)}, {"epsilon", F(1e-5f)}});
       }},
      {"softmax_rows5", softmax({5, 4}, 1)},
      {"layernorm_axis1_nobias",
       [](Graph& g) {
         return g.add(Op::LayerNormalization, {in(g, {2, 3, 4}), in(g, {3, 4})},
                      {{"axis", I(1)}, {"epsilon", F(1e-5f)}});
       }},
  };
}

std::vector<Builder> injective_cases() {
  auto reshape = [](Shape s, std::vector<int64_t> to) {
    return [=](Graph& g) { return g.add(Op::Reshape, {in(g, s)}, {{"shape", Is(to)}}); };
  };
  auto one = [](Op op, Shape s, Attrs at, DType t = kF) {
    return [=](Graph& g) { return g.add(op, {in(g, s, t)}, at); };
  };
  const int64_t kMin = std::numeric_limits<int64_t>::min();
  const int64_t kMax = std::numeric_limits<int64_t>::max();
  return {
      {"reshape_merge", reshape({2, 3, 4}, {6, 4})},
      {"reshape_regroup", reshape({2, 3, 4}, {4, 3, 2})},
      {"reshape_ones", reshape({2, 3, 4}, {1, 24, 1})},
      {"reshape_split_i64",
       [](Graph& g) {
         return g.add(Op::Reshape, {in(g, {6, 5}, kI)}, {{"shape", Is({2, 3, 5, 1})}});
       },
       {{0, {-9, 9}}}},
      {"flatten_axis2", one(Op::Flatten, {2, 3, 4, 5}, {{"axis", I(2)}})},
      {"flatten_axis0", one(Op::Flatten, {2, 3, 4}, {{"axis", I(0)}})},
      {"transpose_3d", one(Op::Transpose, {2, 3, 13}, {{"perm", Is({2, 0, 1})}})},
      {"transpose_rank5", one(Op::Transpose, {2, 1, 3, 4, 5}, {{"perm", Is({4, 2, 0, 3, 1})}})},
      {"squeeze", one(Op::Squeeze, {1, 3, 1, 5}, {{"axes", Is({0, 2})}})},
      {"unsqueeze", one(Op::Unsqueeze, {3, 5}, {{"axes", Is({0, 3})}})},
      {"concat_axis1",
       [](Graph& g) {
         return g.add(Op::Concat, {in(g, {2, 1, 3}), in(g, {2, 4, 3}), in(g, {2, 2, 3})},
                      {{"axis", I(1)}});
       }},
      {"concat_rank1_bool",
       [](Graph& g) {
         return g.add(Op::Concat, {in(g, {5}, kB), in(g, {7}, kB)}, {{"axis", I(0)}});
       }},
      {"slice_negative_steps",
       one(Op::Slice, {7, 6},
           {{"starts", Is({-1, 1})}, {"ends", Is({kMin, 5})}, {"steps", Is({-2, 2})}})},
      {"slice_negative_starts",
       one(Op::Slice, {5, 9},
           {{"starts", Is({1, -7})}, {"ends", Is({kMax, -1})}, {"steps", Is({1, 3})}})},
      {"slice_reverse_inner",
       one(Op::Slice, {3, 13},
           {{"starts", Is({0, 11})}, {"ends", Is({3, 2})}, {"steps", Is({1, -1})}})},
      {"gather_axis1_negative",
       [](Graph& g) {
         return g.add(Op::Gather, {in(g, {3, 5, 4}), in(g, {2, 3}, kI)}, {{"axis", I(1)}});
       },
       {{1, {-5, 5}}}},
      {"gather_scalar_index",
       [](Graph& g) {
         return g.add(Op::Gather, {in(g, {6, 4}), in(g, {}, kI)}, {{"axis", I(0)}});
       },
       {{1, {-6, 6}}}},
      {"gather_i64_data_last_axis",
       [](Graph& g) {
         return g.add(Op::Gather, {in(g, {2, 7}, kI), in(g, {4}, kI)}, {{"axis", I(1)}});
       },
       {{0, {-50, 50}}, {1, {-7, 7}}}},
      {"expand", one(Op::Expand, {3, 1}, {{"shape", Is({2, 3, 4})}})},
  };
}

class ElementwiseTest : public ::testing::TestWithParam<Builder> {};
TEST_P(ElementwiseTest, MatchesInterpreter) { check_case(GetParam().make()); }
INSTANTIATE_TEST_SUITE_P(Lower, ElementwiseTest, ::testing::ValuesIn(elementwise_cases()),
                         builder_name);

class ReductionTest : public ::testing::TestWithParam<Builder> {};
TEST_P(ReductionTest, MatchesInterpreter) { check_case(GetParam().make()); }
INSTANTIATE_TEST_SUITE_P(Lower, ReductionTest, ::testing::ValuesIn(reduction_cases()),
                         builder_name);

class InjectiveTest : public ::testing::TestWithParam<Builder> {};
TEST_P(InjectiveTest, MatchesInterpreter) { check_case(GetParam().make()); }
INSTANTIATE_TEST_SUITE_P(Lower, InjectiveTest, ::testing::ValuesIn(injective_cases()),
                         builder_name);

}  // namespace
}  // namespace tlm::testing_lower

// Eager constant folding through Graph::add: shape chains as PyTorch exports them (Shape ->
// Gather -> Unsqueeze -> Concat -> Reshape) become constants and leave no nodes behind.
#include <gtest/gtest.h>

#include "graph/graph.h"
#include "graph/interpreter.h"

namespace tlm {
namespace {

using I = std::vector<int64_t>;

TEST(EagerFolding, ShapeChainFoldsToConstants) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {2, 3, 4});
  // What the importer makes of Shape(x): a constant.
  ValueId shape = g.add_constant("shape", Tensor::from<int64_t>({3}, {2, 3, 4}));
  ValueId idx0 = g.add_constant("i0", Tensor::scalar<int64_t>(0));
  ValueId idx_neg = g.add_constant("im1", Tensor::scalar<int64_t>(-1));
  ValueId d0 = g.add(Op::Gather, {shape, idx0}, {{"axis", int64_t(0)}});
  ValueId d2 = g.add(Op::Gather, {shape, idx_neg}, {{"axis", int64_t(0)}});
  ValueId d0u = g.add(Op::Unsqueeze, {d0}, {{"axes", I{0}}});
  ValueId d2u = g.add(Op::Unsqueeze, {d2}, {{"axes", I{0}}});
  ValueId three = g.add_constant("three", Tensor::from<int64_t>({1}, {3}));
  ValueId prod = g.add(Op::Mul, {d2u, three});
  ValueId cat = g.add(Op::Concat, {d0u, prod}, {{"axis", int64_t(0)}});
  ASSERT_TRUE(g.value(cat).is_constant());
  EXPECT_EQ(g.value(cat).data->to_i64_vector(), (I{2, 12}));
  EXPECT_EQ(g.value(cat).dtype, DType::I64);
  // The folded shape feeds a Reshape of the runtime input (canonical: attribute).
  ValueId r = g.add(Op::Reshape, {x}, {{"shape", g.value(cat).data->to_i64_vector()}});
  g.mark_output(r);
  EXPECT_EQ(g.value(r).shape, (Shape{2, 12}));
  EXPECT_EQ(g.nodes.size(), 1u);  // only the Reshape of the runtime input
  // A Reshape of the folded chain itself folds too and adds no node.
  ValueId rc = g.add(Op::Reshape, {cat}, {{"shape", I{2, 1}}});
  ASSERT_TRUE(g.value(rc).is_constant());
  EXPECT_EQ(g.value(rc).data->shape(), (Shape{2, 1}));
  EXPECT_EQ(g.value(rc).data->to_i64_vector(), (I{2, 12}));
  EXPECT_EQ(g.nodes.size(), 1u);
  g.remove_dead();
  EXPECT_EQ(g.values.size(), 2u);  // x and the Reshape output
}

TEST(EagerFolding, MixedOpsOnConstants) {
  Graph g;
  ValueId a = g.add_constant("a", Tensor::from<int64_t>({3}, {1, 5, 3}));
  ValueId b = g.add_constant("b", Tensor::from<int64_t>({3}, {1, 2, 3}));
  ValueId eq = g.add(Op::Equal, {a, b});
  EXPECT_EQ(g.value(eq).data->to_i64_vector(), (I{1, 0, 1}));
  ValueId neg1 = g.add_constant("m1", Tensor::from<int64_t>({1}, {-1}));
  ValueId w = g.add(Op::Where, {eq, neg1, a});
  EXPECT_EQ(g.value(w).data->to_i64_vector(), (I{-1, 5, -1}));
  ValueId d = g.add(Op::Div, {g.add_constant("n", Tensor::from<int64_t>({2}, {-7, 7})),
                              g.add_constant("dd", Tensor::from<int64_t>({1}, {2}))});
  EXPECT_EQ(g.value(d).data->to_i64_vector(), (I{-3, 3}));  // truncation toward zero
  ValueId f = g.add(Op::Cast, {d}, {{"to", int64_t(0)}});
  EXPECT_EQ(g.value(f).dtype, DType::F32);
  EXPECT_FLOAT_EQ(g.value(f).data->data<float>()[0], -3.f);
  ValueId s = g.add(Op::Slice, {a}, {{"starts", I{-1}}, {"ends", I{INT64_MIN}}, {"steps", I{-2}}});
  EXPECT_EQ(g.value(s).data->to_i64_vector(), (I{3, 1}));
  ValueId e = g.add(Op::Expand, {s}, {{"shape", I{2, 2}}});
  EXPECT_EQ(g.value(e).data->to_i64_vector(), (I{3, 1, 3, 1}));
  ValueId t =
      g.add(Op::Transpose, {g.add_constant("m", Tensor::from<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}))},
            {{"perm", I{1, 0}}});
  EXPECT_EQ(g.value(t).data->to_i64_vector(), (I{1, 4, 2, 5, 3, 6}));
  ValueId sq =
      g.add(Op::Squeeze, {g.add(Op::Unsqueeze, {a}, {{"axes", I{0, 2}}})}, {{"axes", I{0, 2}}});
  EXPECT_EQ(g.value(sq).shape, (Shape{3}));
  EXPECT_TRUE(g.nodes.empty());
}

TEST(EagerFolding, BadFoldingInputsAreUserErrors) {
  Graph g;
  ValueId a = g.add_constant("a", Tensor::from<int64_t>({3}, {1, 5, 3}));
  ValueId idx = g.add_constant("idx", Tensor::from<int64_t>({1}, {3}));
  try {
    g.add(Op::Gather, {a, idx}, {{"axis", int64_t(0)}}, "gather_oob");
    FAIL() << "no error";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("gather_oob"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos) << e.what();
  }
  ValueId zero = g.add_constant("z", Tensor::from<int64_t>({1}, {0}));
  EXPECT_THROW(g.add(Op::Div, {a, zero}), UserError);
}

}  // namespace
}  // namespace tlm

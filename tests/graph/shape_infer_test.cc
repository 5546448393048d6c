// Shape inference: output shapes of every op family, and malformed nodes rejected with a
// UserError that names the node, its op and the offending attribute.
#include "graph/shape_infer.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "graph/graph.h"

namespace tlm {
namespace {

using I = std::vector<int64_t>;

Shape shape_of(Op op, const std::vector<Shape>& ins, Attrs attrs, std::vector<DType> dtypes = {}) {
  Graph g;
  std::vector<ValueId> ids;
  for (size_t k = 0; k < ins.size(); k++)
    ids.push_back(
        g.add_input("in" + std::to_string(k), k < dtypes.size() ? dtypes[k] : DType::F32, ins[k]));
  return g.value(g.add(op, ids, std::move(attrs), "n")).shape;
}

// Runs add() and returns the UserError message ("" if none was raised).
std::string error_of(Op op, const std::vector<Shape>& ins, Attrs attrs,
                     std::vector<DType> dtypes = {}) {
  try {
    shape_of(op, ins, std::move(attrs), std::move(dtypes));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// The message names the node ('n'), the op and `what` (an attribute or another detail).
#define EXPECT_SHAPE_ERROR(msg, op, what)                    \
  do {                                                       \
    std::string m_ = (msg);                                  \
    EXPECT_NE(m_.find("node 'n'"), std::string::npos) << m_; \
    EXPECT_NE(m_.find(op), std::string::npos) << m_;         \
    EXPECT_NE(m_.find(what), std::string::npos) << m_;       \
  } while (0)

Attrs conv_attrs(I strides, I dil, I pads, int64_t group) {
  return {{"strides", strides}, {"dilations", dil}, {"pads", pads}, {"group", group}};
}

TEST(ShapeInfer, Conv) {
  EXPECT_EQ(shape_of(Op::Conv, {{1, 3, 224, 224}, {64, 3, 7, 7}, {64}},
                     conv_attrs({2, 2}, {1, 1}, {3, 3, 3, 3}, 1)),
            (Shape{1, 64, 112, 112}));
  // Grouped + dilated + asymmetric pads: (10 + 1 + 0 - 5) / 1 + 1 = 7 and (9 + 0 + 2 - 5)/2+1 = 4.
  EXPECT_EQ(shape_of(Op::Conv, {{2, 8, 10, 9}, {4, 2, 3, 3}},
                     conv_attrs({1, 2}, {2, 2}, {1, 0, 0, 2}, 4)),
            (Shape{2, 4, 7, 4}));
  EXPECT_EQ(shape_of(Op::Conv, {{1, 4, 10}, {6, 4, 3}}, conv_attrs({1}, {1}, {1, 1}, 1)),
            (Shape{1, 6, 10}));
}

TEST(ShapeInfer, ConvErrors) {
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}}, conv_attrs({1}, {1, 1}, {0, 0, 0, 0}, 1)),
      "Conv", "'strides'");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 6, 8, 8}, {4, 3, 3, 3}}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)),
      "Conv", "'group'");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 6, 8, 8}, {3, 3, 3, 3}}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 2)),
      "Conv", "'group'");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 2, 2}, {4, 3, 3, 3}}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)),
      "Conv", "kernel");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}}, conv_attrs({0, 1}, {1, 1}, {0, 0, 0, 0}, 1)),
      "Conv", "'strides'");
  EXPECT_SHAPE_ERROR(error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}, {5}},
                              conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)),
                     "Conv", "bias");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3}}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)),
      "Conv", "rank");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 8, 8}}, conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1)), "Conv",
      "inputs");
  // Missing attribute, wrong attribute type.
  EXPECT_SHAPE_ERROR(
      error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}},
               {{"strides", I{1, 1}}, {"dilations", I{1, 1}}, {"pads", I{0, 0, 0, 0}}}),
      "Conv", "'group'");
  EXPECT_SHAPE_ERROR(
      error_of(
          Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}},
          {{"strides", I{1, 1}}, {"dilations", I{1, 1}}, {"pads", I{0, 0, 0, 0}}, {"group", 1.0f}}),
      "Conv", "'group'");
  // Huge dilation must not overflow.
  EXPECT_SHAPE_ERROR(error_of(Op::Conv, {{1, 3, 8, 8}, {4, 3, 3, 3}},
                              conv_attrs({1, 1}, {int64_t(1) << 39, 1}, {0, 0, 0, 0}, 1)),
                     "Conv", "'dilations'");
}

TEST(ShapeInfer, ConvNchwc) {
  const Attrs a = conv_attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 1);
  // Blocked input: W [Co/B, Ci/B, kh, kw, B_in, B_out]; plain input (the stem): [Co/B, Ci, kh, kw,
  // B]; depthwise: [Co/B, 1, kh, kw, B].
  EXPECT_EQ(shape_of(Op::ConvNchwc, {{1, 2, 8, 8, 4}, {3, 2, 3, 3, 4, 4}, {3, 4}}, a),
            (Shape{1, 3, 8, 8, 4}));
  EXPECT_EQ(shape_of(Op::ConvNchwc, {{1, 3, 8, 8}, {2, 3, 3, 3, 4}}, a), (Shape{1, 2, 8, 8, 4}));
  EXPECT_EQ(shape_of(Op::ConvNchwc, {{1, 2, 8, 8, 4}, {2, 1, 3, 3, 4}},
                     conv_attrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 8)),
            (Shape{1, 2, 4, 4, 4}));
  // A blocked input with the rank-5 weights of a plain one, and the reverse.
  EXPECT_SHAPE_ERROR(error_of(Op::ConvNchwc, {{1, 2, 8, 8, 4}, {3, 8, 3, 3, 4}}, a), "ConvNchwc",
                     "must be [Co/B, Ci/B, kh, kw, B, B]");
  EXPECT_SHAPE_ERROR(error_of(Op::ConvNchwc, {{1, 8, 8, 8}, {3, 2, 3, 3, 4, 4}}, a), "ConvNchwc",
                     "needs a blocked X");
  // Input and output blocks differ; input channels do not match.
  EXPECT_SHAPE_ERROR(error_of(Op::ConvNchwc, {{1, 2, 8, 8, 4}, {3, 4, 3, 3, 2, 4}}, a),
                     "ConvNchwc", "equal blocks");
  EXPECT_SHAPE_ERROR(error_of(Op::ConvNchwc, {{1, 2, 8, 8, 4}, {3, 3, 3, 3, 4, 4}}, a),
                     "ConvNchwc", "channels");
}

TEST(ShapeInfer, ConvTranspose) {
  Attrs a = conv_attrs({2, 2}, {1, 1}, {1, 1, 1, 1}, 1);
  a["output_padding"] = I{1, 1};
  // 2*(4-1) + 1 + 3 - 1 - 1 = 8
  EXPECT_EQ(shape_of(Op::ConvTranspose, {{1, 8, 4, 4}, {8, 5, 3, 3}}, a), (Shape{1, 5, 8, 8}));
  Attrs g2 = conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 2);
  g2["output_padding"] = I{0, 0};
  EXPECT_EQ(shape_of(Op::ConvTranspose, {{1, 8, 4, 4}, {8, 3, 2, 2}, {6}}, g2),
            (Shape{1, 6, 5, 5}));
  Attrs no_opad = g2;
  no_opad.erase("output_padding");
  EXPECT_SHAPE_ERROR(error_of(Op::ConvTranspose, {{1, 8, 4, 4}, {8, 3, 2, 2}}, no_opad),
                     "ConvTranspose", "'output_padding'");
  Attrs g3 = conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 3);
  g3["output_padding"] = I{0, 0};
  EXPECT_SHAPE_ERROR(error_of(Op::ConvTranspose, {{1, 8, 4, 4}, {8, 3, 2, 2}}, g3), "ConvTranspose",
                     "'group'");
}

TEST(ShapeInfer, GemmMatMul) {
  Attrs g = {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t(0)}, {"transB", int64_t(1)}};
  EXPECT_EQ(shape_of(Op::Gemm, {{4, 5}, {3, 5}, {3}}, g), (Shape{4, 3}));
  g["transA"] = int64_t(1);
  EXPECT_EQ(shape_of(Op::Gemm, {{5, 4}, {3, 5}, {4, 1}}, g), (Shape{4, 3}));
  EXPECT_SHAPE_ERROR(error_of(Op::Gemm, {{5, 4}, {3, 5}, {3, 4}}, g), "Gemm", "C");
  EXPECT_SHAPE_ERROR(error_of(Op::Gemm, {{4, 5}, {3, 5}}, g), "Gemm", "transA");
  g["transB"] = int64_t(2);
  EXPECT_SHAPE_ERROR(error_of(Op::Gemm, {{5, 4}, {3, 5}}, g), "Gemm", "'transB'");

  EXPECT_EQ(shape_of(Op::MatMul, {{2, 1, 4, 5}, {3, 5, 6}}, {}), (Shape{2, 3, 4, 6}));
  EXPECT_EQ(shape_of(Op::MatMul, {{5}, {3, 5, 6}}, {}), (Shape{3, 6}));
  EXPECT_EQ(shape_of(Op::MatMul, {{3, 4, 5}, {5}}, {}), (Shape{3, 4}));
  EXPECT_EQ(shape_of(Op::MatMul, {{5}, {5}}, {}), (Shape{}));
  EXPECT_SHAPE_ERROR(error_of(Op::MatMul, {{4, 5}, {6, 7}}, {}), "MatMul", "inner");
  EXPECT_SHAPE_ERROR(error_of(Op::MatMul, {{2, 4, 5}, {3, 5, 7}}, {}), "MatMul", "broadcast");
}

TEST(ShapeInfer, Pools) {
  Attrs mp = {{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{1, 1, 1, 1}},
              {"dilations", I{1, 1}},
              {"ceil_mode", int64_t(0)}};
  EXPECT_EQ(shape_of(Op::MaxPool, {{1, 64, 112, 112}}, mp), (Shape{1, 64, 56, 56}));
  // ceil_mode: (6 - 3) / 2 + 1 = 2 with floor, 3 with ceil (last window starts at 4 < 6).
  Attrs ap = {{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{0, 0, 0, 0}},
              {"ceil_mode", int64_t(1)},
              {"count_include_pad", int64_t(0)}};
  EXPECT_EQ(shape_of(Op::AveragePool, {{1, 2, 6, 6}}, ap), (Shape{1, 2, 3, 3}));
  ap["ceil_mode"] = int64_t(0);
  EXPECT_EQ(shape_of(Op::AveragePool, {{1, 2, 6, 6}}, ap), (Shape{1, 2, 2, 2}));
  // With ceil_mode, a window that would start in the right padding is dropped:
  // in 5, k 2, s 2, pads 1/1: (7-2)/2+1 = 3 floor, ceil gives 4 but (4-1)*2 = 6 >= 5+1 -> 3.
  Attrs edge = {{"kernel_shape", I{2}},
                {"strides", I{2}},
                {"pads", I{1, 1}},
                {"dilations", I{1}},
                {"ceil_mode", int64_t(1)}};
  EXPECT_EQ(shape_of(Op::MaxPool, {{1, 1, 5}}, edge), (Shape{1, 1, 3}));
  EXPECT_EQ(shape_of(Op::GlobalAveragePool, {{2, 7, 5, 3}}, {}), (Shape{2, 7, 1, 1}));
  mp["kernel_shape"] = I{3};
  EXPECT_SHAPE_ERROR(error_of(Op::MaxPool, {{1, 64, 112, 112}}, mp), "MaxPool", "'kernel_shape'");
  mp["kernel_shape"] = I{3, 3};
  mp["pads"] = I{3, 3, 3, 3};
  EXPECT_SHAPE_ERROR(error_of(Op::MaxPool, {{1, 64, 112, 112}}, mp), "MaxPool", "'pads'");
}

TEST(ShapeInfer, Reductions) {
  EXPECT_EQ(shape_of(Op::ReduceMean, {{2, 3, 4}}, {{"axes", I{1, 2}}, {"keepdims", int64_t(1)}}),
            (Shape{2, 1, 1}));
  EXPECT_EQ(shape_of(Op::ReduceSum, {{2, 3, 4}}, {{"axes", I{0, 2}}, {"keepdims", int64_t(0)}}),
            (Shape{3}));
  EXPECT_SHAPE_ERROR(
      error_of(Op::ReduceSum, {{2, 3, 4}}, {{"axes", I{3}}, {"keepdims", int64_t(0)}}), "ReduceSum",
      "'axes'");
  EXPECT_SHAPE_ERROR(
      error_of(Op::ReduceSum, {{2, 3, 4}}, {{"axes", I{1, 0}}, {"keepdims", int64_t(0)}}),
      "ReduceSum", "'axes'");
  EXPECT_EQ(shape_of(Op::Softmax, {{2, 3}}, {{"axis", int64_t(1)}}), (Shape{2, 3}));
  EXPECT_SHAPE_ERROR(error_of(Op::Softmax, {{2, 3}}, {{"axis", int64_t(2)}}), "Softmax", "'axis'");
  Attrs ln = {{"axis", int64_t(2)}, {"epsilon", 1e-5f}};
  EXPECT_EQ(shape_of(Op::LayerNormalization, {{2, 5, 8}, {8}, {8}}, ln), (Shape{2, 5, 8}));
  EXPECT_SHAPE_ERROR(error_of(Op::LayerNormalization, {{2, 5, 8}, {5}}, ln), "LayerNormalization",
                     "Scale");
}

TEST(ShapeInfer, Elementwise) {
  EXPECT_EQ(shape_of(Op::Add, {{2, 1, 4}, {3, 1}}, {}), (Shape{2, 3, 4}));
  EXPECT_EQ(shape_of(Op::Mul, {{}, {3, 1}}, {}), (Shape{3, 1}));
  EXPECT_SHAPE_ERROR(error_of(Op::Add, {{2, 3}, {4}}, {}), "Add", "broadcast");
  EXPECT_SHAPE_ERROR(error_of(Op::Add, {{2, 3}, {3}}, {}, {DType::F32, DType::I64}), "Add",
                     "dtype");
  Graph g;
  ValueId a = g.add_input("a", DType::F32, {4, 1});
  ValueId b = g.add_input("b", DType::F32, {3});
  ValueId eq = g.add(Op::Less, {a, b});
  EXPECT_EQ(g.value(eq).dtype, DType::Bool);
  EXPECT_EQ(g.value(eq).shape, (Shape{4, 3}));
  ValueId w = g.add(Op::Where, {eq, a, g.add_input("c", DType::F32, {2, 1, 1})});
  EXPECT_EQ(g.value(w).shape, (Shape{2, 4, 3}));
  EXPECT_EQ(g.value(w).dtype, DType::F32);
  EXPECT_SHAPE_ERROR(error_of(Op::Where, {{3}, {3}, {3}}, {}), "Where", "dtype");
  ValueId cast = g.add(Op::Cast, {a}, {{"to", int64_t(1)}});
  EXPECT_EQ(g.value(cast).dtype, DType::I64);
  EXPECT_SHAPE_ERROR(error_of(Op::Cast, {{3}}, {{"to", int64_t(7)}}), "Cast", "'to'");
  EXPECT_SHAPE_ERROR(error_of(Op::Clip, {{3}}, {{"min", 0.f}}), "Clip", "'max'");
  EXPECT_SHAPE_ERROR(error_of(Op::Sqrt, {{3}}, {}, {DType::I64}), "Sqrt", "dtype");
  EXPECT_SHAPE_ERROR(
      error_of(Op::BatchNormalization, {{1, 3, 2, 2}, {3}, {3}, {4}, {3}}, {{"epsilon", 1e-5f}}),
      "BatchNormalization", "mean");
}

TEST(ShapeInfer, DataMovement) {
  EXPECT_EQ(shape_of(Op::Reshape, {{2, 3, 4}}, {{"shape", I{6, 4}}}), (Shape{6, 4}));
  EXPECT_SHAPE_ERROR(error_of(Op::Reshape, {{2, 3, 4}}, {{"shape", I{5, 4}}}), "Reshape",
                     "'shape'");
  EXPECT_SHAPE_ERROR(error_of(Op::Reshape, {{2, 3, 4}}, {{"shape", I{-1, 4}}}), "Reshape",
                     "'shape'");
  EXPECT_EQ(shape_of(Op::Flatten, {{2, 3, 4, 5}}, {{"axis", int64_t(2)}}), (Shape{6, 20}));
  EXPECT_EQ(shape_of(Op::Flatten, {{2, 3}}, {{"axis", int64_t(0)}}), (Shape{1, 6}));
  EXPECT_EQ(shape_of(Op::Transpose, {{2, 3, 4}}, {{"perm", I{2, 0, 1}}}), (Shape{4, 2, 3}));
  EXPECT_SHAPE_ERROR(error_of(Op::Transpose, {{2, 3, 4}}, {{"perm", I{0, 0, 1}}}), "Transpose",
                     "'perm'");
  EXPECT_EQ(shape_of(Op::Squeeze, {{1, 3, 1, 4}}, {{"axes", I{0, 2}}}), (Shape{3, 4}));
  EXPECT_SHAPE_ERROR(error_of(Op::Squeeze, {{1, 3, 1, 4}}, {{"axes", I{1}}}), "Squeeze", "'axes'");
  EXPECT_EQ(shape_of(Op::Unsqueeze, {{3, 4}}, {{"axes", I{0, 3}}}), (Shape{1, 3, 4, 1}));
  EXPECT_SHAPE_ERROR(error_of(Op::Unsqueeze, {{3, 4}}, {{"axes", I{4}}}), "Unsqueeze", "'axes'");
  EXPECT_EQ(shape_of(Op::Concat, {{2, 3}, {2, 5}, {2, 1}}, {{"axis", int64_t(1)}}), (Shape{2, 9}));
  EXPECT_SHAPE_ERROR(error_of(Op::Concat, {{2, 3}, {3, 5}}, {{"axis", int64_t(1)}}), "Concat",
                     "'axis'");
  // Slice: negative start, negative step, clamped ends.
  EXPECT_EQ(
      shape_of(Op::Slice, {{10, 6}},
               {{"starts", I{-3, 5}}, {"ends", I{INT64_MAX, INT64_MIN}}, {"steps", I{1, -2}}}),
      (Shape{3, 3}));
  EXPECT_EQ(shape_of(Op::Slice, {{10}}, {{"starts", I{7}}, {"ends", I{2}}, {"steps", I{1}}}),
            (Shape{0}));
  EXPECT_SHAPE_ERROR(
      error_of(Op::Slice, {{10}}, {{"starts", I{0}}, {"ends", I{2}}, {"steps", I{0}}}), "Slice",
      "'steps'");
  EXPECT_SHAPE_ERROR(
      error_of(Op::Slice, {{10}}, {{"starts", I{0, 0}}, {"ends", I{2}}, {"steps", I{1}}}), "Slice",
      "'starts'");
  EXPECT_EQ(
      shape_of(Op::Gather, {{5, 6, 7}, {2, 3}}, {{"axis", int64_t(1)}}, {DType::F32, DType::I64}),
      (Shape{5, 2, 3, 7}));
  EXPECT_SHAPE_ERROR(
      error_of(Op::Gather, {{5, 6}, {2}}, {{"axis", int64_t(2)}}, {DType::F32, DType::I64}),
      "Gather", "'axis'");
  EXPECT_SHAPE_ERROR(error_of(Op::Gather, {{5, 6}, {2}}, {{"axis", int64_t(0)}}), "Gather",
                     "dtype");
  EXPECT_EQ(shape_of(Op::Expand, {{3, 1}}, {{"shape", I{2, 3, 4}}}), (Shape{2, 3, 4}));
  EXPECT_SHAPE_ERROR(error_of(Op::Expand, {{3, 2}}, {{"shape", I{2, 3, 4}}}), "Expand",
                     "broadcast");
}

TEST(ShapeInfer, HugeShapesRejected) {
  const int64_t big = int64_t(1) << 30;
  EXPECT_SHAPE_ERROR(error_of(Op::Expand, {{1}}, {{"shape", I{big, big}}}), "Expand", "large");
  EXPECT_SHAPE_ERROR(error_of(Op::Relu, {{big, big}}, {}), "Relu", "large");
  Attrs a = conv_attrs({1, 1}, {1, 1}, {0, 0, 0, 0}, 1);
  a["output_padding"] = I{INT64_MAX / 2, 0};
  EXPECT_SHAPE_ERROR(error_of(Op::ConvTranspose, {{1, 2, 3, 3}, {2, 2, 1, 1}}, a), "ConvTranspose",
                     "'output_padding'");
}

}  // namespace
}  // namespace tlm

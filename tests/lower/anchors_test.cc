// Anchors through lower -> default schedule -> JIT -> run, against the reference interpreter:
// Conv 1/2/3-D (groups, depthwise, strides, dilations, asymmetric pads), ConvTranspose (groups,
// strides, pads, output_padding, dilations), Gemm (alpha/beta/transA/transB, C broadcast),
// MatMul (batch broadcast, 1-D promotion), MaxPool/AveragePool (ceil_mode, pads, dilations,
// count_include_pad), GlobalAveragePool.
#include <functional>

#include "lower/harness.h"

namespace tlm::testing_lower {
namespace {

ValueId conv(Graph& g, Op op, const Shape& x, const Shape& w, bool bias, std::vector<int64_t> st,
             std::vector<int64_t> dil, std::vector<int64_t> pads, int64_t group,
             std::vector<int64_t> opad = {}) {
  std::vector<ValueId> ins = {in(g, x), in(g, w)};
  int64_t m = op == Op::Conv ? w[0] : w[1] * group;
  if (bias) ins.push_back(in(g, {m}));
  Attrs a = {{"strides", Is(st)}, {"dilations", Is(dil)}, {"pads", Is(pads)}, {"group", I(group)}};
  if (op == Op::ConvTranspose)
    a["output_padding"] = Is(opad.empty() ? std::vector<int64_t>(st.size(), 0) : opad);
  return g.add(op, ins, a);
}

ValueId pool(Graph& g, Op op, const Shape& x, std::vector<int64_t> k, std::vector<int64_t> st,
             std::vector<int64_t> pads, int64_t ceil, std::vector<int64_t> dil = {},
             int64_t include_pad = 0) {
  Attrs a = {
      {"kernel_shape", Is(k)}, {"strides", Is(st)}, {"pads", Is(pads)}, {"ceil_mode", I(ceil)}};
  if (op == Op::MaxPool) a["dilations"] = Is(dil.empty() ? std::vector<int64_t>(k.size(), 1) : dil);
  if (op == Op::AveragePool) a["count_include_pad"] = I(include_pad);
  return g.add(op, {in(g, x)}, a);
}

ValueId gemm(Graph& g, const Shape& a, const Shape& b, const Shape* c, float alpha, float beta,
             int64_t ta, int64_t tb) {
  std::vector<ValueId> ins = {in(g, a), in(g, b)};
  if (c) ins.push_back(in(g, *c));
  return g.add(Op::Gemm, ins,
               {{"alpha", F(alpha)}, {"beta", F(beta)}, {"transA", I(ta)}, {"transB", I(tb)}});
}

ValueId matmul(Graph& g, const Shape& a, const Shape& b) {
  return g.add(Op::MatMul, {in(g, a), in(g, b)});
}

std::vector<Builder> anchor_cases() {
  std::vector<Builder> v;
  auto add = [&](std::string name, std::function<ValueId(Graph&)> f) { v.push_back({name, f}); };
  // Conv.
  add("conv1d_stride_dil_asympad", [](Graph& g) {
    return conv(g, Op::Conv, {2, 3, 13}, {4, 3, 3}, true, {2}, {2}, {1, 0}, 1);
  });
  add("conv2d_same_bias", [](Graph& g) {
    return conv(g, Op::Conv, {1, 3, 7, 9}, {5, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1);
  });
  add("conv2d_group_stride_asympad", [](Graph& g) {
    return conv(g, Op::Conv, {1, 4, 6, 7}, {6, 2, 3, 3}, false, {2, 2}, {1, 1}, {0, 1, 1, 0}, 2);
  });
  add("conv2d_depthwise_dilated", [](Graph& g) {
    return conv(g, Op::Conv, {2, 8, 7, 7}, {8, 1, 3, 3}, true, {1, 1}, {2, 2}, {2, 2, 2, 2}, 8);
  });
  add("conv2d_1x1", [](Graph& g) {
    return conv(g, Op::Conv, {1, 16, 5, 5}, {32, 16, 1, 1}, true, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1);
  });
  add("conv2d_wide_rect_kernel", [](Graph& g) {
    return conv(g, Op::Conv, {1, 5, 9, 37}, {7, 5, 2, 5}, true, {1, 3}, {1, 1}, {0, 2, 1, 0}, 1);
  });
  add("conv2d_extent1", [](Graph& g) {
    return conv(g, Op::Conv, {1, 1, 1, 1}, {1, 1, 1, 1}, false, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1);
  });
  add("conv3d", [](Graph& g) {
    return conv(g, Op::Conv, {1, 2, 5, 6, 7}, {3, 2, 3, 2, 3}, true, {1, 2, 1}, {1, 1, 2},
                {1, 0, 1, 0, 1, 1}, 1);
  });
  // ConvTranspose.
  add("convT2d_stride_pad_outpad", [](Graph& g) {
    return conv(g, Op::ConvTranspose, {1, 3, 5, 5}, {3, 2, 3, 3}, true, {2, 2}, {1, 1},
                {1, 1, 1, 1}, 1, {1, 1});
  });
  add("convT2d_group_asympad", [](Graph& g) {
    return conv(g, Op::ConvTranspose, {2, 4, 4, 3}, {4, 3, 3, 2}, false, {1, 2}, {1, 1},
                {0, 1, 1, 0}, 2);
  });
  add("convT1d_dilated_stride3", [](Graph& g) {
    return conv(g, Op::ConvTranspose, {2, 2, 7}, {2, 3, 3}, true, {3}, {2}, {1, 2}, 1, {2});
  });
  add("convT3d", [](Graph& g) {
    return conv(g, Op::ConvTranspose, {1, 2, 3, 3, 2}, {2, 2, 2, 2, 2}, false, {2, 2, 1}, {1, 1, 1},
                {0, 0, 0, 0, 0, 0}, 1);
  });
  // Gemm.
  add("gemm_plain", [](Graph& g) { return gemm(g, {7, 13}, {13, 5}, nullptr, 1.f, 1.f, 0, 0); });
  add("gemm_transAB_alpha_beta_rowC", [](Graph& g) {
    Shape c = {5};
    return gemm(g, {13, 7}, {5, 13}, &c, 0.5f, 2.f, 1, 1);
  });
  add("gemm_colC_transB", [](Graph& g) {
    Shape c = {33, 1};
    return gemm(g, {33, 20}, {40, 20}, &c, 1.f, 0.25f, 0, 1);
  });
  add("gemm_fullC", [](Graph& g) {
    Shape c = {7, 5};
    return gemm(g, {7, 3}, {3, 5}, &c, 1.f, 1.f, 0, 0);
  });
  // MatMul.
  add("matmul_2d_tiles", [](Graph& g) { return matmul(g, {33, 40}, {40, 70}); });
  add("matmul_batch_broadcast", [](Graph& g) { return matmul(g, {2, 1, 7, 5}, {3, 5, 4}); });
  add("matmul_1d_a", [](Graph& g) { return matmul(g, {5}, {2, 5, 3}); });
  add("matmul_1d_b", [](Graph& g) { return matmul(g, {2, 4, 5}, {5}); });
  add("matmul_1d_1d_rank0", [](Graph& g) { return matmul(g, {13}, {13}); });
  add("matmul_row_vector", [](Graph& g) { return matmul(g, {1, 7}, {7, 13}); });
  // Pools.
  add("maxpool2d_ceil_pad", [](Graph& g) {
    return pool(g, Op::MaxPool, {1, 2, 8, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1);
  });
  add("maxpool2d_dilated", [](Graph& g) {
    return pool(g, Op::MaxPool, {2, 3, 9, 9}, {2, 3}, {1, 2}, {0, 1, 0, 1}, 0, {2, 2});
  });
  add("maxpool1d_ceil", [](Graph& g) {
    return pool(g, Op::MaxPool, {1, 3, 7}, {2}, {2}, {0, 0}, 1);
  });
  add("maxpool3d", [](Graph& g) {
    return pool(g, Op::MaxPool, {1, 2, 4, 5, 6}, {2, 2, 3}, {2, 1, 2}, {0, 1, 1, 0, 0, 1}, 0);
  });
  add("avgpool2d_excl_pad_ceil", [](Graph& g) {
    return pool(g, Op::AveragePool, {1, 2, 8, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, {}, 0);
  });
  add("avgpool2d_incl_pad_ceil", [](Graph& g) {
    return pool(g, Op::AveragePool, {1, 2, 8, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 1, {}, 1);
  });
  add("avgpool2d_incl_pad_asym", [](Graph& g) {
    return pool(g, Op::AveragePool, {2, 3, 7, 13}, {2, 3}, {1, 2}, {1, 0, 0, 2}, 0, {}, 1);
  });
  add("avgpool1d_ceil", [](Graph& g) {
    return pool(g, Op::AveragePool, {1, 4, 13}, {3}, {3}, {0, 0}, 1, {}, 0);
  });
  add("avgpool3d", [](Graph& g) {
    return pool(g, Op::AveragePool, {1, 2, 4, 4, 5}, {2, 2, 2}, {2, 2, 2}, {0, 0, 1, 0, 0, 1}, 0,
                {}, 1);
  });
  add("gap2d", [](Graph& g) { return g.add(Op::GlobalAveragePool, {in(g, {2, 3, 5, 7})}); });
  add("gap1d", [](Graph& g) { return g.add(Op::GlobalAveragePool, {in(g, {1, 40, 9})}); });
  add("gap3d", [](Graph& g) { return g.add(Op::GlobalAveragePool, {in(g, {1, 3, 2, 3, 4})}); });
  return v;
}

class AnchorTest : public ::testing::TestWithParam<Builder> {};

TEST_P(AnchorTest, MatchesInterpreter) { check_case(GetParam().make()); }

INSTANTIATE_TEST_SUITE_P(Lower, AnchorTest, ::testing::ValuesIn(anchor_cases()), builder_name);

}  // namespace
}  // namespace tlm::testing_lower

// Reference interpreter, anchors: hand-computed Conv/ConvTranspose/pool/Gemm cases, and the
// im2col/gemm paths checked against direct textbook loops on random data (groups, strides,
// dilation, asymmetric pads, batch broadcasting).
#include <gtest/gtest.h>

#include <cmath>

#include "graph/interp_test_util.h"

namespace tlm {
namespace {

using namespace testing_graph;

TEST(InterpAnchor, Conv3x3Ones) {
  // 3x3 input 1..9, 3x3 kernel of ones, pad 1: each output is the sum of its neighbourhood.
  Tensor x = Tensor::from<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::from<float>({1, 1, 3, 3}, F(9, 1.f));
  Tensor b = Tensor::from<float>({1}, {0.5f});
  Tensor y = run_op(Op::Conv, {x, w, b}, conv_attrs({1, 1}, {1, 1}, {1, 1, 1, 1}, 1));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 3, 3}));
  expect_near(floats_of(y), {12.5f, 21.5f, 16.5f, 27.5f, 45.5f, 33.5f, 24.5f, 39.5f, 28.5f});
}

TEST(InterpAnchor, ConvKnownKernelStride) {
  // Kernel [[1, 0], [0, -1]]: x[i][j] - x[i+1][j+1] = -5 everywhere on a 4x4 ramp (row step 4).
  F xs;
  for (int i = 0; i < 16; i++) xs.push_back((float)i);
  Tensor x = Tensor::from<float>({1, 1, 4, 4}, xs);
  Tensor w = Tensor::from<float>({1, 1, 2, 2}, {1, 0, 0, -1});
  Tensor y = run_op(Op::Conv, {x, w}, conv_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, 1));
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_near(floats_of(y), {-5, -5, -5, -5});
}

// Direct 2-D convolution, the textbook seven loops.
Tensor naive_conv2d(const Tensor& x, const Tensor& w, const Tensor* b, I s, I d, I p, int64_t G,
                    const Shape& out_shape) {
  Tensor y(DType::F32, out_shape);
  const Shape &xs = x.shape(), &ws = w.shape();
  const int64_t cin_g = xs[1] / G, cout_g = ws[0] / G;
  for (int64_t n = 0; n < out_shape[0]; n++)
    for (int64_t oc = 0; oc < out_shape[1]; oc++)
      for (int64_t oh = 0; oh < out_shape[2]; oh++)
        for (int64_t ow = 0; ow < out_shape[3]; ow++) {
          double acc = b ? b->data<float>()[oc] : 0.0;
          const int64_t g = oc / cout_g;
          for (int64_t ic = 0; ic < cin_g; ic++)
            for (int64_t kh = 0; kh < ws[2]; kh++)
              for (int64_t kw = 0; kw < ws[3]; kw++) {
                const int64_t ih = oh * s[0] + kh * d[0] - p[0], iw = ow * s[1] + kw * d[1] - p[1];
                if (ih < 0 || ih >= xs[2] || iw < 0 || iw >= xs[3]) continue;
                acc += x.data<float>()[((n * xs[1] + g * cin_g + ic) * xs[2] + ih) * xs[3] + iw] *
                       w.data<float>()[((oc * cin_g + ic) * ws[2] + kh) * ws[3] + kw];
              }
          y.data<float>()[((n * out_shape[1] + oc) * out_shape[2] + oh) * out_shape[3] + ow] =
              (float)acc;
        }
  return y;
}

struct ConvCase {
  Shape x, w;
  I s, d, p;
  int64_t group;
};

TEST(InterpAnchor, ConvMatchesDirectLoops) {
  const ConvCase cases[] = {
      {{2, 4, 9, 8}, {6, 2, 3, 3}, {1, 2}, {2, 1}, {1, 0, 2, 1}, 2},       // grouped, mixed
      {{1, 8, 7, 7}, {8, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 8},       // depthwise
      {{3, 5, 6, 6}, {7, 5, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1},       // pointwise, batch 3
      {{1, 3, 20, 21}, {5, 3, 5, 4}, {3, 2}, {1, 2}, {2, 1, 0, 3}, 1},     // strided
      {{1, 64, 12, 12}, {40, 64, 3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1},  // threaded gemm
  };
  uint64_t seed = 1;
  for (const ConvCase& cc : cases) {
    Tensor x = random_tensor(DType::F32, cc.x, seed++), w = random_tensor(DType::F32, cc.w, seed++);
    Tensor b = random_tensor(DType::F32, {cc.w[0]}, seed++);
    Tensor y = run_op(Op::Conv, {x, w, b}, conv_attrs(cc.s, cc.d, cc.p, cc.group));
    Tensor ref = naive_conv2d(x, w, &b, cc.s, cc.d, cc.p, cc.group, y.shape());
    EXPECT_LE(max_rel_violation(y, ref, 1e-5, 1e-4), 1.0) << shape_str(cc.x) << shape_str(cc.w);
  }
}

TEST(InterpAnchor, Conv1d) {
  // [1, 2, 3, 4] * [1, -1] with pad 1 on the left only: [-1, -1, -1, -1] after x[-1] = 0 -> -1*1.
  Tensor x = Tensor::from<float>({1, 1, 4}, {1, 2, 3, 4});
  Tensor w = Tensor::from<float>({1, 1, 2}, {1, -1});
  Tensor y = run_op(Op::Conv, {x, w}, conv_attrs({1}, {1}, {1, 0}, 1));
  expect_near(floats_of(y), {-1, -1, -1, -1});
}

TEST(InterpAnchor, ConvTransposeStride2Replicates) {
  // Stride 2, 2x2 kernel of ones: each input value fills its own 2x2 output block.
  Tensor x = Tensor::from<float>({1, 1, 2, 2}, {1, 2, 3, 4});
  Tensor w = Tensor::from<float>({1, 1, 2, 2}, {1, 1, 1, 1});
  Attrs a = conv_attrs({2, 2}, {1, 1}, {0, 0, 0, 0}, 1);
  a["output_padding"] = I{0, 0};
  Tensor y = run_op(Op::ConvTranspose, {x, w}, a);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 4, 4}));
  expect_near(floats_of(y), {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4});
}

// Direct transposed convolution: scatter every input pixel through the kernel.
Tensor naive_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor& b, I s, I d, I p,
                              int64_t G, const Shape& out_shape) {
  Tensor y(DType::F32, out_shape);
  const Shape &xs = x.shape(), &ws = w.shape();
  const int64_t cin_g = xs[1] / G, cout_g = ws[1];
  float* py = y.data<float>();
  for (int64_t i = 0; i < y.numel(); i++)
    py[i] = b.data<float>()[(i / (out_shape[2] * out_shape[3])) % out_shape[1]];
  for (int64_t n = 0; n < xs[0]; n++)
    for (int64_t ic = 0; ic < xs[1]; ic++)
      for (int64_t ih = 0; ih < xs[2]; ih++)
        for (int64_t iw = 0; iw < xs[3]; iw++)
          for (int64_t j = 0; j < cout_g; j++)
            for (int64_t kh = 0; kh < ws[2]; kh++)
              for (int64_t kw = 0; kw < ws[3]; kw++) {
                const int64_t oh = ih * s[0] + kh * d[0] - p[0], ow = iw * s[1] + kw * d[1] - p[1];
                if (oh < 0 || oh >= out_shape[2] || ow < 0 || ow >= out_shape[3]) continue;
                const int64_t oc = (ic / cin_g) * cout_g + j;
                py[((n * out_shape[1] + oc) * out_shape[2] + oh) * out_shape[3] + ow] +=
                    x.data<float>()[((n * xs[1] + ic) * xs[2] + ih) * xs[3] + iw] *
                    w.data<float>()[((ic * cout_g + j) * ws[2] + kh) * ws[3] + kw];
              }
  return y;
}

TEST(InterpAnchor, ConvTransposeMatchesDirectLoops) {
  Tensor x = random_tensor(DType::F32, {2, 4, 5, 6}, 11);
  Tensor w = random_tensor(DType::F32, {4, 3, 3, 2}, 12);
  Tensor b = random_tensor(DType::F32, {6}, 13);
  Attrs a = conv_attrs({2, 3}, {2, 1}, {1, 0, 2, 1}, 2);
  a["output_padding"] = I{1, 2};
  Tensor y = run_op(Op::ConvTranspose, {x, w, b}, a);
  // 2*(5-1) + 1 + 5 - 1 - 2 = 11; 3*(6-1) + 2 + 2 - 0 - 1 = 18
  EXPECT_EQ(y.shape(), (Shape{2, 6, 11, 18}));
  Tensor ref = naive_conv_transpose2d(x, w, b, {2, 3}, {2, 1}, {1, 0}, 2, y.shape());
  EXPECT_LE(max_rel_violation(y, ref, 1e-5, 1e-4), 1.0);
}

TEST(InterpAnchor, PoolsCeilMode) {
  F xs;
  for (int i = 0; i < 16; i++) xs.push_back((float)i);
  Tensor x = Tensor::from<float>({1, 1, 4, 4}, xs);
  Attrs mp = {{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{0, 0, 0, 0}},
              {"dilations", I{1, 1}},
              {"ceil_mode", int64_t(1)}};
  Tensor y = run_op(Op::MaxPool, {x}, mp);
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  expect_near(floats_of(y), {10, 11, 14, 15});
  Attrs ap = {{"kernel_shape", I{3, 3}},
              {"strides", I{2, 2}},
              {"pads", I{0, 0, 0, 0}},
              {"ceil_mode", int64_t(1)},
              {"count_include_pad", int64_t(0)}};
  expect_near(floats_of(run_op(Op::AveragePool, {x}, ap)), {5, 6.5f, 11, 12.5f});
}

TEST(InterpAnchor, PoolPadding) {
  Tensor x = Tensor::from<float>({1, 1, 3, 3}, {-1, -2, -3, -4, -5, -6, -7, -8, -9});
  Attrs mp = {{"kernel_shape", I{3, 3}},
              {"strides", I{1, 1}},
              {"pads", I{1, 1, 1, 1}},
              {"dilations", I{1, 1}},
              {"ceil_mode", int64_t(0)}};
  // Padding is -inf for MaxPool: the corner is max(-1, -2, -4, -5) = -1, not 0.
  expect_near(floats_of(run_op(Op::MaxPool, {x}, mp)), {-1, -1, -2, -1, -1, -2, -4, -4, -5});
  Tensor ones = Tensor::from<float>({1, 1, 3, 3}, F(9, 1.f));
  Attrs ap = {{"kernel_shape", I{3, 3}},
              {"strides", I{1, 1}},
              {"pads", I{1, 1, 1, 1}},
              {"ceil_mode", int64_t(0)},
              {"count_include_pad", int64_t(1)}};
  const float c = 4.f / 9, e = 6.f / 9;
  expect_near(floats_of(run_op(Op::AveragePool, {ones}, ap)), {c, e, c, e, 1, e, c, e, c});
  ap["count_include_pad"] = int64_t(0);
  expect_near(floats_of(run_op(Op::AveragePool, {ones}, ap)), F(9, 1.f));
}

TEST(InterpAnchor, MaxPoolDilated1d) {
  Tensor x = Tensor::from<float>({1, 1, 5}, {5, 1, 2, 7, 3});
  Attrs mp = {{"kernel_shape", I{2}},
              {"strides", I{1}},
              {"pads", I{0, 0}},
              {"dilations", I{2}},
              {"ceil_mode", int64_t(0)}};
  expect_near(floats_of(run_op(Op::MaxPool, {x}, mp)), {5, 7, 3});  // pairs (0,2) (1,3) (2,4)
}

TEST(InterpAnchor, GlobalAveragePool) {
  Tensor x = Tensor::from<float>({1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40});
  expect_near(floats_of(run_op(Op::GlobalAveragePool, {x}, {})), {2.5f, 25});
}

TEST(InterpAnchor, Gemm) {
  // A^T = [[1, 2], [3, 4]] (A stored transposed), B^T = [[1, 0], [1, 1]] stored as [[1, 1], [0,
  // 1]].
  Tensor a = Tensor::from<float>({2, 2}, {1, 3, 2, 4});
  Tensor b = Tensor::from<float>({2, 2}, {1, 1, 0, 1});
  Tensor c = Tensor::from<float>({2}, {10, 20});
  Attrs at = {{"alpha", 2.f}, {"beta", 0.5f}, {"transA", int64_t(1)}, {"transB", int64_t(1)}};
  // op(A) op(B) = [[1,2],[3,4]] * [[1,0],[1,1]] = [[3,2],[7,4]]; *2 + 0.5*[10,20].
  expect_near(floats_of(run_op(Op::Gemm, {a, b, c}, at)), {11, 14, 19, 18});
}

TEST(InterpAnchor, GemmPathsMatchLoops) {
  // M <= 8 with transB takes the row-dot path, larger M the transpose + gemm path; K = 21 leaves
  // a remainder after the 8-wide partial sums.
  for (int64_t M : {3, 12}) {
    for (int64_t ta : {0, 1}) {
      const int64_t K = 21, N = 10;
      Tensor a = random_tensor(DType::F32, ta ? Shape{K, M} : Shape{M, K}, 40 + M + ta);
      Tensor b = random_tensor(DType::F32, {N, K}, 50 + M);  // transB = 1
      Tensor c = random_tensor(DType::F32, {M, 1}, 60);
      Attrs at = {{"alpha", 0.5f}, {"beta", 2.f}, {"transA", ta}, {"transB", int64_t(1)}};
      Tensor y = run_op(Op::Gemm, {a, b, c}, at);
      ASSERT_EQ(y.shape(), (Shape{M, N}));
      for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
          double acc = 0;
          for (int64_t k = 0; k < K; k++)
            acc += a.data<float>()[ta ? k * M + i : i * K + k] * b.data<float>()[j * K + k];
          EXPECT_NEAR(y.data<float>()[i * N + j], 0.5 * acc + 2 * c.data<float>()[i], 1e-5)
              << "M=" << M << " transA=" << ta;
        }
    }
  }
}

TEST(InterpAnchor, MatMulBroadcastMatchesLoops) {
  Tensor a = random_tensor(DType::F32, {2, 1, 5, 7}, 21);
  Tensor b = random_tensor(DType::F32, {3, 7, 4}, 22);
  Tensor y = run_op(Op::MatMul, {a, b}, {});
  ASSERT_EQ(y.shape(), (Shape{2, 3, 5, 4}));
  for (int64_t i = 0; i < 2; i++)
    for (int64_t j = 0; j < 3; j++)
      for (int64_t m = 0; m < 5; m++)
        for (int64_t n = 0; n < 4; n++) {
          double acc = 0;
          for (int64_t k = 0; k < 7; k++)
            acc += a.data<float>()[(i * 5 + m) * 7 + k] * b.data<float>()[(j * 7 + k) * 4 + n];
          EXPECT_NEAR(y.data<float>()[((i * 3 + j) * 5 + m) * 4 + n], acc, 1e-5);
        }
  // 1-D operands: [K] x [K] is a dot product, [K] x [K, N] a row vector.
  Tensor v = Tensor::from<float>({3}, {1, 2, 3});
  expect_near(floats_of(run_op(Op::MatMul, {v, v}, {})), {14});
  Tensor m = Tensor::from<float>({3, 2}, {1, 0, 0, 1, 1, 1});
  expect_near(floats_of(run_op(Op::MatMul, {v, m}, {})), {4, 5});
}

TEST(InterpAnchor, LargeMatMulThreadedMatchesSerialRows) {
  // Big enough for the threaded path (rows split across threads) and the blocked kernel
  // (N and K beyond one block); checked on sampled entries against a double dot product.
  const int64_t M = 70, K = 600, N = 530;
  Tensor a = random_tensor(DType::F32, {M, K}, 31), b = random_tensor(DType::F32, {K, N}, 32);
  Tensor y = run_op(Op::MatMul, {a, b}, {});
  for (int64_t m = 0; m < M; m += 7)
    for (int64_t n = 0; n < N; n += 13) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += a.data<float>()[m * K + k] * b.data<float>()[k * N + n];
      EXPECT_NEAR(y.data<float>()[m * N + n], acc, 1e-3);
    }
}

}  // namespace
}  // namespace tlm

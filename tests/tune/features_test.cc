// The register block's traffic among the cross-task features (space/features.h): the anchor's
// operand index (SpaceOperand::index) sees a convolution's stride, and a 3 x 7 register block of
// ResNet's 14 x 14 3x3 convolution (3 channel blocks by 7 columns) issues fewer loads per
// accumulator than a 1 x 14 one (one block by 14 columns), which measured 0.494 against
// 0.548 ms on the Zen 5 machine (bench/results/zero-shot/expert-train-zen5*.jsonl.gz); under a
// row split every thread reads all of its weights (row_split_shared_bytes).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "language/sentence.h"
#include "space/features.h"

namespace tlm {
namespace {

// ResNet-18's 256-channel 3x3 convolution at 224 (14 x 14 output, NCHW16c) with a register block
// of `block` ("1 2 7 ... 3 ... 1 1 3" = 3 x 7, "1 1 14 ... 1 ... 1 1 1" = 1 x 14) at `stride`.
std::string conv_sentence(int stride, bool three_by_seven) {
  const std::string in = stride == 1 ? "in0 1 16 14 14 16 w0 16 16 3 3 16 16"
                                     : "in0 1 8 28 28 16 w0 16 8 3 3 16 16";
  const std::string ci = stride == 1 ? "16" : "8";
  const std::string s = std::to_string(stride);
  const std::string block =
      three_by_seven ? "tile f1_convnchwc.d1 14 -> 1 2 7 pad f1_convnchwc.d2 -> 1 tile "
                       "f1_convnchwc.d2 14 -> 1 1 1 pad f1_convnchwc.d3 -> 3 tile "
                       "f1_convnchwc.d3 16 -> 1 1 3"
                     : "tile f1_convnchwc.d1 14 -> 1 1 14 pad f1_convnchwc.d2 -> 1 tile "
                       "f1_convnchwc.d2 14 -> 1 1 1 pad f1_convnchwc.d3 -> 1 tile "
                       "f1_convnchwc.d3 16 -> 1 1 1";
  // The output's shape is spelled only where it differs from the input's.
  const std::string out = stride == 1 ? "" : " -> 1 16 14 14 16";
  return in + " w1 16 16 ConvNchwc in0 w0 w1 dilations 1 1 group 1 pads 1 1 1 1 strides " + s +
         " " + s + out +
         " Relu n0 isa=avx512 cores=2 vec=16 l1=32k l2=1m l3=32m pad "
         "f1_convnchwc.d0 -> 1 tile f1_convnchwc.d0 16 -> 1 1 16 pad f1_convnchwc.d1 -> 1 " +
         block + " tile f1_convnchwc.r0 16 -> 16 tile f1_convnchwc.r1 3 -> 3 tile "
                 "f1_convnchwc.r2 3 -> 3 tile f1_convnchwc.r3 " + ci + " -> " + ci +
         " order f1_convnchwc.s2 -> 1 compute_at f1_convnchwc -> 1 vectorize f1_convnchwc -> 0 "
         "parallel f4_relu -> 1 pack f1_convnchwc.pack.f0_convnchwc_pad -> 0 pack "
         "f1_convnchwc.pack.w0 -> 0 unroll f1_convnchwc -> 128";
}

// The traffic block at the end of the cross-task vector.
struct Traffic {
  float meets[kCrossTaskOperands], vloads[kCrossTaskOperands], l1[kCrossTaskOperands];
  float loads_per_acc, acc, acc_share;
};
Traffic traffic(const ParsedSentence& p) {
  const std::vector<float> f = cross_task_features(p.space, p.program, p.hw);
  const size_t b = f.size() - (3 * kCrossTaskOperands + 3);
  Traffic t;
  for (int k = 0; k < kCrossTaskOperands; k++)
    t.meets[k] = f[b + 3 * k], t.vloads[k] = f[b + 3 * k + 1], t.l1[k] = f[b + 3 * k + 2];
  t.loads_per_acc = f[b + 3 * kCrossTaskOperands];
  t.acc = f[b + 3 * kCrossTaskOperands + 1];
  t.acc_share = f[b + 3 * kCrossTaskOperands + 2];
  return t;
}

TEST(Traffic, OperandIndexSeesTheStride) {
  for (int stride : {1, 2}) {
    const ParsedSentence p = parse_sentence(conv_sentence(stride, true));
    const SpaceStage& anchor = p.space.stages.at(p.space.anchor);
    ASSERT_GE(anchor.operands.size(), 2u);
    const SpaceOperand& in = anchor.operands[0];  // the padded input, read first
    EXPECT_EQ(in.name, "f0_convnchwc_pad");
    // Its dims (c, x, y, C, n) against the anchor's vars (c, x, y, C, n) and reduction dims
    // (ci, kx, ky, Ci): x * stride + kx.
    ASSERT_EQ(in.index.size(), 5u);
    ASSERT_EQ(in.index[1].size(), anchor.extents.size() + anchor.rextents.size());
    EXPECT_EQ(in.index[1][1], stride);
    EXPECT_EQ(in.index[1][anchor.extents.size() + 1], 1);
    EXPECT_EQ(in.index[0][0], 0);  // the output's channel lanes do not index the input
    EXPECT_EQ(in.index[0][anchor.extents.size()], 1);
  }
}

TEST(Traffic, ThreeBySevenBlockLoadsLessPerAccumulatorThanOneByFourteen) {
  for (int stride : {1, 2}) {
    SCOPED_TRACE("stride " + std::to_string(stride));
    const Traffic a = traffic(parse_sentence(conv_sentence(stride, true)));
    const Traffic b = traffic(parse_sentence(conv_sentence(stride, false)));
    EXPECT_FLOAT_EQ(a.acc, 21);  // 3 channel blocks x 7 columns
    EXPECT_FLOAT_EQ(b.acc, 14);
    EXPECT_FLOAT_EQ(a.acc_share, 21.f / 32);
    // The input is broadcast (one load per column), the weights contiguous (a vector per block).
    EXPECT_EQ(a.meets[0], 0);
    EXPECT_EQ(a.meets[1], 1);
    // 7 broadcasts + 3 weight vectors for 21 accumulators; 14 + 1 for 14.
    EXPECT_NEAR(a.loads_per_acc, 10.f / 21, 1e-5);
    EXPECT_NEAR(b.loads_per_acc, 15.f / 14, 1e-5);
  }
  // The input's tile in L1 (14 columns: 16 lanes x 16 or 8 channel blocks x 3 x 3 taps x the
  // columns the 14 outputs read: 16 at stride 1, 29 at stride 2).
  EXPECT_NEAR(traffic(parse_sentence(conv_sentence(1, false))).l1[0], std::log2(16.0 * 16 * 16 * 3), 1e-4);
  EXPECT_NEAR(traffic(parse_sentence(conv_sentence(2, false))).l1[0], std::log2(16.0 * 8 * 29 * 3), 1e-4);
}

// Under a row split every thread reads the operands the rows do not index: the weights
// (256 x 256 x 3 x 3 floats), not the input.
TEST(Traffic, RowSplitSharedBytesAreTheWeights) {
  for (int stride : {1, 2}) {
    const ParsedSentence p = parse_sentence(conv_sentence(stride, true));
    const int64_t ci = stride == 1 ? 256 : 128;
    EXPECT_EQ(row_split_shared_bytes(p.space), 4 * 256 * ci * 3 * 3);
  }
}

}  // namespace
}  // namespace tlm

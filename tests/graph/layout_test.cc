// block_channels (graph/layout.cc, docs/layout.md): the channel-blocked graph computes the same
// function as the original (interpreted on random inputs), rewrites what it should (convs with
// channel counts that are multiples of the block, the elementwise ops and pools between them)
// and leaves the rest, with conversions only where the layout changes.
#include <gtest/gtest.h>

#include "graph/interp_test_util.h"
#include "graph/passes.h"

namespace tlm {
namespace {

using namespace testing_graph;
using V = std::vector<int64_t>;

int count_op(const Graph& g, Op op) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op == op;
  return n;
}

// The rewritten graph b computes what g does on the inputs `in` (interpreted, each output within
// 1e-5 relative + 1e-5 absolute).
void expect_same_function(const Graph& g, const Graph& b, const std::vector<Tensor>& in) {
  std::vector<Tensor> want = interpret(g, in), got = interpret(b, in);
  ASSERT_EQ(want.size(), got.size());
  for (size_t k = 0; k < want.size(); k++) {
    ASSERT_EQ(got[k].shape(), want[k].shape());
    EXPECT_LE(max_rel_violation(got[k], want[k], 1e-5, 1e-5), 1.0) << "output " << k;
  }
}

ValueId conv(Graph& g, ValueId x, int64_t co, int64_t ci_g, int64_t k, int64_t stride,
             int64_t group, uint64_t seed) {
  ValueId w = g.add_constant(g.unique_name("w"), random_tensor(DType::F32, {co, ci_g, k, k}, seed));
  ValueId b = g.add_constant(g.unique_name("b"), random_tensor(DType::F32, {co}, seed + 1));
  return g.add(Op::Conv, {x, w, b},
               {{"strides", V{stride, stride}},
                {"dilations", V{1, 1}},
                {"pads", V{k / 2, k / 2, k / 2, k / 2}},
                {"group", group}});
}

// stem conv (3 input channels) + relu, max pool, a residual block, a depthwise conv with
// stride 2, a conv to 12 channels (not a multiple of 8: padded to 16 by block 8, left plain by
// block 16), its relu into a 1x1 conv back to 16 channels and a global average pool, and its
// sigmoid (which does not keep the padding's zeros) as an output.
Graph small_cnn() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 3, 20, 20});
  ValueId s = g.add(Op::Relu, {conv(g, x, 16, 3, 3, 2, 1, 10)});
  ValueId p = g.add(Op::MaxPool, {s},
                    {{"kernel_shape", V{3, 3}},
                     {"strides", V{2, 2}},
                     {"pads", V{1, 1, 1, 1}},
                     {"dilations", V{1, 1}},
                     {"ceil_mode", int64_t(0)}});
  ValueId r = g.add(Op::Relu, {g.add(Op::Add, {conv(g, p, 16, 16, 3, 1, 1, 20), p})});
  ValueId d = g.add(Op::Relu, {conv(g, r, 16, 1, 3, 2, 16, 30)});
  ValueId e = conv(g, d, 12, 16, 1, 1, 1, 40);
  ValueId f = conv(g, g.add(Op::Relu, {e}), 16, 12, 1, 1, 1, 50);
  g.mark_output(r);
  g.mark_output(g.add(Op::GlobalAveragePool, {f}));
  g.mark_output(g.add(Op::Sigmoid, {e}));
  return g;
}

TEST(BlockChannels, SameFunctionAndTheExpectedRewrites) {
  for (int block : {4, 8, 16}) {
    SCOPED_TRACE("block " + std::to_string(block));
    Graph g = small_cnn();
    Graph b = g;
    block_channels(b, block);
    ASSERT_NO_FATAL_FAILURE(
        expect_same_function(g, b, {random_tensor(DType::F32, {1, 3, 20, 20}, 5)}));
    ASSERT_EQ(b.outputs.size(), g.outputs.size());
    for (size_t k = 0; k < g.outputs.size(); k++)
      EXPECT_EQ(b.value(b.outputs[k]).name, g.value(g.outputs[k]).name);
    // Every conv is blocked, except the one to 12 channels by 16 (12 < 16: padding would waste
    // more than half); the 1x1 conv after it then reads its plain input.
    EXPECT_EQ(count_op(b, Op::ConvNchwc), block == 16 ? 4 : 5);
    EXPECT_EQ(count_op(b, Op::Conv), block == 16 ? 1 : 0);
    EXPECT_EQ(count_op(b, Op::Slice), block == 8 ? 1 : 0);  // the padding dropped for the sigmoid
    // The stem reads the plain input; the max pool runs over the blocked value.
    for (const Node& n : b.nodes) {
      if (n.op == Op::MaxPool) {
        EXPECT_EQ(b.value(n.inputs[0]).shape.size(), 5u);
      }
      if (n.op == Op::ConvNchwc && b.value(n.inputs[0]).shape == Shape{1, 3, 20, 20}) {
        EXPECT_EQ(b.value(n.outputs[0]).shape, (Shape{1, 16 / block, 10, 10, block}));
      }
      // Weights over a blocked input in MLAS's order [Co/B, Ci/B, kh, kw, B_in, B_out].
      if (n.op == Op::ConvNchwc) {
        const Shape& ws = b.value(n.inputs[1]).shape;
        const bool blocked_in = b.value(n.inputs[0]).shape.size() == 5 && n.i("group", 1) == 1;
        ASSERT_EQ(ws.size(), blocked_in ? 6u : 5u) << n.name;
        EXPECT_EQ(ws.back(), block);
        if (blocked_in) {
          EXPECT_EQ(ws[4], block);
        }
      }
    }
    // Conversions back to NCHW only where a consumer needs it: the graph output r, the global
    // average pool's input, and the sigmoid's (blocks 4, 8) or the plain 12-channel conv's
    // (block 16); never back to blocked.
    int to_plain = 0, to_blocked = 0;
    for (const Node& n : b.nodes)
      if (n.op == Op::Transpose) (b.value(n.inputs[0]).shape.size() == 5 ? to_plain : to_blocked)++;
    EXPECT_EQ(to_plain, 3);
    EXPECT_EQ(to_blocked, 0);
  }
}

// Branches concatenated along the channels (SqueezeNet's fire module, Inception's blocks): with
// every branch a multiple of the block, the Concat joins the blocked values along the block dim
// and the conv after it reads that, with no conversion to the plain layout and back; a branch of
// 12 channels (not a multiple of 8) leaves the Concat plain. Same function either way.
TEST(BlockChannels, ChannelConcatsOfBlockedBranchesStayBlocked) {
  for (int64_t odd : {16, 12}) {
    SCOPED_TRACE("second branch " + std::to_string(odd) + " channels");
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 16, 9, 9});
    ValueId s = g.add(Op::Relu, {conv(g, x, 8, 16, 1, 1, 1, 100)});
    ValueId e1 = g.add(Op::Relu, {conv(g, s, 16, 8, 1, 1, 1, 110)});
    ValueId e3 = g.add(Op::Relu, {conv(g, s, odd, 8, 3, 1, 1, 120)});
    ValueId cat = g.add(Op::Concat, {e1, e3}, {{"axis", int64_t(1)}});
    g.mark_output(conv(g, cat, 16, 16 + odd, 3, 1, 1, 130));
    Graph b = g;
    block_channels(b, 8);
    ASSERT_NO_FATAL_FAILURE(
        expect_same_function(g, b, {random_tensor(DType::F32, {1, 16, 9, 9}, 7)}));
    int blocked_concats = 0, transposes = 0;
    for (const Node& n : b.nodes) {
      if (n.op == Op::Concat && b.value(n.outputs[0]).shape.size() == 5) {
        blocked_concats++;
        EXPECT_EQ(n.i("axis"), 1);
        EXPECT_EQ(b.value(n.outputs[0]).shape, (Shape{1, 4, 9, 9, 8}));
      }
      transposes += n.op == Op::Transpose;
    }
    EXPECT_EQ(blocked_concats, odd % 8 == 0 ? 1 : 0);
    // Blocked: the input to NCHW8c and the graph output back, nothing else. Plain: also the two
    // branches to NCHW (the last conv reads the plain 28 channels as they are).
    EXPECT_EQ(transposes, odd % 8 == 0 ? 2 : 4);
  }
}

// A squeeze-and-excitation block (EfficientNet, MobileNet-V3, RegNetY) and a classifier head:
// the squeeze (GlobalAveragePool read by a conv) runs as an AveragePool over the blocked value,
// the excitation's per-channel scale multiplies the blocked activation; the head's pool reads a
// plain view of the blocked value of its own.
TEST(BlockChannels, SqueezeAndExcitationStaysBlocked) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 8, 9, 9});
  ValueId c = conv(g, x, 16, 8, 3, 1, 1, 200);
  ValueId a = g.add(Op::Mul, {c, g.add(Op::Sigmoid, {c})});  // SiLU
  ValueId sq = g.add(Op::GlobalAveragePool, {a});
  ValueId e = g.add(Op::Relu, {conv(g, sq, 4, 16, 1, 1, 1, 210)});
  ValueId scale = g.add(Op::Sigmoid, {conv(g, e, 16, 4, 1, 1, 1, 220)});
  ValueId y = conv(g, g.add(Op::Mul, {a, scale}), 12, 16, 1, 1, 1, 230);
  // 12 channels, padded to 16: a per-channel constant added, zero-padded too.
  ValueId bn = g.add_constant("bn", random_tensor(DType::F32, {1, 12, 1, 1}, 240));
  ValueId head = g.add(Op::GlobalAveragePool, {g.add(Op::Add, {y, bn})});
  g.mark_output(g.add(Op::Flatten, {head}, {{"axis", int64_t(1)}}));
  Graph b = g;
  block_channels(b, 8);
  ASSERT_NO_FATAL_FAILURE(expect_same_function(g, b, {random_tensor(DType::F32, {1, 8, 9, 9}, 9)}));
  int squeezes = 0, gap = 0, blocked_muls = 0, blocked_adds = 0;
  for (const Node& n : b.nodes) {
    const Shape& os = b.value(n.outputs[0]).shape;
    if (n.op == Op::AveragePool) {
      squeezes++;
      EXPECT_EQ(os, (Shape{1, 2, 1, 1, 8}));
      EXPECT_EQ(n.ints("kernel_shape"), (std::vector<int64_t>{9, 9, 1}));
    }
    gap += n.op == Op::GlobalAveragePool;
    if (n.op == Op::Mul && os == Shape{1, 2, 9, 9, 8}) {
      blocked_muls++;  // the SiLU's and the scale's
      for (ValueId in : n.inputs) EXPECT_EQ(b.value(in).shape.size(), 5u);
    }
    // With the constant, over the 1x1 conv's output (pixels flattened, kFlatWidth).
    blocked_adds += n.op == Op::Add && os == Shape{1, 2, 1, 81, 8};
  }
  EXPECT_EQ(squeezes, 1);
  EXPECT_EQ(gap, 1);
  EXPECT_EQ(blocked_muls, 2);
  EXPECT_EQ(blocked_adds, 1);
  // x to NCHW8c, the squeezed [1, 2, 1, 1, 8] back for the 4-channel conv (too few channels to
  // block: it reads plain), and the head's view.
  EXPECT_EQ(count_op(b, Op::Transpose), 3);
}

TEST(BlockChannels, ConvsItCannotBlockStayAsTheyAre) {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 8, 9, 9});
  ValueId wx = g.add_input("w", DType::F32, {16, 8, 3, 3});  // weights not constant
  ValueId a = g.add(Op::Conv, {x, wx},
                    {{"strides", V{1, 1}}, {"dilations", V{1, 1}}, {"pads", V{1, 1, 1, 1}},
                     {"group", int64_t(1)}});
  ValueId c = conv(g, a, 16, 4, 3, 1, 4, 3);  // grouped, not depthwise
  g.mark_output(c);
  Graph b = g;
  block_channels(b, 8);
  EXPECT_EQ(count_op(b, Op::ConvNchwc), 0);
  EXPECT_EQ(count_op(b, Op::Conv), 2);
  EXPECT_EQ(b.nodes.size(), g.nodes.size());
}

// A bottleneck on a 7x7 map (ResNet-50's last stage, small): 1x1 conv + relu, 3x3 conv + relu,
// 1x1 conv + the residual + relu, and one more 1x1 conv on a 28-wide map.
Graph bottleneck() {
  Graph g;
  ValueId x = g.add_input("x", DType::F32, {1, 16, 7, 7});
  ValueId a = g.add(Op::Relu, {conv(g, x, 8, 16, 1, 1, 1, 60)});
  ValueId b = g.add(Op::Relu, {conv(g, a, 8, 8, 3, 1, 1, 70)});
  ValueId c = g.add(Op::Relu, {g.add(Op::Add, {conv(g, b, 16, 8, 1, 1, 1, 80), x})});
  g.mark_output(c);
  ValueId y = g.add_input("y", DType::F32, {1, 8, 28, 28});
  g.mark_output(conv(g, y, 8, 8, 1, 1, 1, 90));
  return g;
}

// Pointwise convolutions of narrow maps (width <= 14) read and write the pixels flattened,
// [N, C/B, 1, H*W, B], and so do the elementwise ops after them; the 3x3 conv reads its input
// unflattened; a 28-wide map stays 2-D; TLM_FLAT_PIXELS=0 turns it off. Same function either way.
TEST(BlockChannels, PointwiseConvsOfNarrowMapsRunOverTheFlattenedPixels) {
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "flattened" : "TLM_FLAT_PIXELS=0");
    if (!on) setenv("TLM_FLAT_PIXELS", "0", 1);
    Graph g = bottleneck();
    Graph b = g;
    block_channels(b, 8);
    unsetenv("TLM_FLAT_PIXELS");
    ASSERT_NO_FATAL_FAILURE(expect_same_function(g, b,
                                                 {random_tensor(DType::F32, {1, 16, 7, 7}, 6),
                                                  random_tensor(DType::F32, {1, 8, 28, 28}, 7)}));
    int flat_convs = 0, flat_elemwise = 0, convs = 0;
    for (const Node& n : b.nodes) {
      const Shape& in0 = b.value(n.inputs[0]).shape;
      const bool flat = in0.size() == 5 && in0[2] == 1 && in0[3] == 49;
      if (n.op == Op::ConvNchwc) {
        convs++;
        flat_convs += flat;
        const Shape& ws = b.value(n.inputs[1]).shape;
        if (ws[2] == 3) EXPECT_EQ(in0, (Shape{1, 1, 7, 7, 8}));  // the 3x3 reads 2-D
        if (in0[3] == 28) EXPECT_EQ(in0, (Shape{1, 1, 28, 28, 8}));
        if (flat) EXPECT_EQ(b.value(n.outputs[0]).shape[3], 49);
      }
      if (n.op == Op::Relu || n.op == Op::Add) flat_elemwise += flat;
    }
    EXPECT_EQ(convs, 4);
    EXPECT_EQ(flat_convs, on ? 2 : 0);
    EXPECT_EQ(flat_elemwise, on ? 3 : 0);  // relu after the first, add and relu after the last
  }
}

// Strided 1x1 convolutions (ResNet's downsampling shortcuts) whose output is narrow: a Slice
// with steps takes every s-th pixel of the blocked input and the convolution runs with unit
// stride over those pixels flattened, writing a flattened output; an output 28 wide stays a
// 2-D strided convolution; TLM_FLAT_PIXELS=0 turns it off. Same function either way, odd input
// extents (13 -> 7) included.
TEST(BlockChannels, StridedPointwiseConvsOfNarrowOutputsSubsampleThenRunFlattened) {
  for (bool on : {true, false}) {
    SCOPED_TRACE(on ? "subsampled" : "TLM_FLAT_PIXELS=0");
    if (!on) setenv("TLM_FLAT_PIXELS", "0", 1);
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 16, 14, 14});
    ValueId y = g.add_input("y", DType::F32, {1, 8, 13, 13});
    ValueId z = g.add_input("z", DType::F32, {1, 8, 56, 56});
    ValueId sx = conv(g, x, 32, 16, 1, 2, 1, 100);  // -> 7x7, then the residual and relu
    ValueId r = conv(g, g.add(Op::Relu, {conv(g, x, 32, 16, 3, 2, 1, 110)}), 32, 32, 1, 1, 1, 120);
    g.mark_output(g.add(Op::Relu, {g.add(Op::Add, {sx, r})}));
    g.mark_output(conv(g, y, 16, 8, 1, 2, 1, 130));  // 13x13 -> 7x7
    g.mark_output(conv(g, z, 8, 8, 1, 2, 1, 140));   // 56x56 -> 28x28: stays 2-D and strided
    Graph b = g;
    block_channels(b, 8);
    unsetenv("TLM_FLAT_PIXELS");
    ASSERT_NO_FATAL_FAILURE(expect_same_function(g, b,
                                                 {random_tensor(DType::F32, {1, 16, 14, 14}, 8),
                                                  random_tensor(DType::F32, {1, 8, 13, 13}, 9),
                                                  random_tensor(DType::F32, {1, 8, 56, 56}, 10)}));
    auto producer = [&](ValueId v) -> const Node* {
      for (const Node& n : b.nodes)
        if (n.outputs[0] == v) return &n;
      return nullptr;
    };
    int subsampled = 0, strided_1x1 = 0;
    for (const Node& n : b.nodes) {
      if (n.op != Op::ConvNchwc || b.value(n.inputs[1]).shape[2] != 1) continue;
      const bool strided = n.ints("strides") != V{1, 1};
      strided_1x1 += strided;
      const Shape& in0 = b.value(n.inputs[0]).shape;
      const Node* src = producer(n.inputs[0]);
      if (in0.size() == 5 && in0[2] == 1 && src != nullptr && src->op == Op::Reshape) {
        const Node* sub = producer(src->inputs[0]);
        if (sub != nullptr && sub->op == Op::Slice) {
          EXPECT_EQ(sub->ints("steps"), (V{1, 1, 2, 2, 1}));
          EXPECT_FALSE(strided);
          EXPECT_EQ(in0[3], 49);
          EXPECT_EQ(b.value(n.outputs[0]).shape[3], 49);  // written flattened
          subsampled++;
        }
      }
    }
    EXPECT_EQ(subsampled, on ? 2 : 0);
    EXPECT_EQ(strided_1x1, on ? 1 : 3);
  }
}

}  // namespace
}  // namespace tlm

// Import of hand-built models: each ONNX spelling lands on the canonical form of docs/ir.md
// (explicit pads from auto_pad, opset-11 vs opset-13 axes/sizes giving the same graph, the
// PyTorch Shape->Gather->Unsqueeze->Concat->Reshape chain folding away, aliases, defaults).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "frontend/onnx_builder.h"
#include "frontend/onnx_import.h"

namespace tlm {
namespace {

using testing_onnx::OnnxBuilder;
using testing_onnx::set_attr;
using TP = onnx::TensorProto;
using Ints = std::vector<int64_t>;

// Nodes with their attributes, input/output shapes and names: equal text <=> same canonical graph.
std::string canonical_text(const Graph& g) {
  std::ostringstream os;
  auto val = [&](ValueId id) {
    if (id == kNoValue) return std::string("_");
    const Value& v = g.value(id);
    return v.name + ":" + dtype_name(v.dtype) + shape_str(v.shape) + (v.is_constant() ? "c" : "");
  };
  for (ValueId in : g.inputs) os << "input " << val(in) << "\n";
  for (const Node& n : g.nodes) {
    os << op_name(n.op) << "(";
    for (ValueId in : n.inputs) os << val(in) << " ";
    os << ")";
    for (const auto& [k, v] : n.attrs) {
      os << " " << k << "=";
      if (auto* i = std::get_if<int64_t>(&v)) os << *i;
      if (auto* f = std::get_if<float>(&v)) os << *f;
      if (auto* s = std::get_if<std::string>(&v)) os << *s;
      if (auto* is = std::get_if<Ints>(&v)) os << shape_str(*is);
      if (auto* fs = std::get_if<std::vector<float>>(&v))
        for (float x : *fs) os << x << ",";
    }
    os << " -> " << val(n.outputs[0]) << "\n";
  }
  for (ValueId o : g.outputs) os << "output " << val(o) << "\n";
  return os.str();
}

const Node& only_node(const Graph& g, Op op) {
  const Node* found = nullptr;
  for (const Node& n : g.nodes)
    if (n.op == op) {
      EXPECT_EQ(found, nullptr) << "more than one " << op_name(op);
      found = &n;
    }
  if (!found) throw std::runtime_error(std::string("no ") + op_name(op) + " node");
  return *found;
}

const Shape& out_shape(const Graph& g, int i = 0) { return g.value(g.outputs.at(i)).shape; }

// ---- Conv / pooling pads --------------------------------------------------------------------

Graph conv_model(const char* auto_pad, Ints strides) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 2, 7, 7});
  b.init_f32("w", {4, 2, 4, 4}, std::vector<float>(4 * 2 * 16, 0.25f));
  auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv");
  if (auto_pad) set_attr(n, "auto_pad", auto_pad);
  set_attr(n, "strides", strides);
  b.output("y");
  return b.import();
}

TEST(ImportConv, AutoPadSameUpperPutsTheOddPixelAtTheEnd) {
  // in 7, stride 2 -> out 4; needs (4-1)*2 + 4 = 10 -> 3 pixels of padding.
  Graph g = conv_model("SAME_UPPER", {2, 2});
  const Node& n = only_node(g, Op::Conv);
  EXPECT_EQ(n.ints("pads"), (Ints{1, 1, 2, 2}));
  EXPECT_EQ(n.ints("strides"), (Ints{2, 2}));
  EXPECT_EQ(n.ints("dilations"), (Ints{1, 1}));
  EXPECT_EQ(n.i("group"), 1);
  EXPECT_EQ(out_shape(g), (Shape{1, 4, 4, 4}));
  EXPECT_EQ(g.value(n.inputs[1]).name, "w");
  EXPECT_TRUE(g.value(n.inputs[1]).is_constant());
}

TEST(ImportConv, AutoPadSameLowerPutsTheOddPixelFirst) {
  Graph g = conv_model("SAME_LOWER", {2, 2});
  EXPECT_EQ(only_node(g, Op::Conv).ints("pads"), (Ints{2, 2, 1, 1}));
  EXPECT_EQ(out_shape(g), (Shape{1, 4, 4, 4}));
}

TEST(ImportConv, AutoPadValidAndDefaults) {
  Graph g = conv_model("VALID", {1, 1});
  EXPECT_EQ(only_node(g, Op::Conv).ints("pads"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(out_shape(g), (Shape{1, 4, 4, 4}));
  Graph d = conv_model(nullptr, {1, 1});  // NOTSET without pads: zeros
  EXPECT_EQ(only_node(d, Op::Conv).ints("pads"), (Ints{0, 0, 0, 0}));
}

TEST(ImportConv, NonConstantWeightIsFine) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 2, 5, 5});
  b.input("w", TP::FLOAT, {3, 2, 3, 3});
  auto& n = b.node("Conv", {"x", "w"}, {"y"}, "conv");
  set_attr(n, "pads", Ints{1, 1, 1, 1});
  b.output("y");
  Graph g = b.import();
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(out_shape(g), (Shape{1, 3, 5, 5}));
}

TEST(ImportConv, ConvTransposeOutputShapeBecomesPadsOrOutputPadding) {
  auto build = [](Ints output_shape, Ints output_padding) {
    OnnxBuilder b(13);
    b.input("x", TP::FLOAT, {1, 1, 3, 3});
    b.init_f32("w", {1, 2, 3, 3}, std::vector<float>(18, 1.f));
    auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "ct");
    set_attr(n, "strides", Ints{3, 2});
    set_attr(n, "output_shape", output_shape);
    if (!output_padding.empty()) set_attr(n, "output_padding", output_padding);
    b.output("y");
    return b.import();
  };
  // Full output is 3*2+3 = 9 by 2*2+3 = 7; asking for 10x8 adds one row and column at the end.
  Graph g = build({10, 8}, {});
  const Node& n = only_node(g, Op::ConvTranspose);
  EXPECT_EQ(n.ints("pads"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(n.ints("output_padding"), (Ints{1, 1}));
  EXPECT_EQ(out_shape(g), (Shape{1, 2, 10, 8}));
  // Asking for 7x5 crops 2 rows/columns: the extra one at the beginning (NOTSET).
  Graph c = build({7, 5}, {});
  EXPECT_EQ(only_node(c, Op::ConvTranspose).ints("pads"), (Ints{1, 1, 1, 1}));
  EXPECT_EQ(out_shape(c), (Shape{1, 2, 7, 5}));
  Graph c2 = build({8, 6}, {});  // total 1: begin gets it
  EXPECT_EQ(only_node(c2, Op::ConvTranspose).ints("pads"), (Ints{1, 1, 0, 0}));
  EXPECT_EQ(out_shape(c2), (Shape{1, 2, 8, 6}));
}

TEST(ImportConv, ConvTransposeSameUpper) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 1, 3, 3});
  b.init_f32("w", {1, 2, 3, 3}, std::vector<float>(18, 1.f));
  auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"}, "ct");
  set_attr(n, "strides", Ints{2, 2});
  set_attr(n, "auto_pad", "SAME_UPPER");
  b.output("y");
  Graph g = b.import();
  // Full 7, wanted 3*2 = 6: one pixel cropped at the end (ONNX's test data agrees).
  EXPECT_EQ(only_node(g, Op::ConvTranspose).ints("pads"), (Ints{0, 0, 1, 1}));
  EXPECT_EQ(out_shape(g), (Shape{1, 2, 6, 6}));
}

TEST(ImportPool, DefaultsAndSamePads) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 3, 6, 6});
  auto& m = b.node("MaxPool", {"x"}, {"m"}, "mp");
  set_attr(m, "kernel_shape", Ints{3, 3});
  set_attr(m, "strides", Ints{2, 2});
  set_attr(m, "auto_pad", "SAME_UPPER");
  auto& a = b.node("AveragePool", {"m"}, {"a"}, "ap");
  set_attr(a, "kernel_shape", Ints{2, 2});
  b.output("a");
  Graph g = b.import();
  const Node& mp = only_node(g, Op::MaxPool);
  EXPECT_EQ(mp.ints("pads"), (Ints{0, 0, 1, 1}));
  EXPECT_EQ(mp.ints("dilations"), (Ints{1, 1}));
  EXPECT_EQ(mp.i("ceil_mode"), 0);
  const Node& ap = only_node(g, Op::AveragePool);
  EXPECT_EQ(ap.ints("strides"), (Ints{1, 1}));
  EXPECT_EQ(ap.ints("pads"), (Ints{0, 0, 0, 0}));
  EXPECT_EQ(ap.i("count_include_pad"), 0);
  EXPECT_EQ(out_shape(g), (Shape{1, 3, 2, 2}));
}

TEST(ImportGemm, DefaultAttributesAreFilledIn) {
  OnnxBuilder b(13);
  b.input("a", TP::FLOAT, {2, 3});
  b.init_f32("w", {4, 3}, std::vector<float>(12, 1.f));
  auto& n = b.node("Gemm", {"a", "w"}, {"y"}, "fc");
  set_attr(n, "transB", int64_t(1));
  b.output("y");
  Graph g = b.import();
  const Node& fc = only_node(g, Op::Gemm);
  EXPECT_EQ(fc.f("alpha"), 1.f);
  EXPECT_EQ(fc.f("beta"), 1.f);
  EXPECT_EQ(fc.i("transA"), 0);
  EXPECT_EQ(fc.i("transB"), 1);
  EXPECT_EQ(fc.inputs.size(), 2u);
  EXPECT_EQ(out_shape(g), (Shape{2, 4}));
}

// ---- opset 11 vs 13 -------------------------------------------------------------------------

// x[1,3,1,4] -> Squeeze(2) -> ReduceSum(-1, keepdims 0) -> Clip(0, 6) -> Split(axis 1, [1, 2]),
// spelled with opset-11 attributes or opset-13 constant inputs.
Graph squeeze_reduce_clip_split(int opset) {
  OnnxBuilder b(opset);
  b.input("x", TP::FLOAT, {1, 3, 1, 4});
  b.init_f32("lo", {}, {0.f});
  b.init_f32("hi", {}, {6.f});
  if (opset >= 13) {
    b.init_i64("sq_axes", {1}, {2});
    b.init_i64("rs_axes", {1}, {-1});
    b.init_i64("sizes", {2}, {1, 2});
    b.node("Squeeze", {"x", "sq_axes"}, {"s"}, "squeeze");
    set_attr(b.node("ReduceSum", {"s", "rs_axes"}, {"r"}, "sum"), "keepdims", int64_t(0));
  } else {
    set_attr(b.node("Squeeze", {"x"}, {"s"}, "squeeze"), "axes", Ints{2});
    auto& rs = b.node("ReduceSum", {"s"}, {"r"}, "sum");
    set_attr(rs, "axes", Ints{-1});
    set_attr(rs, "keepdims", int64_t(0));
  }
  b.node("Clip", {"r", "lo", "hi"}, {"c"}, "clip");
  auto& sp = b.node(
      "Split", opset >= 13 ? std::vector<std::string>{"c", "sizes"} : std::vector<std::string>{"c"},
      {"p0", "p1"}, "split");
  set_attr(sp, "axis", int64_t(-1));
  if (opset < 13) set_attr(sp, "split", Ints{1, 2});
  b.output("p0");
  b.output("p1");
  return b.import();
}

TEST(ImportOpsets, Opset11And13FormsGiveTheSameCanonicalGraph) {
  Graph g11 = squeeze_reduce_clip_split(11);
  Graph g13 = squeeze_reduce_clip_split(13);
  EXPECT_EQ(canonical_text(g11), canonical_text(g13));
  EXPECT_EQ(only_node(g13, Op::Squeeze).ints("axes"), (Ints{2}));
  const Node& rs = only_node(g13, Op::ReduceSum);
  EXPECT_EQ(rs.ints("axes"), (Ints{2}));
  EXPECT_EQ(rs.i("keepdims"), 0);
  const Node& clip = only_node(g13, Op::Clip);
  EXPECT_EQ(clip.f("min"), 0.f);
  EXPECT_EQ(clip.f("max"), 6.f);
  ASSERT_EQ(g13.nodes.size(), 5u);  // Squeeze, ReduceSum, Clip, Slice, Slice
  EXPECT_EQ(g13.nodes[3].op, Op::Slice);
  EXPECT_EQ(g13.nodes[3].ints("starts"), (Ints{0, 0}));
  EXPECT_EQ(g13.nodes[3].ints("ends"), (Ints{1, 1}));
  EXPECT_EQ(g13.nodes[4].ints("starts"), (Ints{0, 1}));
  EXPECT_EQ(g13.nodes[4].ints("ends"), (Ints{1, 3}));
  EXPECT_EQ(g13.nodes[4].ints("steps"), (Ints{1, 1}));
  EXPECT_EQ(out_shape(g13, 0), (Shape{1, 1}));
  EXPECT_EQ(out_shape(g13, 1), (Shape{1, 2}));
  EXPECT_EQ(g13.value(g13.outputs[1]).name, "p1");
}

TEST(ImportOpsets, ClipWithoutBoundsIsUnbounded) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {4});
  b.init_f32("hi", {1}, {1.5f});
  b.node("Clip", {"x", "", "hi"}, {"y"}, "clip");
  b.output("y");
  Graph g = b.import();
  const Node& c = only_node(g, Op::Clip);
  EXPECT_EQ(c.f("min"), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(c.f("max"), 1.5f);
}

TEST(ImportOpsets, SplitIntoEqualPartsAndReduceDefaults) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {6, 4});
  b.node("Split", {"x"}, {"a", "b", "c"}, "split");
  b.node("ReduceMean", {"a"}, {"m"}, "mean");  // no axes: all, keepdims 1
  auto& rs = b.node("ReduceSum", {"b"}, {"s"}, "sum");
  set_attr(rs, "noop_with_empty_axes", int64_t(1));  // and no axes: identity
  b.output("m");
  b.output("s");
  b.output("c");
  Graph g = b.import();
  EXPECT_EQ(only_node(g, Op::ReduceMean).ints("axes"), (Ints{0, 1}));
  EXPECT_EQ(out_shape(g, 0), (Shape{1, 1}));
  EXPECT_EQ(out_shape(g, 1), (Shape{2, 4}));
  EXPECT_EQ(out_shape(g, 2), (Shape{2, 4}));
  int reduce_sums = 0;
  for (const Node& n : g.nodes) reduce_sums += n.op == Op::ReduceSum;
  EXPECT_EQ(reduce_sums, 0);
}

TEST(ImportOpsets, SoftmaxBeforeOpset13CoercesTo2D) {
  auto build = [](int opset, int64_t axis) {
    OnnxBuilder b(opset);
    b.input("x", TP::FLOAT, {2, 3, 4});
    set_attr(b.node("Softmax", {"x"}, {"y"}, "sm"), "axis", axis);
    b.output("y");
    return b.import();
  };
  Graph old = build(11, 1);
  ASSERT_EQ(old.nodes.size(), 3u);
  EXPECT_EQ(old.nodes[0].op, Op::Reshape);
  EXPECT_EQ(old.nodes[0].ints("shape"), (Ints{2, 12}));
  EXPECT_EQ(old.nodes[1].op, Op::Softmax);
  EXPECT_EQ(old.nodes[1].i("axis"), 1);
  EXPECT_EQ(old.nodes[2].ints("shape"), (Ints{2, 3, 4}));
  EXPECT_EQ(out_shape(old), (Shape{2, 3, 4}));
  Graph last = build(11, -1);  // the last axis needs no coercion
  ASSERT_EQ(last.nodes.size(), 1u);
  EXPECT_EQ(last.nodes[0].i("axis"), 2);
  Graph now = build(13, 1);  // opset 13: along axis 1 only
  ASSERT_EQ(now.nodes.size(), 1u);
  EXPECT_EQ(now.nodes[0].i("axis"), 1);
}

// ---- constant folding of shape computations ---------------------------------------------------

TEST(ImportFolding, PyTorchShapeChainFoldsIntoTheReshape) {
  // y = x.reshape(x.shape[0], -1), as torch.onnx exports it.
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 3, 4});
  b.init_i64("zero", {}, {0});
  b.init_i64("unsq_axes", {1}, {0});
  b.init_i64("minus_one", {1}, {-1});
  b.node("Shape", {"x"}, {"shape"}, "shape");
  b.node("Gather", {"shape", "zero"}, {"batch"}, "gather");
  b.node("Unsqueeze", {"batch", "unsq_axes"}, {"batch1"}, "unsqueeze");
  set_attr(b.node("Concat", {"batch1", "minus_one"}, {"target"}, "concat"), "axis", int64_t(0));
  b.node("Reshape", {"x", "target"}, {"y"}, "reshape");
  b.output("y");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].op, Op::Reshape);
  EXPECT_EQ(g.nodes[0].name, "reshape");
  EXPECT_EQ(g.nodes[0].ints("shape"), (Ints{2, 12}));
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<ValueId>{g.inputs[0]}));
  EXPECT_EQ(out_shape(g), (Shape{2, 12}));
  EXPECT_EQ(g.values.size(), 2u);  // x and y: the folded constants are gone
}

TEST(ImportFolding, ReshapeResolvesZeroAndMinusOne) {
  OnnxBuilder b(14);
  b.input("x", TP::FLOAT, {2, 3, 4});
  b.init_i64("s", {3}, {0, -1, 2});
  b.node("Reshape", {"x", "s"}, {"y"}, "r");
  b.output("y");
  Graph g = b.import();
  EXPECT_EQ(only_node(g, Op::Reshape).ints("shape"), (Ints{2, 6, 2}));
}

TEST(ImportFolding, ShapeConstantAndConstantOfShapeBecomeConstants) {
  OnnxBuilder b(15);
  b.input("x", TP::FLOAT, {2, 3, 4});
  auto& sh = b.node("Shape", {"x"}, {"tail"}, "shape");
  set_attr(sh, "start", int64_t(-2));
  auto& k = b.node("ConstantOfShape", {"tail"}, {"ones"}, "cos");
  auto& v = testing_onnx::set_tensor_attr(k, "value");
  v.set_data_type(TP::FLOAT);
  v.add_dims(1);
  v.add_float_data(1.f);
  set_attr(b.node("Constant", {}, {"two"}, "two"), "value_float", 2.f);
  b.node("Mul", {"ones", "two"}, {"twos"}, "mul");
  b.node("Add", {"x", "twos"}, {"y"}, "add");
  b.output("y");
  b.output("tail");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 1u);
  const Node& add = g.nodes[0];
  EXPECT_EQ(add.op, Op::Add);
  const Value& twos = g.value(add.inputs[1]);
  ASSERT_TRUE(twos.is_constant());
  EXPECT_EQ(twos.shape, (Shape{3, 4}));
  EXPECT_EQ(twos.data->get_f(11), 2.0);
  const Value& tail = g.value(g.outputs[1]);
  ASSERT_TRUE(tail.is_constant());
  EXPECT_EQ(tail.data->to_i64_vector(), (Ints{3, 4}));
}

// ---- aliases ----------------------------------------------------------------------------------

TEST(ImportAlias, IdentityAndDropoutAliasTheirInput) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 5});
  b.init_f32("ratio", {}, {0.5f});
  auto& mode = b.init_i64("unused", {}, {0});  // replaced below by a bool initializer
  mode.set_name("training");
  mode.set_data_type(TP::BOOL);
  mode.clear_int64_data();
  mode.add_int32_data(0);
  b.node("Relu", {"x"}, {"r"}, "relu");
  b.node("Identity", {"r"}, {"i"}, "identity");
  b.node("Dropout", {"i", "ratio", "training"}, {"d", "mask"}, "dropout");  // mask unused
  b.node("Add", {"d", "x"}, {"y"}, "add");
  b.output("y");
  b.output("d");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, Op::Relu);
  EXPECT_EQ(g.nodes[1].op, Op::Add);
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.outputs[1], g.nodes[0].outputs[0]);  // "d" is Relu's output
  EXPECT_EQ(g.value(g.outputs[1]).name, "r");
}

// torch exports AvgPool2d(count_include_pad=True) as a Pad (of all-zero pads for padding=0).
TEST(ImportPad, AllZeroPadsAlias) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 2, 4, 4});
  b.init_i64("zeros", {8}, {0, 0, 0, 0, 0, 0, 0, 0});
  b.node("Pad", {"x", "zeros"}, {"p"}, "pad0");
  b.node("Relu", {"p"}, {"y"}, "relu");
  b.output("y");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 1u);
  EXPECT_EQ(g.nodes[0].inputs[0], g.inputs[0]);
}

// A real Pad is a Concat of borders per padded axis: constants of the pad value (the ONNX node
// tests check every mode's values, tests/conformance).
TEST(ImportPad, ConstantPadIsAConcatOfBordersPerAxis) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 2, 4, 5});
  b.init_i64("pads", {8}, {0, 0, 1, 0, 0, 0, 2, 3});
  b.init_f32("v", {}, {0.5f});
  b.node("Pad", {"x", "pads", "v"}, {"y"}, "pad");
  b.output("y");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 2u);
  const Node& h = g.nodes[0];
  EXPECT_EQ(h.op, Op::Concat);
  EXPECT_EQ(h.i("axis"), 2);
  ASSERT_EQ(h.inputs.size(), 3u);  // 1 row before, x, 2 rows after
  EXPECT_EQ(g.value(h.inputs[0]).shape, (Shape{1, 2, 1, 5}));
  EXPECT_EQ(h.inputs[1], g.inputs[0]);
  EXPECT_EQ(g.value(h.inputs[2]).shape, (Shape{1, 2, 2, 5}));
  EXPECT_EQ(g.value(h.inputs[2]).data->data<float>()[0], 0.5f);
  const Node& w = g.nodes[1];
  EXPECT_EQ(w.i("axis"), 3);
  ASSERT_EQ(w.inputs.size(), 2u);  // nothing before, 3 columns after
  EXPECT_EQ(out_shape(g), (Shape{1, 2, 7, 8}));
}

TEST(ImportPad, CroppingUnknownModesAndOversizedReflectionsAreRefused) {
  struct Bad {
    Ints pads;
    const char* mode;
    const char* expect;
  };
  for (const Bad& c : {Bad{{0, 0, -1, 0, 0, 0, 0, 0}, "constant", "negative pads crop"},
                       Bad{{0, 0, 1, 1, 0, 0, 1, 1}, "wrap", "attribute mode=wrap"},
                       Bad{{0, 0, 4, 0, 0, 0, 0, 0}, "reflect", "must be smaller than its extent 4"}}) {
    OnnxBuilder b(13);
    b.input("x", TP::FLOAT, {1, 2, 4, 4});
    b.init_i64("pads", {8}, c.pads);
    set_attr(b.node("Pad", {"x", "pads"}, {"y"}, "pad1"), "mode", c.mode);
    b.output("y");
    try {
      b.import();
      ADD_FAILURE() << c.mode << ": imported";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("node 'pad1' (op 'Pad')"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.expect), std::string::npos) << e.what();
    }
  }
}

TEST(ImportAlias, OldDropoutAndSingleInputMax) {
  OnnxBuilder b(11);
  b.input("x", TP::FLOAT, {3});
  set_attr(b.node("Dropout", {"x"}, {"d"}, "dropout"), "ratio", 0.1f);
  b.node("Max", {"d"}, {"m"}, "max1");
  b.node("Max", {"m", "x", "d"}, {"y"}, "max3");
  b.output("y");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 2u);  // a chain of two binary Max
  EXPECT_EQ(g.nodes[0].op, Op::Max);
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<ValueId>{g.inputs[0], g.inputs[0]}));
  EXPECT_EQ(g.nodes[1].inputs[0], g.nodes[0].outputs[0]);
  EXPECT_EQ(g.nodes[1].name, "max3");
}

// ---- other canonicalisations ------------------------------------------------------------------

TEST(ImportMisc, SliceIsClampedPerDimension) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {4, 10, 3});
  b.init_i64("starts", {2}, {1, -3});
  b.init_i64("ends", {2}, {std::numeric_limits<int64_t>::max(), 100});
  b.init_i64("axes", {2}, {0, -2});
  b.init_i64("steps", {2}, {1, 2});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "slice");
  b.init_i64("rs", {1}, {-1});
  b.init_i64("re", {1}, {std::numeric_limits<int64_t>::min()});
  b.init_i64("ra", {1}, {0});
  b.init_i64("rstep", {1}, {-1});
  b.node("Slice", {"y", "rs", "re", "ra", "rstep"}, {"z"}, "reverse");
  b.output("z");
  Graph g = b.import();
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].ints("starts"), (Ints{1, 7, 0}));
  EXPECT_EQ(g.nodes[0].ints("ends"), (Ints{4, 10, 3}));
  EXPECT_EQ(g.nodes[0].ints("steps"), (Ints{1, 2, 1}));
  EXPECT_EQ(g.value(g.nodes[0].outputs[0]).shape, (Shape{3, 2, 3}));
  EXPECT_EQ(g.nodes[1].ints("starts"), (Ints{2, 0, 0}));
  EXPECT_EQ(g.nodes[1].ints("ends"), (Ints{-4, 2, 3}));
  EXPECT_EQ(g.nodes[1].ints("steps"), (Ints{-1, 1, 1}));
  // docs/ir.md: "through index 0" with a negative step is written -dim-1 (-4 here), because the
  // canonical values keep ONNX's meaning and -1 would be the last element (torch.flip exports
  // this case); the extent is ceil((-1 - 2) / -1) = 3.
  EXPECT_EQ(out_shape(g), (Shape{3, 2, 3}));
}

TEST(ImportMisc, ExpandGetsTheFullBroadcastShape) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {3, 1});
  b.init_i64("shape", {3}, {2, 1, 4});
  b.node("Expand", {"x", "shape"}, {"y"}, "expand");
  b.output("y");
  Graph g = b.import();
  EXPECT_EQ(only_node(g, Op::Expand).ints("shape"), (Ints{2, 3, 4}));
  EXPECT_EQ(out_shape(g), (Shape{2, 3, 4}));
}

TEST(ImportMisc, NegativeAxesAreNormalised) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 3, 4});
  b.init_i64("idx", {2}, {0, 2});
  b.init_i64("ax", {2}, {-1, 0});
  set_attr(b.node("Gather", {"x", "idx"}, {"g"}, "gather"), "axis", int64_t(-2));
  set_attr(b.node("Flatten", {"g"}, {"f"}, "flatten"), "axis", int64_t(-1));
  set_attr(b.node("Concat", {"f", "f"}, {"c"}, "concat"), "axis", int64_t(-1));
  b.node("Unsqueeze", {"c", "ax"}, {"u"}, "unsqueeze");
  b.init_f32("scale", {3, 4}, std::vector<float>(12, 1.f));
  set_attr(b.node("LayerNormalization", {"x", "scale"}, {"ln"}, "ln"), "axis", int64_t(-2));
  b.node("Transpose", {"u"}, {"t"}, "transpose");
  b.output("t");
  b.output("ln");
  Graph g = b.import();
  EXPECT_EQ(only_node(g, Op::Gather).i("axis"), 1);
  EXPECT_EQ(only_node(g, Op::Flatten).i("axis"), 2);
  EXPECT_EQ(only_node(g, Op::Concat).i("axis"), 1);
  EXPECT_EQ(only_node(g, Op::Unsqueeze).ints("axes"), (Ints{0, 3}));
  EXPECT_EQ(only_node(g, Op::LayerNormalization).i("axis"), 1);
  EXPECT_EQ(only_node(g, Op::Transpose).ints("perm"), (Ints{3, 2, 1, 0}));
  EXPECT_EQ(out_shape(g), (Shape{1, 8, 4, 1}));
}

TEST(ImportMisc, CastTargetsAndInt32) {
  OnnxBuilder b(13);
  b.input("x", TP::INT32, {3});  // int32 inputs are read as int64
  set_attr(b.node("Cast", {"x"}, {"f"}, "to_float"), "to", int64_t(TP::FLOAT));
  set_attr(b.node("Cast", {"f"}, {"i"}, "to_int32"), "to", int64_t(TP::INT32));
  set_attr(b.node("Cast", {"i"}, {"y"}, "to_bool"), "to", int64_t(TP::BOOL));
  b.output("y");
  Graph g = b.import();
  EXPECT_EQ(g.value(g.inputs[0]).dtype, DType::I64);
  ASSERT_EQ(g.nodes.size(), 3u);
  EXPECT_EQ(g.nodes[0].i("to"), (int64_t)DType::F32);
  EXPECT_EQ(g.nodes[1].i("to"), (int64_t)DType::I64);
  EXPECT_EQ(g.nodes[2].i("to"), (int64_t)DType::Bool);
  EXPECT_EQ(g.value(g.outputs[0]).dtype, DType::Bool);
}

TEST(ImportMisc, SymbolicDimsTakeTheirValueFromOptions) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {std::string("batch"), 3});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  ImportOptions opts;
  opts.dims["batch"] = 5;
  Graph g = b.import(opts);
  EXPECT_EQ(g.value(g.inputs[0]).shape, (Shape{5, 3}));
  EXPECT_EQ(out_shape(g), (Shape{5, 3}));
}

TEST(ImportMisc, InitializerListedAsInputIsAConstantAndInt32Widens) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 2});
  b.input("w", TP::FLOAT, {2, 2});
  b.init_f32("w", {2, 2}, {1, 2, 3, 4});
  auto& idx = *b.graph().add_initializer();
  idx.set_name("idx");
  idx.set_data_type(TP::INT32);
  idx.add_dims(1);
  idx.add_int32_data(1);
  b.node("MatMul", {"x", "w"}, {"m"}, "mm");
  b.node("Gather", {"m", "idx"}, {"y"}, "gather");
  b.output("y");
  Graph g = b.import();
  ASSERT_EQ(g.inputs.size(), 1u);
  EXPECT_EQ(g.value(g.inputs[0]).name, "x");
  const Node& mm = only_node(g, Op::MatMul);
  EXPECT_TRUE(g.value(mm.inputs[1]).is_constant());
  const Value& iv = g.value(only_node(g, Op::Gather).inputs[1]);
  EXPECT_EQ(iv.dtype, DType::I64);
  EXPECT_EQ(iv.data->to_i64_vector(), (Ints{1}));
  EXPECT_EQ(out_shape(g), (Shape{1, 2}));
}

TEST(ImportMisc, LayerNormStatisticsOutputsAreRebuilt) {
  OnnxBuilder b(17);
  b.input("x", TP::FLOAT, {2, 3, 4});
  b.init_f32("s", {4}, {1, 1, 1, 1});
  b.node("LayerNormalization", {"x", "s"}, {"y", "mean", "inv"}, "ln");
  b.output("y");
  b.output("mean");
  b.output("inv");
  Graph g = b.import();
  EXPECT_EQ(only_node(g, Op::LayerNormalization).i("axis"), 2);
  EXPECT_EQ(out_shape(g, 0), (Shape{2, 3, 4}));
  EXPECT_EQ(out_shape(g, 1), (Shape{2, 3, 1}));
  EXPECT_EQ(out_shape(g, 2), (Shape{2, 3, 1}));
  EXPECT_EQ(g.nodes.back().op, Op::Reciprocal);
}

}  // namespace
}  // namespace tlm

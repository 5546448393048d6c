// Bad models end in one UserError whose message names the problem (node, op, attribute, input),
// never in a crash or another exception type.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>

#include "frontend/onnx_builder.h"
#include "frontend/onnx_import.h"

namespace tlm {
namespace {

using testing_onnx::OnnxBuilder;
using testing_onnx::set_attr;
using TP = onnx::TensorProto;
using Ints = std::vector<int64_t>;

// The UserError message of importing `bytes` (fails the test if it imports or throws otherwise).
std::string import_error(const std::string& bytes, const ImportOptions& opts = {}) {
  try {
    import_onnx_bytes(bytes, "m.onnx", opts);
  } catch (const UserError& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a UserError: " << e.what();
    return "";
  }
  ADD_FAILURE() << "imported without error";
  return "";
}

std::string import_error(const OnnxBuilder& b, const ImportOptions& opts = {}) {
  return import_error(b.bytes(), opts);
}

// A small valid model: x[1,3,8,8] -> Conv(w) -> Relu -> y.
OnnxBuilder small_model() {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 3, 8, 8});
  b.init_f32("w", {4, 3, 3, 3}, std::vector<float>(108, 0.1f));
  b.node("Conv", {"x", "w"}, {"c"}, "conv");
  b.node("Relu", {"c"}, {"y"}, "relu");
  b.output("y");
  return b;
}

TEST(BadInput, SmallModelIsValid) {
  Graph g = small_model().import();
  EXPECT_EQ(g.nodes.size(), 2u);
}

TEST(BadInput, TruncatedFile) {
  std::string bytes = small_model().bytes();
  EXPECT_EQ(import_error(bytes.substr(0, bytes.size() / 2)),
            "m.onnx: not an ONNX model (protobuf parsing failed: the file is truncated, corrupt "
            "or of another format)");
  for (size_t len = 0; len < bytes.size(); len += 7) {
    std::string msg = import_error(bytes.substr(0, len));
    EXPECT_EQ(msg.rfind("m.onnx: ", 0), 0u) << msg;
  }
}

TEST(BadInput, RandomBytes) {
  for (uint32_t seed = 1; seed <= 20; seed++) {
    std::mt19937 rng(seed);
    std::string bytes(1 + rng() % 4096, '\0');
    for (char& c : bytes) c = (char)(rng() & 0xff);
    std::string msg = import_error(bytes);
    EXPECT_EQ(msg.rfind("m.onnx: ", 0), 0u) << "seed " << seed << ": " << msg;
  }
}

TEST(BadInput, EmptyBytesAndMissingFile) {
  EXPECT_EQ(import_error(std::string()), "m.onnx: the model has no graph");
  try {
    import_onnx_file("/nonexistent/model.onnx");
    ADD_FAILURE() << "imported a missing file";
  } catch (const UserError& e) {
    EXPECT_STREQ(e.what(), "cannot open model file '/nonexistent/model.onnx'");
  }
}

TEST(BadInput, UnknownOperator) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2});
  b.node("Relu", {"x"}, {"r"}, "n1");
  b.node("Foo", {"r"}, {"y"}, "n3");
  b.output("y");
  EXPECT_EQ(import_error(b), "m.onnx: node 'n3' (op 'Foo'): unsupported operator");
  b.node("Bar", {"y"}, {"z"});
  b.node("Foo", {"z"}, {"w"});
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'n3' (op 'Foo'): unsupported operator (also unsupported: Bar)");
}

TEST(BadInput, UnnamedNodesAreNamedByOpAndIndex) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2});
  b.node("Relu", {"x"}, {"r"});
  b.node("Foo", {"r"}, {"y"});
  b.output("y");
  EXPECT_EQ(import_error(b), "m.onnx: node 'Foo_1' (op 'Foo'): unsupported operator");
}

TEST(BadInput, UnsupportedAttributeValue) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {1, 1, 4, 4});
  auto& n = b.node("MaxPool", {"x"}, {"y"}, "pool");
  set_attr(n, "kernel_shape", Ints{2, 2});
  set_attr(n, "storage_order", int64_t(1));
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'pool' (op 'MaxPool'): attribute storage_order=1 is not supported");
}

TEST(BadInput, BadAutoPadAndAttributeTypes) {
  OnnxBuilder b = small_model();
  set_attr(*b.graph().mutable_node(0), "auto_pad", "SAME_MIDDLE");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'conv' (op 'Conv'): attribute auto_pad='SAME_MIDDLE' is not supported");
  OnnxBuilder c = small_model();
  set_attr(*c.graph().mutable_node(0), "group", 2.5f);
  EXPECT_EQ(import_error(c),
            "m.onnx: node 'conv' (op 'Conv'): attribute 'group' must be of type INT, not FLOAT");
  OnnxBuilder d = small_model();
  set_attr(*d.graph().mutable_node(0), "strides", Ints{1, 1, 1});
  EXPECT_EQ(import_error(d),
            "m.onnx: node 'conv' (op 'Conv'): attribute 'strides' has 3 entries, expected 2");
  OnnxBuilder e = small_model();
  set_attr(*e.graph().mutable_node(0), "kernel_shape", Ints{5, 5});
  EXPECT_EQ(import_error(e),
            "m.onnx: node 'conv' (op 'Conv'): attribute 'kernel_shape' disagrees with the weight "
            "shape [4,3,3,3]");
}

TEST(BadInput, MissingPadsWithNotsetIsFine) {
  OnnxBuilder b = small_model();
  set_attr(*b.graph().mutable_node(0), "auto_pad", "NOTSET");
  Graph g = b.import();
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{1, 4, 6, 6}));
}

TEST(BadInput, DynamicDimensionWithoutValue) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {std::string("batch"), 3});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x' dimension 0 is dynamic ('batch'); give it a value "
            "with --dim batch=N");
  ImportOptions zero;
  zero.dims["batch"] = 0;
  EXPECT_EQ(import_error(b, zero), "m.onnx: --dim batch=0: the value must be positive");
  ImportOptions stray;
  stray.dims["batch"] = 1;
  stray.dims["seq"] = 8;
  EXPECT_EQ(import_error(b, stray),
            "m.onnx: --dim seq=8: no input dimension of the model is named 'seq' (named: batch)");
}

TEST(BadInput, MissingDimensionValue) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, std::string()});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x' dimension 1 is dynamic and has no name to give it "
            "a value by; tlm needs static shapes (re-export the model with a "
            "fixed size)");
  b.graph().mutable_input(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x' has no shape (its rank is unknown); tlm needs static shapes");
}

TEST(BadInput, ZeroSizeDimension) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 0});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x' dimension 1 is 0; zero-size tensors are not supported");
}

TEST(BadInput, HugeShapesDoNotAllocate) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {int64_t(1) << 30, int64_t(1) << 30});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x': shape [1073741824,1073741824] is too large (more than 2^40 "
            "elements)");
  // An initializer declaring 2^36 elements but holding none.
  OnnxBuilder c = small_model();
  auto& w = *c.graph().mutable_initializer(0);
  w.clear_dims();
  w.add_dims(int64_t(1) << 18);
  w.add_dims(int64_t(1) << 18);
  EXPECT_EQ(import_error(c),
            "m.onnx: initializer 'w': float_data holds 108 elements but the dims "
            "say 68719476736");
  // ConstantOfShape of 2^38 elements.
  OnnxBuilder d(13);
  d.init_i64("shape", {2}, {int64_t(1) << 19, int64_t(1) << 19});
  d.node("ConstantOfShape", {"shape"}, {"y"}, "cos");
  d.output("y");
  EXPECT_EQ(import_error(d),
            "m.onnx: node 'cos' (op 'ConstantOfShape'): a constant of shape "
            "[524288,524288] (274877906944 elements) is too large");
}

TEST(BadInput, FoldingDoesNotMakeHugeConstants) {
  // An outer product of two constant 2^14-vectors would fold into 2^28 floats (1 GiB).
  OnnxBuilder b(13);
  b.init_f32("col", {1 << 14, 1}, std::vector<float>(1 << 14, 1.f));
  b.init_f32("row", {1, 1 << 14}, std::vector<float>(1 << 14, 1.f));
  b.node("MatMul", {"col", "row"}, {"y"}, "outer");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'outer' (op 'MatMul'): folding this node on constant "
            "inputs would create a constant of shape [16384,16384] (268435456 "
            "elements); that is too large");
  OnnxBuilder c(13);
  c.init_f32("one", {}, {1.f});
  c.init_i64("shape", {2}, {1 << 14, 1 << 14});
  c.node("Expand", {"one", "shape"}, {"y"}, "expand");
  c.output("y");
  EXPECT_NE(import_error(c).find("node 'expand' (op 'Expand'): folding this node"),
            std::string::npos);
  // The same Expand of a runtime input is just a big node: nothing is allocated.
  OnnxBuilder d(13);
  d.input("one", TP::FLOAT, {1});
  d.init_i64("shape", {2}, {1 << 14, 1 << 14});
  d.node("Expand", {"one", "shape"}, {"y"}, "expand");
  d.output("y");
  Graph g = d.import();
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{1 << 14, 1 << 14}));
}

TEST(BadInput, UnsupportedDtypes) {
  OnnxBuilder b(13);
  b.input("x", TP::DOUBLE, {2});
  b.node("Relu", {"x"}, {"y"}, "relu");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: input 'x' has element type DOUBLE; tlm supports FLOAT, "
            "INT64, INT32 (read as int64) and BOOL");
  OnnxBuilder c = small_model();
  c.graph().mutable_initializer(0)->set_data_type(TP::FLOAT16);
  EXPECT_EQ(import_error(c),
            "m.onnx: initializer 'w': element type FLOAT16 is not supported (tlm supports FLOAT, "
            "INT64, INT32 (read as int64) and BOOL)");
  OnnxBuilder d = small_model();
  set_attr(d.node("Cast", {"y"}, {"z"}, "cast"), "to", int64_t(TP::DOUBLE));
  d.graph().mutable_output(0)->set_name("z");
  EXPECT_EQ(import_error(d),
            "m.onnx: node 'cast' (op 'Cast'): attribute to=DOUBLE is not supported");
}

TEST(BadInput, ExternalDataTensor) {
  OnnxBuilder b = small_model();
  auto& w = *b.graph().mutable_initializer(0);
  w.clear_float_data();
  w.set_data_location(TP::EXTERNAL);
  auto* kv = w.add_external_data();
  kv->set_key("location");
  kv->set_value("weights.bin");
  std::string msg = import_error(b);
  EXPECT_NE(msg.find("initializer 'w': tensor data is stored in an external file"),
            std::string::npos)
      << msg;
}

TEST(BadInput, DynamicConstantOperand) {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {2, 6});
  b.input("s", TP::INT64, {2});
  b.node("Reshape", {"x", "s"}, {"y"}, "reshape");
  b.output("y");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'reshape' (op 'Reshape'): dynamic Reshape shape not supported: input "
            "'s' is computed at runtime; tlm needs it to be a constant (an initializer, or "
            "computed only from constants and shapes)");
}

TEST(BadInput, OpsetsAndDomains) {
  OnnxBuilder a = small_model();
  a.model.mutable_opset_import(0)->set_version(10);
  EXPECT_EQ(import_error(a),
            "m.onnx: opset 10 of the default ONNX domain is not supported (tlm imports opsets 11 "
            "to 17; convert the model with onnx.version_converter.convert_version)");
  OnnxBuilder b = small_model();
  b.model.mutable_opset_import(0)->set_version(18);
  EXPECT_NE(import_error(b).find("opset 18 of the default ONNX domain is not supported"),
            std::string::npos);
  OnnxBuilder c = small_model();
  c.model.clear_opset_import();
  EXPECT_EQ(import_error(c), "m.onnx: the model imports no opset of the default ONNX domain");
  OnnxBuilder d = small_model();
  d.graph().mutable_node(1)->set_domain("com.microsoft");
  EXPECT_EQ(import_error(d),
            "m.onnx: node 'relu' (op 'Relu'): domain 'com.microsoft' is not "
            "supported (tlm imports the default ONNX domain only)");
}

TEST(BadInput, NamesMustBeDefined) {
  OnnxBuilder b = small_model();
  b.graph().mutable_node(1)->set_input(0, "nowhere");
  EXPECT_EQ(import_error(b),
            "m.onnx: node 'relu' (op 'Relu'): value 'nowhere' is not defined "
            "before use (no graph input, initializer or earlier node output has "
            "that name)");
  OnnxBuilder c = small_model();
  c.graph().mutable_output(0)->set_name("missing");
  EXPECT_NE(import_error(c).find("graph output 'missing': value 'missing' is not defined"),
            std::string::npos);
  OnnxBuilder d = small_model();
  d.graph().mutable_node(1)->set_output(0, "c");  // SSA violation
  EXPECT_EQ(import_error(d),
            "m.onnx: node 'relu' (op 'Relu'): value 'c' is defined twice (the "
            "graph is not in SSA form)");
  OnnxBuilder e = small_model();
  e.graph().clear_node();
  EXPECT_EQ(import_error(e), "m.onnx: the graph has no nodes");
}

TEST(BadInput, ArityAndUnsupportedOutputs) {
  OnnxBuilder b = small_model();
  b.graph().mutable_node(1)->add_input("x");
  EXPECT_EQ(import_error(b), "m.onnx: node 'relu' (op 'Relu'): has 2 inputs; expected 1 to 1");
  OnnxBuilder c(13);
  c.input("x", TP::FLOAT, {4});
  c.node("Dropout", {"x"}, {"y", "mask"}, "drop");
  c.node("Not", {"mask"}, {"z"}, "not");
  c.output("z");
  EXPECT_EQ(import_error(c), "m.onnx: node 'not' (op 'Not'): unsupported operator");
  c.graph().mutable_node(1)->set_op_type("Cast");
  set_attr(*c.graph().mutable_node(1), "to", int64_t(TP::FLOAT));
  EXPECT_EQ(import_error(c),
            "m.onnx: node 'not' (op 'Cast'): reads 'mask', which tlm cannot "
            "produce: node 'drop' (op 'Dropout'): Dropout's mask output is not "
            "supported (tlm imports inference graphs)");
}

TEST(BadInput, ShapeErrorsFromInferenceAreUserErrors) {
  OnnxBuilder b(13);
  b.input("a", TP::FLOAT, {2, 3});
  b.input("b", TP::FLOAT, {4, 5});
  b.node("MatMul", {"a", "b"}, {"y"}, "mm");
  b.output("y");
  std::string msg = import_error(b);
  EXPECT_NE(msg.find("'mm'"), std::string::npos) << msg;
}

}  // namespace
}  // namespace tlm

// Deterministic fuzzing of the importer: a valid model, mutated in thousands of seeded ways
// (bytes flipped, truncated, inserted, deleted, duplicated; or fields of the decoded ModelProto
// set to hostile values), must import or fail with a UserError -- never another exception type,
// never a crash. A failing seed is printed so that it can be replayed alone.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "frontend/onnx_builder.h"
#include "frontend/onnx_import.h"

namespace tlm {
namespace {

using testing_onnx::OnnxBuilder;
using testing_onnx::set_attr;
using TP = onnx::TensorProto;
using Ints = std::vector<int64_t>;

constexpr int kByteMutations = 2000;
constexpr int kFieldMutations = 2000;

// A small model touching most converters: Conv with auto_pad and bias, Relu, MaxPool, the
// PyTorch flatten chain, Gemm, Softmax, Split, Concat, Slice, Unsqueeze, Clip, Expand.
onnx::ModelProto seed_model() {
  OnnxBuilder b(13);
  b.input("x", TP::FLOAT, {std::string("batch"), 2, 6, 6});
  b.init_f32("w", {3, 2, 3, 3}, std::vector<float>(54, 0.1f));
  b.init_f32("bias", {3}, {0.f, 1.f, 2.f});
  b.init_f32("fc", {4, 27}, std::vector<float>(108, 0.01f));
  b.init_i64("zero", {}, {0});
  b.init_i64("axes0", {1}, {0});
  b.init_i64("minus1", {1}, {-1});
  b.init_i64("starts", {1}, {1});
  b.init_i64("ends", {1}, {3});
  b.init_i64("sizes", {2}, {1, 3});
  b.init_i64("eshape", {3}, {3, 1, 1});
  b.init_f32("lo", {}, {0.f});
  auto& conv = b.node("Conv", {"x", "w", "bias"}, {"c"}, "conv");
  set_attr(conv, "auto_pad", "SAME_UPPER");
  set_attr(conv, "strides", Ints{1, 1});
  b.node("Relu", {"c"}, {"r"}, "relu");
  auto& pool = b.node("MaxPool", {"r"}, {"p"}, "pool");
  set_attr(pool, "kernel_shape", Ints{2, 2});
  set_attr(pool, "strides", Ints{2, 2});
  b.node("Shape", {"p"}, {"ps"}, "shape");
  b.node("Gather", {"ps", "zero"}, {"n"}, "gather");
  b.node("Unsqueeze", {"n", "axes0"}, {"n1"}, "unsqueeze");
  set_attr(b.node("Concat", {"n1", "minus1"}, {"target"}, "concat"), "axis", int64_t(0));
  b.node("Reshape", {"p", "target"}, {"flat"}, "reshape");
  auto& gemm = b.node("Gemm", {"flat", "fc"}, {"g"}, "gemm");
  set_attr(gemm, "transB", int64_t(1));
  set_attr(gemm, "alpha", 0.5f);
  set_attr(b.node("Softmax", {"g"}, {"s"}, "softmax"), "axis", int64_t(-1));
  set_attr(b.node("Split", {"s", "sizes"}, {"s0", "s1"}, "split"), "axis", int64_t(1));
  b.node("Slice", {"s1", "starts", "ends", "minus1"}, {"sl"}, "slice");
  set_attr(b.node("Concat", {"s0", "sl"}, {"cat"}, "concat2"), "axis", int64_t(-1));
  b.node("Clip", {"cat", "lo"}, {"cl"}, "clip");
  b.node("Expand", {"cl", "eshape"}, {"y"}, "expand");
  b.output("y");
  return b.model;
}

ImportOptions seed_options() {
  ImportOptions o;
  o.dims["batch"] = 2;
  return o;
}

// Structural sanity of a successful import: every id in range, outputs produced.
void check_graph(const Graph& g, const std::string& what) {
  auto ok = [&](ValueId v) { return v >= 0 && v < (ValueId)g.values.size(); };
  for (const Node& n : g.nodes) {
    for (ValueId v : n.inputs) EXPECT_TRUE(v == kNoValue || ok(v)) << what;
    ASSERT_EQ(n.outputs.size(), 1u) << what;
    EXPECT_TRUE(ok(n.outputs[0])) << what;
  }
  for (ValueId v : g.outputs) EXPECT_TRUE(ok(v)) << what;
  for (ValueId v : g.inputs) EXPECT_TRUE(ok(v)) << what;
}

struct Tally {
  int imported = 0, rejected = 0;
};

void import_one(const std::string& bytes, const ImportOptions& opts, const std::string& what,
                Tally* tally) {
  try {
    Graph g = import_onnx_bytes(bytes, "fuzz.onnx", opts);
    check_graph(g, what);
    tally->imported++;
  } catch (const UserError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("fuzz.onnx: ", 0), 0u) << what << ": " << e.what();
    tally->rejected++;
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << ": exception other than UserError: " << e.what();
  }
}

std::string mutate_bytes(std::string s, std::mt19937_64& rng) {
  auto pos = [&](size_t n) { return n == 0 ? size_t(0) : (size_t)(rng() % n); };
  switch (rng() % 6) {
    case 0:  // flip a few bits
      for (int k = 1 + rng() % 3; k > 0 && !s.empty(); k--)
        s[pos(s.size())] ^= (char)(1 << rng() % 8);
      break;
    case 1:  // truncate
      s.resize(pos(s.size()));
      break;
    case 2: {  // insert random bytes
      std::string ins(1 + rng() % 8, '\0');
      for (char& c : ins) c = (char)rng();
      s.insert(pos(s.size() + 1), ins);
      break;
    }
    case 3: {  // overwrite with an interesting byte (varint continuation, sign, zero)
      static const char kBytes[] = {'\x00', '\x01', '\x7f', '\x80', '\xff'};
      if (!s.empty()) s[pos(s.size())] = kBytes[rng() % 5];
      break;
    }
    case 4: {  // delete a range
      size_t at = pos(s.size());
      s.erase(at, 1 + rng() % 16);
      break;
    }
    default: {  // duplicate a range elsewhere
      size_t at = pos(s.size()), len = 1 + rng() % 32;
      std::string chunk = s.substr(at, len);
      s.insert(pos(s.size() + 1), chunk);
      break;
    }
  }
  return s;
}

int64_t hostile_int(std::mt19937_64& rng) {
  static const int64_t kValues[] = {std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::max(),
                                    -(int64_t(1) << 40),
                                    -3,
                                    -2,
                                    -1,
                                    0,
                                    1,
                                    2,
                                    3,
                                    7,
                                    int64_t(1) << 31,
                                    int64_t(1) << 40,
                                    int64_t(1) << 62};
  return rng() % 4 == 0 ? (int64_t)(rng() % 64) - 8 : kValues[rng() % (sizeof(kValues) / 8)];
}

// Sets one field of the decoded model to a hostile value.
void mutate_fields(onnx::ModelProto& m, std::mt19937_64& rng) {
  onnx::GraphProto& g = *m.mutable_graph();
  auto pick = [&](int n) { return (int)(rng() % (uint64_t)n); };
  switch (rng() % 9) {
    case 0: {  // an integer attribute or list entry
      auto& node = *g.mutable_node(pick(g.node_size()));
      if (node.attribute_size() == 0) break;
      auto& a = *node.mutable_attribute(pick(node.attribute_size()));
      if (a.ints_size() > 0)
        a.set_ints(pick(a.ints_size()), hostile_int(rng));
      else
        a.set_i(hostile_int(rng));
      int type = (int)(rng() % 16);  // invalid codes are left to the byte mutations
      if (rng() % 8 == 0 && onnx::AttributeProto::AttributeType_IsValid(type))
        a.set_type((onnx::AttributeProto::AttributeType)type);
      break;
    }
    case 1: {  // an initializer's dims or data
      auto& t = *g.mutable_initializer(pick(g.initializer_size()));
      if (rng() % 2 && t.dims_size() > 0)
        t.set_dims(pick(t.dims_size()), hostile_int(rng));
      else if (t.int64_data_size() > 0)
        t.set_int64_data(pick(t.int64_data_size()), hostile_int(rng));
      else if (rng() % 2)
        t.add_dims(hostile_int(rng));
      else
        t.set_data_type((int32_t)(rng() % 20));
      break;
    }
    case 2: {  // an input dimension
      auto* shape = g.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
      if (rng() % 4 == 0) {
        shape->add_dim()->set_dim_value(hostile_int(rng));
      } else {
        auto* dim = shape->mutable_dim(pick(shape->dim_size()));
        if (rng() % 3 == 0)
          dim->set_dim_param(rng() % 2 ? "batch" : "other");
        else
          dim->set_dim_value(hostile_int(rng));
      }
      break;
    }
    case 3: {  // rewire a node input to another name
      auto& node = *g.mutable_node(pick(g.node_size()));
      if (node.input_size() == 0) break;
      const auto& other = g.node(pick(g.node_size()));
      std::string name = rng() % 2 && other.output_size() ? other.output(0)
                         : rng() % 2 ? g.initializer(pick(g.initializer_size())).name()
                                     : std::string();
      node.set_input(pick(node.input_size()), name);
      break;
    }
    case 4: {  // swap the op type for another supported one
      static const char* kOps[] = {"Conv",
                                   "Relu",
                                   "MaxPool",
                                   "Reshape",
                                   "Gemm",
                                   "Softmax",
                                   "Split",
                                   "Slice",
                                   "Concat",
                                   "Clip",
                                   "Expand",
                                   "Squeeze",
                                   "Unsqueeze",
                                   "Transpose",
                                   "ReduceSum",
                                   "ConvTranspose",
                                   "AveragePool",
                                   "Gather",
                                   "Flatten",
                                   "LayerNormalization",
                                   "BatchNormalization",
                                   "Dropout",
                                   "Max",
                                   "Where",
                                   "Cast",
                                   "ConstantOfShape",
                                   "Shape",
                                   "Identity",
                                   "MatMul"};
      g.mutable_node(pick(g.node_size()))
          ->set_op_type(kOps[rng() % (sizeof(kOps) / sizeof(kOps[0]))]);
      break;
    }
    case 5: {  // add or drop node inputs/outputs
      auto& node = *g.mutable_node(pick(g.node_size()));
      if (rng() % 2)
        node.add_input(rng() % 2 ? "x" : "");
      else
        node.add_output("extra" + std::to_string(rng() % 4));
      break;
    }
    case 6:  // the opset
      m.mutable_opset_import(0)->set_version(hostile_int(rng));
      break;
    case 7: {  // reorder two nodes
      int a = pick(g.node_size()), b = pick(g.node_size());
      g.mutable_node()->SwapElements(a, b);
      break;
    }
    default: {  // a float attribute to a non-finite value
      auto& node = *g.mutable_node(pick(g.node_size()));
      auto& a = *node.add_attribute();
      static const char* kNames[] = {"alpha", "beta", "epsilon", "axis", "keepdims", "group"};
      a.set_name(kNames[rng() % 6]);
      a.set_type(onnx::AttributeProto::FLOAT);
      a.set_f(rng() % 2 ? std::numeric_limits<float>::quiet_NaN()
                        : -std::numeric_limits<float>::infinity());
      break;
    }
  }
}

TEST(Mutation, SeedModelImports) {
  Graph g = import_onnx_bytes(seed_model().SerializeAsString(), "seed.onnx", seed_options());
  EXPECT_EQ(g.value(g.outputs[0]).shape, (Shape{3, 2, 3}));
  EXPECT_GE(g.nodes.size(), 10u);
}

TEST(Mutation, ByteMutationsImportOrRaiseUserError) {
  const std::string bytes = seed_model().SerializeAsString();
  const ImportOptions opts = seed_options();
  Tally tally;
  for (int seed = 0; seed < kByteMutations; seed++) {
    std::mt19937_64 rng(seed);
    std::string m = bytes;
    for (int k = 1 + rng() % 3; k > 0; k--) m = mutate_bytes(m, rng);
    import_one(m, opts, "byte mutation seed " + std::to_string(seed), &tally);
  }
  std::cout << "byte mutations: " << tally.imported << " imported, " << tally.rejected
            << " rejected\n";
  EXPECT_EQ(tally.imported + tally.rejected, kByteMutations);
  EXPECT_GT(tally.rejected, kByteMutations / 4);
}

TEST(Mutation, FieldMutationsImportOrRaiseUserError) {
  const onnx::ModelProto base = seed_model();
  const ImportOptions opts = seed_options();
  Tally tally;
  for (int seed = 0; seed < kFieldMutations; seed++) {
    std::mt19937_64 rng(1000003 + seed);
    onnx::ModelProto m = base;
    for (int k = 1 + rng() % 3; k > 0; k--) mutate_fields(m, rng);
    import_one(m.SerializeAsString(), opts, "field mutation seed " + std::to_string(seed), &tally);
  }
  std::cout << "field mutations: " << tally.imported << " imported, " << tally.rejected
            << " rejected\n";
  EXPECT_EQ(tally.imported + tally.rejected, kFieldMutations);
  EXPECT_GT(tally.rejected, kFieldMutations / 4);
  EXPECT_GT(tally.imported, 0);
}

}  // namespace
}  // namespace tlm

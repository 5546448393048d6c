// Every ONNX node test case (/usr/share/libonnx-testdata/data/node/*) whose operators tlm
// supports is imported, and each graph output must have the dtype and shape of the case's
// test_data_set_0/output_K.pb. Cases are skipped only for reasons found before import (an
// operator without a converter row, an opset outside 11..17, a dtype or value kind tlm has no);
// the reasons are printed. A supported case that fails to import fails the test unless it is in
// kUnsupportedVariants below, and those must fail with the listed message.
//
// Node tests feed every operand as a graph input, including ones tlm needs constant (Reshape's
// shape, Slice's starts, ...): those are baked into the model as initializers holding the test's
// values first, the way TVM's freeze_params does.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;

const char* const kDataDir = "/usr/share/libonnx-testdata/data";

// Supported operators used with an attribute value, output or input form tlm does not import,
// with the message fragment the import must fail with.
const std::map<std::string, std::string> kUnsupportedVariants = {
    // BatchNormalization in training mode (running statistics are outputs).
    {"test_batchnorm_epsilon_training_mode", "attribute training_mode=1 is not supported"},
    {"test_batchnorm_example_training_mode", "attribute training_mode=1 is not supported"},
    // Dropout's mask as a graph output.
    {"test_dropout_default_mask", "Dropout's mask output is not supported"},
    {"test_dropout_default_mask_ratio", "Dropout's mask output is not supported"},
    // Dropout with training_mode = true.
    {"test_training_dropout", "attribute training_mode=true"},
    {"test_training_dropout_default", "attribute training_mode=true"},
    {"test_training_dropout_default_mask", "attribute training_mode=true"},
    {"test_training_dropout_mask", "attribute training_mode=true"},
    {"test_training_dropout_zero_ratio", "attribute training_mode=true"},
    {"test_training_dropout_zero_ratio_mask", "attribute training_mode=true"},
    // MaxPool's Indices output.
    {"test_maxpool_with_argmax_2d_precomputed_pads", "MaxPool's Indices output is not supported"},
    // ... and with storage_order = 1 (column-major indices), which is checked first.
    {"test_maxpool_with_argmax_2d_precomputed_strides",
     "attribute storage_order=1 is not supported"},
    // Zero-size tensors.
    {"test_reshape_allowzero_reordered", "zero-size tensors are not supported"},
    {"test_split_zero_size_splits", "zero-size tensors are not supported"},
};

bool readable_dtype(int32_t code) {
  DType d;
  return dtype_from_onnx(code, &d);
}

// Why a case is not tried, or "" if it is.
std::string skip_reason(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if ((o.domain().empty() || o.domain() == "ai.onnx") && (o.version() < 11 || o.version() > 17))
      return "opset " + std::to_string(o.version());
  std::set<std::string> unsupported;
  for (const auto& n : m.graph().node())
    if (!onnx_op_supported(n.op_type())) unsupported.insert(n.op_type());
  if (!unsupported.empty()) {
    std::string s = "operator";
    for (const auto& op : unsupported) s += " " + op;
    return s;
  }
  for (const auto* list : {&m.graph().input(), &m.graph().output()})
    for (const auto& vi : *list) {
      if (!vi.type().has_tensor_type()) return "non-tensor value '" + vi.name() + "'";
      int32_t t = vi.type().tensor_type().elem_type();
      if (!readable_dtype(t)) return "dtype " + onnx_dtype_name(t);
    }
  return "";
}

onnx::TensorProto read_proto(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  onnx::TensorProto t;
  EXPECT_TRUE(t.ParseFromString(ss.str())) << p;
  return t;
}

// Graph inputs read at an operand tlm needs constant become initializers with the test's data.
void freeze_constant_operands(onnx::ModelProto& m, const fs::path& data) {
  onnx::GraphProto& g = *m.mutable_graph();
  std::set<std::string> inits;
  for (const auto& t : g.initializer()) inits.insert(t.name());
  int k = 0;
  for (const auto& vi : g.input()) {
    if (inits.count(vi.name())) continue;
    const int index = k++;
    bool needed = false;
    for (const auto& n : g.node())
      for (int i = 0; i < n.input_size(); i++)
        needed = needed || (n.input(i) == vi.name() && onnx_input_needs_constant(n.op_type(), i));
    if (!needed) continue;
    onnx::TensorProto t = read_proto(data / ("input_" + std::to_string(index) + ".pb"));
    t.set_name(vi.name());
    *g.add_initializer() = t;
  }
}

// Imports every supported case of one suite; returns how many imported.
int run_suite(const std::string& suite) {
  const fs::path root = fs::path(kDataDir) / suite;
  EXPECT_TRUE(fs::is_directory(root)) << root << " (package libonnx-testdata)";
  if (!fs::is_directory(root)) return 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root)) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  std::map<std::string, std::vector<std::string>> skipped;  // reason -> cases
  int imported = 0, expected_failures = 0;
  std::set<std::string> variants_seen;
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    std::ifstream in(dir / "model.onnx", std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    onnx::ModelProto m;
    if (!m.ParseFromString(ss.str())) {
      ADD_FAILURE() << name << ": model.onnx does not parse";
      continue;
    }
    std::string reason = skip_reason(m);
    if (!reason.empty()) {
      skipped[reason].push_back(name);
      continue;
    }
    const fs::path data = dir / "test_data_set_0";
    freeze_constant_operands(m, data);
    auto variant = kUnsupportedVariants.find(name);
    try {
      Graph g = import_onnx_bytes(m.SerializeAsString(), name);
      EXPECT_EQ(variant, kUnsupportedVariants.end())
          << name << " is listed as unsupported but imports; remove it from the list";
      if (g.outputs.size() != (size_t)m.graph().output_size()) {
        ADD_FAILURE() << name << ": " << g.outputs.size() << " outputs";
        continue;
      }
      for (size_t j = 0; j < g.outputs.size(); j++) {
        Tensor want =
            read_tensor_proto_file((data / ("output_" + std::to_string(j) + ".pb")).string());
        const Value& got = g.value(g.outputs[j]);
        EXPECT_EQ(got.shape, want.shape()) << name << " output " << j;
        EXPECT_EQ(got.dtype, want.dtype()) << name << " output " << j;
      }
      imported++;
    } catch (const UserError& e) {
      if (variant == kUnsupportedVariants.end()) {
        ADD_FAILURE() << name << " failed to import: " << e.what();
        continue;
      }
      EXPECT_NE(std::string(e.what()).find(variant->second), std::string::npos)
          << name << ": " << e.what();
      variants_seen.insert(name);
      expected_failures++;
    }
  }
  std::cout << suite << ": " << imported << " cases imported, " << expected_failures
            << " rejected as unsupported variants; skipped before import:\n";
  for (const auto& [reason, cases] : skipped) {
    std::cout << "  " << cases.size() << " x " << reason << ":";
    for (size_t i = 0; i < cases.size() && i < 4; i++) std::cout << " " << cases[i];
    std::cout << (cases.size() > 4 ? " ..." : "") << "\n";
  }
  for (const auto& [name, why] : kUnsupportedVariants) {
    EXPECT_TRUE(variants_seen.count(name)) << name << " is listed but was not tried";
  }
  return imported;
}

// The floor is the count with the ONNX 1.12 data: cases that silently vanish fail the test.
// (The pytorch-* and simple suites are opset 6-10 models: nothing in them is importable.)
TEST(OnnxNodeCases, NodeSuiteImportsWithTheExpectedOutputShapes) {
  EXPECT_GE(run_suite("node"), 257);
}

}  // namespace
}  // namespace tlm

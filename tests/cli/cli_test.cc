// The built `tlm` binary, run as a user would: every bad input ends with exit code 1 and one
// clear message (never a signal or abort), and the main paths succeed. Test models are written
// here with the ONNX protobuf API, inputs with the TensorProto writer.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <string>

#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "graph/interpreter.h"
#include "graph/passes.h"
#include "testing/run_tlm.h"

namespace tlm {
namespace {

using testing::expect_output;
using testing::Result;
using testing::run_tlm;

// A fresh directory per test binary run for model and tensor files.
const std::string& temp_dir() {
  static std::string dir = [] {
    std::string tmpl = ::testing::TempDir() + "tlm_cli_XXXXXX";
    char* d = mkdtemp(tmpl.data());
    return std::string(d ? d : ::testing::TempDir().c_str());
  }();
  return dir;
}

std::string temp_path(const std::string& name) { return temp_dir() + "/" + name; }

// Removes the directory when the test binary (or the one test ctest runs) ends.
class RemoveTempDir : public ::testing::Environment {
 public:
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(temp_dir(), ec);
  }
};
const auto* const kRemoveTempDir = ::testing::AddGlobalTestEnvironment(new RemoveTempDir);

void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// --- building ONNX models ---------------------------------------------------------------------

void add_value_info(onnx::ValueInfoProto* vi, const std::string& name,
                    const std::vector<int64_t>& dims, const std::vector<std::string>& params = {}) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tt->mutable_shape();
  for (size_t i = 0; i < dims.size(); i++) {
    auto* d = shape->add_dim();
    if (i < params.size() && !params[i].empty())
      d->set_dim_param(params[i]);
    else
      d->set_dim_value(dims[i]);
  }
}

void add_initializer(onnx::GraphProto* g, const std::string& name, const std::vector<int64_t>& dims,
                     uint64_t seed) {
  onnx::TensorProto* t = g->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    n *= d;
  }
  std::mt19937 rng((uint32_t)seed);
  std::uniform_real_distribution<float> u(-0.5f, 0.5f);
  for (int64_t i = 0; i < n; i++) t->add_float_data(u(rng));
}

onnx::NodeProto* add_node(onnx::GraphProto* g, const std::string& op,
                          const std::vector<std::string>& ins, const std::string& out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const std::string& i : ins) n->add_input(i);
  n->add_output(out);
  return n;
}

void add_ints(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

// x[N,3,8,8] -> Conv(3->4, 3x3, pad 1) -> Relu -> Add(x') -> Conv 1x1 -> y. `op` replaces Relu
// (to make an unknown-op model); `dims`/`params` set the input shape.
std::string conv_model(const std::string& op = "Relu", std::vector<int64_t> dims = {1, 3, 8, 8},
                       std::vector<std::string> params = {}) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("tlm_cli_test");
  m.add_opset_import()->set_version(13);
  onnx::GraphProto* g = m.mutable_graph();
  g->set_name("conv_model");
  add_value_info(g->add_input(), "x", dims, params);
  add_initializer(g, "w1", {4, 3, 3, 3}, 1);
  add_initializer(g, "b1", {4}, 2);
  add_initializer(g, "w2", {2, 4, 1, 1}, 3);
  onnx::NodeProto* c1 = add_node(g, "Conv", {"x", "w1", "b1"}, "c1");
  add_ints(c1, "pads", {1, 1, 1, 1});
  add_ints(c1, "kernel_shape", {3, 3});
  add_node(g, op, {"c1"}, "r1");
  add_node(g, "Add", {"r1", "c1"}, "a1");
  onnx::NodeProto* c2 = add_node(g, "Conv", {"a1", "w2"}, "y");
  add_ints(c2, "kernel_shape", {1, 1});
  std::vector<int64_t> out_dims = dims;
  out_dims[1] = 2;
  add_value_info(g->add_output(), "y", out_dims, params);
  std::string bytes;
  EXPECT_TRUE(m.SerializeToString(&bytes));
  return bytes;
}

std::string write_model(const std::string& name, const std::string& bytes) {
  std::string path = temp_path(name);
  write_file(path, bytes);
  return path;
}

// --- failures: exit code 1 and a message -------------------------------------------------------

void expect_error(const Result& r, const std::string& needle) {
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find(needle), std::string::npos) << "missing '" << needle << "' in:\n"
                                                      << r.output;
  EXPECT_EQ(r.output.find("internal error"), std::string::npos) << r.output;
}

TEST(CliErrors, TruncatedOnnxFile) {
  std::string bytes = conv_model();
  std::string path = write_model("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  Result r = run_tlm("run " + path);
  expect_error(r, "error: ");
  expect_error(r, "truncated.onnx");
}

TEST(CliErrors, RandomBytes) {
  std::mt19937 rng(5);
  std::string bytes(3000, '\0');
  for (char& c : bytes) c = (char)(rng() & 0xff);
  std::string path = write_model("random.onnx", bytes);
  Result r = run_tlm("run " + path);
  expect_error(r, "error: ");
  expect_error(r, "random.onnx");
}

TEST(CliErrors, UnknownOperator) {
  std::string path = write_model("unknown_op.onnx", conv_model("FrobnicateV2"));
  Result r = run_tlm("run " + path);
  expect_error(r, "error: ");
  expect_error(r, "FrobnicateV2");
}

TEST(CliErrors, WrongRankInputFile) {
  std::string model = write_model("conv.onnx", conv_model());
  std::string in = temp_path("wrong_rank.pb");
  write_tensor_proto_file(in, random_tensor(DType::F32, {1, 3, 8}, 1), "x");
  Result r = run_tlm("run " + model + " --input " + in);
  expect_error(r, "error: input 'x' expects f32[1,3,8,8], got f32[1,3,8]");
}

TEST(CliErrors, ZeroSizeInputDimension) {
  std::string path = write_model("zero_dim.onnx", conv_model("Relu", {0, 3, 8, 8}));
  Result r = run_tlm("run " + path);
  expect_error(r, "error: ");
  expect_error(r, "'x'");
  expect_error(r, "zero-size");
}

TEST(CliErrors, DynamicDimensionWithoutValue) {
  std::string path = write_model("dynamic.onnx", conv_model("Relu", {1, 3, 8, 8}, {"batch"}));
  Result r = run_tlm("run " + path);
  expect_error(r, "error: ");
  expect_error(r, "dynamic ('batch')");
  expect_error(r, "--dim batch=N");
}

TEST(CliErrors, BadFlag) {
  Result r = run_tlm("run resnet18 --no-such-flag");
  expect_error(r, "--no-such-flag");
  expect_error(r, "--help");
}

TEST(CliErrors, MissingArgument) {
  expect_error(run_tlm("run"), "MODEL");
  expect_error(run_tlm("run resnet18 --repeat"), "--repeat");
  expect_error(run_tlm("run resnet18 --repeat 0"), "--repeat");
  expect_error(run_tlm(""), "subcommand");
}

TEST(CliErrors, UnknownZooModel) {
  Result r = run_tlm("run resnet9000");
  expect_error(r, "error: ");
  expect_error(r, "unknown zoo model 'resnet9000'");
}

TEST(CliErrors, BadDimFlag) {
  std::string path = write_model("dynamic2.onnx", conv_model("Relu", {1, 3, 8, 8}, {"batch"}));
  expect_error(run_tlm("run " + path + " --dim batch"), "--dim expects NAME=VALUE");
  expect_error(run_tlm("run " + path + " --dim batch=x"), "is not an integer");
  expect_error(run_tlm("run " + path + " --dim batch=0"), "at least 1");
}

TEST(CliErrors, BadLayoutFlag) {
  for (const char* bad : {"nhwc", "nchw1c", "nchwxc", "nchw16", "nchw123c"})
    expect_error(run_tlm(std::string("extract resnet18:image=32 --layout ") + bad),
                 "layout '" + std::string(bad) + "': expected nchw, nchwc, or nchw<B>c");
}

// --- success -----------------------------------------------------------------------------------

TEST(CliRun, HelpAndZooList) {
  Result help = run_tlm("--help");
  EXPECT_EQ(help.code, 0) << help.output;
  EXPECT_NE(help.output.find("run"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("extract"), std::string::npos) << help.output;
  Result zoo = run_tlm("zoo");
  EXPECT_EQ(zoo.code, 0) << zoo.output;
  EXPECT_NE(zoo.output.find("resnet50"), std::string::npos) << zoo.output;
  // The workload lists for scripts: no held-out workload is a training workload.
  Result train = run_tlm("zoo --list train"), held = run_tlm("zoo --list heldout");
  ASSERT_EQ(train.code, 0) << train.output;
  ASSERT_EQ(held.code, 0) << held.output;
  std::istringstream hl(held.output);
  int n = 0;
  for (std::string h; std::getline(hl, h); n++)
    EXPECT_EQ(("\n" + train.output).find("\n" + h + "\n"), std::string::npos) << h;
  EXPECT_GE(n, 4);
  EXPECT_NE(train.output.find("resnet18:image="), std::string::npos) << train.output;
  EXPECT_EQ(run_tlm("zoo --list test").code, 1);
}

TEST(CliRun, SmallZooModelPasses) {
  expect_output(run_tlm("run resnet18:image=32 --repeat 2 --threads 2"), 0,
                {"verify: PASS", "end-to-end:", "arena"});
}

// ResNet-18 at 32x32 has standalone reshapes of its flattened pixels (docs/layout.md): they are
// views and do not run (runtime/memory_plan.h); a set ending in @copies runs them as copies, and
// both verify.
TEST(CliRun, ReshapeViewsAndCopiesBothVerify) {
  expect_output(run_tlm("extract resnet18:image=32"), 0,
                {"reshapes are views (tasks that never run: "});
  expect_output(run_tlm("run resnet18:image=32 --repeat 2 --threads 2 --schedules "
                        "copies=default@copies"),
                0,
                {"verify (default schedules): PASS", "verify (copies schedules): PASS",
                 "injective_reshape (view)", "reshapes are views"});
  expect_error(run_tlm("run resnet18:image=32 --schedules d=default@greedy"),
               "@MODE applies to checkpoints");
}

// Channel-blocked activations (--layout, docs/layout.md): the blocked model's convolutions are
// ConvNchwc tasks, and the model still verifies against the reference interpreter (whose graph
// outputs are NCHW, as the original's).
TEST(CliRun, ChannelBlockedLayoutVerifies) {
  expect_output(run_tlm("run mobilenet_v2:image=32 --layout nchw8c --repeat 2 --threads 2"), 0,
                {"verify: PASS", "depthwise_conv2d_nchwc"});
  expect_output(run_tlm("extract resnet18:image=32 --layout nchwc"), 0, {"conv2d_nchwc"});
  // The workload lists' spelling: the layout as a suffix of the zoo spec.
  expect_output(run_tlm("extract resnet18:image=32@nchw8c"), 0, {"[1,8,16,16,8]"});
  expect_error(run_tlm("extract resnet18:image=32@nchw8c --layout nchw16c"),
               "names layout nchw8c but --layout says nchw16c");
}

// The commands that deploy a model block its channels unless told otherwise (--layout auto), and
// `generate` numbers the tasks as `extract` lists them.
TEST(CliRun, DefaultLayoutIsBlocked) {
  for (const char* cmd : {"extract resnet18:image=32", "extract resnet18:image=32 --layout auto"}) {
    Result r = run_tlm(cmd);
    EXPECT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("conv2d_nchwc"), std::string::npos) << cmd << "\n" << r.output;
  }
  Result plain = run_tlm("extract resnet18:image=32 --layout nchw");
  EXPECT_EQ(plain.code, 0) << plain.output;
  EXPECT_EQ(plain.output.find("nchwc"), std::string::npos) << plain.output;
  EXPECT_NE(plain.output.find("conv2d"), std::string::npos) << plain.output;
  Result gen = run_tlm("generate resnet18:image=32 --task 0 --expert");
  EXPECT_EQ(gen.code, 0) << gen.output;
  EXPECT_NE(gen.output.find("ConvNchwc"), std::string::npos) << gen.output;
  Result gen_plain = run_tlm("generate resnet18:image=32 --task 0 --expert --layout nchw");
  EXPECT_EQ(gen_plain.code, 0) << gen_plain.output;
  EXPECT_EQ(gen_plain.output.find("ConvNchwc"), std::string::npos) << gen_plain.output;
  // A suffix spec keeps its own layout under auto.
  expect_output(run_tlm("extract resnet18:image=32@nchw8c --layout auto"), 0, {"[1,8,16,16,8]"});
}

TEST(CliRun, AloneTimesEveryTaskBesideItsInModelTime) {
  Result r = run_tlm("run resnet18:image=32 --repeat 2 --no-verify --alone");
  EXPECT_EQ(r.code, 0) << r.output;
  const size_t at = r.output.find("in the model vs alone:");
  ASSERT_NE(at, std::string::npos) << r.output;
  for (const char* column :
       {"in-model", "alone", "cold", "cold+w", "idle", "in/alone", "conv2d", "sum"})
    EXPECT_NE(r.output.find(column, at), std::string::npos) << column << "\n" << r.output;
}

TEST(CliRun, ExtractPrintsTasks) {
  std::string path = write_model("extract.onnx", conv_model());
  Result r = run_tlm("extract " + path);
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find(" tasks"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("conv"), std::string::npos) << r.output;
}

// The task map: every node of the model in exactly one instance, by its ONNX name, and the
// instance that writes the model output is the 1x1 conv's.
TEST(CliRun, ExtractJsonMapsNodesToTasks) {
  std::string path = write_model("extract_map.onnx", conv_model());
  std::string map_path = temp_path("extract_map.json");
  Result r = run_tlm("extract " + path + " --json " + map_path);
  ASSERT_EQ(r.code, 0) << r.output;
  std::ifstream in(map_path);
  nlohmann::json map = nlohmann::json::parse(in);
  EXPECT_EQ(map["version"], 2);
  std::multiset<std::string> ops;
  int instances = 0;
  for (const auto& task : map["tasks"]) {
    EXPECT_EQ(task["key_fnv1a"].get<std::string>().size(), 16u);
    EXPECT_GT(task["flops"].get<double>(), 0);
    EXPECT_EQ(task["weight"].get<size_t>(), task["instances"].size());
    for (const auto& inst : task["instances"]) {
      instances++;
      for (const auto& op : inst["ops"]) ops.insert(op["name"].get<std::string>());
      EXPECT_EQ(inst["view"], false) << "a conv model has no reshape to view";
      if (inst["output"] == "y") {
        EXPECT_EQ(task["kind"], "conv2d");
        ASSERT_EQ(inst["ops"].size(), 1u);
        EXPECT_EQ(inst["ops"][0]["name"], "Conv_y");
        EXPECT_EQ(inst["ops"][0]["op"], "Conv");
        EXPECT_EQ(inst["inputs"], nlohmann::json::array({"a1"}));  // weights are left out
      }
    }
  }
  EXPECT_EQ(instances, map["instances"].get<int>());
  EXPECT_EQ(ops, (std::multiset<std::string>{"Conv_c1", "Relu_r1", "Add_a1", "Conv_y"}));
}

TEST(CliRun, InputOutputRoundTripMatchesInterpreter) {
  std::string model = write_model("roundtrip.onnx", conv_model("Relu", {1, 3, 8, 8}, {"batch"}));
  Tensor x = random_tensor(DType::F32, {2, 3, 8, 8}, 42);
  std::string in = temp_path("x.pb"), out = temp_path("y.pb");
  write_tensor_proto_file(in, x, "x");
  Result r =
      run_tlm("run " + model + " --dim batch=2 --input " + in + " --output " + out + " --repeat 1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;

  Tensor y = read_tensor_proto_file(out);
  ImportOptions opts;
  opts.dims = {{"batch", 2}};
  Graph g = import_onnx_file(model, opts);
  prepare_graph(g);
  std::vector<Tensor> want = interpret(g, {x});
  ASSERT_EQ(y.shape(), (Shape{2, 2, 8, 8}));
  EXPECT_LE(max_rel_violation(y, want[0], 1e-4, 1e-4), 1.0);
}

// The tuning commands' flags (moved from the tune tests: the CLI is tested through the binary).
TEST(CliTest, TuneMeasureCompileRejectBadFlags) {
  const std::string records = temp_dir() + "/bad_flags.jsonl";
  Result r = run_tlm("tune resnet18 --strategy annealing --records " + records);
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.output.find("unknown strategy 'annealing'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("evolutionary"), std::string::npos) << r.output;
  EXPECT_EQ(run_tlm("tune resnet18 --strategy random").code, 1);  // --records missing
  EXPECT_EQ(run_tlm("tune resnet18 --records " + records + " --trials-per-task 0").code, 1);
  EXPECT_EQ(run_tlm("measure /nonexistent/sentences.txt --records " + records).code, 1);
  EXPECT_EQ(run_tlm("compile resnet18").code, 1);  // -o missing
}

}  // namespace
}  // namespace tlm

// Conformance: the ONNX project's own node test cases (and the PyTorch exports shipped beside
// them) run through the whole pipeline -- import_onnx_file -> prepare_graph -> partition_graph
// -> compile_model (Halide, default schedule) -> run -- and every output must match the expected
// .pb within kAtol/kRtol. Modelled on ggml's tests/test-backend-ops.cpp: one small Case per test
// directory (load_cases, classify), one shared runner (run_case).
//
// A case is RUN, or SKIP for a reason found before import (an operator outside tlm's table, a
// dtype tlm has no, a non-tensor value). A UserError on a RUN case becomes a SKIP only when the
// case is listed in kKnownUnsupported (with why); anywhere else it is a failure.
// Tests: OnnxNodeFamily/<Op> runs the cases about one operator, requires all of them to pass and
// at least kFamilies' floor of them to have run (so cases cannot silently vanish);
// OnnxNodeReport.AllCases runs everything and writes the report docs/onnx_node_tests.md.
// Knobs (environment): TLM_ONNX_TESTDATA (default /usr/share/libonnx-testdata/data);
// TLM_WRITE_CONFORMANCE_REPORT=1 writes the report into the source tree, else into the build dir.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "frontend/onnx_import.h"
#include "frontend/tensor_proto.h"
#include "graph/passes.h"
#include "partition/partition.h"
#include "runtime/executor.h"

namespace tlm {
namespace {

namespace fs = std::filesystem;

// Floats match when |actual - expected| <= kAtol + kRtol * |expected| (NaN matches NaN, an
// infinity matches the same infinity); int64 and bool outputs must be equal.
constexpr double kAtol = 1e-4;
constexpr double kRtol = 1e-3;
constexpr int kWorkers = 2;    // cases compiled and run at once (the machine has 2 cores)
constexpr int kMinOpset = 11;  // the importer's lowest opset (frontend/onnx_import.h)

const char* const kSuites[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

// ONNX operators that have no row in graph/op.h but that the importer resolves (docs/ir.md).
const std::set<std::string> kImporterResolved = {"Split",    "Shape",   "Constant", "ConstantOfShape",
                                                 "Identity", "Dropout", "Pad"};

// One row per operator family: the operator, and how many of its cases must at least have run
// (RUN-PASS or RUN-FAIL). The floors are the counts in the ONNX 1.12 test data; lowering one is
// a deliberate act. Every op in graph/op.h and every importer-resolved op has a row.
struct Family {
  const char* op;
  int min_ran;
};
const Family kFamilies[] = {
    {"Conv", 33},
    {"ConvTranspose", 13},
    {"Gemm", 14},
    {"MatMul", 4},
    {"MaxPool", 21},
    {"AveragePool", 20},
    {"GlobalAveragePool", 2},
    {"ReduceMean", 11},
    {"ReduceSum", 12},
    {"Softmax", 11},
    {"LayerNormalization", 19},
    {"Add", 5},
    {"Sub", 3},
    {"Mul", 3},
    {"Div", 3},
    {"Pow", 13},
    {"Max", 7},
    {"Min", 7},
    {"Equal", 2},
    {"Less", 2},
    {"Greater", 2},
    {"Where", 2},
    {"Sqrt", 3},
    {"Erf", 1},
    {"Exp", 4},
    {"Log", 2},
    {"Tanh", 3},
    {"Sigmoid", 5},
    {"Relu", 3},
    {"Neg", 2},
    {"Abs", 2},
    {"Reciprocal", 2},
    {"Clip", 9},
    {"HardSigmoid", 4},
    {"HardSwish", 1},
    {"LeakyRelu", 5},
    {"Cast", 0},  // every Cast case in ONNX 1.12 involves double, float16, bfloat16 or string
    {"BatchNormalization", 7},
    {"Reshape", 10},
    {"Flatten", 11},
    {"Transpose", 8},
    {"Squeeze", 2},
    {"Unsqueeze", 8},
    {"Concat", 13},
    {"Slice", 8},
    {"Gather", 6},
    {"Expand", 6},
    {"Split", 7},
    {"Shape", 0},     // the output folds to a constant (kKnownUnsupported)
    {"Constant", 0},  // ditto; Constant still runs inside test_mvn_expanded, test_PixelShuffle, ...
    {"ConstantOfShape", 0},  // ditto
    {"Identity", 1},
    {"Dropout", 4},
    {"Pad", 8},
};

// Cases that use a supported operator in a way tlm deliberately does not support. A UserError
// from any stage on one of these is a SKIP -- if its message contains `expect`, so that a new bug
// on a listed case still fails; a UserError on any other case is a FAIL.
struct KnownUnsupported {
  const char* id;      // Case::id()
  const char* expect;  // a fragment of the expected UserError message
};
const KnownUnsupported kKnownUnsupported[] = {
    // tlm imports inference graphs: training-mode Dropout is random, BatchNormalization in
    // training mode normalizes with batch statistics and returns the running ones, and the
    // Dropout mask / MaxPool Indices outputs have no tlm op.
    {"test_training_dropout", "training_mode"},
    {"test_training_dropout_default", "training_mode"},
    {"test_training_dropout_default_mask", "training_mode"},
    {"test_training_dropout_mask", "training_mode"},
    {"test_training_dropout_zero_ratio", "training_mode"},
    {"test_training_dropout_zero_ratio_mask", "training_mode"},
    {"test_batchnorm_epsilon_training_mode", "training_mode"},
    {"test_batchnorm_example_training_mode", "training_mode"},
    {"test_dropout_default_mask", "mask output is not supported"},
    {"test_dropout_default_mask_ratio", "mask output is not supported"},
    {"test_maxpool_with_argmax_2d_precomputed_pads", "Indices output is not supported"},
    {"test_maxpool_with_argmax_2d_precomputed_strides", "storage_order"},
    // Zero-size tensors are outside the IR (graph/passes.h: prepare_graph).
    {"test_reshape_allowzero_reordered", "zero-size"},
    {"test_split_zero_size_splits", "zero-size"},
    {"test_slice_start_out_of_bounds", "zero-size"},
    // The output folds to a constant at import (shapes are static), leaving no task to compile;
    // prepare_graph rejects graph outputs that do not depend on an input.
    {"test_constant", "is a constant"},
    {"test_constantofshape_float_ones", "is a constant"},
    {"test_constantofshape_int_shape_zero", "is a constant"},
    {"test_constantofshape_int_zeros", "is a constant"},
    {"test_shape", "is a constant"},
    {"test_shape_clip_end", "is a constant"},
    {"test_shape_clip_start", "is a constant"},
    {"test_shape_end_1", "is a constant"},
    {"test_shape_end_negative_1", "is a constant"},
    {"test_shape_example", "is a constant"},
    {"test_shape_start_1", "is a constant"},
    {"test_shape_start_1_end_2", "is a constant"},
    {"test_shape_start_1_end_negative_1", "is a constant"},
    {"test_shape_start_negative_1", "is a constant"},
};

const KnownUnsupported* find_known_unsupported(const std::string& id) {
  for (const auto& k : kKnownUnsupported)
    if (id == k.id) return &k;
  return nullptr;
}

// What is known about a failing case: which stage owns the bug and a minimal reproduction. The
// report prints it beside the failure; a case that passes again simply no longer shows it.
struct FailureNote {
  const char* id;
  const char* owner;
  const char* repro;
};
// Empty while every RUN case passes.
const std::vector<FailureNote> kFailureNotes = {};

const FailureNote* find_failure_note(const std::string& id) {
  for (const auto& n : kFailureNotes)
    if (id == n.id) return &n;
  return nullptr;
}

enum class Status { Pass, Fail, Skip };
const char* status_name(Status s) {
  return s == Status::Pass ? "RUN-PASS" : s == Status::Fail ? "RUN-FAIL" : "SKIP";
}

struct Case {
  std::string suite, name, dir;
  std::vector<std::string> ops;  // distinct op types, first-use order
  std::string family;
  std::string skip;  // non-empty: skipped before import, with this reason
  std::string id() const { return suite == "node" ? name : suite + "/" + name; }
};

struct Result {
  Status status = Status::Skip;
  std::string detail;
};

std::string data_root() {
  const char* env = std::getenv("TLM_ONNX_TESTDATA");
  return env && *env ? env : "/usr/share/libonnx-testdata/data";
}

onnx::ModelProto load_model(const std::string& path) {
  onnx::ModelProto m;
  std::ifstream in(path, std::ios::binary);
  TLM_CHECK(in && m.ParseFromIstream(&in)) << "cannot parse " << path;
  return m;
}

// tlm computes in float32, int64 and bool; the importer widens int32 to int64 (tensor_proto.h),
// and int32 expected outputs read back widened too.
bool is_supported_dtype(int t) {
  return t == onnx::TensorProto::FLOAT || t == onnx::TensorProto::INT64 ||
         t == onnx::TensorProto::INT32 || t == onnx::TensorProto::BOOL;
}

// Higher rank wins when choosing the operator a case is "about": test_mvn_expanded is a
// ReduceMean case, test_Linear_no_bias (Transpose, MatMul) a MatMul case.
int family_rank(const std::string& op) {
  // Indexed by OpPattern: Elemwise, Injective, Reduce, Anchor.
  constexpr int kPatternRank[] = {2, 1, 3, 4};
  Op o;
  if (op_from_name(op, &o)) return kPatternRank[(int)op_pattern(o)];
  return kImporterResolved.count(op) ? 0 : 5;  // 5: unsupported, it names the case's family
}

// Classifies one case directory from its model alone.
Case classify(const std::string& suite, const fs::path& dir) {
  Case c;
  c.suite = suite;
  c.name = dir.filename().string();
  c.dir = dir.string();
  onnx::ModelProto m = load_model(c.dir + "/model.onnx");
  for (const auto& n : m.graph().node())
    if (std::find(c.ops.begin(), c.ops.end(), n.op_type()) == c.ops.end())
      c.ops.push_back(n.op_type());
  int best = -1;
  for (const auto& op : c.ops)
    if (family_rank(op) > best) best = family_rank(op), c.family = op;
  for (const auto& op : c.ops)
    if (family_rank(op) == 5) {
      c.skip = "unsupported op '" + op + "'";
      return c;
    }
  std::vector<const onnx::ValueInfoProto*> io;
  for (const auto& v : m.graph().input()) io.push_back(&v);
  for (const auto& v : m.graph().output()) io.push_back(&v);
  for (const auto* v : io) {
    if (!v->type().has_tensor_type()) {
      c.skip = "non-tensor value '" + v->name() + "' (sequence/optional)";
      return c;
    }
    int t = v->type().tensor_type().elem_type();
    if (!is_supported_dtype(t)) {
      c.skip =
          "unsupported dtype " + onnx::TensorProto::DataType_Name(t) + " ('" + v->name() + "')";
      return c;
    }
  }
  return c;
}

std::vector<Case> load_cases() {
  std::vector<Case> cases;
  for (const char* suite : kSuites) {
    fs::path root = fs::path(data_root()) / suite;
    if (!fs::is_directory(root)) continue;  // the report test asserts the count
    for (const auto& e : fs::directory_iterator(root))
      if (fs::exists(e.path() / "model.onnx")) cases.push_back(classify(suite, e.path()));
  }
  std::sort(cases.begin(), cases.end(),
            [](const Case& a, const Case& b) { return a.id() < b.id(); });
  return cases;
}

const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = load_cases();
  return cases;
}

// The model one data set runs: old opsets upgraded, shape-like inputs frozen. `runtime` holds
// the remaining graph inputs (name -> tensor); graph output K is checked against output_K.pb.
struct PreparedModel {
  std::string path;
  std::string bytes;  // the changed model, serialized; empty: import `path` unchanged
  std::map<std::string, Tensor> runtime;
  int num_outputs = 0;
  std::vector<std::string> notes;
};

std::string read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  TLM_CHECK(in) << "cannot open " << path;
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

int default_opset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return (int)o.version();
  return 0;
}

PreparedModel prepare_model(const Case& c, const fs::path& set_dir) {
  PreparedModel pm;
  onnx::ModelProto m = load_model(c.dir + "/model.onnx");
  bool modified = false;
  // The importer reads opsets kMinOpset.. (its documented range); older exports (the PyTorch
  // suites are opset 6) are upgraded with the ONNX project's own version converter.
  if (int opset = default_opset(m); opset < kMinOpset) {
    onnx::shape_inference::InferShapes(m);  // some adapters need shapes (Gemm 6 -> 7)
    m = onnx::version_conversion::ConvertVersion(m, kMinOpset);
    pm.notes.push_back("opset " + std::to_string(opset) + " converted to " +
                       std::to_string(kMinOpset));
    modified = true;
  }
  onnx::GraphProto* g = m.mutable_graph();
  std::set<std::string> initializers;
  for (const auto& t : g->initializer()) initializers.insert(t.name());

  // Graph inputs without an initializer are fed by input_K.pb, K counting only those.
  std::map<std::string, fs::path> feeds;
  int fed = 0;
  for (const auto& v : g->input())
    if (!initializers.count(v.name()))
      feeds[v.name()] = set_dir / ("input_" + std::to_string(fed++) + ".pb");

  // Operands that tlm's IR holds as attributes (docs/ir.md: shapes, axes and bounds are static)
  // must be constant for the importer, but node tests feed them as graph inputs: bake the test's
  // values into the model as initializers (what TVM's freeze_params does).
  std::set<std::string> frozen;
  for (const auto& n : g->node())
    for (int i = 0; i < n.input_size(); i++)
      if (feeds.count(n.input(i)) && onnx_input_needs_constant(n.op_type(), i))
        frozen.insert(n.input(i));
  modified = modified || !frozen.empty();
  for (const auto& name : frozen) {
    onnx::TensorProto* t = g->add_initializer();
    TLM_CHECK(t->ParseFromString(read_file_bytes(feeds[name].string()))) << feeds[name];
    t->set_name(name);
    pm.notes.push_back("froze input '" + name + "'");
  }
  if (!frozen.empty()) {
    auto* inputs = g->mutable_input();
    for (int i = inputs->size() - 1; i >= 0; i--)
      if (frozen.count(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
  }
  for (const auto& [name, path] : feeds)
    if (!frozen.count(name)) pm.runtime.emplace(name, read_tensor_proto_file(path.string()));

  pm.num_outputs = g->output_size();

  pm.path = c.dir + "/model.onnx";
  if (modified) TLM_CHECK(m.SerializeToString(&pm.bytes)) << "cannot serialize " << pm.path;
  return pm;
}

// Empty when `actual` matches `expected`; else what differs, with the worst element.
std::string compare(const Tensor& actual, const Tensor& expected) {
  std::ostringstream os;
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    os << "got " << dtype_name(actual.dtype()) << shape_str(actual.shape()) << ", expected "
       << dtype_name(expected.dtype()) << shape_str(expected.shape());
    return os.str();
  }
  bool exact = expected.dtype() != DType::F32;
  double worst = 0;
  int64_t worst_i = -1, bad = 0;
  for (int64_t i = 0; i < expected.numel(); i++) {
    double a = actual.get_f(i), e = expected.get_f(i);
    double v;
    if (std::isnan(a) || std::isnan(e)) {
      v = std::isnan(a) == std::isnan(e) ? 0 : INFINITY;
    } else if (std::isinf(a) || std::isinf(e) || exact) {
      v = a == e ? 0 : INFINITY;
    } else {
      v = std::fabs(a - e) / (kAtol + kRtol * std::fabs(e));
    }
    if (v > 1) bad++;
    if (v > worst || (worst_i < 0 && v > 1)) worst = v, worst_i = i;
  }
  if (bad == 0) return "";
  os << bad << " of " << expected.numel() << " elements differ; worst at " << worst_i << ": got "
     << actual.get_f(worst_i) << ", expected " << expected.get_f(worst_i);
  return os.str();
}

std::vector<fs::path> data_sets(const Case& c) {
  std::vector<fs::path> sets;
  for (const auto& e : fs::directory_iterator(c.dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0)
      sets.push_back(e.path());
  std::sort(sets.begin(), sets.end());
  return sets;
}

// Runs one case through the whole pipeline; `stage` names where an exception came from.
Result run_case(const Case& c) {
  if (!c.skip.empty()) return {Status::Skip, c.skip};
  std::string stage = "harness";
  std::vector<std::string> notes;
  try {
    std::vector<fs::path> sets = data_sets(c);
    if (sets.empty()) return {Status::Fail, "no test_data_set_* directory"};
    for (const auto& set : sets) {
      stage = "harness";
      PreparedModel pm = prepare_model(c, set);
      for (const auto& n : pm.notes)
        if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
      stage = "import";
      Graph g = pm.bytes.empty() ? import_onnx_file(pm.path)
                                 : import_onnx_bytes(pm.bytes, pm.path + " (prepared)");
      stage = "prepare_graph";
      prepare_graph(g);
      stage = "partition";
      Partition p = partition_graph(g);
      stage = "compile";
      CompileOptions opts;
      opts.compile_threads = 1;  // kWorkers cases compile at once
      CompiledModel model = compile_model(g, p, opts);
      stage = "harness";
      std::vector<Tensor> inputs;
      for (ValueId v : g.inputs) {
        const std::string& name = g.value(v).name;
        auto it = pm.runtime.find(name);
        if (it == pm.runtime.end())
          return {Status::Fail,
                  "imported graph has input '" + name + "' that the test does not feed"};
        inputs.push_back(it->second);
      }
      if ((int)g.outputs.size() != pm.num_outputs)
        return {Status::Fail, "imported graph has " + std::to_string(g.outputs.size()) +
                                  " outputs, the model " + std::to_string(pm.num_outputs)};
      stage = "run";
      std::vector<Tensor> outputs = model.run(inputs);
      stage = "compare";
      for (size_t i = 0; i < outputs.size(); i++) {
        std::string file = "output_" + std::to_string(i) + ".pb";
        Tensor expected = read_tensor_proto_file((set / file).string());
        std::string diff = compare(outputs[i], expected);
        if (!diff.empty())
          return {Status::Fail, set.filename().string() + "/" + file + ": " + diff};
      }
    }
  } catch (const UserError& e) {
    const KnownUnsupported* k = find_known_unsupported(c.id());
    std::string msg = e.what();
    if (k && msg.find(k->expect) != std::string::npos)
      return {Status::Skip, "known unsupported variant: " + stage + ": " + msg};
    return {Status::Fail, "unexpected user error in " + stage + ": " + msg};
  } catch (const std::exception& e) {
    return {Status::Fail, "error in " + stage + ": " + e.what()};
  }
  std::string detail;
  for (const auto& n : notes) detail += (detail.empty() ? "" : "; ") + n;
  return {Status::Pass, detail};
}

// Results are memoized for the process: the family tests and the report share them.
std::map<std::string, Result>& result_cache() {
  static std::map<std::string, Result> cache;
  return cache;
}
std::mutex& cache_mutex() {
  static std::mutex m;
  return m;
}

// Runs the cases not yet in the cache on kWorkers threads; returns the results in `cases` order.
std::vector<Result> run_cases(const std::vector<const Case*>& cases) {
  std::vector<const Case*> todo;
  {
    std::lock_guard<std::mutex> lock(cache_mutex());
    for (const Case* c : cases)
      if (!result_cache().count(c->id())) todo.push_back(c);
  }
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i; (i = next++) < todo.size();) {
      Result r = run_case(*todo[i]);
      std::lock_guard<std::mutex> lock(cache_mutex());
      result_cache()[todo[i]->id()] = r;
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kWorkers; t++) threads.emplace_back(worker);
  for (auto& t : threads) t.join();
  std::vector<Result> out;
  std::lock_guard<std::mutex> lock(cache_mutex());
  for (const Case* c : cases) out.push_back(result_cache().at(c->id()));
  return out;
}

// "unsupported op 'ArgMax'" -> "unsupported op"; the report counts skips by this kind.
std::string skip_kind(const std::string& reason) {
  for (const char* k :
       {"unsupported op", "unsupported dtype", "non-tensor value", "known unsupported variant"})
    if (reason.rfind(k, 0) == 0) return k;
  return "other";
}

std::string md_escape(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|')
      out += "\\|";
    else if (ch == '\n')
      out += ' ';
    else
      out += ch;
  }
  return out;
}

std::string report_markdown(const std::vector<Case>& cases, const std::vector<Result>& results) {
  int ran = 0, passed = 0, failed = 0, skipped = 0;
  std::map<std::string, int> skip_kinds;
  std::map<std::string, int> unsupported_ops;
  struct FamilyCount {
    int ran = 0, passed = 0, skipped = 0;
  };
  std::map<std::string, FamilyCount> fam;
  for (size_t i = 0; i < cases.size(); i++) {
    const Result& r = results[i];
    FamilyCount& f = fam[cases[i].family];
    if (r.status == Status::Skip) {
      skipped++, f.skipped++;
      skip_kinds[skip_kind(r.detail)]++;
      if (skip_kind(r.detail) == "unsupported op") unsupported_ops[cases[i].family]++;
    } else {
      ran++, f.ran++;
      if (r.status == Status::Pass)
        passed++, f.passed++;
      else
        failed++;
    }
  }
  std::ostringstream os;
  os << "# ONNX node tests\n\n"
     << "Generated by `tests/conformance/onnx_node_test.cc` (test `OnnxNodeReport.AllCases`); do "
        "not edit by hand. Regenerate with\n`TLM_WRITE_CONFORMANCE_REPORT=1 "
        "build/tlm_conformance_tests --gtest_filter='OnnxNodeReport.*'`.\n\n"
     << "Every test case of the ONNX 1.12 test data (`" << data_root()
     << "`: `node`, `pytorch-converted`, `pytorch-operator`, `simple`) whose operators are all in "
        "tlm's "
        "table runs through the whole pipeline: `import_onnx_file` -> `prepare_graph` -> "
        "`partition_graph` -> `compile_model` (Halide, default schedule) -> `run`, on every "
        "`test_data_set_*`.\n\n"
     << "Tolerance: a float output element matches when `|actual - expected| <= " << kAtol << " + "
     << kRtol
     << " * |expected|` (NaN matches NaN, an infinity the same infinity); int64 and bool "
        "outputs must be equal. Shapes and dtypes must be equal.\n\n"
     << "What the runner changes in a model before import: graph inputs feeding an operand that "
        "tlm's IR holds as an attribute (those for which the importer's "
        "`onnx_input_needs_constant` is true: Reshape/Expand shape, Slice starts/ends/axes/steps, "
        "Squeeze/Unsqueeze/ReduceX axes, Split sizes, Clip bounds, ...) become initializers "
        "holding the test's values (tlm compiles for "
        "static shapes); models below opset "
     << kMinOpset
     << " (the importer's range starts there) "
        "are upgraded with the ONNX project's own version converter (after ONNX shape "
        "inference, as `onnx.version_converter` does). The detail column says where this "
        "happened.\n\n"
     << "A case is skipped before import for an operator outside tlm's table, a dtype tlm has "
        "no (tlm has float32, int64, bool; int32 is widened to int64 by the importer) or a "
        "non-tensor value; a user error raised by the "
        "pipeline skips a case only if it is on the runner's commented list of known "
        "unsupported variants, otherwise the case fails.\n\n"
     << "## Summary\n\n"
     << "| | cases |\n|---|---|\n"
     << "| total | " << cases.size() << " |\n"
     << "| ran | " << ran << " |\n"
     << "| RUN-PASS | " << passed << " |\n"
     << "| RUN-FAIL | " << failed << " |\n"
     << "| SKIP | " << skipped << " |\n";
  for (const auto& [k, n] : skip_kinds) os << "| SKIP: " << k << " | " << n << " |\n";
  os << "\n## Per operator family\n\n"
     << "A case belongs to the operator it is about (the anchor, else reduction, else "
        "elementwise, else data-movement op of its model). `floor`: how many must run.\n\n"
     << "| family | ran | passed | skipped | floor |\n|---|---|---|---|---|\n";
  for (const Family& f : kFamilies) {
    const FamilyCount& c = fam[f.op];
    os << "| " << f.op << " | " << c.ran << " | " << c.passed << " | " << c.skipped << " | "
       << f.min_ran << " |\n";
  }
  os << "\nUnsupported operators (cases skipped): ";
  bool first = true;
  for (const auto& [op, n] : unsupported_ops) {
    os << (first ? "" : ", ") << op << " (" << n << ")";
    first = false;
  }
  os << ".\n";
  if (failed) {
    os << "\n## Failures\n\n| case | detail | diagnosis |\n|---|---|---|\n";
    for (size_t i = 0; i < cases.size(); i++) {
      if (results[i].status != Status::Fail) continue;
      const FailureNote* note = find_failure_note(cases[i].id());
      os << "| " << cases[i].id() << " | " << md_escape(results[i].detail) << " | "
         << (note ? std::string(note->owner) + ": " + note->repro : "") << " |\n";
    }
  }
  os << "\n## All cases\n\n| case | family | status | detail |\n|---|---|---|---|\n";
  for (size_t i = 0; i < cases.size(); i++)
    os << "| " << cases[i].id() << " | " << cases[i].family << " | "
       << status_name(results[i].status) << " | " << md_escape(results[i].detail) << " |\n";
  return os.str();
}

void PrintTo(const Family& f, std::ostream* os) { *os << f.op; }

class OnnxNodeFamily : public ::testing::TestWithParam<Family> {};

TEST_P(OnnxNodeFamily, MatchesExpectedOutputs) {
  const Family& f = GetParam();
  std::vector<const Case*> cases;
  for (const Case& c : all_cases())
    if (c.family == f.op) cases.push_back(&c);
  std::vector<Result> results = run_cases(cases);
  int ran = 0;
  for (size_t i = 0; i < cases.size(); i++) {
    const Result& r = results[i];
    if (r.status == Status::Skip) {
      std::printf("  SKIP %s: %s\n", cases[i]->id().c_str(), r.detail.c_str());
      continue;
    }
    ran++;
    EXPECT_STREQ(status_name(r.status), "RUN-PASS") << cases[i]->id() << ": " << r.detail;
  }
  EXPECT_GE(ran, f.min_ran) << "fewer " << f.op << " cases ran than the floor in kFamilies";
}

INSTANTIATE_TEST_SUITE_P(Onnx, OnnxNodeFamily, ::testing::ValuesIn(kFamilies),
                         [](const ::testing::TestParamInfo<Family>& info) {
                           return std::string(info.param.op);
                         });

TEST(OnnxNodeReport, AllCases) {
  const std::vector<Case>& cases = all_cases();
  ASSERT_GT(cases.size(), 1000u) << "ONNX test data missing under " << data_root()
                                 << " (Debian package libonnx-testdata)";
  // Every operator tlm supports has a family row, so its floor is checked.
  std::set<std::string> rows;
  for (const Family& f : kFamilies) rows.insert(f.op);
  // ... except the ops tlm's own passes make, which no ONNX file contains and the importer
  // refuses (ConvNchwc: graph/passes.h block_channels).
  const std::set<std::string> internal = {"ConvNchwc"};
  for (int i = 0; i < kOpCount; i++)
    EXPECT_TRUE(rows.count(op_name((Op)i)) || internal.count(op_name((Op)i))) << op_name((Op)i);
  for (const auto& op : kImporterResolved) EXPECT_TRUE(rows.count(op)) << op;
  // Every known-unsupported entry names an existing case (a renamed case must not linger).
  std::set<std::string> ids;
  for (const Case& c : cases) ids.insert(c.id());
  for (const auto& k : kKnownUnsupported) EXPECT_TRUE(ids.count(k.id)) << k.id;
  for (const auto& n : kFailureNotes) EXPECT_TRUE(ids.count(n.id)) << n.id;

  std::vector<const Case*> ptrs;
  for (const Case& c : cases) ptrs.push_back(&c);
  std::vector<Result> results = run_cases(ptrs);

  const char* write = std::getenv("TLM_WRITE_CONFORMANCE_REPORT");
  fs::path out = write && std::string(write) == "1"
                     ? fs::path(TLM_SOURCE_DIR) / "docs" / "onnx_node_tests.md"
                     : fs::path(TLM_BINARY_DIR) / "onnx_node_tests.md";
  std::ofstream(out) << report_markdown(cases, results);
  std::printf("report written to %s\n", out.string().c_str());

  for (size_t i = 0; i < cases.size(); i++)
    EXPECT_STRNE(status_name(results[i].status), "RUN-FAIL")
        << cases[i].id() << ": " << results[i].detail;
}

}  // namespace
}  // namespace tlm

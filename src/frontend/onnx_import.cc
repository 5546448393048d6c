// Model-level import: parse and validate the ModelProto (opset of the default domain, graph
// inputs with static shapes, initializers, names), then walk the nodes in order, handing each to
// its converter row (onnx_node.h), and finally mark the graph outputs and drop dead values.
// Every failure is a UserError prefixed with the model's name; exceptions from protobuf or the
// C++ library (bad_alloc, length_error, ...) are turned into UserErrors too, so hostile files
// end in one message, never a crash.
#include "frontend/onnx_import.h"

#include <fstream>
#include <set>
#include <sstream>

#include "frontend/onnx_node.h"
#include "frontend/tensor_proto.h"

namespace tlm {
namespace {

using frontend::NodeContext;
using frontend::OnnxOpRow;

constexpr int64_t kMinOpset = 11, kMaxOpset = 17;

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

int default_opset(const onnx::ModelProto& m) {
  bool found = false;
  int64_t version = 0;
  for (const onnx::OperatorSetIdProto& o : m.opset_import()) {
    if (!is_default_domain(o.domain())) continue;
    TLM_USER_CHECK(!found || version == o.version())
        << "the model imports two different opsets of the default domain";
    found = true;
    version = o.version();
  }
  TLM_USER_CHECK(found) << "the model imports no opset of the default ONNX domain";
  TLM_USER_CHECK(version >= kMinOpset && version <= kMaxOpset)
      << "opset " << version << " of the default ONNX domain is not supported (tlm imports opsets "
      << kMinOpset << " to " << kMaxOpset
      << "; convert the model with onnx.version_converter.convert_version)";
  return (int)version;
}

// The symbolic dimension names used by the graph inputs (for the message about a stray --dim).
std::set<std::string> dim_params(const onnx::GraphProto& gp) {
  std::set<std::string> names;
  for (const onnx::ValueInfoProto& vi : gp.input())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape())
      for (const auto& dim : vi.type().tensor_type().shape().dim())
        if (dim.has_dim_param() && !dim.dim_param().empty()) names.insert(dim.dim_param());
  return names;
}

// A runtime graph input with its static shape; symbolic dimensions take their value from opts.
ValueId add_graph_input(Graph& g, const onnx::ValueInfoProto& vi, const ImportOptions& opts) {
  const std::string& name = vi.name();
  TLM_USER_CHECK(!name.empty()) << "a graph input has no name";
  TLM_USER_CHECK(vi.type().has_tensor_type())
      << "input '" << name
      << "' is not a tensor (sequence, map, optional and sparse inputs are not supported)";
  const onnx::TypeProto::Tensor& tt = vi.type().tensor_type();
  DType dtype;
  TLM_USER_CHECK(dtype_from_onnx(tt.elem_type(), &dtype))
      << "input '" << name << "' has element type " << onnx_dtype_name(tt.elem_type())
      << "; tlm supports FLOAT, INT64, INT32 (read as int64) and BOOL";
  TLM_USER_CHECK(tt.has_shape()) << "input '" << name
                                 << "' has no shape (its rank is unknown); tlm needs static shapes";
  Shape shape;
  for (int d = 0; d < tt.shape().dim_size(); d++) {
    const auto& dim = tt.shape().dim(d);
    int64_t v;
    if (dim.has_dim_value()) {
      v = dim.dim_value();
    } else if (dim.has_dim_param() && !dim.dim_param().empty()) {
      auto it = opts.dims.find(dim.dim_param());
      TLM_USER_CHECK(it != opts.dims.end())
          << "input '" << name << "' dimension " << d << " is dynamic ('" << dim.dim_param()
          << "'); give it a value with --dim " << dim.dim_param() << "=N";
      v = it->second;
      TLM_USER_CHECK(v > 0) << "--dim " << it->first << "=" << v << ": the value must be positive";
    } else {
      TLM_USER_ERROR() << "input '" << name << "' dimension " << d
                       << " is dynamic and has no name to give it a value by; tlm needs static "
                          "shapes (re-export the model with a fixed size)";
    }
    TLM_USER_CHECK(v != 0) << "input '" << name << "' dimension " << d
                           << " is 0; zero-size tensors are not supported";
    TLM_USER_CHECK(v > 0) << "input '" << name << "' dimension " << d << " is negative (" << v
                          << ")";
    shape.push_back(v);
  }
  checked_numel(shape, "input '" + name + "'");
  return g.add_input(name, dtype, shape);
}

std::string node_name(const onnx::NodeProto& np, int index) {
  return np.name().empty() ? np.op_type() + "_" + std::to_string(index) : np.name();
}

std::string node_where(const onnx::NodeProto& np, int index) {
  return "node '" + node_name(np, index) + "' (op '" + np.op_type() + "'): ";
}

// Rejects foreign domains and unknown operators before converting anything, so the user learns
// about every unsupported operator at once instead of after an unrelated error further down.
void check_operators(const onnx::GraphProto& gp) {
  std::set<std::string> unknown;
  int first = -1;
  for (int i = 0; i < gp.node_size(); i++) {
    const onnx::NodeProto& np = gp.node(i);
    TLM_USER_CHECK(is_default_domain(np.domain()))
        << node_where(np, i) << "domain '" << np.domain()
        << "' is not supported (tlm imports the default ONNX domain only)";
    if (frontend::find_op_row(np.op_type())) continue;
    if (first < 0) first = i;
    unknown.insert(np.op_type());
  }
  if (first < 0) return;
  const onnx::NodeProto& np = gp.node(first);
  std::ostringstream others;
  for (const std::string& op : unknown)
    if (op != np.op_type()) others << (others.tellp() > 0 ? ", " : "") << op;
  TLM_USER_ERROR() << node_where(np, first) << "unsupported operator"
                   << (others.tellp() > 0 ? " (also unsupported: " + others.str() + ")" : "");
}

void convert_node(Graph& g, frontend::Scope& scope, const onnx::NodeProto& np, int index,
                  int opset) {
  const OnnxOpRow& row = *frontend::find_op_row(np.op_type());
  const std::string where = node_where(np, index);
  TLM_USER_CHECK(np.input_size() >= row.min_inputs && np.input_size() <= row.max_inputs)
      << where << "has " << np.input_size() << " inputs; expected " << row.min_inputs
      << (row.max_inputs == frontend::kVariadic ? " or more"
                                                : " to " + std::to_string(row.max_inputs));
  TLM_USER_CHECK(np.output_size() >= 1 && np.output_size() <= row.max_outputs)
      << where << "has " << np.output_size() << " outputs; expected 1"
      << (row.max_outputs > 1 ? " or more" : "");
  NodeContext ctx(g, scope, np, row, node_name(np, index), opset);
  row.convert(ctx);
  TLM_CHECK(ctx.all_outputs_handled()) << where << "the converter left an output unbound";
}

Graph import_model(const onnx::ModelProto& model, const ImportOptions& opts) {
  TLM_USER_CHECK(model.has_graph()) << "the model has no graph";
  const int opset = default_opset(model);
  const onnx::GraphProto& gp = model.graph();
  TLM_USER_CHECK(gp.node_size() > 0) << "the graph has no nodes";
  TLM_USER_CHECK(gp.output_size() > 0) << "the graph has no outputs";
  TLM_USER_CHECK(gp.sparse_initializer_size() == 0) << "sparse initializers are not supported";
  check_operators(gp);

  Graph g;
  g.name = gp.name();
  frontend::Scope scope(g);
  for (const onnx::TensorProto& init : gp.initializer()) scope.add_initializer(init);
  for (const onnx::ValueInfoProto& vi : gp.input()) {
    // An input with an initializer is a constant with an overridable default; tlm fixes it.
    if (scope.is_initializer(vi.name())) continue;
    ValueId v = add_graph_input(g, vi, opts);
    scope.define(vi.name(), v, "graph input: ");
  }
  // Strict configuration: a --dim that names no dimension is a mistake, not something to ignore.
  const std::set<std::string> params = dim_params(gp);
  for (const auto& [key, value] : opts.dims) {
    if (params.count(key)) continue;
    std::ostringstream known;
    for (const std::string& p : params) known << (known.tellp() > 0 ? ", " : "") << p;
    TLM_USER_ERROR() << "--dim " << key << "=" << value
                     << ": no input dimension of the model is named '" << key
                     << "' (named: " << (params.empty() ? std::string("none") : known.str()) << ")";
  }

  for (int i = 0; i < gp.node_size(); i++) convert_node(g, scope, gp.node(i), i, opset);

  for (const onnx::ValueInfoProto& out : gp.output()) {
    TLM_USER_CHECK(!out.name().empty()) << "a graph output has no name";
    g.mark_output(scope.resolve(out.name(), "graph output '" + out.name() + "': "));
  }
  g.remove_dead();
  return g;
}

}  // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& what,
                        const ImportOptions& opts) {
  onnx::ModelProto model;
  bool parsed = false;
  try {
    parsed = model.ParseFromString(bytes);
  } catch (const std::exception& e) {
    TLM_USER_ERROR() << what << ": cannot parse the ONNX model: " << e.what();
  }
  TLM_USER_CHECK(parsed) << what
                         << ": not an ONNX model (protobuf parsing failed: the file is truncated, "
                            "corrupt or of another format)";
  try {
    return import_model(model, opts);
  } catch (const UserError& e) {
    throw UserError(what + ": " + e.what());
  } catch (const InternalError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw UserError(what +
                    ": out of memory while importing (does the model declare huge tensors?)");
  } catch (const std::exception& e) {
    throw UserError(what + ": malformed model: " + e.what());
  }
}

Graph import_onnx_file(const std::string& path, const ImportOptions& opts) {
  std::ifstream in(path, std::ios::binary);
  TLM_USER_CHECK(in.good()) << "cannot open model file '" << path << "'";
  std::ostringstream buf;
  buf << in.rdbuf();
  TLM_USER_CHECK(!in.bad()) << "cannot read model file '" << path << "'";
  return import_onnx_bytes(buf.str(), path, opts);
}

bool onnx_op_supported(const std::string& op_type) {
  return frontend::find_op_row(op_type) != nullptr;
}

bool onnx_input_needs_constant(const std::string& op_type, int index) {
  const OnnxOpRow* row = frontend::find_op_row(op_type);
  return row && index >= 0 && index < 32 && (row->const_inputs >> index & 1u);
}

}  // namespace tlm

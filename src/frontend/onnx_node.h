// The per-node toolkit of the ONNX importer (private to src/frontend/).
//
//   Scope        ONNX value names -> graph values; initializers become constants on first use;
//                names of outputs tlm cannot produce (Dropout's mask, ...) are "forbidden" and
//                fail with their reason when something reads them
//   NodeContext  one ONNX node being converted: validated attribute getters, inputs resolved to
//                values, constant inputs read as tensors ("dynamic ... not supported" otherwise),
//                axis normalisation, overflow-checked arithmetic, and add()/set_output() to emit
//                canonical nodes (add() refuses to fold constants into huge tensors)
//   OnnxOpRow    one row per ONNX operator: converter, input/output arity, which inputs must be
//                constant. The rows live in onnx_ops_{nn,math,shape}.cc.
//
// Every UserError raised here starts with "node 'NAME' (op 'TYPE'): " (TLM_ONNX_ERROR).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"

#define TLM_ONNX_ERROR(ctx) TLM_USER_ERROR() << (ctx).where()

namespace tlm {
namespace frontend {

// Constants created by folding (or materialised by the importer: ConstantOfShape) are capped at
// this many elements unless their inputs are already as large.
constexpr int64_t kMaxFoldElements = int64_t(1) << 26;

class Scope {
 public:
  explicit Scope(Graph& g) : g_(g) {}
  // Registers an initializer (converted lazily, on first resolve). Duplicates are a UserError.
  void add_initializer(const onnx::TensorProto& t);
  bool is_initializer(const std::string& name) const { return initializers_.count(name) > 0; }
  // Binds an ONNX name; a name bound twice is a UserError prefixed by `where`.
  void define(const std::string& name, ValueId v, const std::string& where);
  // Marks a name as produced but unusable; reading it fails with `why`.
  void forbid(const std::string& name, const std::string& why, const std::string& where);
  // The value bound to `name`; UserError prefixed by `where` if undefined or forbidden.
  ValueId resolve(const std::string& name, const std::string& where);

 private:
  bool bound(const std::string& name) const;

  Graph& g_;
  std::unordered_map<std::string, ValueId> values_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, std::string> forbidden_;
};

struct OnnxOpRow;

class NodeContext {
 public:
  NodeContext(Graph& g, Scope& scope, const onnx::NodeProto& proto, const OnnxOpRow& row,
              std::string name, int opset);

  Graph& g;
  const onnx::NodeProto& proto;
  const std::string name;  // the node's name, or "<op>_<index>" when the model gives none
  const int opset;         // of the default domain

  std::string where() const;  // "node 'NAME' (op 'TYPE'): "

  // ---- inputs ----
  bool has_input(int i) const;  // present and not the empty name
  ValueId input(int i);         // a required input
  ValueId opt_input(int i);     // kNoValue when absent
  const Value& value(ValueId v) const { return g.value(v); }
  const Shape& shape(ValueId v) const { return g.value(v).shape; }
  int64_t rank(ValueId v) const { return (int64_t)g.value(v).shape.size(); }
  // Input i as a constant tensor; UserError "dynamic WHAT not supported" if computed at runtime.
  // Only inputs marked in the op's row may be read this way.
  const Tensor& const_input(int i, const char* what);
  // An integer (int64/int32) constant input as values, at most `max_len` of them.
  std::vector<int64_t> const_ints(int i, const char* what, int64_t max_len = 64);

  // ---- attributes (a present attribute of the wrong type is a UserError) ----
  bool has_attr(const char* attr) const { return find_attr(attr) != nullptr; }
  int64_t attr_int(const char* attr, int64_t def) const;
  int64_t attr_int_required(const char* attr) const;
  float attr_float(const char* attr, float def) const;
  std::string attr_string(const char* attr, const std::string& def) const;
  std::vector<int64_t> attr_ints(const char* attr, std::vector<int64_t> def) const;
  std::vector<float> attr_floats(const char* attr, std::vector<float> def) const;
  const onnx::TensorProto* attr_tensor(const char* attr) const;  // nullptr when absent
  // An int attribute that must be 0 or 1.
  int64_t attr_flag(const char* attr, int64_t def) const;
  [[noreturn]] void unsupported_attr(const char* attr, const std::string& value) const;

  // ---- axes and arithmetic ----
  // a in [-rank, rank) -> [0, rank); `what` names the attribute or input in the message.
  int64_t axis(int64_t a, int64_t rank, const char* what) const;
  // Each normalised, sorted, duplicates rejected.
  std::vector<int64_t> axes(const std::vector<int64_t>& a, int64_t rank, const char* what) const;
  int64_t mul(int64_t a, int64_t b) const;  // UserError on int64 overflow
  int64_t add_i(int64_t a, int64_t b) const;
  // Checks that a list attribute has `n` entries, each within [lo, hi].
  void check_list(const char* what, const std::vector<int64_t>& v, size_t n, int64_t lo,
                  int64_t hi) const;

  // ---- emitting ----
  int num_outputs() const { return proto.output_size(); }
  bool has_output(int i) const;
  // Graph::add with the node's name (plus "/suffix" for helper nodes of an expansion); trailing
  // absent optional inputs are dropped.
  ValueId add(Op op, std::vector<ValueId> inputs, Attrs attrs = {}, const std::string& suffix = "");
  ValueId add_constant(Tensor t, const std::string& suffix);
  // Binds output i (ignored when the model leaves it unnamed). A value created by this node
  // takes the ONNX output name, so listings and graph outputs read like the model.
  void set_output(int i, ValueId v);
  // Output i exists in ONNX but not in tlm: reading it later fails with `why`.
  void forbid_output(int i, const std::string& why);
  // True once every named output was bound or forbidden.
  bool all_outputs_handled() const;

 private:
  void check_fold_size(const Node& probe);
  const onnx::AttributeProto* find_attr(const char* attr) const;
  const onnx::AttributeProto& typed_attr(const char* attr, int type) const;

  Scope& scope_;
  const OnnxOpRow& row_;
  std::unordered_set<ValueId> created_;  // values made by add()/add_constant() of this node
  std::vector<bool> handled_;
};

using Converter = void (*)(NodeContext&);

constexpr int kVariadic = 1 << 20;

struct OnnxOpRow {
  const char* op_type;
  Converter convert;
  int min_inputs;
  int max_inputs;         // kVariadic: no limit
  int max_outputs;        // kVariadic: no limit
  uint32_t const_inputs;  // bit i set: input i must be constant
};

// The rows, one list per operator family.
const std::vector<OnnxOpRow>& nn_op_rows();     // onnx_ops_nn.cc: conv, pool, gemm, norms, softmax
const std::vector<OnnxOpRow>& math_op_rows();   // onnx_ops_math.cc: elementwise, reductions, cast
const std::vector<OnnxOpRow>& shape_op_rows();  // onnx_ops_shape.cc: data movement, constants

// All rows by op_type; nullptr if unknown.
const OnnxOpRow* find_op_row(const std::string& op_type);

}  // namespace frontend
}  // namespace tlm

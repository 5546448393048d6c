// From a fused group to a standalone, canonical Subgraph (the paper's task, §4.1).
//   make_subgraph()  copies the group's nodes into a fresh Graph (directly, not via Graph::add,
//                    which would re-fold and rename), with canonical names: activations in0..,
//                    weights (constants with more than one element) w0.., inline scalar
//                    constants c0.., nodes n0...
//   canonical_key()  the text that decides task identity: inputs (kind, dtype, shape), then one
//                    line per node (op, inputs by position, sorted attributes, output type).
//                    Scalar constants are printed by value (hexfloat: exact); weights are not.
//   subgraph_kind()  a short readable name: the anchor's name (conv2d, dense, batch_matmul,
//                    max_pool2d, softmax, ...) followed by the epilogue ops (conv2d_add_relu);
//                    prologue ops are not named. Anchorless groups are "elemwise_<ops>" (any
//                    Elemwise op) or "injective_<ops>". At most 4 ops are listed, then "_etc".
#include <cstdio>
#include <sstream>
#include <unordered_map>

#include "partition/partition.h"

namespace tlm {
namespace {

// Snake-case name of every op, as it appears in kinds.
struct KindRow {
  Op op;
  const char* name;
};

constexpr KindRow kKindRows[] = {
    {Op::Conv, "conv"},
    {Op::ConvTranspose, "conv_transpose"},
    {Op::ConvNchwc, "conv_nchwc"},
    {Op::Gemm, "gemm"},
    {Op::MatMul, "matmul"},
    {Op::MaxPool, "max_pool"},
    {Op::AveragePool, "avg_pool"},
    {Op::GlobalAveragePool, "global_avg_pool"},
    {Op::ReduceMean, "reduce_mean"},
    {Op::ReduceSum, "reduce_sum"},
    {Op::Softmax, "softmax"},
    {Op::LayerNormalization, "layer_norm"},
    {Op::Add, "add"},
    {Op::Sub, "sub"},
    {Op::Mul, "mul"},
    {Op::Div, "div"},
    {Op::Pow, "pow"},
    {Op::Max, "max"},
    {Op::Min, "min"},
    {Op::Equal, "equal"},
    {Op::Less, "less"},
    {Op::Greater, "greater"},
    {Op::Where, "where"},
    {Op::Sqrt, "sqrt"},
    {Op::Erf, "erf"},
    {Op::Exp, "exp"},
    {Op::Log, "log"},
    {Op::Tanh, "tanh"},
    {Op::Sigmoid, "sigmoid"},
    {Op::Relu, "relu"},
    {Op::Neg, "neg"},
    {Op::Abs, "abs"},
    {Op::Reciprocal, "reciprocal"},
    {Op::Clip, "clip"},
    {Op::HardSigmoid, "hard_sigmoid"},
    {Op::HardSwish, "hard_swish"},
    {Op::LeakyRelu, "leaky_relu"},
    {Op::Cast, "cast"},
    {Op::BatchNormalization, "batch_norm"},
    {Op::Reshape, "reshape"},
    {Op::Flatten, "flatten"},
    {Op::Transpose, "transpose"},
    {Op::Squeeze, "squeeze"},
    {Op::Unsqueeze, "unsqueeze"},
    {Op::Concat, "concat"},
    {Op::Slice, "slice"},
    {Op::Gather, "gather"},
    {Op::Expand, "expand"},
};
static_assert(sizeof(kKindRows) / sizeof(kKindRows[0]) == kOpCount, "one row per op");

constexpr bool rows_in_op_order() {
  for (int i = 0; i < kOpCount; i++)
    if (kKindRows[i].op != (Op)i) return false;
  return true;
}
static_assert(rows_in_op_order(), "kKindRows must follow TLM_OP_LIST order");

constexpr int kMaxNamedOps = 4;

const char* snake_name(Op op) { return kKindRows[(int)op].name; }

const Shape& input_shape(const Graph& g, const Node& n, size_t i) {
  static const Shape kNone;
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return kNone;
  return g.value(n.inputs[i]).shape;
}

// "2d" for a rank-4 NCHW tensor; empty when the rank has no spatial dims.
std::string spatial(const Shape& x) {
  return x.size() >= 3 ? std::to_string(x.size() - 2) + "d" : "";
}

// The anchor's name: the snake-case op name refined by what a reader needs to tell tasks apart.
//   Conv: conv<d>d, depthwise_conv<d>d when group > 1 and group == C_in, group_conv<d>d for
//   other group > 1. ConvTranspose: conv<d>d_transpose, group_conv<d>d_transpose.
//   ConvNchwc: conv2d_nchwc, depthwise_conv2d_nchwc. Gemm: dense. MatMul: batch_matmul when the
//   right operand has batch dims (rank > 2, e.g. attention), dense otherwise (x @ W, whatever the
//   rank of x). Pools get <d>d.
std::string anchor_name(const Graph& g, const Node& n) {
  const Shape& x = input_shape(g, n, 0);
  switch (n.op) {
    case Op::Conv:
    case Op::ConvTranspose: {
      int64_t group = n.i("group", 1);
      std::string prefix;
      if (group > 1)
        prefix = (n.op == Op::Conv && x.size() >= 2 && group == x[1]) ? "depthwise_" : "group_";
      return prefix + "conv" + spatial(x) + (n.op == Op::ConvTranspose ? "_transpose" : "");
    }
    case Op::ConvNchwc:
      return std::string(n.i("group", 1) > 1 ? "depthwise_" : "") + "conv2d_nchwc";
    case Op::Gemm:
      return "dense";
    case Op::MatMul:
      return input_shape(g, n, 1).size() > 2 ? "batch_matmul" : "dense";
    case Op::MaxPool:
    case Op::AveragePool:
    case Op::GlobalAveragePool:
      return snake_name(n.op) + spatial(x);
    default:
      return snake_name(n.op);
  }
}

// Appends "_op" for each op, at most kMaxNamedOps of them, then "_etc".
void append_ops(std::string* kind, const std::vector<Op>& ops) {
  for (size_t i = 0; i < ops.size(); i++) {
    if ((int)i == kMaxNamedOps) {
      *kind += "_etc";
      break;
    }
    *kind += std::string("_") + snake_name(ops[i]);
  }
}

std::string subgraph_kind(const Graph& sg) {
  int anchor = -1;
  for (size_t i = 0; i < sg.nodes.size() && anchor < 0; i++) {
    OpPattern p = op_pattern(sg.nodes[i].op);
    if (p == OpPattern::Anchor || p == OpPattern::Reduce) anchor = (int)i;
  }
  std::vector<Op> ops;
  std::string kind;
  if (anchor >= 0) {
    kind = anchor_name(sg, sg.nodes[anchor]);
    for (size_t i = anchor + 1; i < sg.nodes.size(); i++) ops.push_back(sg.nodes[i].op);
  } else {
    kind = "injective";
    for (const Node& n : sg.nodes) {
      ops.push_back(n.op);
      if (op_pattern(n.op) == OpPattern::Elemwise) kind = "elemwise";
    }
  }
  append_ops(&kind, ops);
  return kind;
}

std::string float_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%a", v);
  return buf;
}

std::string attr_text(const AttrValue& a) {
  struct Printer {
    std::string operator()(int64_t v) const { return std::to_string(v); }
    std::string operator()(float v) const { return float_text(v); }
    std::string operator()(const std::string& v) const {
      std::string s = "\"";
      for (char c : v) {
        if (c == '"' || c == '\\') s += '\\';
        s += c;
      }
      return s + "\"";
    }
    std::string operator()(const std::vector<int64_t>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + std::to_string(v[i]);
      return s + "]";
    }
    std::string operator()(const std::vector<float>& v) const {
      std::string s = "[";
      for (size_t i = 0; i < v.size(); i++) s += (i ? "," : "") + float_text(v[i]);
      return s + "]";
    }
  };
  return std::visit(Printer{}, a);
}

std::string type_text(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

// An inline constant, by value: "f32[]=0x1p+3".
std::string constant_text(const Value& v) {
  std::string s = type_text(v) + "=";
  const Tensor& t = *v.data;
  for (int64_t i = 0; i < t.numel(); i++) {
    if (i) s += ",";
    s += t.dtype() == DType::F32 ? float_text(t.get_f(i)) : std::to_string(t.get_i(i));
  }
  return s;
}

std::string canonical_key(const Graph& sg) {
  std::ostringstream os;
  std::vector<std::string> ref(sg.values.size());
  for (size_t i = 0; i < sg.inputs.size(); i++) {
    const Value& v = sg.value(sg.inputs[i]);
    ref[sg.inputs[i]] = v.name;  // in<k> / w<k>: position and role
    os << v.name << ":" << type_text(v) << "\n";
  }
  for (size_t i = 0; i < sg.values.size(); i++)
    if (sg.values[i].is_constant()) ref[i] = constant_text(sg.values[i]);
  for (size_t k = 0; k < sg.nodes.size(); k++) {
    const Node& n = sg.nodes[k];
    os << "%" << k << " = " << op_name(n.op) << "(";
    for (size_t i = 0; i < n.inputs.size(); i++)
      os << (i ? ", " : "") << (n.inputs[i] == kNoValue ? std::string("_") : ref[n.inputs[i]]);
    os << ")";
    for (const auto& [name, value] : n.attrs) os << " " << name << "=" << attr_text(value);
    os << " -> " << type_text(sg.value(n.outputs[0])) << "\n";
    ref[n.outputs[0]] = "%" + std::to_string(k);
  }
  for (ValueId o : sg.outputs) os << "out " << ref[o] << "\n";
  return os.str();
}

}  // namespace

Subgraph make_subgraph(const Graph& g, const FusedGroup& group, std::vector<ValueId>* inputs) {
  TLM_CHECK(!group.nodes.empty()) << "empty fused group";
  std::unordered_map<ValueId, ValueId> local;  // model value -> subgraph value
  for (int i : group.nodes) {
    TLM_CHECK(i >= 0 && i < (int)g.nodes.size()) << "bad node index " << i;
    local[g.nodes[i].outputs.at(0)] = kNoValue;  // produced inside, mapped below
  }

  // External inputs in first-use order: activations, then weights.
  std::vector<ValueId> acts, weights;
  for (int i : group.nodes)
    for (ValueId in : g.nodes[i].inputs) {
      if (in == kNoValue || local.count(in)) continue;
      const Value& v = g.value(in);
      if (v.is_constant() && v.data->numel() <= 1) continue;  // stays inline
      local[in] = kNoValue;
      (v.is_constant() ? weights : acts).push_back(in);
    }

  Subgraph sub;
  Graph& sg = sub.graph;
  auto add_value = [&](ValueId model, std::string name) {
    Value v;
    v.name = std::move(name);
    v.dtype = g.value(model).dtype;
    v.shape = g.value(model).shape;
    sg.values.push_back(std::move(v));
    local[model] = (ValueId)sg.values.size() - 1;
    return local[model];
  };
  for (size_t k = 0; k < acts.size(); k++)
    sg.inputs.push_back(add_value(acts[k], "in" + std::to_string(k)));
  for (size_t k = 0; k < weights.size(); k++)
    sg.inputs.push_back(add_value(weights[k], "w" + std::to_string(k)));
  *inputs = acts;
  inputs->insert(inputs->end(), weights.begin(), weights.end());

  int n_consts = 0;
  for (size_t k = 0; k < group.nodes.size(); k++) {
    const Node& src = g.nodes[group.nodes[k]];
    Node n;
    n.op = src.op;
    n.name = "n" + std::to_string(k);
    n.attrs = src.attrs;
    for (ValueId in : src.inputs) {
      if (in == kNoValue) {
        n.inputs.push_back(kNoValue);
        continue;
      }
      auto it = local.find(in);
      if (it == local.end()) {  // an inline scalar constant, first use
        add_value(in, "c" + std::to_string(n_consts++));
        sg.values.back().data = g.value(in).data;
        it = local.find(in);
      }
      TLM_CHECK(it->second != kNoValue) << "node " << src.name << " reads a value of its group "
                                        << "before it is computed";
      n.inputs.push_back(it->second);
    }
    n.outputs = {add_value(src.outputs[0], n.name + ":0")};
    sg.nodes.push_back(std::move(n));
  }
  auto out = local.find(group.output);
  TLM_CHECK(out != local.end() && out->second != kNoValue) << "group output is not computed";
  sg.outputs = {out->second};

  sub.kind = subgraph_kind(sg);
  sg.name = sub.kind;
  sub.key = canonical_key(sg);
  for (const Node& n : sg.nodes) sub.flops += node_flops(sg, n);
  return sub;
}

bool is_view_subgraph(const Graph& sub) {
  if (sub.inputs.size() != 1 || sub.outputs.size() != 1 || sub.nodes.empty()) return false;
  ValueId cur = sub.inputs[0];
  for (const Node& n : sub.nodes) {
    if (n.op != Op::Reshape && n.op != Op::Flatten && n.op != Op::Squeeze && n.op != Op::Unsqueeze)
      return false;
    if (n.inputs.empty() || n.inputs[0] != cur || n.outputs.size() != 1) return false;
    for (size_t j = 1; j < n.inputs.size(); j++)  // a shape operand left as a value
      if (n.inputs[j] != kNoValue) return false;
    cur = n.outputs[0];
  }
  const Value& in = sub.value(sub.inputs[0]);
  const Value& out = sub.value(cur);
  return cur == sub.outputs[0] && in.dtype == out.dtype && numel(in.shape) == numel(out.shape);
}

}  // namespace tlm

#include "frontend/onnx_node.h"

#include <algorithm>
#include <sstream>

#include "frontend/tensor_proto.h"
#include "graph/shape_infer.h"

namespace tlm {
namespace frontend {
namespace {

using AP = onnx::AttributeProto;

std::string attr_type_name(int type) {
  if (AP::AttributeType_IsValid(type)) return AP::AttributeType_Name((AP::AttributeType)type);
  return "an unknown type";
}

// Whether an attribute with type UNDEFINED (old exporters) carries the field we want.
bool untyped_has(const AP& a, int type) {
  switch (type) {
    case AP::INT:
      return a.has_i();
    case AP::FLOAT:
      return a.has_f();
    case AP::STRING:
      return a.has_s();
    case AP::TENSOR:
      return a.has_t();
    case AP::INTS:
      return a.ints_size() > 0;
    case AP::FLOATS:
      return a.floats_size() > 0;
    default:
      return false;
  }
}

std::string ints_str(const std::vector<int64_t>& v) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < v.size(); i++) os << (i ? "," : "") << v[i];
  os << "]";
  return os.str();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Scope

bool Scope::bound(const std::string& name) const {
  return values_.count(name) || initializers_.count(name) || forbidden_.count(name);
}

void Scope::add_initializer(const onnx::TensorProto& t) {
  TLM_USER_CHECK(!t.name().empty()) << "an initializer has no name";
  TLM_USER_CHECK(!initializers_.count(t.name()))
      << "initializer '" << t.name() << "' is defined twice";
  initializers_[t.name()] = &t;
}

void Scope::define(const std::string& name, ValueId v, const std::string& where) {
  TLM_USER_CHECK(!bound(name)) << where << "value '" << name
                               << "' is defined twice (the graph is not in SSA form)";
  values_[name] = v;
}

void Scope::forbid(const std::string& name, const std::string& why, const std::string& where) {
  TLM_USER_CHECK(!bound(name)) << where << "value '" << name
                               << "' is defined twice (the graph is not in SSA form)";
  forbidden_[name] = where + why;
}

ValueId Scope::resolve(const std::string& name, const std::string& where) {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  auto f = forbidden_.find(name);
  if (f != forbidden_.end())
    TLM_USER_ERROR() << where << "reads '" << name << "', which tlm cannot produce: " << f->second;
  auto init = initializers_.find(name);
  if (init != initializers_.end()) {
    ValueId v =
        g_.add_constant(name, tensor_from_proto(*init->second, "initializer '" + name + "'"));
    values_[name] = v;
    initializers_.erase(init);
    return v;
  }
  TLM_USER_ERROR() << where << "value '" << name
                   << "' is not defined before use (no graph input, initializer or earlier node "
                      "output has that name)";
}

// ---------------------------------------------------------------------------------------------
// NodeContext: inputs

NodeContext::NodeContext(Graph& graph, Scope& scope, const onnx::NodeProto& p, const OnnxOpRow& row,
                         std::string n, int ops)
    : g(graph),
      proto(p),
      name(std::move(n)),
      opset(ops),
      scope_(scope),
      row_(row),
      handled_(p.output_size(), false) {}

std::string NodeContext::where() const {
  return "node '" + name + "' (op '" + proto.op_type() + "'): ";
}

bool NodeContext::has_input(int i) const {
  return i >= 0 && i < proto.input_size() && !proto.input(i).empty();
}

ValueId NodeContext::input(int i) {
  TLM_USER_CHECK(has_input(i)) << where() << "required input " << i << " is missing";
  return scope_.resolve(proto.input(i), where());
}

ValueId NodeContext::opt_input(int i) { return has_input(i) ? input(i) : kNoValue; }

const Tensor& NodeContext::const_input(int i, const char* what) {
  TLM_CHECK(i < 32 && (row_.const_inputs >> i & 1u))
      << proto.op_type() << " input " << i << " is read as a constant but its row does not say so";
  ValueId v = input(i);
  const Value& val = g.value(v);
  if (!val.is_constant())
    TLM_ONNX_ERROR(*this) << "dynamic " << what << " not supported: input '" << proto.input(i)
                          << "' is computed at runtime; tlm needs it to be a constant (an "
                             "initializer, or computed only from constants and shapes)";
  return *val.data;
}

std::vector<int64_t> NodeContext::const_ints(int i, const char* what, int64_t max_len) {
  const Tensor& t = const_input(i, what);
  TLM_USER_CHECK(t.dtype() == DType::I64)
      << where() << what << " (input '" << proto.input(i) << "') must be an integer tensor, not "
      << dtype_name(t.dtype());
  TLM_USER_CHECK(t.rank() <= 1) << where() << what << " (input '" << proto.input(i)
                                << "') must be a scalar or 1-D, not " << shape_str(t.shape());
  TLM_USER_CHECK(t.numel() <= max_len)
      << where() << what << " (input '" << proto.input(i) << "') has " << t.numel()
      << " entries; at most " << max_len << " are supported";
  return t.to_i64_vector();
}

// ---------------------------------------------------------------------------------------------
// NodeContext: attributes

const AP* NodeContext::find_attr(const char* attr) const {
  for (const AP& a : proto.attribute())
    if (a.name() == attr) return &a;
  return nullptr;
}

const AP& NodeContext::typed_attr(const char* attr, int type) const {
  const AP* a = find_attr(attr);
  TLM_CHECK(a != nullptr) << "typed_attr on a missing attribute";
  bool ok = a->type() == type || (a->type() == AP::UNDEFINED && untyped_has(*a, type));
  TLM_USER_CHECK(ok) << where() << "attribute '" << attr << "' must be of type "
                     << attr_type_name(type) << ", not " << attr_type_name(a->type());
  return *a;
}

int64_t NodeContext::attr_int(const char* attr, int64_t def) const {
  return has_attr(attr) ? typed_attr(attr, AP::INT).i() : def;
}

int64_t NodeContext::attr_int_required(const char* attr) const {
  TLM_USER_CHECK(has_attr(attr)) << where() << "required attribute '" << attr << "' is missing";
  return typed_attr(attr, AP::INT).i();
}

float NodeContext::attr_float(const char* attr, float def) const {
  return has_attr(attr) ? typed_attr(attr, AP::FLOAT).f() : def;
}

std::string NodeContext::attr_string(const char* attr, const std::string& def) const {
  return has_attr(attr) ? typed_attr(attr, AP::STRING).s() : def;
}

std::vector<int64_t> NodeContext::attr_ints(const char* attr, std::vector<int64_t> def) const {
  if (!has_attr(attr)) return def;
  const AP& a = typed_attr(attr, AP::INTS);
  TLM_USER_CHECK(a.ints_size() <= 4096)
      << where() << "attribute '" << attr << "' has " << a.ints_size() << " entries";
  return std::vector<int64_t>(a.ints().begin(), a.ints().end());
}

std::vector<float> NodeContext::attr_floats(const char* attr, std::vector<float> def) const {
  if (!has_attr(attr)) return def;
  const AP& a = typed_attr(attr, AP::FLOATS);
  return std::vector<float>(a.floats().begin(), a.floats().end());
}

const onnx::TensorProto* NodeContext::attr_tensor(const char* attr) const {
  return has_attr(attr) ? &typed_attr(attr, AP::TENSOR).t() : nullptr;
}

int64_t NodeContext::attr_flag(const char* attr, int64_t def) const {
  int64_t v = attr_int(attr, def);
  TLM_USER_CHECK(v == 0 || v == 1)
      << where() << "attribute '" << attr << "' must be 0 or 1, not " << v;
  return v;
}

void NodeContext::unsupported_attr(const char* attr, const std::string& value) const {
  TLM_ONNX_ERROR(*this) << "attribute " << attr << "=" << value << " is not supported";
}

// ---------------------------------------------------------------------------------------------
// NodeContext: axes and arithmetic

int64_t NodeContext::axis(int64_t a, int64_t r, const char* what) const {
  TLM_USER_CHECK(a >= -r && a < r)
      << where() << what << " = " << a << " is out of range for rank " << r;
  return a < 0 ? a + r : a;
}

std::vector<int64_t> NodeContext::axes(const std::vector<int64_t>& a, int64_t r,
                                       const char* what) const {
  std::vector<int64_t> out;
  for (int64_t x : a) out.push_back(axis(x, r, what));
  std::sort(out.begin(), out.end());
  TLM_USER_CHECK(std::adjacent_find(out.begin(), out.end()) == out.end())
      << where() << what << " " << ints_str(a) << " repeats an axis";
  return out;
}

int64_t NodeContext::mul(int64_t a, int64_t b) const {
  int64_t r;
  TLM_USER_CHECK(!__builtin_mul_overflow(a, b, &r) && r <= kMaxTensorElements &&
                 r >= -kMaxTensorElements)
      << where() << "shape arithmetic overflows (" << a << " * " << b << ")";
  return r;
}

int64_t NodeContext::add_i(int64_t a, int64_t b) const {
  int64_t r;
  TLM_USER_CHECK(!__builtin_add_overflow(a, b, &r) && r <= kMaxTensorElements &&
                 r >= -kMaxTensorElements)
      << where() << "shape arithmetic overflows (" << a << " + " << b << ")";
  return r;
}

void NodeContext::check_list(const char* what, const std::vector<int64_t>& v, size_t n, int64_t lo,
                             int64_t hi) const {
  TLM_USER_CHECK(v.size() == n) << where() << "attribute '" << what << "' has " << v.size()
                                << " entries, expected " << n;
  for (int64_t x : v)
    TLM_USER_CHECK(x >= lo && x <= hi) << where() << "attribute '" << what << "' = " << ints_str(v)
                                       << " has an entry outside [" << lo << ", " << hi << "]";
}

// ---------------------------------------------------------------------------------------------
// NodeContext: emitting

bool NodeContext::has_output(int i) const {
  return i >= 0 && i < proto.output_size() && !proto.output(i).empty();
}

// Graph::add folds a node whose inputs are all constant by evaluating it. Its output size is
// checked first (by inferring its shape on a scratch output value), so that a hostile model
// cannot make folding allocate terabytes: an outer-product MatMul or an Expand of constants may
// not produce more than kMaxFoldElements, or than its inputs hold together (a Transpose or Cast
// of a big weight is fine).
void NodeContext::check_fold_size(const Node& probe) {
  int64_t in_elements = 0;
  for (ValueId in : probe.inputs) {
    if (in == kNoValue) continue;
    if (!g.value(in).is_constant()) return;  // not folded
    in_elements += g.value(in).data->numel();
  }
  g.values.emplace_back();
  Shape out;
  try {
    infer_node_shapes(g, probe);
    out = g.values.back().shape;
  } catch (...) {
    g.values.pop_back();
    throw;
  }
  g.values.pop_back();
  const int64_t n = numel(out);  // shape inference bounds it by 2^40
  TLM_USER_CHECK(n <= std::max(kMaxFoldElements, in_elements))
      << where() << "folding this node on constant inputs would create a constant of shape "
      << shape_str(out) << " (" << n << " elements); that is too large";
}

ValueId NodeContext::add(Op op, std::vector<ValueId> inputs, Attrs attrs,
                         const std::string& suffix) {
  while (!inputs.empty() && inputs.back() == kNoValue) inputs.pop_back();
  Node probe;
  probe.op = op;
  probe.name = suffix.empty() ? name : name + "/" + suffix;
  probe.inputs = std::move(inputs);
  probe.attrs = std::move(attrs);
  probe.outputs = {(ValueId)g.values.size()};  // the scratch value check_fold_size appends
  check_fold_size(probe);
  ValueId v = g.add(op, std::move(probe.inputs), std::move(probe.attrs), probe.name);
  created_.insert(v);
  return v;
}

ValueId NodeContext::add_constant(Tensor t, const std::string& suffix) {
  ValueId v = g.add_constant(name + "/" + suffix, std::move(t));
  created_.insert(v);
  return v;
}

void NodeContext::set_output(int i, ValueId v) {
  if (i >= proto.output_size()) return;
  handled_[i] = true;
  if (!has_output(i)) return;
  scope_.define(proto.output(i), v, where());
  if (created_.count(v)) g.value(v).name = proto.output(i);
}

void NodeContext::forbid_output(int i, const std::string& why) {
  if (i >= proto.output_size()) return;
  handled_[i] = true;
  if (has_output(i)) scope_.forbid(proto.output(i), why, where());
}

bool NodeContext::all_outputs_handled() const {
  for (int i = 0; i < proto.output_size(); i++)
    if (!handled_[i] && has_output(i)) return false;
  return true;
}

// ---------------------------------------------------------------------------------------------

const OnnxOpRow* find_op_row(const std::string& op_type) {
  static const std::unordered_map<std::string, const OnnxOpRow*> table = [] {
    std::unordered_map<std::string, const OnnxOpRow*> m;
    for (const auto* rows : {&nn_op_rows(), &math_op_rows(), &shape_op_rows()})
      for (const OnnxOpRow& r : *rows) {
        TLM_CHECK(!m.count(r.op_type)) << "two rows for " << r.op_type;
        m[r.op_type] = &r;
      }
    return m;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

}  // namespace frontend
}  // namespace tlm

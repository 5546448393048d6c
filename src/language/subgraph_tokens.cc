// The subgraph part of a tensor sentence, and its inverse.
//
// Grammar (tokens separated by spaces; <type> is an optional dtype token "i64"/"bool", absent
// for f32, then the dims, or "scalar" for rank 0):
//
//   decl  := ("in<k>" | "w<k>") [<type>]      activations, then weights, in canonical order; a
//                                             declaration without a type repeats the previous
//                                             one's (DenseNet concatenates 25 equal shapes)
//          | "c<k>" <type> "=" value...        an inline constant that is not an f32 scalar
//   node  := Op ref... (attr value...)... ["->" <type>]
//   ref   := in<k> | w<k> | c<k> | n<j> (the output of node j < this one) | "_" (absent input)
//          | a number: an inline f32 scalar constant of that value (x / 8 prints "Div n6 8")
//
// The output type is printed only when it differs from the first input's (elementwise chains
// print none). Attributes come in name order, each with its kind from kAttrRows; floats print
// in the shortest decimal form that reads back to the same float, so the rebuilt key (which
// prints them exactly, in hex) is identical.
//
// subgraph_from_tokens() rebuilds a model-like graph (inputs, weights as constants, inline
// constants, the nodes through shape inference) and runs partition's own make_subgraph() on
// all of its nodes, so names, kind, key and FLOPs come from the one canonical implementation;
// the result is printed again and must give back the very same tokens.
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "graph/passes.h"
#include "graph/shape_infer.h"
#include "language/sentence.h"

namespace tlm {
namespace {

enum class AttrKind : uint8_t { Int, Float, Ints, Floats };

struct AttrRow {
  const char* name;
  AttrKind kind;
};

// Every attribute of the canonical IR (docs/ir.md), sorted by name.
constexpr AttrRow kAttrRows[] = {
    {"alpha", AttrKind::Float},
    {"axes", AttrKind::Ints},
    {"axis", AttrKind::Int},
    {"beta", AttrKind::Float},
    {"ceil_mode", AttrKind::Int},
    {"count_include_pad", AttrKind::Int},
    {"dilations", AttrKind::Ints},
    {"ends", AttrKind::Ints},
    {"epsilon", AttrKind::Float},
    {"group", AttrKind::Int},
    {"kernel_shape", AttrKind::Ints},
    {"keepdims", AttrKind::Int},
    {"max", AttrKind::Float},
    {"min", AttrKind::Float},
    {"output_padding", AttrKind::Ints},
    {"pads", AttrKind::Ints},
    {"perm", AttrKind::Ints},
    {"shape", AttrKind::Ints},
    {"starts", AttrKind::Ints},
    {"steps", AttrKind::Ints},
    {"strides", AttrKind::Ints},
    {"to", AttrKind::Int},
    {"transA", AttrKind::Int},
    {"transB", AttrKind::Int},
};

const AttrRow* find_attr(const std::string& name) {
  for (const AttrRow& r : kAttrRows)
    if (name == r.name) return &r;
  return nullptr;
}

// Variant index of each AttrKind in AttrValue.
size_t variant_index(AttrKind k) {
  switch (k) {
    case AttrKind::Int:
      return 0;
    case AttrKind::Float:
      return 1;
    case AttrKind::Ints:
      return 3;
    case AttrKind::Floats:
      return 4;
  }
  return 2;
}

// Dims are positive and a tensor stays far below int64 overflow: hostile sentences are rejected
// here, before shape inference or lowering multiply them.
constexpr int64_t kMaxDim = int64_t(1) << 40;
constexpr int64_t kMaxNumel = int64_t(1) << 48;

// Shortest decimal text that reads back (strtof) to exactly `v`.
std::string float_token(float v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int prec = 1; prec <= 9; prec++) {
    std::snprintf(buf, sizeof(buf), "%.*g", prec, (double)v);
    if (std::strtof(buf, nullptr) == v &&
        std::signbit(std::strtof(buf, nullptr)) == std::signbit(v))
      return buf;
  }
  return buf;  // 9 significant digits always round-trip a float
}

bool parse_int(const std::string& s, int64_t* out) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t k = i; k < s.size(); k++)
    if (s[k] < '0' || s[k] > '9') return false;
  errno = 0;
  long long v = std::strtoll(s.c_str(), nullptr, 10);
  if (errno == ERANGE) return false;
  *out = v;
  return true;
}

bool parse_float(const std::string& s, float* out) {
  if (s.empty()) return false;
  char* end = nullptr;
  float v = std::strtof(s.c_str(), &end);
  if (end != s.c_str() + s.size()) return false;
  *out = v;
  return true;
}

// "in3" -> ('i', 3); "w0" -> ('w', 0); "c1" -> ('c', 1); "n7" -> ('n', 7); else false.
bool parse_ref_name(const std::string& s, char* kind, int64_t* index) {
  size_t prefix;
  if (s.rfind("in", 0) == 0) {
    *kind = 'i';
    prefix = 2;
  } else if (!s.empty() && (s[0] == 'w' || s[0] == 'c' || s[0] == 'n')) {
    *kind = s[0];
    prefix = 1;
  } else {
    return false;
  }
  std::string digits = s.substr(prefix);
  if (digits.empty() || digits[0] == '-' || !parse_int(digits, index)) return false;
  return std::to_string(*index) == digits;  // no leading zeros
}

void append_type(DType dtype, const Shape& shape, std::vector<std::string>* out) {
  if (dtype != DType::F32) out->push_back(dtype_name(dtype));
  if (shape.empty()) out->push_back("scalar");
  for (int64_t d : shape) out->push_back(std::to_string(d));
}

bool same_type(const Value& a, const Value& b) { return a.dtype == b.dtype && a.shape == b.shape; }

bool inline_scalar(const Value& v) {
  return v.is_constant() && v.dtype == DType::F32 && v.shape.empty();
}

// Reads tokens in order, with positions for messages.
class Reader {
 public:
  explicit Reader(const std::vector<std::string>& t) : t_(t) {}
  bool at_end() const { return i_ >= t_.size(); }
  const std::string& peek() const {
    static const std::string kEnd = "<end>";
    return at_end() ? kEnd : t_[i_];
  }
  std::string next() {
    std::string s = peek();
    if (!at_end()) i_++;
    return s;
  }
  size_t pos() const { return i_ + 1; }  // 1-based position of peek()
  // "token 12 ('foo')": where a message points.
  std::string where() const { return "token " + std::to_string(pos()) + " ('" + peek() + "')"; }

  // Optional dtype token, then the dims or "scalar". False (nothing consumed) when no type
  // starts here.
  bool read_type(DType* dtype, Shape* shape) {
    *dtype = DType::F32;
    shape->clear();
    bool any = false;
    if (peek() == "i64" || peek() == "bool") {
      *dtype = next() == "i64" ? DType::I64 : DType::Bool;
      any = true;
    } else if (peek() == "f32") {
      TLM_USER_ERROR() << where() << ": f32 is the default type and is not written";
    }
    if (peek() == "scalar") {
      next();
      return true;
    }
    int64_t d;
    int64_t numel = 1;
    while (!at_end() && parse_int(peek(), &d)) {
      TLM_USER_CHECK(d >= 1 && d <= kMaxDim) << where() << ": a dimension must be in [1, 2^40]";
      numel = std::min<int64_t>(numel * d, kMaxNumel + 1);  // both factors <= 2^48: no overflow
      TLM_USER_CHECK(numel <= kMaxNumel) << where() << ": tensor too large";
      shape->push_back(d);
      next();
    }
    TLM_USER_CHECK(!any || !shape->empty())
        << where() << ": expected the dims (or 'scalar') after the dtype";
    return any || !shape->empty();
  }

 private:
  const std::vector<std::string>& t_;
  size_t i_ = 0;
};

// An inline constant from its tokens (numel <= 1: partition keeps only those inline).
Tensor constant_tensor(DType dtype, const Shape& shape, Reader& r) {
  Tensor t(dtype, shape);
  for (int64_t i = 0; i < t.numel(); i++) {
    std::string pos = r.where();
    std::string tok = r.next();
    if (dtype == DType::F32) {
      float f;
      TLM_USER_CHECK(parse_float(tok, &f)) << pos << ": expected a number";
      t.data<float>()[i] = f;
    } else {
      int64_t v;
      TLM_USER_CHECK(parse_int(tok, &v)) << pos << ": expected an integer";
      if (dtype == DType::I64) {
        t.data<int64_t>()[i] = v;
      } else {
        TLM_USER_CHECK(v == 0 || v == 1) << pos << ": a bool is 0 or 1";
        t.data<bool>()[i] = v != 0;
      }
    }
  }
  return t;
}

AttrValue read_attr(const AttrRow& row, Reader& r) {
  std::vector<int64_t> ints;
  std::vector<float> floats;
  int64_t iv;
  float fv;
  bool is_float = row.kind == AttrKind::Float || row.kind == AttrKind::Floats;
  while (!r.at_end() && (is_float ? parse_float(r.peek(), &fv) : parse_int(r.peek(), &iv))) {
    if (is_float)
      floats.push_back(fv);
    else
      ints.push_back(iv);
    r.next();
  }
  size_t n = is_float ? floats.size() : ints.size();
  if (row.kind == AttrKind::Int || row.kind == AttrKind::Float)
    TLM_USER_CHECK(n == 1) << r.where() << ": attribute '" << row.name
                           << "' takes exactly one value, got " << n;
  switch (row.kind) {
    case AttrKind::Int:
      return ints[0];
    case AttrKind::Float:
      return floats[0];
    case AttrKind::Ints:
      return ints;
    case AttrKind::Floats:
      return floats;
  }
  return ints;
}

// A shared placeholder for weight data: make_subgraph() only asks a weight for its element
// count (more than one element makes a constant an input of the task), and nothing evaluates
// the rebuilt graph, so real weights (up to 150 MB for GPT-2's LM head) are never allocated.
std::shared_ptr<const Tensor> weight_placeholder() {
  static const auto t = std::make_shared<const Tensor>(DType::F32, Shape{2});
  return t;
}

}  // namespace

const std::vector<std::string>& attribute_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const AttrRow& r : kAttrRows) n.push_back(r.name);
    return n;
  }();
  return names;
}

std::vector<std::string> subgraph_tokens(const Subgraph& sub) {
  const Graph& g = sub.graph;
  std::vector<std::string> out;
  std::vector<std::string> ref(g.values.size());
  const Value* prev = nullptr;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    char kind;
    int64_t index;
    TLM_CHECK(parse_ref_name(v.name, &kind, &index) && (kind == 'i' || kind == 'w'))
        << "subgraph input '" << v.name << "' is not named in<k>/w<k> (make_subgraph names them)";
    ref[id] = v.name;
    out.push_back(v.name);
    if (!prev || !same_type(*prev, v)) append_type(v.dtype, v.shape, &out);
    prev = &v;
  }
  int n_consts = 0;
  for (size_t id = 0; id < g.values.size(); id++) {
    const Value& v = g.values[id];
    if (!v.is_constant()) continue;
    if (inline_scalar(v)) {
      ref[id] = float_token(v.data->data<float>()[0]);
      continue;
    }
    TLM_CHECK(v.data->numel() <= 1) << "subgraph constant " << v.name << " is not a scalar";
    ref[id] = "c" + std::to_string(n_consts++);
    out.push_back(ref[id]);
    append_type(v.dtype, v.shape, &out);
    out.push_back("=");
    const Tensor& t = *v.data;
    for (int64_t i = 0; i < t.numel(); i++)
      out.push_back(t.dtype() == DType::F32 ? float_token((float)t.get_f(i))
                                            : std::to_string(t.get_i(i)));
  }
  for (size_t k = 0; k < g.nodes.size(); k++) {
    const Node& n = g.nodes[k];
    out.push_back(op_name(n.op));
    for (ValueId in : n.inputs) {
      TLM_CHECK(in == kNoValue || !ref[in].empty())
          << "node " << n.name << " reads a value that is neither an input nor computed before";
      out.push_back(in == kNoValue ? "_" : ref[in]);
    }
    for (const auto& [name, value] : n.attrs) {
      const AttrRow* row = find_attr(name);
      TLM_CHECK(row) << "attribute '" << name << "' of " << op_name(n.op)
                     << " has no row in the language's attribute table";
      TLM_CHECK(value.index() == variant_index(row->kind))
          << "attribute '" << name << "' of " << op_name(n.op) << " has an unexpected type";
      out.push_back(name);
      std::visit(
          [&](const auto& a) {
            using T = std::decay_t<decltype(a)>;
            if constexpr (std::is_same_v<T, int64_t>)
              out.push_back(std::to_string(a));
            else if constexpr (std::is_same_v<T, float>)
              out.push_back(float_token(a));
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
              for (int64_t x : a) out.push_back(std::to_string(x));
            else if constexpr (std::is_same_v<T, std::vector<float>>)
              for (float x : a) out.push_back(float_token(x));
          },
          value);
    }
    TLM_CHECK(n.outputs.size() == 1)
        << "node " << n.name << " has " << n.outputs.size() << " outputs";
    const Value& o = g.value(n.outputs[0]);
    if (n.inputs.empty() || n.inputs[0] == kNoValue || !same_type(g.value(n.inputs[0]), o)) {
      out.push_back(kArrow);
      append_type(o.dtype, o.shape, &out);
    }
    ref[n.outputs[0]] = "n" + std::to_string(k);
  }
  TLM_CHECK(g.outputs.size() == 1 && !g.nodes.empty() && g.outputs[0] == g.nodes.back().outputs[0])
      << "a task's one output is its last node's (partition guarantees it)";
  return out;
}

Subgraph subgraph_from_tokens(const std::vector<std::string>& tokens, bool* reordered) {
  Reader r(tokens);
  Graph src;  // the "model" the subgraph is cut from
  std::vector<ValueId> in_ids, w_ids, c_ids, n_ids;
  char kind;
  int64_t index;
  DType dtype = DType::F32;
  Shape shape;
  bool have_prev = false;
  DType prev_dtype = DType::F32;
  Shape prev_shape;

  // Declarations.
  while (!r.at_end() && parse_ref_name(r.peek(), &kind, &index) && kind != 'n') {
    std::string where = r.where();
    std::string name = r.next();
    std::vector<ValueId>& ids = kind == 'i' ? in_ids : kind == 'w' ? w_ids : c_ids;
    TLM_USER_CHECK(index == (int64_t)ids.size())
        << where << ": expected " << name.substr(0, name.size() - std::to_string(index).size())
        << ids.size() << " (declarations are numbered in order)";
    if (kind == 'c') {
      TLM_USER_CHECK(r.read_type(&dtype, &shape)) << r.where() << ": expected the type of " << name;
      TLM_USER_CHECK(r.peek() == "=") << r.where() << ": expected '=' and the value of " << name;
      r.next();
      TLM_USER_CHECK(numel(shape) <= 1) << where << ": inline constants are scalars";
      ids.push_back(src.add_constant(name, constant_tensor(dtype, shape, r)));
      continue;
    }
    if (r.read_type(&dtype, &shape)) {
      prev_dtype = dtype;
      prev_shape = shape;
      have_prev = true;
    } else {  // no type: the previous declaration's
      TLM_USER_CHECK(have_prev) << where << ": the first declaration needs a type";
      dtype = prev_dtype;
      shape = prev_shape;
    }
    if (kind == 'i') {
      TLM_USER_CHECK(w_ids.empty()) << where << ": activations are declared before weights";
      ids.push_back(src.add_input(name, dtype, shape));
    } else {
      TLM_USER_CHECK(numel(shape) > 1) << where << ": a weight has more than one element";
      Value v;
      v.name = name;
      v.dtype = dtype;
      v.shape = shape;
      v.data = weight_placeholder();
      src.values.push_back(std::move(v));
      ids.push_back((ValueId)src.values.size() - 1);
    }
  }

  // Nodes.
  FusedGroup group;
  while (!r.at_end()) {
    std::string where = r.where();
    Op op;
    TLM_USER_CHECK(op_from_name(r.next(), &op)) << where << ": expected an operator";
    Node n;
    n.op = op;
    n.name = "n" + std::to_string(n_ids.size());
    for (;;) {
      float f;
      if (r.peek() == "_") {
        n.inputs.push_back(kNoValue);
      } else if (parse_ref_name(r.peek(), &kind, &index)) {
        const std::vector<ValueId>& ids = kind == 'i'   ? in_ids
                                          : kind == 'w' ? w_ids
                                          : kind == 'c' ? c_ids
                                                        : n_ids;
        TLM_USER_CHECK(index < (int64_t)ids.size())
            << r.where() << ": " << (kind == 'n' ? "not computed before" : "not declared");
        n.inputs.push_back(ids[index]);
      } else if (parse_float(r.peek(), &f)) {
        n.inputs.push_back(src.add_constant("c", Tensor::scalar<float>(f)));
      } else {
        break;
      }
      r.next();
    }
    while (const AttrRow* row = find_attr(r.peek())) {
      TLM_USER_CHECK(!n.attrs.count(row->name)) << r.where() << ": attribute given twice";
      r.next();
      n.attrs[row->name] = read_attr(*row, r);
    }
    Value out;
    out.name = n.name + ":0";
    src.values.push_back(std::move(out));
    n.outputs = {(ValueId)src.values.size() - 1};
    try {
      infer_node_shapes(src, n);
    } catch (const UserError& e) {
      TLM_USER_ERROR() << where << ": " << e.what();
    }
    const Value& o = src.value(n.outputs[0]);
    if (r.peek() == kArrow) {
      r.next();
      std::string type_at = r.where();
      TLM_USER_CHECK(r.read_type(&dtype, &shape))
          << type_at << ": expected the output type after '->'";
      TLM_USER_CHECK(dtype == o.dtype && shape == o.shape)
          << type_at << ": " << op_name(op) << " gives " << dtype_name(o.dtype)
          << shape_str(o.shape) << ", the sentence says " << dtype_name(dtype) << shape_str(shape);
    }
    n_ids.push_back(n.outputs[0]);
    group.nodes.push_back((int)src.nodes.size());
    src.nodes.push_back(std::move(n));
  }
  TLM_USER_CHECK(!src.nodes.empty()) << "the subgraph has no operator";
  group.output = n_ids.back();

  std::vector<ValueId> feeds;
  Subgraph sub = make_subgraph(src, group, &feeds);
  std::vector<std::string> canon = subgraph_tokens(sub);
  for (size_t i = 0; i < std::max(canon.size(), tokens.size()); i++) {
    const std::string got = i < tokens.size() ? tokens[i] : "<end>";
    const std::string want = i < canon.size() ? canon[i] : "<end>";
    TLM_USER_CHECK(got == want) << "token " << i + 1 << " ('" << got
                                << "'): not the canonical spelling of this subgraph, which has '"
                                << want << "' here";
  }
  if (reordered) {
    *reordered = canonicalize_operands(src);
    if (*reordered) sub = make_subgraph(src, group, &feeds);
  }
  return sub;
}

}  // namespace tlm

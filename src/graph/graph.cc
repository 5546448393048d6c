#include "graph/graph.h"

#include <sstream>

#include "graph/interpreter.h"
#include "graph/shape_infer.h"

namespace tlm {
namespace {

template <typename T>
const T& get_attr(const Node& n, const std::string& key) {
  auto it = n.attrs.find(key);
  TLM_CHECK(it != n.attrs.end()) << op_name(n.op) << " node '" << n.name << "' lacks " << key;
  const T* v = std::get_if<T>(&it->second);
  TLM_CHECK(v != nullptr) << op_name(n.op) << " attribute " << key << " has another type";
  return *v;
}

}  // namespace

int64_t Node::i(const std::string& key, int64_t def) const {
  return has(key) ? get_attr<int64_t>(*this, key) : def;
}
float Node::f(const std::string& key, float def) const {
  return has(key) ? get_attr<float>(*this, key) : def;
}
const std::string& Node::s(const std::string& key) const {
  return get_attr<std::string>(*this, key);
}
std::vector<int64_t> Node::ints(const std::string& key, std::vector<int64_t> def) const {
  return has(key) ? get_attr<std::vector<int64_t>>(*this, key) : def;
}
std::vector<float> Node::floats(const std::string& key, std::vector<float> def) const {
  return has(key) ? get_attr<std::vector<float>>(*this, key) : def;
}

ValueId Graph::add_input(const std::string& n, DType dtype, Shape shape) {
  Value v;
  v.name = n;
  v.dtype = dtype;
  v.shape = std::move(shape);
  values.push_back(std::move(v));
  inputs.push_back((ValueId)values.size() - 1);
  return inputs.back();
}

ValueId Graph::add_constant(const std::string& n, Tensor t) {
  Value v;
  v.name = n;
  v.dtype = t.dtype();
  v.shape = t.shape();
  v.data = std::make_shared<const Tensor>(std::move(t));
  values.push_back(std::move(v));
  return (ValueId)values.size() - 1;
}

std::string Graph::unique_name(const std::string& prefix) {
  return prefix + "_" + std::to_string(name_counter_++);
}

ValueId Graph::add(Op op, std::vector<ValueId> ins, Attrs attrs, const std::string& n) {
  Node node;
  node.op = op;
  node.name = n.empty() ? unique_name(op_name(op)) : n;
  node.inputs = std::move(ins);
  node.attrs = std::move(attrs);
  for (ValueId in : node.inputs)
    TLM_CHECK(in == kNoValue || (in >= 0 && in < (ValueId)values.size())) << "bad input id " << in;
  Value out;
  out.name = node.name + ":0";
  values.push_back(std::move(out));
  node.outputs = {(ValueId)values.size() - 1};
  infer_node_shapes(*this, node);

  bool all_const = true;
  for (ValueId in : node.inputs)
    if (in != kNoValue && !value(in).is_constant()) all_const = false;
  if (all_const) {
    std::vector<const Tensor*> args;
    for (ValueId in : node.inputs) args.push_back(in == kNoValue ? nullptr : value(in).data.get());
    std::vector<Tensor> res = evaluate_node(*this, node, args);
    TLM_CHECK(res.size() == 1) << "folding " << node.name;
    value(node.outputs[0]).data = std::make_shared<const Tensor>(std::move(res[0]));
    return node.outputs[0];
  }
  nodes.push_back(std::move(node));
  return nodes.back().outputs[0];
}

std::vector<std::vector<int>> Graph::consumers() const {
  std::vector<std::vector<int>> c(values.size());
  for (size_t i = 0; i < nodes.size(); i++)
    for (ValueId in : nodes[i].inputs)
      if (in != kNoValue) c[in].push_back((int)i);
  return c;
}

std::vector<int> Graph::producers() const {
  std::vector<int> p(values.size(), -1);
  for (size_t i = 0; i < nodes.size(); i++)
    for (ValueId o : nodes[i].outputs) p[o] = (int)i;
  return p;
}

void Graph::remove_dead() {
  std::vector<bool> live(values.size(), false);
  for (ValueId o : outputs) live[o] = true;
  std::vector<Node> kept;
  for (int i = (int)nodes.size() - 1; i >= 0; i--) {
    bool needed = false;
    for (ValueId o : nodes[i].outputs) needed = needed || live[o];
    if (!needed) continue;
    for (ValueId in : nodes[i].inputs)
      if (in != kNoValue) live[in] = true;
    kept.push_back(std::move(nodes[i]));
  }
  for (ValueId in : inputs) live[in] = true;  // graph inputs stay, even when unused
  std::vector<ValueId> remap(values.size(), kNoValue);
  std::vector<Value> new_values;
  for (size_t i = 0; i < values.size(); i++) {
    if (!live[i]) continue;
    remap[i] = (ValueId)new_values.size();
    new_values.push_back(std::move(values[i]));
  }
  auto fix = [&](std::vector<ValueId>& ids) {
    for (ValueId& id : ids)
      if (id != kNoValue) id = remap[id];
  };
  nodes.assign(std::make_move_iterator(kept.rbegin()), std::make_move_iterator(kept.rend()));
  for (Node& n : nodes) {
    fix(n.inputs);
    fix(n.outputs);
  }
  fix(inputs);
  fix(outputs);
  values = std::move(new_values);
}

std::string graph_str(const Graph& g) {
  std::ostringstream os;
  auto val = [&](ValueId id) {
    if (id == kNoValue) return std::string("_");
    const Value& v = g.value(id);
    return v.name + ":" + dtype_name(v.dtype) + shape_str(v.shape) + (v.is_constant() ? "c" : "");
  };
  os << "graph " << g.name << "\n";
  for (ValueId in : g.inputs) os << "  input " << val(in) << "\n";
  for (const Node& n : g.nodes) {
    os << "  " << op_name(n.op) << " " << n.name << " (";
    for (size_t i = 0; i < n.inputs.size(); i++) os << (i ? ", " : "") << val(n.inputs[i]);
    os << ") -> " << val(n.outputs[0]) << "\n";
  }
  for (ValueId o : g.outputs) os << "  output " << val(o) << "\n";
  return os.str();
}

}  // namespace tlm

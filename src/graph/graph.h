// The graph IR: values (tensors with dtype and static shape, optionally constant data), nodes
// (an Op from graph/op.h, value inputs/outputs, canonical attributes) and the graph (nodes in
// topological order, graph inputs and outputs). Everything downstream -- partitioning, Halide
// lowering, the reference interpreter -- reads this one structure.
//
// Graphs are built through Graph::add(), which appends a node, infers its output shapes
// (graph/shape_infer.h) and, when every input is constant, evaluates it at once with the
// reference interpreter (eager constant folding: Shape->Gather->Concat->Reshape chains exported
// by PyTorch disappear as they are built). Constant tensors are shared, immutable.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "graph/op.h"
#include "support/tensor.h"

namespace tlm {

using ValueId = int32_t;
constexpr ValueId kNoValue = -1;  // an absent optional input (e.g. Conv without bias)

struct Value {
  std::string name;
  DType dtype = DType::F32;
  Shape shape;
  std::shared_ptr<const Tensor> data;  // non-null: a constant (initializer or folded)
  bool is_constant() const { return data != nullptr; }
};

using AttrValue =
    std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>>;

struct Node {
  Op op;
  std::string name;  // from the model file, or generated; used in error messages
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;
  std::map<std::string, AttrValue> attrs;

  bool has(const std::string& key) const { return attrs.count(key) > 0; }
  // Typed getters; a missing key returns the default, a key of another type is an internal error.
  int64_t i(const std::string& key, int64_t def = 0) const;
  float f(const std::string& key, float def = 0.f) const;
  const std::string& s(const std::string& key) const;
  std::vector<int64_t> ints(const std::string& key, std::vector<int64_t> def = {}) const;
  std::vector<float> floats(const std::string& key, std::vector<float> def = {}) const;
};

using Attrs = std::map<std::string, AttrValue>;

class Graph {
 public:
  std::string name;
  std::vector<Value> values;
  std::vector<Node> nodes;  // topological order
  std::vector<ValueId> inputs;
  std::vector<ValueId> outputs;

  Value& value(ValueId id) { return values.at(id); }
  const Value& value(ValueId id) const { return values.at(id); }

  // A runtime input of the model.
  ValueId add_input(const std::string& name, DType dtype, Shape shape);
  // A constant (initializer or folded result).
  ValueId add_constant(const std::string& name, Tensor t);
  // Appends a node with one output, infers its shape and folds it if all inputs are constant.
  // Returns the output value. Shape errors are user errors naming the node.
  ValueId add(Op op, std::vector<ValueId> inputs, Attrs attrs = {}, const std::string& name = "");
  void mark_output(ValueId v) { outputs.push_back(v); }

  // For each value, the nodes that read it (index into `nodes`); graph outputs are not counted.
  std::vector<std::vector<int>> consumers() const;
  // For each value, the node that computes it (index into `nodes`); -1 for inputs and constants.
  std::vector<int> producers() const;
  // Drops nodes whose outputs nobody needs and values nobody references; renumbers ids.
  void remove_dead();
  // A fresh name with the given prefix, unique within this graph.
  std::string unique_name(const std::string& prefix);

 private:
  int name_counter_ = 0;
};

// Human-readable listing of the graph, one node per line (for debugging and `tlm show-graph`).
std::string graph_str(const Graph& g);

}  // namespace tlm

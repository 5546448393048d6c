// Random inputs for running a model or a task: float inputs uniform in [-1, 1), int64 inputs
// (token ids, gather indices) uniform in [0, n) where n is the smallest extent a Gather reached
// through index-preserving ops reads them along, so they are always valid indices.
#include "runtime/random_inputs.h"

namespace tlm {
namespace {

// Ops that move index values around unchanged: a Gather reached through them still indexes
// with the graph input's values.
bool passes_indices_through(Op op) {
  switch (op) {
    case Op::Reshape:
    case Op::Flatten:
    case Op::Squeeze:
    case Op::Unsqueeze:
    case Op::Transpose:
    case Op::Expand:
    case Op::Slice:
      return true;
    default:
      return false;
  }
}

}  // namespace

int64_t index_range(const Graph& g, ValueId input) {
  std::vector<std::vector<int>> consumers = g.consumers();
  int64_t best = -1;
  std::vector<ValueId> todo = {input};
  std::vector<bool> seen(g.values.size(), false);
  while (!todo.empty()) {
    ValueId v = todo.back();
    todo.pop_back();
    if (seen[v]) continue;
    seen[v] = true;
    for (int c : consumers[v]) {
      const Node& n = g.nodes[c];
      if (n.op == Op::Gather && n.inputs.size() == 2 && n.inputs[1] == v) {
        const Shape& data = g.value(n.inputs[0]).shape;
        int64_t axis = n.i("axis", 0);
        if (axis >= 0 && axis < (int64_t)data.size() && data[axis] > 0)
          best = best < 0 ? data[axis] : std::min(best, data[axis]);
      } else if (passes_indices_through(n.op) && !n.inputs.empty() && n.inputs[0] == v) {
        todo.push_back(n.outputs[0]);
      }
    }
  }
  return best > 0 ? best : kDefaultIndexRange;
}

std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed) {
  std::vector<Tensor> ins;
  for (size_t i = 0; i < g.inputs.size(); i++) {
    const Value& v = g.value(g.inputs[i]);
    uint64_t s = seed * 1000003u + i + 1;
    if (v.dtype == DType::I64)
      ins.push_back(random_tensor(v.dtype, v.shape, s, 0.0, (double)index_range(g, g.inputs[i])));
    else
      ins.push_back(random_tensor(v.dtype, v.shape, s));
  }
  return ins;
}

}  // namespace tlm

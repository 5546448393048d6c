// Seeded random inputs for a graph (a model or a task's subgraph), used by `tlm run`, the tuner's
// reference checks and the tests. Reproducible: the same graph and seed give the same tensors.
#pragma once

#include <cstdint>
#include <vector>

#include "graph/graph.h"

namespace tlm {

// Used for an int64 input that reaches no Gather.
constexpr int64_t kDefaultIndexRange = 100;

// The exclusive upper bound for random values of i64 graph input `input`.
int64_t index_range(const Graph& g, ValueId input);

// One tensor per g.inputs, in order.
std::vector<Tensor> random_inputs(const Graph& g, uint64_t seed);

}  // namespace tlm

// The reference interpreter: a naive, obviously-correct evaluation of every Op on Tensors, one
// table row per Op. It is the independent reference that Halide programs are checked against,
// and the engine of constant folding. Written for clarity, parallel only where it is free
// (the big anchors split their outermost loop over threads), never scheduled.
#pragma once

#include <vector>

#include "graph/graph.h"

namespace tlm {

// Evaluates one node; `inputs` are in node.inputs order (nullptr for an absent optional input).
std::vector<Tensor> evaluate_node(const Graph& g, const Node& node,
                                  const std::vector<const Tensor*>& inputs);

// Runs the whole graph on the given inputs (in g.inputs order); returns g.outputs in order.
// Input dtypes and shapes must match the graph's (UserError otherwise).
std::vector<Tensor> interpret(const Graph& g, const std::vector<Tensor>& inputs);

}  // namespace tlm

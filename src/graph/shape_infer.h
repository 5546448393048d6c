// Shape and dtype inference, one table row per Op (static_assert on kOpCount).
// Reads the canonical attributes of docs/ir.md; writes dtype and shape of every output value.
// Inconsistent input (mismatched channels, bad broadcast, axis out of range, zero-size result
// where not allowed) is a UserError naming the node, its op and the offending attribute.
#pragma once

#include "graph/graph.h"

namespace tlm {

void infer_node_shapes(Graph& g, const Node& node);

}  // namespace tlm

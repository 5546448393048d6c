// Partitioning: fuse the operators of a prepared graph into subgraphs the way TVM's FuseOps does,
// then de-duplicate identical subgraphs into weighted tasks (the paper's "subgraphs", §4.1).
//
//   partition_graph(g) -> Partition { tasks (unique, weighted), instances (one per fused group,
//                                      in execution order) }
//
// Fusion rules (op patterns from graph/op.h):
//  - every Anchor (conv, gemm/matmul, pooling) and Reduce (reduce, softmax, layernorm) node
//    starts a group; it absorbs the chain of Elemwise consumers that follows it while the chain's
//    current output has exactly one consumer (the epilogue: bias, relu, residual add, ...);
//  - Injective/Elemwise producers whose only consumer is an anchor are folded into its group
//    (the prologue: transpose before matmul, ...);
//  - remaining Elemwise/Injective nodes are grouped along single-consumer chains.
// Every group has exactly one output value.
//
// A Subgraph is a standalone Graph: its inputs are the group's external inputs (activations
// first, then weights, each in first-use order), its one output the group's output. Scalar
// constants stay inside (they change the computation: Pow(x, 3), x / 8); larger constants
// (weights, biases, masks) become inputs, so two convolutions with equal shapes but different
// weights are one task. `key` is the canonical text of the subgraph: equal keys <=> same task.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"

namespace tlm {

struct Subgraph {
  Graph graph;       // inputs = external inputs, outputs = {the group's output}
  std::string kind;  // e.g. "conv2d_add_relu", "matmul_add", "softmax", "injective"
  std::string key;   // canonical text of ops, attributes and shapes
  double flops = 0;  // arithmetic operations of one execution (a multiply-add counts 2)
};

struct Task {
  int id = 0;
  Subgraph sub;
  int weight = 0;  // how many instances share this task
};

// One execution of a task inside the model: which model values feed it and which it produces.
struct TaskInstance {
  int task = 0;
  std::vector<ValueId> inputs;  // model value ids, in sub.graph.inputs order
  ValueId output = kNoValue;    // model value id
};

struct Partition {
  std::vector<Task> tasks;             // unique, in order of first appearance
  std::vector<TaskInstance> instances;  // execution order (topological)
};

Partition partition_graph(const Graph& g);

// Arithmetic cost of one node (multiply-add = 2 FLOPs; elementwise op = 1 per output element).
double node_flops(const Graph& g, const Node& n);

// The task table printed by `tlm extract`: id, kind, shapes, FLOPs, weight, share of total FLOPs.
std::string task_table(const Partition& p);

}  // namespace tlm

// Partitioning: fuse the operators of a prepared graph into subgraphs the way TVM's FuseOps does,
// then de-duplicate identical subgraphs into weighted tasks (the paper's "subgraphs", §4.1).
//
//   partition_graph(g) -> Partition { tasks (unique, weighted), instances (one per fused group,
//                                      in execution order) }
//
// Fusion rules (op patterns from graph/op.h):
//  - every Anchor (conv, gemm/matmul, pooling) and Reduce (reduce, softmax, layernorm) node
//    starts a group; it absorbs the chain of Elemwise consumers that follows it while the chain's
//    current output has exactly one consumer (the epilogue: bias, relu, residual add, ...), or
//    exactly two that gate it, v * f(v) (SiLU: x * sigmoid(x));
//  - Injective producers read only by an anchor or reduction are folded into its group,
//    transitively (the prologue: reshape -> transpose before matmul, ...); a graph output never
//    fuses as an intermediate. Earlier anchors claim first: conv -> relu -> conv is
//    conv2d_relu, conv2d;
//  - remaining Elemwise/Injective nodes are grouped along single-consumer chains (and trees that
//    end in one value: sigmoid(x), tanh(x) -> add).
// Every group has exactly one output value; fuse.cc explains why the groups can be ordered.
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
  Graph graph;  // inputs = external inputs, outputs = {the group's output}
  // Readable name: the anchor (conv2d, depthwise_conv2d, group_conv2d, conv2d_transpose, dense,
  // batch_matmul, max_pool2d, avg_pool2d, global_avg_pool2d, reduce_mean, reduce_sum, softmax,
  // layer_norm) then up to 4 epilogue ops and "_etc" (conv2d_add_relu, batch_matmul_div);
  // anchorless groups: "elemwise_<ops>" or "injective_<ops>". Rules in subgraph.cc.
  std::string kind;
  std::string key;   // canonical text of ops, attributes, shapes and inline scalar values
  double flops = 0;  // arithmetic operations of one execution (a multiply-add counts 2)
};

struct Task {
  int id = 0;
  Subgraph sub;
  int weight = 0;  // how many instances share this task
};

// One execution of a task inside the model: which model values feed it, which it produces and
// which of the model's nodes it computes (their names: the ONNX node names, "NAME/suffix" for the
// extra nodes an importer expanded one into), so that another runtime's per-node profile can be
// mapped onto tasks (bench/lose).
struct TaskInstance {
  int task = 0;
  std::vector<ValueId> inputs;   // model value ids, in sub.graph.inputs order
  ValueId output = kNoValue;     // model value id
  std::vector<std::string> ops;  // names of the fused group's nodes, in execution order
};

struct Partition {
  std::vector<Task> tasks;              // unique, in order of first appearance
  std::vector<TaskInstance> instances;  // execution order (topological)
};

Partition partition_graph(const Graph& g);

// The two steps partition_graph() is made of, exposed for tests and tools.
//
// One fused group: indices into g.nodes (ascending, hence topological) and its one output value,
// produced by the group's last node. Every other value the group computes is read only inside it.
struct FusedGroup {
  std::vector<int> nodes;
  ValueId output = kNoValue;
};
// Applies the fusion rules above; every node lands in exactly one group; groups come in an
// execution order (each after the producers of its external inputs).
std::vector<FusedGroup> fuse_groups(const Graph& g);
// Builds the canonical standalone Subgraph (graph, kind, key, flops) of one group; `inputs`
// receives the model values that feed it, in sub.graph.inputs order.
Subgraph make_subgraph(const Graph& g, const FusedGroup& group, std::vector<ValueId>* inputs);

// True when a subgraph only re-labels its one input's bytes: every node is a Reshape, Flatten,
// Squeeze or Unsqueeze (row-major order is kept, so the output holds the input's bytes in the
// same order) of the previous node's output. The memory plan lets such an instance's output
// alias its input instead of running it (runtime/memory_plan.h).
bool is_view_subgraph(const Graph& sub);

// Arithmetic cost of one node (multiply-add = 2 FLOPs; elementwise op = 1 per output element;
// data movement 0; the per-op rules are listed in flops.cc).
double node_flops(const Graph& g, const Node& n);

// The task table printed by `tlm extract`: id, kind, shapes, FLOPs, weight, share of total FLOPs.
std::string task_table(const Partition& p);

}  // namespace tlm

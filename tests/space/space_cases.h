// The tasks the space tests run on: one representative task per (task family, space rule) from
// small zoo models (realistic shapes, cut down), plus hand-built graphs for kinds the zoo lacks
// (conv1d, grouped conv, reduce_sum to a scalar, ...). Every task goes through partition_graph,
// so it is a canonical Subgraph exactly as tuning sees it. run_task() compiles and runs a lowered
// task on given inputs; run_program() lowers, applies a program and runs it.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "graph/interpreter.h"
#include "graph/passes.h"
#include "partition/partition.h"
#include "space/space.h"
#include "zoo/zoo.h"

namespace tlm::testing_space {

struct TaskCase {
  std::string name;  // family/rule, e.g. "conv2d/tiled"
  Subgraph sub;
};

// The anchor family of a task kind: "conv2d_add_relu" -> "conv2d".
inline std::string family(const std::string& kind) {
  static const char* kFamilies[] = {"depthwise_conv2d_nchwc",
                                    "conv2d_nchwc",
                                    "depthwise_conv2d",
                                    "group_conv2d",
                                    "conv2d_transpose",
                                    "conv1d",
                                    "conv2d",
                                    "conv3d",
                                    "dense",
                                    "batch_matmul",
                                    "max_pool2d",
                                    "avg_pool2d",
                                    "global_avg_pool2d",
                                    "global_avg_pool3d",
                                    "reduce_mean",
                                    "reduce_sum",
                                    "softmax",
                                    "layer_norm",
                                    "elemwise",
                                    "injective"};
  for (const char* f : kFamilies)
    if (kind.rfind(f, 0) == 0) return f;
  return kind;
}

inline const char* rule_name(SpaceRule r) { return r == SpaceRule::TiledAnchor ? "tiled" : "rows"; }

inline ValueId weight(Graph& g, const Shape& s, uint64_t seed) {
  return g.add_constant(g.unique_name("w"), random_tensor(DType::F32, s, seed));
}

// Hand-built graphs for kinds the small zoo models do not produce.
inline std::vector<Graph> hand_built_graphs() {
  using V = std::vector<int64_t>;
  std::vector<Graph> gs;
  {  // conv1d with bias and relu
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 8, 20});
    ValueId y =
        g.add(Op::Conv, {x, weight(g, {16, 8, 3}, 1), weight(g, {16}, 2)},
              {{"strides", V{1}}, {"dilations", V{1}}, {"pads", V{1, 1}}, {"group", int64_t(1)}});
    g.mark_output(g.add(Op::Relu, {y}));
    gs.push_back(std::move(g));
  }
  {  // grouped conv2d, stride 2
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 8, 10, 10});
    g.mark_output(g.add(Op::Conv, {x, weight(g, {8, 2, 3, 3}, 3)},
                        {{"strides", V{2, 2}},
                         {"dilations", V{1, 1}},
                         {"pads", V{1, 1, 1, 1}},
                         {"group", int64_t(4)}}));
    gs.push_back(std::move(g));
  }
  {  // a matmul with a bias epilogue (dense) of sizes that are not powers of two
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {24, 40});
    ValueId y =
        g.add(Op::Gemm, {x, weight(g, {40, 48}, 4), weight(g, {48}, 5)},
              {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t(0)}, {"transB", int64_t(0)}});
    g.mark_output(y);
    gs.push_back(std::move(g));
  }
  {  // reduce_sum of everything to a scalar
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {6, 40});
    g.mark_output(g.add(Op::ReduceSum, {x}, {{"axes", V{0, 1}}, {"keepdims", int64_t(0)}}));
    gs.push_back(std::move(g));
  }
  {  // reduce_mean over the middle axis, kept
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {2, 12, 20});
    g.mark_output(g.add(Op::ReduceMean, {x}, {{"axes", V{1}}, {"keepdims", int64_t(1)}}));
    gs.push_back(std::move(g));
  }
  {  // softmax over a non-innermost axis
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {2, 10, 24});
    g.mark_output(g.add(Op::Softmax, {x}, {{"axis", int64_t(1)}}));
    gs.push_back(std::move(g));
  }
  {  // 3-D max pool with padding
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 4, 6, 8, 8});
    g.mark_output(g.add(Op::MaxPool, {x},
                        {{"kernel_shape", V{3, 3, 3}},
                         {"strides", V{2, 2, 2}},
                         {"pads", V{1, 1, 1, 1, 1, 1}},
                         {"dilations", V{1, 1, 1}},
                         {"ceil_mode", int64_t(0)}}));
    gs.push_back(std::move(g));
  }
  return gs;
}

// One task per (family, rule) from the models above, in a fixed order; then the same for two of
// them with channel-blocked activations (graph/passes.h block_channels, block 8), where a
// ConvNchwc reading a plain input (the stem) counts as its own case ("/plain").
inline std::vector<TaskCase> representative_tasks(const HardwareInfo& hw) {
  using V = std::vector<int64_t>;
  std::vector<Graph> graphs;
  std::vector<Graph> hand = hand_built_graphs();
  for (const char* spec :
       {"resnet18:image=32", "mobilenet_v3_small:image=32", "dcgan:image=16,ngf=8",
        "bert-tiny:seq=16,layers=1", "llama_layer:seq=8,hidden=64,heads=2,ff=96",
        "googlenet:image=64", "densenet121:image=32", "r3d_18:image=16,frames=2"}) {
    graphs.push_back(build_zoo_model(spec, 7));
  }
  size_t zoo_graphs = graphs.size();
  for (Graph& g : hand) graphs.push_back(std::move(g));
  const size_t blocked_from = graphs.size();
  for (const char* spec : {"resnet18:image=32", "mobilenet_v2:image=32"})
    graphs.push_back(build_zoo_model(spec, 7));
  std::vector<TaskCase> out;
  std::map<std::string, bool> seen;
  for (size_t i = 0; i < graphs.size(); i++) {
    Graph& g = graphs[i];
    prepare_graph(g);
    if (i >= blocked_from) block_channels(g, 8);
    for (const Task& t : partition_graph(g).tasks) {
      LoweredTask lt = lower_subgraph(t.sub);
      std::string key = family(t.sub.kind) + "/" + rule_name(build_space(lt, hw).rule);
      if (i >= blocked_from) {
        for (const Node& n : t.sub.graph.nodes)
          if (n.op == Op::ConvNchwc && t.sub.graph.value(n.inputs[0]).shape.size() == 4)
            key += "/plain";
      } else if (i >= zoo_graphs) {
        key += "/hand" + std::to_string(i - zoo_graphs);  // always kept
      }
      if (seen[key]) continue;
      seen[key] = true;
      out.push_back({key, t.sub});
    }
  }
  // A conv whose epilogue broadcasts it to a larger shape (the excitation of an SE block times
  // the activation): the partitioner no longer fuses one (fuse.cc, grows), but records of such
  // tasks (MobileNet-V3's, before session 72) still name programs of its space.
  {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 8, 1, 1});
    ValueId a = g.add_input("a", DType::F32, {1, 16, 6, 6});
    ValueId c = g.add(Op::Conv, {x, weight(g, {16, 8, 1, 1}, 6), weight(g, {16}, 7)},
                      {{"strides", V{1, 1}},
                       {"dilations", V{1, 1}},
                       {"pads", V{0, 0, 0, 0}},
                       {"group", int64_t(1)}});
    ValueId y = g.add(Op::Mul, {g.add(Op::Sigmoid, {c}), a});
    g.mark_output(y);
    FusedGroup group;
    for (int n = 0; n < (int)g.nodes.size(); n++) group.nodes.push_back(n);
    group.output = y;
    std::vector<ValueId> inputs;
    Subgraph sub = make_subgraph(g, group, &inputs);
    LoweredTask lt = lower_subgraph(sub);
    out.push_back({family(sub.kind) + "/" + rule_name(build_space(lt, hw).rule), sub});
  }
  return out;
}

// True when every channel-blocked convolution of the subgraph has strides of 1.
inline bool blocked_conv_unit_stride(const Subgraph& sub) {
  for (const Node& n : sub.graph.nodes)
    if (n.op == Op::ConvNchwc)
      for (int64_t v : n.ints("strides", {1, 1}))
        if (v != 1) return false;
  return true;
}

inline std::vector<Tensor> random_inputs(const Subgraph& sub, uint64_t seed) {
  std::vector<Tensor> ins;
  for (size_t i = 0; i < sub.graph.inputs.size(); i++) {
    const Value& v = sub.graph.value(sub.graph.inputs[i]);
    ins.push_back(random_tensor(v.dtype, v.shape, seed + 31 * i));
  }
  return ins;
}

// A program built value by value: `pick(slot, j, options)` chooses the slot's j-th value among
// the options the space offers after the values before it (so the program is always valid).
template <class Pick>
Program build_program(const TaskSpace& space, Pick pick) {
  Program p;
  size_t slot = 0, pos = 0;  // the slot of the next value and that slot's first value
  while (p.values.size() < program_length(space)) {
    const size_t k = p.values.size();
    while (pos + space.slots[slot].arity <= k) pos += space.slots[slot++].arity;
    p.values.push_back(pick(space.slots[slot], k - pos, next_options(space, p.values)));
  }
  return p;
}

// Runs an (already scheduled or not) lowered task on `inputs`.
inline Tensor run_task(const LoweredTask& t, std::vector<Tensor>& inputs) {
  CompiledTask ct = compile_task(t, host_target());
  std::vector<Halide::Buffer<>> bufs;
  for (Tensor& x : inputs) bufs.push_back(halide_view(x.dtype(), x.raw(), x.shape()));
  const Value& ov = t.sub.graph.value(t.sub.graph.outputs[0]);
  Tensor out(ov.dtype, ov.shape);
  Halide::Buffer<> ob = halide_view(out.dtype(), out.raw(), out.shape());
  ct.run(bufs, ob);
  return out;
}

// Applies `p` to a fresh lowering of `sub` and runs it: false, after a test failure naming the
// program, when Halide refuses it (at compile or at run time, e.g. a tile shifted out of bounds).
inline bool run_program(const Subgraph& sub, const TaskSpace& space, const Program& p,
                        std::vector<Tensor>& inputs, Tensor* got) {
  try {
    LoweredTask t = lower_subgraph(sub);
    apply_program(t, space, p);
    *got = run_task(t, inputs);
    return true;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "program failed: " << e.what() << "\n" << program_str(space, p);
    return false;
  }
}

}  // namespace tlm::testing_space

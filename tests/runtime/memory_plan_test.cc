// The arena allocator and the lifetime analysis: overlapping lifetimes never share a byte, chains
// reuse memory, offsets are aligned, graph outputs outlive every later instance.
#include "runtime/memory_plan.h"

#include <gtest/gtest.h>

#include <random>

namespace tlm {
namespace {

// Every pair of buffers whose lifetimes overlap occupies disjoint byte ranges, all inside the
// arena.
void expect_valid(const std::vector<BufferLifetime>& bufs, const ArenaLayout& layout,
                  int64_t alignment) {
  ASSERT_EQ(layout.offsets.size(), bufs.size());
  for (size_t i = 0; i < bufs.size(); i++) {
    EXPECT_GE(layout.offsets[i], 0) << i;
    EXPECT_EQ(layout.offsets[i] % alignment, 0) << i;
    EXPECT_LE(layout.offsets[i] + bufs[i].bytes, layout.arena_bytes) << i;
  }
  for (size_t i = 0; i < bufs.size(); i++)
    for (size_t j = i + 1; j < bufs.size(); j++) {
      bool live_together = !(bufs[i].last < bufs[j].first || bufs[j].last < bufs[i].first);
      bool bytes_apart = layout.offsets[i] + bufs[i].bytes <= layout.offsets[j] ||
                         layout.offsets[j] + bufs[j].bytes <= layout.offsets[i];
      if (live_together && bufs[i].bytes > 0 && bufs[j].bytes > 0) {
        EXPECT_TRUE(bytes_apart) << "buffers " << i << " and " << j << " share bytes";
      }
    }
}

TEST(PlanOffsets, ChainReusesMemory) {
  // a->b->c->d->e: each buffer is read by the next instance only.
  std::vector<BufferLifetime> bufs;
  for (int k = 0; k < 5; k++) bufs.push_back({1024, k, k + 1});
  ArenaLayout layout = plan_offsets(bufs);
  expect_valid(bufs, layout, kArenaAlignment);
  EXPECT_EQ(layout.arena_bytes, 2 * 1024);
  EXPECT_EQ(layout.offsets[0], layout.offsets[2]);
  EXPECT_EQ(layout.offsets[1], layout.offsets[3]);
}

TEST(PlanOffsets, AllLiveTogetherNeedTheSum) {
  std::vector<BufferLifetime> bufs = {{100, 0, 3}, {200, 1, 3}, {300, 2, 3}};
  ArenaLayout layout = plan_offsets(bufs, 1);
  expect_valid(bufs, layout, 1);
  EXPECT_EQ(layout.arena_bytes, 600);
}

TEST(PlanOffsets, BestFitPicksTheSmallestGap) {
  // Largest first, all live at instance 0: C at [0,1000), L1 at [1000,1900), D at [1900,2200),
  // L2 at [2200,2400). C and D die after instance 1, leaving holes of 1000 and 300 bytes between
  // the long-lived L1 and L2; a 150-byte buffer born later goes into the 300-byte hole.
  std::vector<BufferLifetime> bufs = {
      {1000, 0, 1}, {900, 0, 10}, {300, 0, 1}, {200, 0, 10}, {150, 5, 6}};
  ArenaLayout layout = plan_offsets(bufs, 1);
  expect_valid(bufs, layout, 1);
  EXPECT_EQ(layout.offsets[0], 0);
  EXPECT_EQ(layout.offsets[1], 1000);
  EXPECT_EQ(layout.offsets[2], 1900);
  EXPECT_EQ(layout.offsets[3], 2200);
  EXPECT_EQ(layout.offsets[4], 1900);
  EXPECT_EQ(layout.arena_bytes, 2400);
}

TEST(PlanOffsets, AlignsEveryOffset) {
  std::vector<BufferLifetime> bufs = {{3, 0, 2}, {5, 1, 2}, {7, 2, 3}};
  ArenaLayout layout = plan_offsets(bufs, 64);
  expect_valid(bufs, layout, 64);
  EXPECT_EQ(layout.arena_bytes % 64, 0);
}

TEST(PlanOffsets, RandomLifetimesNeverShareBytes) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 50; trial++) {
    std::vector<BufferLifetime> bufs;
    int n = 1 + rng() % 60;
    int64_t sum = 0;
    for (int i = 0; i < n; i++) {
      int first = rng() % 40;
      int last = first + rng() % 10;
      int64_t bytes = 1 + rng() % 5000;
      bufs.push_back({bytes, first, last});
      sum += bytes;
    }
    ArenaLayout layout = plan_offsets(bufs, 16);
    expect_valid(bufs, layout, 16);
    EXPECT_LE(layout.arena_bytes, sum + 16 * n) << "trial " << trial;
  }
}

// The start of the hand-listed graphs below: value 0 the graph input x[1,256], value 1 a weight.
Graph input_and_weight() {
  Graph g;
  g.values.push_back(Value{"x", DType::F32, {1, 256}, nullptr});
  g.inputs.push_back(0);
  auto w = std::make_shared<const Tensor>(DType::F32, Shape{256});
  g.values.push_back(Value{"w", DType::F32, {256}, w});
  return g;
}

// A graph whose values are listed by hand; the partition is a plain instance list, so the test
// needs nothing but the IR structs.
Graph chain_graph(int n, Partition* p) {
  Graph g = input_and_weight();
  p->tasks.resize(1);
  for (int k = 0; k < n; k++) {
    g.values.push_back(Value{"a" + std::to_string(k), DType::F32, {1, 256}, nullptr});
    TaskInstance inst;
    inst.task = 0;
    inst.inputs = {k == 0 ? 0 : (ValueId)(k + 1), 1};
    inst.output = (ValueId)(k + 2);
    p->instances.push_back(inst);
  }
  return g;
}

TEST(PlanMemory, ChainOfInstancesUsesTwoSlots) {
  Partition p;
  Graph g = chain_graph(6, &p);
  g.outputs.push_back((ValueId)g.values.size() - 1);
  MemoryPlan plan = plan_memory(g, p);
  EXPECT_EQ(plan.offset[0], -1);  // graph input: bound in place
  EXPECT_EQ(plan.offset[1], -1);  // constant: bound in place
  EXPECT_EQ(plan.activation_bytes, 6 * 1024);
  EXPECT_EQ(plan.arena_bytes, 2 * 1024);
  for (int k = 0; k < 6; k++) {
    EXPECT_EQ(plan.lifetime[k + 2].first, k);
    EXPECT_EQ(plan.lifetime[k + 2].last, k == 5 ? 6 : k + 1);  // the output lives to the end
  }
}

TEST(PlanMemory, GraphOutputIsNotOverwrittenLater) {
  Partition p;
  Graph g = chain_graph(6, &p);
  g.outputs.push_back(3);  // a1, produced by instance 1, read by instance 2 only
  g.outputs.push_back((ValueId)g.values.size() - 1);
  MemoryPlan plan = plan_memory(g, p);
  EXPECT_EQ(plan.lifetime[3].last, 6);
  for (ValueId v = 4; v < (ValueId)g.values.size(); v++) {
    bool apart = plan.offset[3] + 1024 <= plan.offset[v] || plan.offset[v] + 1024 <= plan.offset[3];
    EXPECT_TRUE(apart) << "a1 shares bytes with " << g.value(v).name;
  }
  EXPECT_EQ(plan.arena_bytes, 3 * 1024);
}

TEST(PlanMemory, ReadBeforeProducedIsAnInternalError) {
  Partition p;
  Graph g = chain_graph(3, &p);
  std::swap(p.instances[0], p.instances[1]);
  EXPECT_THROW(plan_memory(g, p), InternalError);
}

// x -> a0 = t(x) -> v1 = view(a0) -> a2 = t(v1) -> v3 = view(v1) -> a4 = t(v3, a2) -> a5 = t(a4):
// task 0 computes, task 1 is a pure Reshape. Values: x 0, w 1, a0 2, v1 3, a2 4, v3 5, a4 6, a5 7.
Graph view_graph(Partition* p) {
  Graph g = input_and_weight();
  p->tasks.resize(2);
  Graph& sub = p->tasks[1].sub.graph;  // in0[1,256] -Reshape-> [256]
  sub.values.push_back(Value{"in0", DType::F32, {1, 256}, nullptr});
  sub.values.push_back(Value{"n0:0", DType::F32, {256}, nullptr});
  sub.inputs = {0};
  sub.outputs = {1};
  Node n;
  n.op = Op::Reshape;
  n.name = "n0";
  n.inputs = {0};
  n.outputs = {1};
  n.attrs["shape"] = std::vector<int64_t>{256};
  sub.nodes.push_back(n);
  EXPECT_TRUE(is_view_subgraph(sub));
  const std::vector<std::pair<int, std::vector<ValueId>>> steps = {
      {0, {0, 1}}, {1, {2}}, {0, {3, 1}}, {1, {3}}, {0, {5, 4}}, {0, {6, 1}}};
  for (size_t k = 0; k < steps.size(); k++) {
    const bool view = steps[k].first == 1;
    g.values.push_back(Value{(view ? "v" : "a") + std::to_string(k), DType::F32,
                             view ? Shape{256} : Shape{1, 256}, nullptr});
    TaskInstance inst;
    inst.task = steps[k].first;
    inst.inputs = steps[k].second;
    inst.output = (ValueId)(k + 2);
    p->instances.push_back(inst);
  }
  g.outputs.push_back(7);
  return g;
}

TEST(PlanMemory, ReshapesAreViewsOfTheirInput) {
  Partition p;
  Graph g = view_graph(&p);
  MemoryPlan plan = plan_memory(g, p, true);
  EXPECT_EQ(plan.views, 2);
  EXPECT_EQ(plan.view, (std::vector<bool>{false, true, false, true, false, false}));
  EXPECT_EQ(plan.offset[3], plan.offset[2]) << "v1 is a0's bytes";
  EXPECT_EQ(plan.offset[5], plan.offset[2]) << "v3 (a view of a view) is a0's bytes";
  // a0 lives until its last view is read (instance 4 reads v3).
  EXPECT_EQ(plan.lifetime[2].last, 4);
  for (ValueId v : {4, 6, 7}) {
    if (plan.lifetime[v].first > 4) continue;
    const bool apart =
        plan.offset[2] + 1024 <= plan.offset[v] || plan.offset[v] + 1024 <= plan.offset[2];
    EXPECT_TRUE(apart) << g.value(v).name << " shares bytes with a0 while a view of it is live";
  }
  EXPECT_EQ(plan.activation_bytes, 4 * 1024) << "views own no bytes";
  EXPECT_EQ(view_only_tasks(p, plan.view), (std::vector<bool>{false, true}));
  EXPECT_NE(memory_plan_summary(plan).find("2 reshapes are views"), std::string::npos)
      << memory_plan_summary(plan);

  MemoryPlan off = plan_memory(g, p, false);
  EXPECT_EQ(off.views, 0);
  EXPECT_EQ(off.view, std::vector<bool>(6, false));
  EXPECT_EQ(off.activation_bytes, 6 * 1024);
  EXPECT_NE(off.offset[3], off.offset[2]);
}

TEST(PlanMemory, NoViewOfAGraphInputOrOutput) {
  Partition p;
  Graph g = view_graph(&p);
  p.instances[1].inputs = {0};  // v1 = view(x): x is bound in place, not in the arena
  g.outputs.push_back(5);       // v3 is a graph output: it gets its own bytes
  MemoryPlan plan = plan_memory(g, p, true);
  EXPECT_EQ(plan.views, 0);
  EXPECT_EQ(plan.view, std::vector<bool>(6, false));

  Partition q;
  Graph h = view_graph(&q);
  h.outputs.push_back(2);  // a0 is a graph output: its views copy it
  plan = plan_memory(h, q, true);
  EXPECT_EQ(plan.view[1], false);
  EXPECT_EQ(plan.view[3], true) << "v3 = view(v1): v1 owns its bytes and is no output";
  EXPECT_EQ(plan.offset[5], plan.offset[3]);
  EXPECT_EQ(view_only_tasks(q, plan.view), (std::vector<bool>{false, false}))
      << "one instance of the reshape task still runs";
}

TEST(FormatBytes, Units) {
  EXPECT_EQ(format_bytes(640), "640 B");
  EXPECT_EQ(format_bytes(2048), "2.0 KiB");
  EXPECT_EQ(format_bytes(3 * 1024 * 1024 + 512 * 1024), "3.5 MiB");
}

}  // namespace
}  // namespace tlm

// A zoo model at small size through the whole runtime: build, prepare, partition, compile with
// the default schedules, run, and compare with the reference interpreter.
#include <gtest/gtest.h>

#include "graph/interpreter.h"
#include "graph/passes.h"
#include "runtime/executor.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

TEST(ZooEndToEnd, Resnet18AtImage64MatchesInterpreter) {
  Graph g = build_zoo_model("resnet18:image=64", 3);
  prepare_graph(g);
  Partition p = partition_graph(g);
  ASSERT_GT(p.tasks.size(), 5u);
  CompiledModel m = compile_model(g, p);
  ASSERT_EQ(g.inputs.size(), 1u);
  std::vector<Tensor> ins = {random_tensor(DType::F32, g.value(g.inputs[0]).shape, 11)};
  std::vector<Tensor> got = m.run(ins);
  std::vector<Tensor> want = interpret(g, ins);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); i++)
    EXPECT_LE(max_rel_violation(got[i], want[i], 1e-3, 1e-3), 1.0) << "output " << i;
  // Activations reuse memory: the arena is well below the sum of all activations.
  const MemoryPlan& plan = m.memory_plan();
  EXPECT_LT(plan.arena_bytes, plan.activation_bytes / 2) << memory_plan_summary(plan);
}

}  // namespace
}  // namespace tlm

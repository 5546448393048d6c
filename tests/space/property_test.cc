// Every point of the space computes the right answer (STYLE.md habit 8): for a representative
// task of every family and rule, random programs (fixed seed) are applied, compiled and run on
// random inputs and compared with the reference interpreter.
#include <chrono>
#include <cstdio>
#include <set>

#include "space/space_cases.h"

namespace tlm::testing_space {
namespace {

constexpr int kProgramsPerTask = 5;

TEST(SpaceProperty, RandomProgramsComputeTheRightAnswer) {
  HardwareInfo hw = detect_hardware();
  std::vector<TaskCase> cases = representative_tasks(hw);
  // The families the zoo and the hand-built graphs must cover.
  std::map<std::string, bool> have;
  for (const TaskCase& c : cases) have[c.name.substr(0, c.name.find("/hand"))] = true;
  for (const char* want :
       {"conv1d/tiled", "conv2d/tiled", "conv3d/tiled", "depthwise_conv2d/tiled",
        "group_conv2d/tiled", "conv2d_transpose/tiled", "dense/tiled", "batch_matmul/tiled",
        "conv2d/rows", "max_pool2d/rows", "avg_pool2d/rows", "global_avg_pool2d/rows",
        "reduce_mean/rows", "reduce_sum/rows", "softmax/rows", "layer_norm/rows", "elemwise/rows",
        "injective/rows", "conv2d_nchwc/tiled", "conv2d_nchwc/tiled/plain",
        "depthwise_conv2d_nchwc/tiled", "max_pool3d/rows"})
    EXPECT_TRUE(have[want]) << "no representative task for " << want;

  std::mt19937_64 rng(2024);
  int total = 0;
  for (const TaskCase& c : cases) {
    SCOPED_TRACE(c.name + " " + c.sub.kind);
    std::vector<Tensor> inputs = random_inputs(c.sub, 99);
    Tensor ref = interpret(c.sub.graph, inputs).at(0);
    LoweredTask probe = lower_subgraph(c.sub);
    TaskSpace space = build_space(probe, hw);
    double worst = 0, compile_s = 0;
    for (int k = 0; k < kProgramsPerTask; k++) {
      Program p = sample_program(space, rng);
      auto t0 = std::chrono::steady_clock::now();
      Tensor got;
      if (!run_program(c.sub, space, p, inputs, &got)) continue;
      compile_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      ASSERT_EQ(got.shape(), ref.shape());
      double viol = max_rel_violation(got, ref, 1e-3, 1e-3);
      worst = std::max(worst, viol);
      EXPECT_LE(viol, 1.0) << "wrong answer for\n" << program_str(space, p);
      total++;
    }
    std::printf("[space] %-26s %-40s log10|S| %5.1f  programs %d  worst %.3g  %.2fs each\n",
                c.name.c_str(), c.sub.kind.c_str(), space.log10_size, kProgramsPerTask, worst,
                compile_s / kProgramsPerTask);
  }
  EXPECT_GE(total, 22 * kProgramsPerTask);
}

}  // namespace
}  // namespace tlm::testing_space

namespace tlm::testing_space {
namespace {

// The expert programs (space/expert.cc) are points of the space like any other: valid, distinct,
// and computing the right answer; every task whose space has more than one program has some.
TEST(SpaceProperty, ExpertProgramsAreValidAndComputeTheRightAnswer) {
  HardwareInfo hw = detect_hardware();
  int tiled = 0;
  for (const TaskCase& c : representative_tasks(hw)) {
    SCOPED_TRACE(c.name + " " + c.sub.kind);
    LoweredTask probe = lower_subgraph(c.sub);
    TaskSpace space = build_space(probe, hw);
    std::vector<Program> experts = expert_programs(space, hw);
    if (program_length(space) == 0) {
      EXPECT_TRUE(experts.empty());
      continue;
    }
    tiled += space.rule == SpaceRule::TiledAnchor;
    ASSERT_FALSE(experts.empty());
    std::set<std::vector<int64_t>> distinct;
    for (const Program& p : experts) {
      EXPECT_TRUE(is_valid_program(space, p)) << program_str(space, p);
      distinct.insert(p.values);
    }
    EXPECT_EQ(distinct.size(), experts.size());
    // Deterministic: the same space gives the same programs.
    EXPECT_EQ(expert_programs(space, hw).front(), experts.front());
    std::vector<Tensor> inputs = random_inputs(c.sub, 7);
    Tensor ref = interpret(c.sub.graph, inputs).at(0);
    // Every third (compile time) and the last (the variants appended last: depthwise along the
    // width, the matrix-vector target).
    std::set<size_t> checked = {experts.size() - 1};
    for (size_t k = 0; k < experts.size(); k += 3) checked.insert(k);
    for (size_t k : checked) {
      LoweredTask t = lower_subgraph(c.sub);
      apply_program(t, space, experts[k]);
      Tensor got = run_task(t, inputs);
      ASSERT_EQ(got.shape(), ref.shape());
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0)
          << "wrong answer for\n" << program_str(space, experts[k]);
    }
  }
  EXPECT_GE(tiled, 8);
}

}  // namespace
}  // namespace tlm::testing_space

// Every point of the space computes the right answer (STYLE.md habit 8): for a representative
// task of every family and rule, random programs (fixed seed) are applied, compiled and run on
// random inputs and compared with the reference interpreter.
#include <chrono>
#include <cstdio>
#include <set>

#include "fixtures/known_programs.h"
#include "fixtures/task_cases.h"
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

namespace tlm::testing_space {
namespace {

// Number of a program's Pad decisions that round their extent up (the tile then need not divide
// the extent: shifted or partial tiles).
int padded_slots(const TaskSpace& space, const Program& p) {
  int n = 0;
  size_t at = 0;
  for (const Slot& s : space.slots) {
    const int64_t m = p.values.at(at);
    if (s.kind == StepKind::Pad && m > 1 && s.extent % m != 0) n++;
    at += s.arity;
  }
  return n;
}

// The pointwise convolutions over flattened pixels (graph/layout.cc) have extents like 196 and 49
// that only padded tiles cut into vectors and register blocks. Random programs with a padded var,
// built with Halide's assertions on (as a model is): none may need more of an input than it has,
// which Halide checks from its inferred bounds, not from the reads.
TEST(SpaceProperty, PaddedFlattenedPointwiseProgramsPassTheBoundsChecks) {
  HardwareInfo hw = detect_hardware();
  Graph g = build_zoo_model("mobilenet_v2:image=56", 7);
  prepare_graph(g);
  block_channels(g, 8);
  std::mt19937_64 rng(11);
  int checked = 0;
  std::set<int64_t> pixels;  // flattened extents seen
  for (const Task& t : partition_graph(g).tasks) {
    const Graph& sg = t.sub.graph;
    bool flat = false;
    for (const Node& n : sg.nodes)
      if (n.op == Op::ConvNchwc && sg.value(n.outputs[0]).shape.size() == 5 &&
          sg.value(n.outputs[0]).shape[2] == 1 && sg.value(n.outputs[0]).shape[3] > 40)
        flat = true;
    if (!flat) continue;
    SCOPED_TRACE(t.sub.kind);
    LoweredTask probe = lower_subgraph(t.sub);
    TaskSpace space = build_space(probe, hw);
    std::vector<Tensor> inputs = random_inputs(t.sub, 5);
    Tensor ref = interpret(sg, inputs).at(0);
    int here = 0;
    for (int tries = 0; tries < 400 && here < 2; tries++) {
      Program p = sample_program(space, rng);
      if (padded_slots(space, p) == 0) continue;
      Tensor got;
      if (!run_program(t.sub, space, p, inputs, &got)) continue;
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << "wrong answer for\n"
                                                              << program_str(space, p);
      here++;
    }
    EXPECT_EQ(here, 2) << "too few padded programs sampled";
    checked += here;
    pixels.insert(sg.value(sg.outputs[0]).shape[3]);
  }
  EXPECT_TRUE(pixels.count(196) && pixels.count(49)) << "no flattened 14x14 or 7x7 task";
  EXPECT_GE(checked, 8);
}

// An operand copied inside the accumulator's update (pack at S1, R0 or S2) along a padded var: the
// copy's region is what Halide infers from the update's guarded or shifted tiles, and it was not
// always what the update reads (wrong answers, and a weight read past its last channel, found by
// the tuner's final timing in session 66). Such operands are read where they lie now
// (apply_tiled.cc, indexes_padded_var). Built with Halide's assertions on, random programs with
// every operand packed inside the update, and the programs that failed before, must run and
// compute the right answer.
TEST(SpaceProperty, OperandsPackedInsideAPaddedUpdatePassTheBoundsChecks) {
  HardwareInfo hw = detect_hardware();
  std::vector<Subgraph> subs = {testing_tune::only_task(testing_tune::conv_graph()),
                                matmul_subgraph(56, 24, 50)};
  std::mt19937_64 rng(17);
  int checked = 0;
  for (const Subgraph& sub : subs) {
    SCOPED_TRACE(sub.kind);
    TaskSpace space = build_space(lower_subgraph(sub), hw);
    std::vector<Tensor> inputs = random_inputs(sub, 3);
    Tensor ref = interpret(sub.graph, inputs).at(0);
    int here = 0;
    for (int tries = 0; tries < 800 && here < 24; tries++) {
      // Pads above 1 and every operand packed inside the update; the rest at random.
      Program p = build_program(space, [&](const Slot& s, size_t, const std::vector<int64_t>& o) {
        if (s.kind == StepKind::Pad && o.size() > 1) return o[1 + rng() % (o.size() - 1)];
        if (s.kind == StepKind::Pack) {
          const int64_t inside[] = {3, 4, 5};  // kPackS1, kPackR0, kPackS2 (space_internal.h)
          return inside[rng() % 3];
        }
        return o[rng() % o.size()];
      });
      if (padded_slots(space, p) == 0) continue;
      ASSERT_TRUE(is_valid_program(space, p));
      Tensor got;
      if (!run_program(sub, space, p, inputs, &got)) continue;
      EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << "wrong answer for\n"
                                                              << program_str(space, p);
      here++;
    }
    EXPECT_EQ(here, 24) << "too few padded programs";
    checked += here;
  }
  EXPECT_EQ(checked, 48);
  // Programs that failed before, in slot order (printed by program_str). The conv: 16 output
  // channels padded to 18 in shifted tiles of 3, the weight copied per row of register blocks
  // (S2 = 5): "in1_w0 is accessed at 17". The matmuls (pad, tile x3 of N; pad, tile x3 of M; K
  // chunk, order, compute_at, vectorize, parallel, pack A, pack B, unroll): A copied per K chunk
  // (R0 = 4) or per row of register blocks along its padded rows computed nothing (every output
  // 0), and B copied along its padded, vectorized columns gave wrong values.
  const std::vector<std::pair<int, std::vector<int64_t>>> failed = {
      {0, {4, 3, 1, 3, 1, 4, 3, 6, 3, 1, 1, 1, 1, 1, 1, 1, 0, 3, 5, 8}},
      {1, {8, 8, 7, 1, 16, 1, 32, 2, 6, 1, 1, 1, 2, 4, 4, 8}},
      {1, {8, 28, 2, 1, 6, 5, 6, 2, 1, 1, 1, 1, 2, 5, 5, 128}},
      {1, {8, 4, 7, 2, 3, 19, 3, 1, 8, 0, 1, 0, 0, 4, 5, 128}}};
  for (const auto& [which, values] : failed) {
    const Subgraph& sub = subs[which];
    TaskSpace space = build_space(lower_subgraph(sub), hw);
    std::vector<Tensor> inputs = random_inputs(sub, 3);
    Tensor ref = interpret(sub.graph, inputs).at(0);
    Program p;
    p.values = values;
    ASSERT_TRUE(is_valid_program(space, p)) << program_str(space, p);
    Tensor got;
    if (!run_program(sub, space, p, inputs, &got)) continue;
    EXPECT_LE(max_rel_violation(got, ref, 1e-3, 1e-3), 1.0) << "wrong answer for\n"
                                                            << program_str(space, p);
  }
}

}  // namespace
}  // namespace tlm::testing_space

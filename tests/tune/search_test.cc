// The pieces of the search that need no measurement: genetic operators, unseen sampling,
// features, the XGBoost cost model and the task scheduler.
#include "tune/search.h"

#include <cmath>
#include <random>
#include <set>

#include "fixtures/task_cases.h"
#include "space/features.h"
#include "tune/cost_model.h"
#include "tune/scheduler.h"

namespace tlm::testing_tune {
namespace {

struct Spaces {
  std::unique_ptr<TaskHarness> matmul, conv;
  Spaces() {
    HardwareInfo hw = detect_hardware();
    matmul = make_task_harness(only_task(matmul_graph()), hw, "unit");
    conv = make_task_harness(only_task(conv_graph()), hw, "unit");
  }
};
const Spaces& spaces() {
  static Spaces s;
  return s;
}

TEST(GeneticOperators, ChildrenAreValidAndDiffer) {
  std::mt19937_64 rng(11);
  for (const TaskHarness* b : {spaces().matmul.get(), spaces().conv.get()}) {
    const TaskSpace& space = b->space;
    int mutated_differ = 0, crossed_differ = 0;
    for (int i = 0; i < 100; i++) {
      Program a = sample_program(space, rng), c = sample_program(space, rng);
      Program m = mutate_program(space, a, rng);
      ASSERT_TRUE(is_valid_program(space, m)) << program_str(space, m);
      mutated_differ += !(m == a);
      Program x = crossover_programs(space, a, c, rng);
      ASSERT_TRUE(is_valid_program(space, x)) << program_str(space, x);
      crossed_differ += !(x == a) && !(x == c);
      // Every value of a crossover child comes from a parent unless it had to be repaired;
      // crossing a program with itself changes nothing.
      EXPECT_EQ(crossover_programs(space, a, a, rng), a);
    }
    EXPECT_GT(mutated_differ, 80);  // a mutation changes a slot that has alternatives
    EXPECT_GT(crossed_differ, 20);
  }
}

TEST(GeneticOperators, MutationKeepsMostOfTheParent) {
  std::mt19937_64 rng(12);
  const TaskSpace& space = spaces().conv->space;
  int kept = 0, total = 0;
  for (int i = 0; i < 50; i++) {
    Program a = sample_program(space, rng);
    Program m = mutate_program(space, a, rng);
    for (size_t k = 0; k < a.values.size(); k++) kept += a.values[k] == m.values[k];
    total += (int)a.values.size();
  }
  EXPECT_GT(kept, total / 2);
}

TEST(Sampling, UnseenSamplesAreNewAndExhaustionIsDetected) {
  Graph g;  // an elementwise task: a tiny space
  ValueId x = g.add_input("x", DType::F32, {2, 3});
  g.mark_output(g.add(Op::Relu, {x}));
  std::unique_ptr<TaskHarness> b = make_task_harness(only_task(g), detect_hardware(), "unit");
  TaskSearch t;
  t.harness = b.get();
  std::mt19937_64 rng(3);
  std::set<std::vector<int64_t>> got;
  for (int round = 0; round < 100 && !t.exhausted; round++)
    for (const Program& p : sample_unseen(t, 8, rng)) {
      EXPECT_TRUE(got.insert(p.values).second) << "a program was proposed twice";
      EXPECT_TRUE(is_valid_program(b->space, p));
    }
  EXPECT_TRUE(t.exhausted);
  EXPECT_GE(got.size(), 1u);
  EXPECT_LT(got.size(), 800u);
}

// expert-evolutionary: the task's expert programs first, in their order (one already measured is
// skipped), then evolutionary proposals: valid, unseen, full batches.
TEST(ExpertEvolutionary, ExpertProgramsFirstThenEvolution) {
  const TaskHarness& h = *spaces().conv;
  std::vector<Program> experts = expert_programs(h.space, h.hw);
  ASSERT_GE(experts.size(), 3u);
  std::unique_ptr<SearchPolicy> s = make_expert_evolutionary_search();
  EXPECT_STREQ(s->name(), "expert-evolutionary");
  TaskSearch t;
  t.harness = &h;
  t.add(experts[1], 1e-3);  // measured before (e.g. read from the records)
  std::mt19937_64 rng(2);
  std::vector<Program> got;
  while (got.size() < experts.size() + 8) {
    std::vector<Program> b = s->propose(t, 4, rng);
    ASSERT_EQ(b.size(), 4u);
    for (const Program& p : b) {
      EXPECT_TRUE(is_valid_program(h.space, p));
      double fake = 1e-3;  // a made-up latency, so that the cost model has something to learn
      for (size_t i = 0; i < p.values.size(); i++) fake += 1e-6 * (double)(p.values[i] % 7);
      t.add(p, fake);
      got.push_back(p);
    }
  }
  std::vector<Program> want = experts;
  want.erase(want.begin() + 1);
  for (size_t i = 0; i < want.size(); i++) EXPECT_EQ(got[i], want[i]) << "proposal " << i;
  std::set<std::vector<int64_t>> distinct = {experts[1].values};
  for (const Program& p : got) EXPECT_TRUE(distinct.insert(p.values).second) << "proposed twice";
}

TEST(Features, FixedLengthAndFinite) {
  std::mt19937_64 rng(5);
  for (const TaskHarness* b : {spaces().matmul.get(), spaces().conv.get()}) {
    size_t n = feature_count(b->space);
    EXPECT_GT(n, 15u);
    std::set<std::vector<float>> distinct;
    for (int i = 0; i < 30; i++) {
      std::vector<float> f = program_features(b->space, sample_program(b->space, rng));
      ASSERT_EQ(f.size(), n);
      for (float v : f) EXPECT_TRUE(std::isfinite(v));
      distinct.insert(f);
    }
    EXPECT_GT(distinct.size(), 20u);  // different programs, different vectors
  }
}

TEST(CostModel, LearnsARanking) {
  // y = throughput of a made-up latency model: the first feature matters most.
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(0, 4);
  std::vector<std::vector<float>> x;
  std::vector<double> lat;
  for (int i = 0; i < 64; i++) {
    std::vector<float> row = {u(rng), u(rng), u(rng)};
    lat.push_back(1e-3 * (1 + row[0] + 0.1 * row[1]));
    x.push_back(row);
  }
  lat[3] = -1;  // a failed program
  std::vector<float> y = throughput_labels(lat);
  EXPECT_FLOAT_EQ(y[3], 0.f);
  EXPECT_FLOAT_EQ(*std::max_element(y.begin(), y.end()), 1.f);
  CostModel m;
  EXPECT_FALSE(m.trained());
  m.fit(x, y);
  ASSERT_TRUE(m.trained());
  std::vector<float> s = m.predict({{0.1f, 1, 1}, {3.9f, 1, 1}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_GT(s[0], s[1]);  // the fast one scores higher
  m.fit(x, y);            // refitting replaces the model
  EXPECT_EQ(m.predict(x).size(), x.size());
}

TEST(Scheduler, WarmUpThenGradient) {
  SchedulerOptions o;
  o.warmup = 2;
  o.window = 2;
  TaskScheduler s({1.0, 4.0, 1.0}, o);
  // Round robin until every task has its warm-up trials.
  std::vector<int> order;
  for (int i = 0; i < 6; i++) {
    int k = s.next_task();
    order.push_back(k);
    s.record(k, k == 1 ? 2e-3 : 1e-3);
  }
  EXPECT_EQ(order, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  // Task 1 weighs 4x and is 2x slower: it has the largest gradient.
  EXPECT_EQ(s.next_task(), 1);
  EXPECT_DOUBLE_EQ(s.best(1), 2e-3);
  EXPECT_DOUBLE_EQ(s.weighted_best(), 1e-3 + 4 * 2e-3 + 1e-3);
  s.mark_done(1);
  int k = s.next_task();
  EXPECT_TRUE(k == 0 || k == 2);
  s.mark_done(0);
  s.mark_done(2);
  EXPECT_EQ(s.next_task(), -1);
}

TEST(Scheduler, TaskWithoutValidProgramFirstThenLast) {
  SchedulerOptions o;
  o.warmup = 1;
  o.window = 1;
  TaskScheduler s({1.0, 1.0}, o);
  s.record(0, 1e-3);
  s.record(1, -1);              // failed
  EXPECT_EQ(s.next_task(), 1);  // no valid program yet: keep trying
  s.record(1, -1);
  EXPECT_EQ(s.next_task(), 0);  // twice the warm-up without one: lowest priority
  EXPECT_TRUE(std::isinf(s.best(1)));
}

}  // namespace
}  // namespace tlm::testing_tune

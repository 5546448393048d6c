// In-model selection (tune/in_model.h): every finalist is verified before it is timed, one that
// fails is reported and cannot be picked, the current choices failing is an error, every valid
// finalist runs in about the same number of randomly assigned turns (seeded), and the pick is the
// fastest by the median over turns (ties keep the current choice).
#include "tune/in_model.h"

#include <algorithm>
#include <functional>
#include <random>
#include <sstream>

#include "fixtures/task_cases.h"
#include "graph/interpreter.h"
#include "measure/harness.h"
#include "measure/worker.h"
#include "support/error.h"

namespace tlm::testing_tune {
namespace {

TEST(InModel, PickIsTheFastestMedianAndTiesKeepTheCurrentChoice) {
  InModelTimings t;
  t.sets = 3;
  t.turns_s = {{{3, 3, 9}, {2, 4, 4}, {}},  // medians 3, 4, untimed
               {{5, 5, 5}, {5, 5, 5}},      // a tie
               {{1, 1, 1}, {9, 0.5, 0.5}},  // median 0.5 < 1
               {}};                         // no finalists
  EXPECT_EQ(pick_in_model(t), (std::vector<int>{0, 0, 1, -1}));
}

// Runs in a worker: compiling a model starts Halide's thread pool, which forked workers of later
// tests must not inherit.
TEST(InModel, FinalistsThatFailAreNotTimedAndTheCurrentChoicesMustWork) {
  WorkerResult w = run_isolated(
      [] {
        Graph g = tiny_model();
        Partition p = partition_graph(g);
        const HardwareInfo hw = detect_hardware();
        std::vector<std::vector<std::string>> finalists(p.tasks.size());
        std::mt19937_64 rng(3);
        for (size_t i = 0; i < p.tasks.size(); i++) {
          std::unique_ptr<TaskHarness> h = make_task_harness(p.tasks[i].sub, hw, "unit");
          finalists[i] = {h->printer->text(sample_program(h->space, rng)),
                          h->printer->text(sample_program(h->space, rng))};
        }
        finalists[0].push_back("not a sentence of this task");  // cannot compile
        InModelOptions o;
        o.turns = 6;
        o.runs_per_turn = 1;
        const std::vector<Tensor> inputs = {random_tensor(DType::F32, {1, 4, 8, 8}, 5)};
        const std::vector<Tensor> ref = interpret(g, inputs);
        InModelTimings t = time_finalists_in_model(g, p, hw, finalists, inputs, ref, o);
        std::ostringstream os;
        os << t.sets << " " << (t.errors[0][0].empty() && t.errors[0][1].empty()) << " "
           << !t.errors[0][2].empty() << " " << t.turns_s[0][2].size();
        // Two valid finalists per task, dealt from decks: three turns each.
        for (size_t i = 0; i < p.tasks.size(); i++)
          os << " " << t.turns_s[i][0].size() << " " << t.turns_s[i][1].size();
        std::vector<int> pick = pick_in_model(t);
        os << " " << (pick[0] == 0 || pick[0] == 1);
        // The same seed deals the same assignments, and they mix: some turn runs tasks at
        // different finalists (timing whole sets, every task's j-th at once, never does).
        InModelTimings again = time_finalists_in_model(g, p, hw, finalists, inputs, ref, o);
        int mixed = 0;
        for (const std::vector<int>& a : t.assignments)
          mixed += std::adjacent_find(a.begin(), a.end(), std::not_equal_to<int>()) != a.end();
        os << " " << (t.assignments == again.assignments && t.assignments.size() == 6) << " "
           << mixed;
        // The current choices themselves failing is the caller's error.
        finalists[0][0] = "not a sentence of this task";
        try {
          time_finalists_in_model(g, p, hw, finalists, inputs, ref, o);
          os << " no-error";
        } catch (const UserError& e) {
          os << " " << (std::string(e.what()).find("current program") != std::string::npos);
        }
        return os.str();
      },
      300);
  ASSERT_EQ(w.status, WorkerStatus::Ok) << w.describe() << w.payload;
  std::istringstream is(w.payload);
  int sets = 0, first_two_ok = 0, third_failed = 0, third_timed = 0;
  is >> sets >> first_two_ok >> third_failed >> third_timed;
  EXPECT_EQ(sets, 3) << w.payload;
  EXPECT_EQ(first_two_ok, 1) << w.payload;
  EXPECT_EQ(third_failed, 1) << w.payload;
  EXPECT_EQ(third_timed, 0) << w.payload;
  for (int i = 0; i < 3; i++) {  // the tiny model's three tasks
    int a = 0, b = 0;
    is >> a >> b;
    EXPECT_EQ(a, 3) << w.payload;
    EXPECT_EQ(b, 3) << w.payload;
  }
  int pick_ok = 0, same = 0, mixed = 0, error_named = 0;
  is >> pick_ok >> same >> mixed >> error_named;
  EXPECT_EQ(pick_ok, 1) << w.payload;
  EXPECT_EQ(same, 1) << w.payload;
  EXPECT_GT(mixed, 0) << w.payload;
  EXPECT_EQ(error_named, 1) << w.payload;
}

// The turn's speed is taken out: task 0's finalist 0 (1.0 s) runs only in slow turns (x1.5) and
// its finalist 1 (1.1 s) only in fast ones, so raw medians would pick the slower finalist; the
// other tasks, whose programs are the same in every turn, tell each turn's speed.
TEST(InModel, TheTurnsSpeedIsTakenOutBeforeFinalistsAreCompared) {
  const std::vector<double> speed = {1.5, 1.0, 1.5, 1.0, 1.5, 1.0};
  std::vector<std::vector<double>> raw;
  std::vector<std::vector<int>> assign;
  for (size_t k = 0; k < speed.size(); k++) {
    const int v = k % 2 == 0 ? 0 : 1;
    raw.push_back(
        {(v == 0 ? 1.0 : 1.1) * speed[k], 2.0 * speed[k], 0.5 * speed[k], 3.0 * speed[k]});
    assign.push_back({v, 0, 0, 0});
  }
  InModelTimings raw_t;
  raw_t.turns_s = {{{}, {}}, {{}}, {{}}, {}};
  for (size_t k = 0; k < speed.size(); k++) raw_t.turns_s[0][assign[k][0]].push_back(raw[k][0]);
  ASSERT_EQ(pick_in_model(raw_t)[0], 1);  // what the raw medians say (1.5 vs 1.1)

  InModelTimings t;
  t.turns_s = speed_adjusted_turns(raw, assign, {2, 1, 1, 0});
  ASSERT_EQ(t.turns_s.size(), 4u);
  ASSERT_EQ(t.turns_s[0].size(), 2u);
  EXPECT_EQ(t.turns_s[0][0].size(), 3u);
  EXPECT_EQ(t.turns_s[0][1].size(), 3u);
  EXPECT_TRUE(t.turns_s[3].empty());  // the default schedule: no finalist to time
  EXPECT_EQ(pick_in_model(t)[0], 0);
  // At the median turn's speed every turn of a fixed program takes the same time.
  for (double x : t.turns_s[1][0]) EXPECT_NEAR(x, t.turns_s[1][0][0], 1e-9);
  const double ratio = t.turns_s[0][1][0] / t.turns_s[0][0][0];
  EXPECT_NEAR(ratio, 1.1, 1e-6);
}

}  // namespace
}  // namespace tlm::testing_tune

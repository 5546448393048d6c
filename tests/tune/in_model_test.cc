// In-model selection (tune/in_model.h): every schedule set is verified before it is timed, a set
// that fails is reported and its finalists cannot be picked, the current choices failing is an
// error, and the pick is the fastest by the median over turns (ties keep the current choice).
#include "tune/in_model.h"

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
TEST(InModel, SetsThatFailAreNotTimedAndTheCurrentChoicesMustWork) {
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
        finalists[0].push_back("not a sentence of this task");  // set 2 cannot compile
        InModelOptions o;
        o.turns = 2;
        o.runs_per_turn = 1;
        const std::vector<Tensor> inputs = {random_tensor(DType::F32, {1, 4, 8, 8}, 5)};
        const std::vector<Tensor> ref = interpret(g, inputs);
        InModelTimings t = time_finalists_in_model(g, p, hw, finalists, inputs, ref, o);
        std::ostringstream os;
        os << t.sets << " " << (t.set_errors[0].empty() && t.set_errors[1].empty()) << " "
           << !t.set_errors[2].empty() << " " << t.turns_s[0][2].size();
        for (size_t i = 0; i < p.tasks.size(); i++)
          os << " " << t.turns_s[i][0].size() << " " << t.turns_s[i][1].size();
        std::vector<int> pick = pick_in_model(t);
        os << " " << (pick[0] == 0 || pick[0] == 1);
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
  for (int i = 0; i < 3; i++) {  // the tiny model's three tasks: two turns each finalist
    int a = 0, b = 0;
    is >> a >> b;
    EXPECT_EQ(a, 2) << w.payload;
    EXPECT_EQ(b, 2) << w.payload;
  }
  int pick_ok = 0, error_named = 0;
  is >> pick_ok >> error_named;
  EXPECT_EQ(pick_ok, 1) << w.payload;
  EXPECT_EQ(error_named, 1) << w.payload;
}

}  // namespace
}  // namespace tlm::testing_tune

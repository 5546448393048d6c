// What gets deployed from a task's measured programs (deployed_choice): the fastest, except that
// at two or more threads a blocked convolution takes its fastest row-split program when that is
// within kRowSplitTolerance of the fastest (space.h, "Row splits"), and it is chosen among the
// tuner's re-measurements where there are any, unless the tuner timed the task's finalists inside
// the model. Records of the operand order before session 48 still match their tasks.
#include "measure/recorded_schedules.h"

#include <unistd.h>

#include <cstdio>
#include <random>

#include "graph/passes.h"
#include "lower/autoschedule.h"
#include "measure/harness.h"
#include "measure/records.h"
#include "space/space_cases.h"
#include "support/error.h"

namespace tlm::testing_space {
namespace {

TEST(RecordedSchedules, RowSplitsWithinTheToleranceAreDeployedAtTwoThreads) {
  HardwareInfo hw = detect_hardware();
  const TaskCase* conv = nullptr;
  std::vector<TaskCase> cases = representative_tasks(hw);
  for (const TaskCase& c : cases)
    if (c.name == "conv2d_nchwc/tiled") conv = &c;
  ASSERT_NE(conv, nullptr);
  LoweredTask lowered = lower_subgraph(conv->sub);
  TaskSpace space = build_space(lowered, hw);
  TaskPrinter printer(conv->sub, hw, space);
  std::mt19937_64 rng(9);
  Program channels, rows;
  for (int i = 0; i < 500; i++) {
    channels = sample_program(space, rng);
    if (row_split_variant(space, channels, 2, &rows)) break;
  }
  ASSERT_TRUE(splits_rows(space, rows, 2));
  const std::string c = printer.text(channels), r = printer.text(rows);
  const double near = 1 + kRowSplitTolerance / 2, far = 1 + 2 * kRowSplitTolerance;
  EXPECT_EQ(deployed_choice(printer, 2, {{1.0, c}, {near, r}}), r);
  EXPECT_EQ(deployed_choice(printer, 2, {{1.0, c}, {far, r}}), c);
  EXPECT_EQ(deployed_choice(printer, 1, {{1.0, c}, {near, r}}), c);  // one thread: the fastest
  EXPECT_EQ(deployed_choice(printer, 2, {{1.0, r}, {1.01, c}}), r);
  const std::string marker = autoscheduler_marker(HalideAutoscheduler::Mullapudi2016);
  EXPECT_EQ(deployed_choice(printer, 2, {{1.0, marker}, {near, r}}), marker);
}

// A search times each program once, with few samples; the tuner then re-measures its best few
// and deploys the fastest re-measured one. What a model deploys from the records must be that
// choice, not a lucky search sample: a task with re-measurements ranks only its re-measured
// programs (and autoscheduler markers), each by its latest re-measurement; a task without ranks
// every record.
TEST(RecordedSchedules, ReMeasurementsDecideWhatIsDeployed) {
  auto rec = [](const std::string& sentence, const std::string& strategy, double ms) {
    MeasureRecord r;
    r.task_key = "t";
    r.sentence = sentence;
    r.strategy = strategy;
    r.latencies_s = {ms * 1e-3};
    r.median_s = ms * 1e-3;
    return r;
  };
  const std::string marker = autoscheduler_marker(HalideAutoscheduler::Li2018);
  const std::vector<MeasureRecord> rs = {
      rec("lucky", "evolutionary", 1.0),              // re-measured slower: 1.5
      rec("steady", "evolutionary", 1.2),             // re-measured 1.1, then 1.3
      rec("unconfirmed", "evolutionary", 0.9),        // never re-measured
      rec("lucky", "evolutionary/remeasure", 1.5),    //
      rec("steady", "evolutionary/remeasure", 1.1),   //
      rec(marker, "halide-li2018", 1.4),              // timed like a re-measurement
      rec("steady", "evolutionary/remeasure", 1.3)};  // the latest counts
  auto sentences = [](const std::vector<std::pair<double, std::string>>& ranked) {
    std::vector<std::string> out;
    for (const auto& [s, sentence] : ranked) out.push_back(sentence);
    return out;
  };
  const auto ranked = ranked_per_task(rs);
  const auto got = deployment_ranking(ranked.at("t"));
  EXPECT_EQ(sentences(got), (std::vector<std::string>{"steady", marker, "lucky"}));
  ASSERT_EQ(got.size(), 3u);
  EXPECT_DOUBLE_EQ(got[0].first, 1.3e-3);
  EXPECT_DOUBLE_EQ(got[2].first, 1.5e-3);
  // Without re-measurements: every record, fastest first (a marker among them).
  std::vector<MeasureRecord> search(rs.begin(), rs.begin() + 3);
  search.push_back(rs[5]);
  EXPECT_EQ(sentences(deployment_ranking(ranked_per_task(search).at("t"))),
            (std::vector<std::string>{"unconfirmed", "lucky", "steady", marker}));
  EXPECT_TRUE(is_remeasurement(rs[3]));
  EXPECT_FALSE(is_remeasurement(rs[0]));
  EXPECT_FALSE(is_remeasurement(rec("x", "/remeasure", 1)));  // a suffix needs a strategy
}

// The tuner's in-model selection (tune/in_model.h) times each task's finalists inside the model
// and records them with the selection's start time; what is deployed is the fastest of a task's
// latest selection, whatever the hot records say, and never a selection of another machine.
TEST(RecordedSchedules, TheLatestInModelSelectionDecidesWhatIsDeployed) {
  auto rec = [](const std::string& task, const std::string& sentence, const std::string& strategy,
                double ms, int64_t when, const std::string& hw = "here") {
    MeasureRecord r;
    r.task_key = task;
    r.sentence = sentence;
    r.strategy = strategy;
    r.hardware = hw;
    r.latencies_s = {ms * 1e-3};
    r.median_s = ms * 1e-3;
    r.timestamp_ms = when;
    if (strategy.find(kInModelSuffix) != std::string::npos) r.cache = kCacheModel;
    return r;
  };
  const std::string in = std::string("tlm") + kInModelSuffix;
  const std::vector<MeasureRecord> rs = {
      rec("a", "hot-best", "tlm/remeasure", 0.5, 1),  // fastest alone: not deployed
      rec("a", "old-pick", in, 0.8, 10),              // an older selection
      rec("a", "x", in, 1.0, 20),                     //
      rec("a", "y", in, 0.9, 20),                     // the latest selection's fastest
      rec("a", "z", in, 0.7, 30, "elsewhere"),        // another machine
      rec("b", "only-hot", "tlm/remeasure", 0.4, 1),  // no selection: not in the map
      rec("c", "tie-first", in, 0.6, 5),              // a tie: the earlier record
      rec("c", "tie-second", in, 0.6, 5)};
  const auto choice = in_model_choices(rs, "here");
  EXPECT_EQ(choice, (std::map<std::string, std::string>{{"a", "y"}, {"c", "tie-first"}}));
  EXPECT_TRUE(is_in_model_selection(rs[1]));
  EXPECT_FALSE(is_in_model_selection(rs[0]));
  MeasureRecord hot_named_so = rs[1];
  hot_named_so.cache.clear();  // the suffix alone is not a selection: it needs cache "model"
  EXPECT_FALSE(is_in_model_selection(hot_named_so));
  // Hot ranking never sees them: a task with hot records ranks those alone.
  const auto ranked = ranked_per_task(rs, "here");
  for (const MeasureRecord* r : ranked.at("a"))
    EXPECT_FALSE(is_in_model_selection(*r)) << r->sentence;
}

// Records written before the graph put a weight second in Add and Mul (session 48) name a task by
// the old operand order, Add(bias, matmul) as PyTorch exports it. Loaded, they come back under the
// canonical task's key and sentence, the same program, so a model's old tuning records still
// give each task its best program; an autoscheduler marker is renamed too, other records not.
TEST(RecordedSchedules, RecordsOfTheOldOperandOrderMatchTheCanonicalTask) {
  const HardwareInfo hw = detect_hardware();
  auto build = [](bool canonical) {
    Graph g;
    ValueId x = g.add_input("x", DType::F32, {1, 16, 32});
    ValueId mm =
        g.add(Op::MatMul, {x, g.add_constant("w", random_tensor(DType::F32, {32, 48}, 1))});
    ValueId b = g.add_constant("b", random_tensor(DType::F32, {48}, 2));
    g.mark_output(g.add(Op::Relu, {g.add(Op::Add, {b, mm})}));
    if (canonical) prepare_graph(g);
    return partition_graph(g);
  };
  const Partition old_p = build(false), new_p = build(true);
  ASSERT_EQ(old_p.tasks.size(), 1u);
  ASSERT_EQ(new_p.tasks.size(), 1u);
  const Subgraph &old_sub = old_p.tasks[0].sub, &new_sub = new_p.tasks[0].sub;
  ASSERT_NE(old_sub.key, new_sub.key);
  ASSERT_NE(old_sub.key.find("Add(w1, %0)"), std::string::npos) << old_sub.key;

  LoweredTask old_lowered = lower_subgraph(old_sub), new_lowered = lower_subgraph(new_sub);
  TaskSpace old_space = build_space(old_lowered, hw), new_space = build_space(new_lowered, hw);
  TaskPrinter old_printer(old_sub, hw, old_space), new_printer(new_sub, hw, new_space);
  std::mt19937_64 rng(3);
  const Program fast = sample_program(old_space, rng), slow = sample_program(old_space, rng);
  auto record = [&](const std::string& key, const std::string& sentence, double s) {
    MeasureRecord r;
    r.task_key = key;
    r.task_kind = old_sub.kind;
    r.workload = "test";
    r.sentence = sentence;
    r.hardware = hardware_key(hw);
    r.latencies_s = {s};
    r.median_s = s;
    r.strategy = "random";
    return r;
  };
  const std::string marker = autoscheduler_marker(HalideAutoscheduler::Mullapudi2016);
  const std::string path = ::testing::TempDir() + "tlm_old_order_" + std::to_string(getpid());
  std::remove(path.c_str());
  {
    RecordWriter w(path);
    w.append(record(old_sub.key, old_printer.text(slow), 2e-3));
    w.append(record(old_sub.key, old_printer.text(fast), 1e-3));
    w.append(record(old_sub.key, marker, 3e-3));
    w.append(record("another task", "not a sentence", 1e-3));
  }
  LoadStats stats;
  const std::vector<MeasureRecord> got = load_records(path, &stats);
  EXPECT_EQ(stats.reordered, 3);
  ASSERT_EQ(got.size(), 4u);
  for (int i = 0; i < 3; i++) EXPECT_EQ(got[i].task_key, new_sub.key);
  EXPECT_EQ(got[0].sentence, new_printer.text(slow));
  EXPECT_EQ(got[1].sentence, new_printer.text(fast));
  EXPECT_EQ(got[2].sentence, marker);
  EXPECT_EQ(got[3].task_key, "another task");
  EXPECT_EQ(got[3].sentence, "not a sentence");
  Program back;
  EXPECT_TRUE(program_from_sentence(new_printer, got[1].sentence, &back));
  EXPECT_EQ(back.values, fast.values);
  EXPECT_EQ(best_sentences_from_records(new_p, path, hw),
            std::vector<std::string>{got[1].sentence});

  // Records of another machine only: not one task would get a recorded program, which is an
  // error naming the machine the records came from (never the default schedules in silence).
  HardwareInfo other = hw;
  other.l2_bytes *= 2;
  ASSERT_NE(hardware_key(other), hardware_key(hw));
  try {
    best_sentences_from_records(new_p, path, other);
    ADD_FAILURE() << "records of another machine were accepted";
  } catch (const UserError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find(hardware_key(hw) + " (3)"), std::string::npos) << what;  // 2 + the marker
    EXPECT_NE(what.find(hardware_key(other)), std::string::npos) << what;
  }
  const std::string none = path + ".none";
  {
    RecordWriter w(none);
    w.append(record("another task", "not a sentence", 1e-3));
  }
  EXPECT_THROW(best_sentences_from_records(new_p, none, hw), UserError);
  std::remove(none.c_str());
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tlm::testing_space

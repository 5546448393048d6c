// The loop's training tasks: unique, sorted by kind, a subset keeps every kind, held-out tasks
// never enter (a training workload that shares tasks with a held-out one loses them; a held-out
// spec is refused), batches take one task in every k_b.
#include "loop/task_set.h"

#include <gtest/gtest.h>

#include <set>

#include "language/workloads.h"
#include "loop/demonstrations.h"
#include "support/error.h"

namespace tlm {
namespace {

std::string user_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no UserError";
}

TEST(TaskSet, SortedUniqueAndSubsetKeepsKinds) {
  TaskSetOptions o;
  o.workloads = {"bert-tiny:seq=16", "bert-tiny:seq=32"};
  TaskSet all = choose_training_tasks(o);
  ASSERT_GE(all.tasks.size(), 4u);
  std::set<std::string> keys, kinds;
  for (size_t i = 0; i < all.tasks.size(); i++) {
    keys.insert(all.tasks[i].sub.key);
    kinds.insert(all.tasks[i].sub.kind);
    if (i > 0) {
      const Subgraph &a = all.tasks[i - 1].sub, &b = all.tasks[i].sub;
      EXPECT_TRUE(a.kind < b.kind || (a.kind == b.kind && a.flops <= b.flops)) << i;
    }
  }
  EXPECT_EQ(keys.size(), all.tasks.size());
  EXPECT_EQ((int64_t)keys.size(), all.unique - all.heldout - all.too_big);

  o.max_tasks = (int)kinds.size() + 1;
  TaskSet some = choose_training_tasks(o);
  EXPECT_EQ(some.tasks.size(), kinds.size() + 1);
  std::set<std::string> some_kinds;
  for (const LoopTask& t : some.tasks) some_kinds.insert(t.sub.kind);
  EXPECT_EQ(some_kinds, kinds);

  o.max_tasks = 0;
  o.max_mflops = 1e-6;
  EXPECT_NE(user_error_of([&] { choose_training_tasks(o); }).find("above --max-mflops"),
            std::string::npos);
}

TEST(TaskSet, HeldOutTasksNeverEnter) {
  TaskSetOptions o;
  o.workloads = {"resnet50:image=192"};  // shares tasks (the classifier head) with image=224
  TaskSet s = choose_training_tasks(o);
  EXPECT_GT(s.heldout, 0);
  const std::set<std::string> held = heldout_task_keys();
  for (const LoopTask& t : s.tasks) EXPECT_FALSE(held.count(t.sub.key)) << t.sub.kind;

  o.workloads = {"resnet50:image=224"};
  EXPECT_NE(user_error_of([&] { choose_training_tasks(o); }).find("held out"), std::string::npos);
  o.workloads = {"heldout"};
  EXPECT_NE(user_error_of([&] { choose_training_tasks(o); }).find("held out"), std::string::npos);
}

// A held-out CNN's narrow pointwise convolutions are held out in both forms: over the flattened
// pixels (the layout pass today) and 2-D (records written before it).
TEST(TaskSet, HeldOutKeysCoverFlattenedAndTwoDimensionalTasks) {
  const std::set<std::string> held = heldout_task_keys();
  std::set<std::string> flat, two_d;
  for (const Subgraph& s : workload_tasks("resnet50:image=224@nchw8c", true)) flat.insert(s.key);
  for (const Subgraph& s : workload_tasks("resnet50:image=224@nchw8c", false)) two_d.insert(s.key);
  EXPECT_NE(flat, two_d);
  int only_2d = 0;
  for (const std::string& k : two_d) only_2d += !flat.count(k);
  EXPECT_GE(only_2d, 4);  // the 1x1 convolutions on the 14x14 and 7x7 maps
  for (const std::set<std::string>* keys : {&flat, &two_d})
    for (const std::string& k : *keys) EXPECT_TRUE(held.count(k)) << k;
}

TEST(TaskSet, OneInEveryKb) {
  EXPECT_EQ(loop_batch(10, 4, 1), (std::vector<int>{1, 5, 9}));
  EXPECT_EQ(loop_batch(10, 4, 3), (std::vector<int>{3, 7}));
  EXPECT_EQ(loop_batch(2, 1, 0), (std::vector<int>{0, 1}));
}

}  // namespace
}  // namespace tlm

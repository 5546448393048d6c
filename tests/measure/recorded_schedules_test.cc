// What gets deployed from a task's measured programs (deployed_choice): the fastest, except that
// at two or more threads a blocked convolution takes its fastest row-split program when that is
// within kRowSplitTolerance of the fastest (space.h, "Row splits").
#include "measure/recorded_schedules.h"

#include <random>

#include "lower/autoschedule.h"
#include "space/space_cases.h"

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

}  // namespace
}  // namespace tlm::testing_space

// The task scheduler: which task gets the next batch of measurements. A simplified form of
// Ansor's gradient-based task scheduler (Zheng et al., OSDI'20, §6): the end-to-end latency is
// sum_i w_i * best_i (w_i: the task's instances in the model, best_i: its best latency so far),
// and the next batch goes to the task where spending it is expected to cut that sum the most:
//
//   g_i = w_i * (alpha * backward_i + (1 - alpha) * forward_i)
//   backward_i = (best_i(t_i - window) - best_i(t_i)) / window  -- recent improvement per trial
//   forward_i  = best_i(t_i) / t_i                              -- optimistic: 1/t decay
//
// Every task first gets `warmup` trials (round robin); a task with no valid program yet keeps
// top priority until it has had twice that, then the lowest. Tasks marked done (space exhausted)
// are skipped. Ansor also borrows estimates from similar tasks; we do not.
#pragma once

#include <vector>

namespace tlm {

struct SchedulerOptions {
  double alpha = 0.2;  // weight of the backward (observed) gradient, as in Ansor
  int window = 8;      // trials the backward gradient looks back over (one batch)
  int warmup = 8;      // trials every task gets before gradients decide
};

class TaskScheduler {
 public:
  TaskScheduler(std::vector<double> weights, SchedulerOptions o = {});

  // The task to measure next; -1 when every task is done.
  int next_task() const;
  // One trial of `task` (latency <= 0: it failed).
  void record(int task, double latency_s);
  void mark_done(int task);

  int trials(int task) const { return (int)history_.at(task).size(); }
  double best(int task) const;  // INFINITY before the first valid trial
  bool done(int task) const { return done_.at(task); }
  // sum_i w_i * best_i over the tasks with a valid trial.
  double weighted_best() const;
  double gradient(int task) const;  // g_i above (for tests and the progress line)

 private:
  double best_after(int task, int trials) const;
  std::vector<double> weights_;
  SchedulerOptions o_;
  std::vector<std::vector<double>> history_;  // per task, best latency after each trial
  std::vector<bool> done_;
};

}  // namespace tlm

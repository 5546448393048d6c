#include "tune/scheduler.h"

#include <algorithm>
#include <cmath>

#include "support/error.h"

namespace tlm {

TaskScheduler::TaskScheduler(std::vector<double> weights, SchedulerOptions o)
    : weights_(std::move(weights)),
      o_(o),
      history_(weights_.size()),
      done_(weights_.size(), false) {
  TLM_CHECK(o_.window >= 1 && o_.warmup >= 0) << "scheduler options";
}

void TaskScheduler::record(int task, double latency_s) {
  std::vector<double>& h = history_.at(task);
  double b = h.empty() ? INFINITY : h.back();
  if (latency_s > 0) b = std::min(b, latency_s);
  h.push_back(b);
}

void TaskScheduler::mark_done(int task) { done_.at(task) = true; }

double TaskScheduler::best_after(int task, int trials) const {
  const std::vector<double>& h = history_.at(task);
  if (trials <= 0 || h.empty()) return INFINITY;
  return h[std::min<size_t>((size_t)trials, h.size()) - 1];
}

double TaskScheduler::best(int task) const { return best_after(task, trials(task)); }

double TaskScheduler::weighted_best() const {
  double s = 0;
  for (size_t i = 0; i < weights_.size(); i++)
    if (std::isfinite(best((int)i))) s += weights_[i] * best((int)i);
  return s;
}

double TaskScheduler::gradient(int task) const {
  int t = trials(task);
  double now = best(task);
  if (!std::isfinite(now)) return t < 2 * o_.warmup ? INFINITY : 0.0;
  double before = best_after(task, t - o_.window);
  // Before the window there was nothing valid: count it as a halving (a large recent gain).
  double backward = (std::isfinite(before) ? before - now : now) / o_.window;
  double forward = now / std::max(1, t);
  return weights_[task] * (o_.alpha * backward + (1 - o_.alpha) * forward);
}

int TaskScheduler::next_task() const {
  int n = (int)weights_.size();
  for (int i = 0; i < n; i++)  // warm-up round robin, in task order
    if (!done_[i] && trials(i) < o_.warmup) return i;
  int pick = -1;
  double best_g = -1;
  for (int i = 0; i < n; i++) {
    if (done_[i]) continue;
    double g = gradient(i);
    if (g > best_g) {
      best_g = g;
      pick = i;
    }
  }
  return pick;
}

}  // namespace tlm

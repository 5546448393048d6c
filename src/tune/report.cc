// The final table of a tuning run, and the schedule hook that compiles a model with the best
// program of each task.
#include <cmath>
#include <cstdio>

#include "support/progress.h"
#include "tune/tuner.h"

namespace tlm {

std::string TuneReport::table() const {
  std::string s;
  char line[512];
  std::snprintf(line, sizeof line, "strategy %s on %s\n", strategy.c_str(), hardware.c_str());
  s += line;
  std::snprintf(line, sizeof line, "%4s  %-28s %6s %8s %6s %5s %10s %7s %9s %5s %12s\n", "task",
                "kind", "weight", "trials", "(new)", "ok", "best ms", "spread", "GFLOP/s", "pick",
                "in model ms");
  s += line;
  double weighted = 0;
  int64_t trials = 0;
  for (const TaskResult& t : tasks) {
    trials += t.trials;
    std::string kind = t.kind.size() > 28 ? t.kind.substr(0, 25) + "..." : t.kind;
    if (!t.note.empty()) {
      std::snprintf(line, sizeof line, "%4d  %-28s %6d  %s\n", t.task_id, kind.c_str(), t.weight,
                    t.note.c_str());
      s += line;
      continue;
    }
    char best[32] = "-", gf[32] = "-", in_model[32] = "-", spread[32] = "-", pick[32] = "-";
    if (t.finalists > 1) std::snprintf(pick, sizeof pick, "%d/%d", t.pick + 1, t.finalists);
    if (t.in_model_s > 0) std::snprintf(in_model, sizeof in_model, "%.4f", t.in_model_s * 1e3);
    if (t.best_s > 0) {
      std::snprintf(best, sizeof best, "%.4f", t.best_s * 1e3);
      std::snprintf(spread, sizeof spread, "%.1f%%", t.best_spread * 100);
      std::snprintf(gf, sizeof gf, "%.2f", t.flops / t.best_s * 1e-9);
      weighted += t.weight * t.best_s;
    }
    std::snprintf(line, sizeof line, "%4d  %-28s %6d %8d %6s %5d %10s %7s %9s %5s %12s\n",
                  t.task_id, kind.c_str(), t.weight, t.trials,
                  ("(" + std::to_string(t.new_trials) + ")").c_str(), t.ok, best, spread, gf, pick,
                  in_model);
    s += line;
  }
  std::snprintf(line, sizeof line, "sum over tasks of weight x best: %.4f ms\n", weighted * 1e3);
  s += line;
  if (in_model_tasks > 0) {
    int changed = 0;
    for (const TaskResult& t : tasks) changed += t.finalists > 1 && t.pick != 0;
    std::snprintf(line, sizeof line,
                  "in-model selection: finalists of %d tasks timed inside the model (up to %d per "
                  "task, random assignments taking turns, %s); %d tasks deploy another program "
                  "than the re-measured best (pick > 1)\n",
                  in_model_tasks, in_model_sets, format_duration(in_model_wall_s).c_str(), changed);
    s += line;
  }
  if (!in_model_note.empty()) s += "in-model selection: " + in_model_note + "\n";
  if (e2e_done) {
    std::snprintf(line, sizeof line,
                  "end-to-end: tuned %.4f ms, default schedules %.4f ms (%.2fx); verify %s "
                  "(worst violation %.3g)\n",
                  e2e_tuned_ms, e2e_default_ms,
                  e2e_tuned_ms > 0 ? e2e_default_ms / e2e_tuned_ms : 0.0,
                  e2e_verified ? "PASS" : "FAIL", e2e_violation);
    if (!e2e_note.empty()) {
      s += line;
      std::snprintf(line, sizeof line, "note: %s\n", e2e_note.c_str());
    }
  } else {
    std::snprintf(line, sizeof line, "end-to-end: %s\n", e2e_note.c_str());
  }
  s += line;
  std::snprintf(line, sizeof line,
                "measurements: %lld of this strategy in the records; %lld made in this run "
                "(%lld valid) in %s of measuring = %.1f valid/min; wall time %s\n",
                (long long)trials, (long long)measured, (long long)measured_ok,
                format_duration(measure_wall_s).c_str(), valid_per_minute(),
                format_duration(wall_s).c_str());
  s += line;
  return s;
}

}  // namespace tlm

#include "tune/in_model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "measure/recorded_schedules.h"
#include "measure/timing.h"
#include "runtime/executor.h"
#include "support/error.h"
#include "support/threads.h"

namespace tlm {

namespace {

// "" when `out` matches the reference, else why not.
std::string check_outputs(const std::vector<Tensor>& out, const std::vector<Tensor>& ref,
                          const InModelOptions& o) {
  double worst = 0;
  for (size_t k = 0; k < ref.size() && k < out.size(); k++)
    worst = std::max(worst, max_rel_violation(out[k], ref[k], o.atol, o.rtol));
  if (worst <= 1.0) return "";
  std::ostringstream why;
  why << "its outputs differ from the reference interpreter (worst violation " << worst << ")";
  return why.str();
}

}  // namespace

InModelTimings time_finalists_in_model(const Graph& g, const Partition& p, const HardwareInfo& hw,
                                       const std::vector<std::vector<std::string>>& finalists,
                                       const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& ref, const InModelOptions& o) {
  TLM_CHECK(finalists.size() == p.tasks.size()) << "one finalist list per task";
  TLM_USER_CHECK(o.turns >= 1 && o.runs_per_turn >= 1)
      << "in-model selection: turns and runs per turn must be >= 1";
  const size_t n = p.tasks.size();
  InModelTimings t;
  std::vector<int> count(n);
  for (size_t i = 0; i < n; i++) {
    count[i] = std::max<int>(1, (int)finalists[i].size());
    t.sets = std::max(t.sets, count[i]);
  }
  t.errors.resize(n);
  for (size_t i = 0; i < n; i++) t.errors[i].assign(finalists[i].size(), "");

  // Every finalist in one model: hook v schedules each task's v-th finalist (tasks with fewer
  // are never asked for it).
  std::vector<ScheduleHook> hooks(t.sets);
  for (int v = 0; v < t.sets; v++) {
    std::vector<std::string> chosen(n);
    for (size_t i = 0; i < n; i++)
      if (!finalists[i].empty())
        chosen[i] = finalists[i][std::min<size_t>(v, finalists[i].size() - 1)];
    hooks[v] = best_schedule_hook(p, chosen, hw);
  }
  CompileOptions co;
  co.compile_threads = o.compile_threads > 0 ? o.compile_threads : compute_threads();
  co.variants = count;
  co.variant_schedule = [&hooks](int id, int v, LoweredTask& lt) { hooks[v](id, lt); };
  CompiledModel model;
  std::string failed;
  try {
    model = compile_model(g, p, co);
    failed = check_outputs(model.run(inputs), ref, o);
  } catch (const std::exception& e) {
    failed = e.what();
  }
  TLM_USER_CHECK(failed.empty())
      << "in-model selection: the model with each task's current program failed: " << failed;

  // Each other finalist checked with every other task at its current choice, so a wrong
  // result names its program.
  const std::vector<int> current(n, 0);
  std::vector<std::vector<int>> valid(n);  // per task: the finalists that may be timed
  for (size_t i = 0; i < n; i++) {
    if (finalists[i].empty()) {
      valid[i] = {0};
      continue;
    }
    valid[i].push_back(0);
    for (int v = 1; v < count[i]; v++) {
      std::string& err = t.errors[i][v];
      err = model.variant_error((int)i, v);
      if (err.empty()) {
        std::vector<int> choice = current;
        choice[i] = v;
        try {
          model.select(choice);
          err = check_outputs(model.run(inputs), ref, o);
        } catch (const std::exception& e) {
          err = e.what();
        }
      }
      if (err.empty()) valid[i].push_back(v);
    }
  }

  // Random assignments: each task deals its valid finalists from a deck shuffled anew when it
  // runs out, so every finalist runs in about turns / valid turns, beside varying neighbours.
  std::mt19937_64 rng(o.seed);
  std::vector<std::vector<double>> raw;  // [turn][task] seconds
  std::vector<std::vector<int>> deck(n);
  std::vector<int> choice(n, 0);
  for (int turn = 0; turn < o.turns; turn++) {
    for (size_t i = 0; i < n; i++) {
      if (deck[i].empty()) {
        deck[i] = valid[i];
        std::shuffle(deck[i].begin(), deck[i].end(), rng);
      }
      choice[i] = deck[i].back();
      deck[i].pop_back();
    }
    model.select(choice);
    t.assignments.push_back(choice);
    const Timing tm = model.time(inputs, turn == 0 ? 1 : 0, o.runs_per_turn);
    std::vector<double> per_task(n, 0.0);
    for (size_t k = 0; k < p.instances.size() && k < tm.instance_ms.size(); k++)
      per_task[p.instances[k].task] += tm.instance_ms[k] * 1e-3;
    raw.push_back(per_task);
  }
  model.select(current);
  std::vector<int> sizes(n);
  for (size_t i = 0; i < n; i++) sizes[i] = (int)finalists[i].size();
  t.turns_s = speed_adjusted_turns(raw, t.assignments, sizes);
  return t;
}

std::vector<std::vector<std::vector<double>>> speed_adjusted_turns(
    const std::vector<std::vector<double>>& raw, const std::vector<std::vector<int>>& assignments,
    const std::vector<int>& finalists) {
  TLM_CHECK(raw.size() == assignments.size())
      << raw.size() << " turns, " << assignments.size() << " assignments";
  const size_t turns = raw.size(), n = finalists.size();
  auto med = [](std::vector<double> v) { return v.empty() ? 0.0 : stats_from_samples(v).median_s; };
  // y[k][i] = log time; a task that took no measurable time says nothing.
  std::vector<std::vector<double>> y(turns, std::vector<double>(n, 0.0));
  std::vector<std::vector<bool>> seen(turns, std::vector<bool>(n, false));
  for (size_t k = 0; k < turns; k++) {
    TLM_CHECK(raw[k].size() == n && assignments[k].size() == n)
        << "turn " << k << ": not one time per task";
    for (size_t i = 0; i < n; i++)
      if (raw[k][i] > 0) {
        y[k][i] = std::log(raw[k][i]);
        seen[k][i] = true;
      }
  }
  // y = a[i][finalist] + s[k]: alternating medians (a robust two-way fit), s centred on 0.
  std::vector<std::vector<double>> a(n);
  for (size_t i = 0; i < n; i++) a[i].assign(std::max(finalists[i], 1), 0.0);
  std::vector<double> s(turns, 0.0);
  for (int iter = 0; iter < 20; iter++) {
    for (size_t i = 0; i < n; i++)
      for (size_t v = 0; v < a[i].size(); v++) {
        std::vector<double> r;
        for (size_t k = 0; k < turns; k++)
          if (seen[k][i] && assignments[k][i] == (int)v) r.push_back(y[k][i] - s[k]);
        a[i][v] = med(r);
      }
    for (size_t k = 0; k < turns; k++) {
      std::vector<double> r;
      for (size_t i = 0; i < n; i++)
        if (seen[k][i]) r.push_back(y[k][i] - a[i][assignments[k][i]]);
      s[k] = med(r);
    }
    const double centre = med(s);
    for (double& x : s) x -= centre;
  }
  std::vector<std::vector<std::vector<double>>> out(n);
  for (size_t i = 0; i < n; i++) {
    out[i].resize(finalists[i]);
    for (size_t k = 0; k < turns; k++) {
      const int v = assignments[k][i];
      if (v >= 0 && v < finalists[i] && raw[k][i] >= 0)
        out[i][v].push_back(raw[k][i] * std::exp(-s[k]));
    }
  }
  return out;
}

std::vector<int> pick_in_model(const InModelTimings& t) {
  std::vector<int> pick(t.turns_s.size(), -1);
  for (size_t i = 0; i < t.turns_s.size(); i++) {
    double best = std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < t.turns_s[i].size(); j++) {
      if (t.turns_s[i][j].empty()) continue;
      const double m = stats_from_samples(t.turns_s[i][j]).median_s;
      if (m < best) {
        best = m;
        pick[i] = (int)j;
      }
    }
  }
  return pick;
}

}  // namespace tlm

#include "tune/in_model.h"

#include <algorithm>
#include <limits>
#include <sstream>

#include "measure/recorded_schedules.h"
#include "measure/timing.h"
#include "runtime/executor.h"
#include "support/error.h"
#include "support/threads.h"

namespace tlm {

InModelTimings time_finalists_in_model(const Graph& g, const Partition& p, const HardwareInfo& hw,
                                       const std::vector<std::vector<std::string>>& finalists,
                                       const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& ref, const InModelOptions& o) {
  TLM_CHECK(finalists.size() == p.tasks.size()) << "one finalist list per task";
  TLM_USER_CHECK(o.turns >= 1 && o.runs_per_turn >= 1)
      << "in-model selection: turns and runs per turn must be >= 1";
  InModelTimings t;
  for (const std::vector<std::string>& f : finalists) t.sets = std::max(t.sets, (int)f.size());
  t.sets = std::max(t.sets, 1);
  t.turns_s.resize(p.tasks.size());
  for (size_t i = 0; i < p.tasks.size(); i++) t.turns_s[i].resize(finalists[i].size());
  t.set_errors.assign(t.sets, "");

  // Compile and verify every set.
  std::vector<CompiledModel> models(t.sets);
  std::vector<bool> ok(t.sets, false);
  for (int s = 0; s < t.sets; s++) {
    std::vector<std::string> chosen(p.tasks.size());
    for (size_t i = 0; i < p.tasks.size(); i++)
      if (!finalists[i].empty())
        chosen[i] = finalists[i][std::min<size_t>(s, finalists[i].size() - 1)];
    try {
      CompileOptions co;
      co.compile_threads = o.compile_threads > 0 ? o.compile_threads : compute_threads();
      co.schedule = best_schedule_hook(p, chosen, hw);
      models[s] = compile_model(g, p, co);
      const std::vector<Tensor> out = models[s].run(inputs);
      double worst = 0;
      for (size_t k = 0; k < ref.size() && k < out.size(); k++)
        worst = std::max(worst, max_rel_violation(out[k], ref[k], o.atol, o.rtol));
      if (!(worst <= 1.0)) {
        std::ostringstream why;
        why << "its outputs differ from the reference interpreter (worst violation " << worst
            << ")";
        t.set_errors[s] = why.str();
      } else {
        ok[s] = true;
      }
    } catch (const std::exception& e) {
      t.set_errors[s] = e.what();
    }
    TLM_USER_CHECK(s > 0 || ok[0]) << "in-model selection: the model with each task's current "
                                      "program failed: "
                                   << t.set_errors[0];
  }

  // Time them taking turns.
  for (int turn = 0; turn < o.turns; turn++)
    for (int k = 0; k < t.sets; k++) {
      const int s = turn % 2 == 0 ? k : t.sets - 1 - k;
      if (!ok[s]) continue;
      Timing tm = models[s].time(inputs, turn == 0 ? 1 : 0, o.runs_per_turn);
      std::vector<double> per_task(p.tasks.size(), 0.0);
      for (size_t n = 0; n < p.instances.size() && n < tm.instance_ms.size(); n++)
        per_task[p.instances[n].task] += tm.instance_ms[n] * 1e-3;
      for (size_t i = 0; i < p.tasks.size(); i++)
        if ((size_t)s < t.turns_s[i].size()) t.turns_s[i][s].push_back(per_task[i]);
    }
  return t;
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

// lm_schedules (cli/lm_schedules.h): the language model's zero-shot program for every task.
#include "cli/lm_schedules.h"

#include <cstdio>
#include <memory>

#include "lower/lower.h"
#include "model/tlm_model.h"
#include "space/space.h"
#include "support/hash.h"
#include "support/progress.h"
#include "support/threads.h"
#include "tune/lm_search.h"
#include "tune/ranker.h"

namespace tlm {

int tasks_among(const Partition& p, const std::set<std::string>& hashes) {
  int seen = 0;
  for (const Task& t : p.tasks) seen += hashes.count(hex_hash(t.sub.key)) ? 1 : 0;
  return seen;
}

std::vector<std::string> lm_schedules(const Partition& p, const HardwareInfo& hw,
                                      const std::string& model_path, const std::string& label,
                                      const std::string& mode, const std::string& ranker_path) {
  ZeroShotOptions zo = zero_shot_mode(mode);
  const std::unique_ptr<Ranker> ranker = load_zero_shot_ranker(zo, ranker_path);
  zo.ranker = ranker.get();
  if (ranker)
    std::printf("%s: %d of %zu tasks were among the ranker's training tasks\n", label.c_str(),
                tasks_among(p, ranker->task_hashes()), p.tasks.size());
  set_model_threads(compute_threads());
  TlmModel m = load_model_or_default(model_path);
  std::set<std::string> learned;
  if (finetuned_task_hashes(m, &learned)) {
    std::printf("%s: %d of %zu tasks were among the model's fine-tuning demonstrations\n",
                label.c_str(), tasks_among(p, learned), p.tasks.size());
  } else {
    std::printf("%s: the checkpoint does not list the tasks it was fine-tuned on\n", label.c_str());
  }
  std::vector<std::string> out(p.tasks.size());
  ProgressLine progress(true, label + ": writing schedules", (int64_t)p.tasks.size());
  int experts = 0, row_splits = 0;
  for (size_t i = 0; i < p.tasks.size(); i++) {
    LoweredTask lt = lower_subgraph(p.tasks[i].sub);
    TaskSpace space = build_space(lt, hw);
    TaskPrinter printer(p.tasks[i].sub, hw, space);
    ZeroShotChoice c = zero_shot_program(*m.lm, m.tok, printer, hw, zo);
    experts += c.expert ? 1 : 0;
    row_splits += c.row_split ? 1 : 0;
    out[i] = printer.text(c.program);
    progress.update((int64_t)i + 1, "task " + std::to_string(p.tasks[i].id));
  }
  progress.finish();
  std::printf("%s: zero-shot mode %s; %d of %zu chosen programs are expert programs", label.c_str(),
              mode.c_str(), experts, p.tasks.size());
  if (row_splits > 0) std::printf(", %d split rows between the threads", row_splits);
  std::printf("\n");
  return out;
}

}  // namespace tlm

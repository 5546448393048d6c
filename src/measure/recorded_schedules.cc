#include "measure/recorded_schedules.h"

#include <map>
#include <memory>
#include <mutex>

#include "lower/autoschedule.h"
#include "measure/harness.h"
#include "measure/records.h"

namespace tlm {

std::string deployed_choice(const TaskPrinter& printer, int threads,
                            const std::vector<std::pair<double, std::string>>& ranked) {
  TLM_CHECK(!ranked.empty()) << "no measured program to choose from";
  const std::string& fastest = ranked[0].second;
  const TaskSpace& space = printer.space();
  if (threads < 2 || !space.blocked_conv || is_autoscheduler_marker(fastest)) return fastest;
  Program p;
  if (!program_from_sentence(printer, fastest, &p) || splits_rows(space, p, threads))
    return fastest;
  for (const auto& [median_s, sentence] : ranked) {
    if (median_s > ranked[0].first * (1 + kRowSplitTolerance)) break;
    if (program_from_sentence(printer, sentence, &p) && splits_rows(space, p, threads))
      return sentence;
  }
  return fastest;
}

std::vector<std::string> best_sentences_from_records(const Partition& p,
                                                     const std::string& records_path,
                                                     const HardwareInfo& hw) {
  const std::vector<MeasureRecord> records = load_records(records_path);
  const auto by_task = ranked_per_task(records, hardware_key(hw));
  std::vector<std::string> out;
  for (const Task& t : p.tasks) {
    auto it = by_task.find(t.sub.key);
    if (it == by_task.end()) {
      out.push_back("");
      continue;
    }
    std::vector<std::pair<double, std::string>> ranked;
    for (const MeasureRecord* r : it->second) ranked.push_back({r->median_s, r->sentence});
    // Only a choice within the tolerance needs the task's space (lowering it costs ~10 ms).
    const bool close =
        ranked.size() > 1 && ranked[1].first <= ranked[0].first * (1 + kRowSplitTolerance);
    if (hw.cores < 2 || !close || is_autoscheduler_marker(ranked[0].second)) {
      out.push_back(ranked[0].second);
      continue;
    }
    LoweredTask lowered = lower_subgraph(t.sub);
    TaskSpace space = build_space(lowered, hw);
    TaskPrinter printer(t.sub, hw, space);
    out.push_back(deployed_choice(printer, hw.cores, ranked));
  }
  return out;
}

ScheduleHook best_schedule_hook(const Partition& p, const std::vector<std::string>& best,
                                const HardwareInfo& hw) {
  TLM_CHECK(best.size() == p.tasks.size()) << "one sentence per task";
  std::map<int, std::string> by_id;
  for (size_t i = 0; i < p.tasks.size(); i++) by_id[p.tasks[i].id] = best[i];
  auto mu = std::make_shared<std::mutex>();  // autoschedulers are not known to be reentrant
  return [by_id, hw, mu](int task_id, LoweredTask& t) {
    auto it = by_id.find(task_id);
    const std::string sentence = it == by_id.end() ? "" : it->second;
    HalideAutoscheduler which;
    if (sentence.empty()) {
      apply_default_schedule(t, host_target());
    } else if (is_autoscheduler_marker(sentence, &which)) {
      std::lock_guard<std::mutex> lock(*mu);
      apply_halide_autoscheduler(t, which, hw, host_target());
    } else {
      TaskSpace space = build_space(t, hw);
      TaskPrinter printer(t.sub, hw, space);
      Program prog;
      TLM_USER_CHECK(program_from_sentence(printer, sentence, &prog))
          << "task " << task_id << " (" << t.sub.kind
          << "): the recorded sentence is not a program of this task on this hardware";
      apply_program(t, space, prog);
    }
  };
}

}  // namespace tlm

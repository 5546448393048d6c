#include "measure/recorded_schedules.h"

#include <map>
#include <memory>
#include <mutex>

#include "lower/autoschedule.h"
#include "measure/harness.h"
#include "measure/records.h"

namespace tlm {

std::vector<std::string> best_sentences_from_records(const Partition& p,
                                                     const std::string& records_path,
                                                     const std::string& hw_key) {
  std::map<std::string, MeasureRecord> best = best_per_task(load_records(records_path), hw_key);
  std::vector<std::string> out;
  for (const Task& t : p.tasks) {
    auto it = best.find(t.sub.key);
    out.push_back(it == best.end() ? "" : it->second.sentence);
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

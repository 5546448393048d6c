#include "measure/recorded_schedules.h"

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>

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

std::vector<std::pair<double, std::string>> deployment_ranking(
    const std::vector<const MeasureRecord*>& ranked) {
  // Each re-measured sentence by its latest re-measurement (the records' file order). An
  // autoscheduler's one program was timed with the re-measurement's samples (tune/tuner.cc):
  // beside re-measurements it counts as one.
  const bool any = std::any_of(ranked.begin(), ranked.end(),
                               [](const MeasureRecord* r) { return is_remeasurement(*r); });
  std::map<std::string, const MeasureRecord*> latest;
  for (const MeasureRecord* r : ranked)
    if (any && (is_remeasurement(*r) || is_autoscheduler_marker(r->sentence))) {
      const MeasureRecord*& l = latest[r->sentence];
      if (!l || r > l) l = r;  // the same vector: the later in the files
    }
  std::vector<std::pair<double, std::string>> out;  // in `ranked`'s order: fastest first
  for (const MeasureRecord* r : ranked) {
    const auto l = latest.find(r->sentence);
    if (latest.empty() || (l != latest.end() && l->second == r))
      out.push_back({r->median_s, r->sentence});
  }
  return out;
}

std::map<std::string, std::string> in_model_choices(const std::vector<MeasureRecord>& records,
                                                    const std::string& hardware) {
  // Per task: the best record so far by (later selection, then lower median; ties: the earlier).
  std::map<std::string, const MeasureRecord*> best;
  for (const MeasureRecord& r : records) {
    if (!r.ok() || r.hardware != hardware || !is_in_model_selection(r)) continue;
    const MeasureRecord*& b = best[r.task_key];
    if (!b || r.timestamp_ms > b->timestamp_ms ||
        (r.timestamp_ms == b->timestamp_ms && r.median_s < b->median_s))
      b = &r;
  }
  std::map<std::string, std::string> choice;
  for (const auto& [task, r] : best) choice[task] = r->sentence;
  return choice;
}

std::vector<std::string> best_sentences_from_records(const Partition& p,
                                                     const std::string& records_path,
                                                     const HardwareInfo& hw) {
  const std::vector<MeasureRecord> records = load_records(records_path);
  const std::string here = hardware_key(hw);
  const auto by_task = ranked_per_task(records, here);
  size_t found = 0;
  for (const Task& t : p.tasks) found += by_task.count(t.sub.key);
  if (found == 0 && !p.tasks.empty()) {
    // Not one task: every task would silently get the default schedule. Say which machines the
    // file's records of these tasks were measured on, if any.
    std::set<std::string> keys;
    std::map<std::string, int64_t> elsewhere;
    for (const Task& t : p.tasks) keys.insert(t.sub.key);
    for (const MeasureRecord& r : records)
      if (r.ok() && keys.count(r.task_key)) elsewhere[r.hardware]++;
    std::string where;
    for (const auto& [key, n] : elsewhere)
      where += (where.empty() ? "" : "; ") + key + " (" + std::to_string(n) + ")";
    TLM_USER_ERROR() << records_path << ": no error-free record of this model's " << p.tasks.size()
                     << " tasks on this machine (" << here << ")"
                     << (where.empty() ? "; none of them is in the file at all"
                                       : "; the file has records of them measured on " + where +
                                             ", and records of another machine are never "
                                             "deployed: tune on this one");
  }
  const std::map<std::string, std::string> in_model = in_model_choices(records, here);
  std::vector<std::string> out;
  for (const Task& t : p.tasks) {
    auto chosen = in_model.find(t.sub.key);
    if (chosen != in_model.end()) {  // timed where it runs: nothing else to weigh
      out.push_back(chosen->second);
      continue;
    }
    auto it = by_task.find(t.sub.key);
    if (it == by_task.end()) {
      out.push_back("");
      continue;
    }
    const std::vector<std::pair<double, std::string>> ranked = deployment_ranking(it->second);
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

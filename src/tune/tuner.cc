// tune_model: the steps listed in tuner.h, one function each, called in order. The final table
// and the schedule hook live in report.cc.
#include "tune/tuner.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>

#include "graph/interpreter.h"
#include "lower/autoschedule.h"
#include "measure/recorded_schedules.h"
#include "measure/worker.h"
#include "model/tlm_model.h"
#include "runtime/executor.h"
#include "runtime/memory_plan.h"
#include "support/clock.h"
#include "support/progress.h"
#include "support/threads.h"
#include "tune/in_model.h"
#include "tune/ranker.h"

namespace tlm {
namespace {

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string ms(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g ms", s * 1e3);
  return buf;
}

// Everything the run knows about one tuned task.
struct TaskRun {
  int index = 0;  // into Partition::tasks
  std::unique_ptr<TaskHarness> harness;
  TaskSearch search;
  std::set<std::string> sentences;  // this strategy's measured sentences (the budget)
  TaskResult result;
  // Step 4: the programs step 4b times inside the model, the chosen one first.
  std::vector<std::string> finalists;
};

struct Run {
  const TuneOptions& o;
  const StrategyInfo& strategy;
  HardwareInfo hw;
  std::string hw_key;
  std::vector<MeasureRecord> records;  // this hardware's, from the file and this run
  std::vector<Tensor> reference;       // the interpreter's outputs for o.model_inputs, once
  std::vector<TaskRun> tasks;
  std::unique_ptr<RecordWriter> writer;
  TlmModel lm;  // the language model of `tlm` and `tlm-evolutionary`
  // Their zero-shot choice (--zero-shot, with its ranker): what `tlm` with no measurement
  // compiles, and what both measure first (lm_search.first: the same candidates in the same
  // order, the model's greedy program always among them).
  std::unique_ptr<Ranker> ranker;
  ZeroShotOptions zero;
  LmSearchOptions lm_search;
  TuneReport report;

  Run(const TuneOptions& opts, const StrategyInfo& s) : o(opts), strategy(s) {}

  // Measures a batch (compiles in parallel, runs in turn), appends every record to the file
  // and remembers them; records come back in job order.
  std::vector<MeasureRecord> measure(const std::vector<MeasureJob>& jobs,
                                     const MeasureOptions& mo) {
    double t0 = now_s();
    std::vector<MeasureRecord> rs = measure_candidates(jobs, mo);
    report.measure_wall_s += now_s() - t0;
    for (const MeasureRecord& r : rs) {
      writer->append(r);
      records.push_back(r);
      report.measured++;
      report.measured_ok += r.ok();
    }
    return rs;
  }
};

// Step 1: this hardware's records of the file, if it exists.
void load_existing(Run& run) {
  if (!file_exists(run.o.records_path)) return;
  for (MeasureRecord& r : load_records(run.o.records_path))
    if (r.hardware == run.hw_key) run.records.push_back(std::move(r));
}

// Step 2: harnesses, and what the records already say about each task. A task whose every
// instance is a view of its input (runtime/memory_plan.h) never runs, so it is not tuned unless
// --tasks names it.
void prepare_tasks(Run& run, const Graph& g, const Partition& p) {
  std::set<int> wanted(run.o.tasks.begin(), run.o.tasks.end());
  for (int id : wanted) {
    bool found = false;
    for (const Task& t : p.tasks) found |= t.id == id;
    TLM_USER_CHECK(found) << "--tasks: the model has no task " << id << " (it has "
                          << p.tasks.size() << " tasks; `tlm extract` lists them)";
  }
  std::map<std::string, std::vector<const MeasureRecord*>> by_task;
  for (const MeasureRecord& r : run.records) by_task[r.task_key].push_back(&r);
  const std::vector<bool> never_run = view_only_tasks(p, plan_memory(g, p).view);

  for (size_t i = 0; i < p.tasks.size(); i++) {
    const Task& task = p.tasks[i];
    if (!wanted.empty() && !wanted.count(task.id)) continue;
    const std::vector<const MeasureRecord*>& recorded = by_task[task.sub.key];
    if (run.o.missing_only &&
        std::any_of(recorded.begin(), recorded.end(),
                    [&](const MeasureRecord* r) { return r->strategy == run.strategy.name; }))
      continue;
    TaskRun t;
    t.index = (int)i;
    t.result.task_id = task.id;
    t.result.kind = task.sub.kind;
    t.result.weight = task.weight;
    t.result.flops = task.sub.flops;
    if (never_run[i] && !wanted.count(task.id)) {
      t.result.note = "not tuned: a view of its input in every instance, nothing runs";
      run.report.tasks.push_back(t.result);
      continue;
    }
    try {
      t.harness = make_task_harness(task.sub, run.hw, run.o.workload, run.o.seed);
    } catch (const UserError& e) {
      t.result.note = std::string("skipped: ") + e.what();
      run.report.tasks.push_back(t.result);
      continue;
    }
    t.search.harness = t.harness.get();
    for (const MeasureRecord* r : recorded) {
      if (r->strategy == run.strategy.name) t.sentences.insert(r->sentence);
      Program prog;
      if (program_from_sentence(*t.harness->printer, r->sentence, &prog) &&
          !t.search.seen.count(prog.values))
        t.search.add(prog, r->ok() ? r->median_s : -1);
    }
    run.tasks.push_back(std::move(t));
  }
}

// Step 3 (search strategies): scheduler + policy until the budget is spent.
std::unique_ptr<SearchPolicy> make_policy(const Run& run) {
  if (run.strategy.name == "random") return make_random_search();
  if (run.strategy.name == "tlm") return make_lm_search(*run.lm.lm, run.lm.tok, run.lm_search);
  if (run.strategy.name == "tlm-evolutionary")
    return make_tlm_evolutionary_search(*run.lm.lm, run.lm.tok, run.lm_search, run.o.evolution);
  if (run.strategy.name == "expert-evolutionary")
    return make_expert_evolutionary_search(run.o.evolution);
  return make_evolutionary_search(run.o.evolution);
}

void search(Run& run) {
  std::unique_ptr<SearchPolicy> policy = make_policy(run);
  std::vector<double> weights;
  for (const TaskRun& t : run.tasks) weights.push_back(t.result.weight);
  SchedulerOptions so = run.o.scheduler;
  so.window = std::max(1, run.o.batch);
  so.warmup = std::min(run.o.batch, run.o.trials_per_task);
  TaskScheduler sched(weights, so);
  // Replay this strategy's earlier trials, in file order, so that resuming continues where the
  // killed run stopped.
  int64_t used = 0;
  for (size_t k = 0; k < run.tasks.size(); k++) {
    std::set<std::string> counted;
    for (const MeasureRecord& r : run.records)
      if (r.task_key == run.tasks[k].harness->sub.key && r.strategy == run.strategy.name &&
          counted.insert(r.sentence).second)
        sched.record((int)k, r.ok() ? r.median_s : -1);
    used += (int64_t)run.tasks[k].sentences.size();
  }
  const int64_t budget = (int64_t)run.o.trials_per_task * (int64_t)run.tasks.size();
  std::mt19937_64 rng(run.o.seed * 7919 + 17);
  ProgressLine progress(run.o.progress, "tune " + run.strategy.name,
                        std::max<int64_t>(0, budget - used));
  int64_t done = 0;
  while (used < budget) {
    int k = sched.next_task();
    if (k < 0) break;
    TaskRun& t = run.tasks[k];
    int n = (int)std::min<int64_t>(run.o.batch, budget - used);
    // A task still in its warm-up gets only what completes it: with fewer trials per task than
    // a batch (--trials-per-task 1, batch 8), a whole batch each would spend the budget on the
    // first tasks and leave the rest at the default schedule.
    if (sched.trials(k) < so.warmup) n = std::min(n, so.warmup - sched.trials(k));
    std::vector<Program> batch = policy->propose(t.search, n, rng);
    if (batch.empty() || t.search.exhausted) sched.mark_done(k);
    std::vector<MeasureJob> jobs;
    for (const Program& prog : batch)
      jobs.push_back({t.harness.get(), program_candidate(prog, run.strategy.name)});
    std::vector<MeasureRecord> rs = run.measure(jobs, run.o.measure);
    for (size_t i = 0; i < rs.size(); i++) {
      double lat = rs[i].ok() ? rs[i].median_s : -1;
      t.search.add(batch[i], lat);
      sched.record(k, lat);
      t.sentences.insert(rs[i].sentence);
    }
    t.result.new_trials += (int)rs.size();
    used += (int64_t)rs.size();
    done += (int64_t)rs.size();
    char detail[256];
    std::snprintf(detail, sizeof detail, "task %d %s: %d trials, best %s | sum w*best %s",
                  t.result.task_id, t.result.kind.c_str(), sched.trials(k),
                  std::isfinite(sched.best(k)) ? ms(sched.best(k)).c_str() : "-",
                  ms(sched.weighted_best()).c_str());
    progress.update(done, detail);
  }
  progress.finish();
}

// The options of a task's final timings (the re-measurement of its best few, an autoscheduled
// program's one timing): the re-measurement's samples, and built as the model will be, with
// Halide's assertions, so that a program whose inferred bounds exceed an input fails here (a
// RuntimeError record, never deployed: ranked_per_task), not in the model.
MeasureOptions final_timing_options(const Run& run) {
  MeasureOptions mo = run.o.measure;
  mo.timing.repeats = std::max(mo.timing.repeats, run.o.remeasure_repeats);
  mo.no_asserts = false;
  return mo;
}

// Step 3 (Halide strategies): one autoscheduled program per task, unless recorded already.
void autoschedule(Run& run) {
  HalideAutoscheduler which;
  TLM_CHECK(find_halide_autoscheduler(run.strategy.name, &which)) << run.strategy.name;
  load_halide_autoscheduler(which);
  std::vector<TaskRun*> todo;
  for (TaskRun& t : run.tasks)
    if (t.sentences.empty()) todo.push_back(&t);
  ProgressLine progress(run.o.progress, "tune " + run.strategy.name, (int64_t)todo.size());
  // One program per task, timed with the re-measurement's samples right away: re-running an
  // autoscheduler (minutes for Adams2019's beam search) only to time it again would be waste.
  const MeasureOptions mo = final_timing_options(run);
  // A few tasks per call: their autoschedulers and compiles run in parallel.
  const size_t chunk = (size_t)std::max(1, run.hw.cores);
  for (size_t i = 0; i < todo.size(); i += chunk) {
    std::vector<MeasureJob> jobs;
    for (size_t j = i; j < todo.size() && j < i + chunk; j++)
      jobs.push_back({todo[j]->harness.get(), autoscheduler_candidate(which)});
    std::vector<MeasureRecord> rs = run.measure(jobs, mo);
    for (size_t j = 0; j < rs.size(); j++) {
      todo[i + j]->sentences.insert(rs[j].sentence);
      todo[i + j]->result.new_trials++;
    }
    const TaskResult& last = todo[i + rs.size() - 1]->result;
    progress.update((int64_t)(i + rs.size()),
                    "task " + std::to_string(last.task_id) + " " + last.kind);
  }
  progress.finish();
}

// Step 3 (`tlm` with no measurement): every task gets the language model's zero-shot program
// (tune/lm_search.h), compiled into the model in step 5 unmeasured (and verified there with the
// whole model).
void zero_shot(Run& run) {
  const ZeroShotOptions& zo = run.zero;
  ProgressLine progress(run.o.progress, "tune tlm (no measurement)", (int64_t)run.tasks.size());
  int64_t done = 0;
  for (TaskRun& t : run.tasks) {
    ZeroShotChoice c = zero_shot_program(*run.lm.lm, run.lm.tok, *t.harness->printer, run.hw, zo);
    t.result.best_sentence = t.harness->printer->text(c.program);
    t.result.note = std::string(c.expert ? "expert program" : "model's program") + " chosen by " +
                    (zo.rank ? "the ranker" : "the model") + " (" + run.o.zero_shot +
                    "), not measured";
    progress.update(++done, "task " + std::to_string(t.result.task_id) + " " + t.result.kind);
  }
  progress.finish();
}

// The interpreter's outputs for the model inputs, computed on first use (steps 4b and 5 check
// against them).
const std::vector<Tensor>& reference_outputs(Run& run, const Graph& g) {
  if (run.reference.empty()) run.reference = interpret(g, run.o.model_inputs);
  return run.reference;
}

bool uses_language_model(const Run& run) {
  return run.strategy.name == "tlm" || run.strategy.name == "tlm-evolutionary";
}

// Step 4: re-measure the best few of each task (all tasks in one call, so that compiles overlap),
// the language model's first program too (its zero-shot choice: the language-model strategies
// measure it first), and at two or more threads the row-split variant of each (space.h, "Row
// splits"); the final best is deployed_choice() among the re-measured ones: the fastest, or a row
// split within kRowSplitTolerance of it. The finalists of step 4b: that one, the model's first,
// then the others by re-measured latency.
void remeasure_and_pick(Run& run) {
  const std::string re = run.strategy.name + kRemeasureSuffix;
  const MeasureOptions mo = final_timing_options(run);
  // Per task: sentence -> its search record / its latest re-measurement.
  using BySentence = std::map<std::string, MeasureRecord>;
  std::vector<BySentence> first(run.tasks.size()), again(run.tasks.size());
  std::vector<MeasureJob> jobs;
  std::vector<std::pair<size_t, std::string>> job_of;  // task index, sentence
  std::vector<std::string> model_first(run.tasks.size());
  for (size_t k = 0; k < run.tasks.size(); k++) {
    TaskRun& t = run.tasks[k];
    for (const MeasureRecord& r : run.records) {
      if (r.task_key != t.harness->sub.key || !r.ok()) continue;
      if (r.strategy == run.strategy.name && !first[k].count(r.sentence)) first[k][r.sentence] = r;
      if (r.strategy == run.strategy.name && model_first[k].empty() && uses_language_model(run))
        model_first[k] = r.sentence;
      if (r.strategy == re) again[k][r.sentence] = r;
    }
    t.result.trials = (int)t.sentences.size();
    t.result.ok = (int)first[k].size();
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [sentence, r] : first[k]) ranked.push_back({r.median_s, sentence});
    std::sort(ranked.begin(), ranked.end());
    std::set<std::string> queued;
    auto queue = [&](const Program& program, const std::string& sentence) {
      if (again[k].count(sentence) || !queued.insert(sentence).second) return;
      Candidate c;
      c.program = program;
      c.strategy = re;
      jobs.push_back({t.harness.get(), c});
      job_of.push_back({k, sentence});
    };
    std::vector<std::string> top;
    for (int i = 0; i < (int)ranked.size() && i < run.o.remeasure_top; i++)
      top.push_back(ranked[i].second);
    if (!model_first[k].empty() && run.o.remeasure_top > 0 &&
        std::find(top.begin(), top.end(), model_first[k]) == top.end())
      top.push_back(model_first[k]);
    for (const std::string& sentence : top) {
      // Autoscheduled programs were timed with the re-measurement's samples already.
      if (is_autoscheduler_marker(sentence)) continue;
      Program program, rows;
      if (!program_from_sentence(*t.harness->printer, sentence, &program)) continue;
      queue(program, sentence);
      if (run.hw.cores >= 2 && row_split_variant(t.harness->space, program, run.hw.cores, &rows))
        queue(rows, t.harness->printer->text(rows));
    }
  }
  std::vector<MeasureRecord> rs = run.measure(jobs, mo);
  for (size_t j = 0; j < rs.size(); j++)
    if (rs[j].ok()) again[job_of[j].first][job_of[j].second] = rs[j];
  for (size_t k = 0; k < run.tasks.size(); k++) {
    TaskResult& res = run.tasks[k].result;
    const BySentence& pool = again[k].empty() ? first[k] : again[k];
    if (pool.empty()) continue;
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [sentence, r] : pool) ranked.push_back({r.median_s, sentence});
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    const std::string chosen =
        deployed_choice(*run.tasks[k].harness->printer, run.hw.cores, ranked);
    const MeasureRecord& r = pool.at(chosen);
    res.best_s = r.median_s;
    res.best_spread = stats_from_samples(r.latencies_s).spread;
    res.best_sentence = chosen;
    std::vector<std::string>& f = run.tasks[k].finalists;
    f = {chosen};
    if (pool.count(model_first[k]) && model_first[k] != chosen) f.push_back(model_first[k]);
    for (const auto& [latency, sentence] : ranked)
      if (std::find(f.begin(), f.end(), sentence) == f.end()) f.push_back(sentence);
  }
}

// Step 4b: each task's finalists timed inside the model (tune/in_model.h); a task's final best is
// its fastest there. Every finalist timed gets an "S/in-model" record (records.h), all with the
// selection's start time, which is what deployment picks from (recorded_schedules.h).
void select_in_model(Run& run, const Graph& g, const Partition& p) {
  const int k_max = run.o.in_model_finalists;
  if (k_max <= 1) return;
  if (run.o.model_inputs.empty()) {
    run.report.in_model_note = "skipped (no model inputs)";
    return;
  }
  std::vector<std::vector<std::string>> finalists(p.tasks.size());
  int tasks = 0;
  for (const TaskRun& t : run.tasks) {
    std::vector<std::string> f = t.finalists;
    // Autoscheduler markers re-run their autoscheduler at compile time: not here.
    if (f.size() > 1 && is_autoscheduler_marker(f[0])) f.resize(1);
    if (f.size() > (size_t)k_max) f.resize(k_max);
    if (f.empty() && !t.result.best_sentence.empty()) f = {t.result.best_sentence};
    tasks += f.size() > 1;
    finalists[t.index] = std::move(f);
  }
  if (tasks == 0) {
    run.report.in_model_note = "skipped (no task has two finalists)";
    return;
  }
  const double t0 = now_s();
  const int64_t started = unix_time_ms();
  InModelOptions io = run.o.in_model;
  io.compile_threads = run.hw.cores;
  io.atol = run.o.e2e_atol;
  io.rtol = run.o.e2e_rtol;
  const InModelTimings timed = time_finalists_in_model(g, p, run.hw, finalists, run.o.model_inputs,
                                                       reference_outputs(run, g), io);
  const std::vector<int> pick = pick_in_model(timed);
  for (const TaskRun& t : run.tasks)
    for (size_t j = 0; j < timed.errors[t.index].size(); j++)
      if (!timed.errors[t.index][j].empty())
        run.report.in_model_note += (run.report.in_model_note.empty() ? "" : "; ") +
                                    std::string("task ") + std::to_string(p.tasks[t.index].id) +
                                    "'s finalist " + std::to_string(j) +
                                    " not timed: " + timed.errors[t.index][j];
  for (TaskRun& t : run.tasks) {
    const std::vector<std::string>& f = finalists[t.index];
    if (f.size() <= 1 || pick[t.index] < 0) continue;
    for (size_t j = 0; j < f.size(); j++) {
      const std::vector<double>& turns = timed.turns_s[t.index][j];
      if (turns.empty()) continue;
      MeasureRecord r;
      r.task_key = t.harness->sub.key;
      r.task_kind = t.harness->sub.kind;
      r.workload = run.o.workload;
      r.sentence = f[j];
      r.hardware = run.hw_key;
      r.latencies_s = turns;
      r.median_s = stats_from_samples(turns).median_s;
      r.strategy = run.strategy.name + kInModelSuffix;
      r.timestamp_ms = started;
      r.cache = kCacheModel;
      run.writer->append(r);
      run.records.push_back(r);
    }
    TaskResult& res = t.result;
    res.finalists = (int)f.size();
    res.pick = pick[t.index];
    res.best_sentence = f[res.pick];
    // Its time there, per instance (the turns sum the task's instances); the end-to-end run
    // (step 5), when asked for, replaces it with that run's.
    const std::vector<double>& picked = timed.turns_s[t.index][res.pick];
    if (!picked.empty() && res.weight > 0)
      res.in_model_s = stats_from_samples(picked).median_s / res.weight;
    // Its latency alone: the latest re-measurement, else (no re-measurement: --remeasure 0) its
    // search record.
    const MeasureRecord *again = nullptr, *first = nullptr;
    for (const MeasureRecord& r : run.records) {
      if (r.task_key != t.harness->sub.key || r.sentence != res.best_sentence || !r.ok()) continue;
      if (r.strategy == run.strategy.name + kRemeasureSuffix) again = &r;
      if (r.strategy == run.strategy.name && !first) first = &r;
    }
    if (const MeasureRecord* alone = again ? again : first) {
      res.best_s = alone->median_s;
      res.best_spread = stats_from_samples(alone->latencies_s).spread;
    }
  }
  run.report.in_model_tasks = tasks;
  run.report.in_model_sets = timed.sets;
  run.report.in_model_wall_s = now_s() - t0;
}

// The tuned model's verification and timing (step 5).
struct TunedModel {
  double violation = 0;
  double end_to_end_ms = 0;
  std::vector<double> instance_ms;
};

TunedModel time_tuned_model(const Run& run, const Graph& g, const Partition& p,
                            const std::vector<std::string>& best) {
  CompileOptions co;
  co.compile_threads = run.hw.cores;
  co.schedule = best_schedule_hook(p, best, run.hw);
  CompiledModel tuned = compile_model(g, p, co);
  std::vector<Tensor> out = tuned.run(run.o.model_inputs);
  const std::vector<Tensor>& ref = run.reference;  // end_to_end computed it
  TLM_CHECK(!ref.empty()) << "no reference outputs";
  TunedModel m;
  for (size_t i = 0; i < ref.size() && i < out.size(); i++) {
    double v = max_rel_violation(out[i], ref[i], run.o.e2e_atol, run.o.e2e_rtol);
    if (!(v <= m.violation)) m.violation = v;
  }
  Timing timing = tuned.time(run.o.model_inputs, 2, run.o.e2e_repeat);
  m.end_to_end_ms = timing.end_to_end_ms;
  m.instance_ms = timing.instance_ms;
  return m;
}

// The same in a worker, for Halide autoscheduler strategies: compiling their programs re-runs the
// autoscheduler (no schedule of theirs can be carried over from the measurement worker), which
// can take minutes and gigabytes (Adams2019's beam search). Under the autoscheduler's deadline
// per round of parallel compiles; false (and `why`) when the worker timed out, crashed or threw.
bool time_tuned_model_isolated(const Run& run, const Graph& g, const Partition& p,
                               const std::vector<std::string>& best, TunedModel* m,
                               std::string* why) {
  int autoscheduled = 0;
  for (const std::string& s : best) autoscheduled += is_autoscheduler_marker(s);
  const int rounds = (autoscheduled + std::max(1, run.hw.cores) - 1) / std::max(1, run.hw.cores);
  const double deadline = rounds * run.o.measure.autoschedule_timeout_s + 300;
  std::fflush(stdout);
  std::fflush(stderr);
  WorkerResult w = run_isolated(
      [&] {
        TunedModel r = time_tuned_model(run, g, p, best);
        std::ostringstream os;
        os.precision(17);
        os << r.violation << " " << r.end_to_end_ms << " " << r.instance_ms.size();
        for (double x : r.instance_ms) os << " " << x;
        return os.str();
      },
      deadline);
  if (w.status != WorkerStatus::Ok) {
    *why = w.describe();
    return false;
  }
  std::istringstream is(w.payload);
  size_t k = 0;
  is >> m->violation >> m->end_to_end_ms >> k;
  m->instance_ms.resize(k);
  for (double& x : m->instance_ms) is >> x;
  TLM_CHECK(!is.fail()) << "end-to-end worker payload: " << w.payload;
  return true;
}

// Step 5: the whole model with the best programs, verified and timed, next to the defaults.
void end_to_end(Run& run, const Graph& g, const Partition& p) {
  if (run.o.model_inputs.empty() || !run.o.e2e) {
    run.report.e2e_note = run.o.e2e ? "skipped (no model inputs)" : "skipped (not asked for)";
    return;
  }
  std::vector<std::string> best(p.tasks.size());
  for (const TaskRun& t : run.tasks) best[t.index] = t.result.best_sentence;
  try {
    reference_outputs(run, g);  // before the worker forks, and shared with step 4b
    TunedModel m;
    std::string why;
    if (run.strategy.kind == StrategyKind::HalideAutoscheduler &&
        !time_tuned_model_isolated(run, g, p, best, &m, &why)) {
      // A task whose autoscheduler fails falls back to the default schedule; the tune finishes.
      for (std::string& s : best)
        if (is_autoscheduler_marker(s)) s.clear();
      run.report.e2e_note = "the autoscheduled programs could not be compiled for the model (" +
                            why + "); its tasks were timed with the default schedules";
      m = time_tuned_model(run, g, p, best);
    } else if (run.strategy.kind != StrategyKind::HalideAutoscheduler) {
      m = time_tuned_model(run, g, p, best);
    }
    run.report.e2e_violation = m.violation;
    run.report.e2e_verified = m.violation <= 1.0;
    run.report.e2e_tuned_ms = m.end_to_end_ms;
    // Per task: the mean over its instances of their median latency inside the model.
    for (TaskResult& r : run.report.tasks) {
      int n = 0;
      double sum_ms = 0;
      for (size_t i = 0; i < p.instances.size() && i < m.instance_ms.size(); i++)
        if (p.tasks[p.instances[i].task].id == r.task_id) {
          sum_ms += m.instance_ms[i];
          n++;
        }
      if (n > 0) r.in_model_s = sum_ms / n * 1e-3;
    }
    CompileOptions dco;
    dco.compile_threads = run.hw.cores;
    CompiledModel untuned = compile_model(g, p, dco);
    run.report.e2e_default_ms = untuned.time(run.o.model_inputs, 2, run.o.e2e_repeat).end_to_end_ms;
    run.report.e2e_done = true;
  } catch (const std::exception& e) {
    run.report.e2e_note = std::string("failed: ") + e.what();
  }
}

}  // namespace

const std::vector<StrategyInfo>& strategies() {
  static const std::vector<StrategyInfo> rows = [] {
    std::vector<StrategyInfo> r = {
        {"random", StrategyKind::Search, "uniform samples of the schedule space"},
        {"evolutionary", StrategyKind::Search,
         "Ansor-style evolution ranked by an XGBoost cost model trained on the measurements"},
        {"expert-evolutionary", StrategyKind::Search,
         "evolutionary search whose first measurements are each task's expert programs "
         "(register-blocked, written without measurement; no language model)"},
        {"tlm", StrategyKind::Search,
         "programs written by the tensor language model (--model, default the shipped one): "
         "first its zero-shot candidates in the --zero-shot mode's order (default: its greedy "
         "program and the expert programs (and 32 samples for untiled tasks) as the zero-shot "
         "ranker orders them), "
         "then samples; --trials-per-task 0: the zero-shot program, no measurement"},
        {"tlm-evolutionary", StrategyKind::Search,
         "evolutionary search seeded with the language model's programs, the model also "
         "completing mutated parents (the paper's TLM-Ansor; --model as for tlm)"},
    };
    for (const HalideAutoschedulerInfo& h : halide_autoschedulers())
      r.push_back({h.strategy, StrategyKind::HalideAutoscheduler,
                   std::string("Halide's ") + h.halide_name + " autoscheduler (one program)"});
    return r;
  }();
  return rows;
}

const StrategyInfo& find_strategy(const std::string& name) {
  std::string names;
  for (const StrategyInfo& s : strategies()) {
    if (s.name == name) return s;
    names += (names.empty() ? "" : ", ") + s.name;
  }
  TLM_USER_ERROR() << "unknown strategy '" << name << "' (valid: " << names << ")";
}

TuneReport tune_model(const Graph& g, const Partition& p, const TuneOptions& o) {
  const double t0 = now_s();
  Run run(o, find_strategy(o.strategy));
  TLM_USER_CHECK(!o.records_path.empty()) << "tune: a records file is required (--records)";
  const bool zero = o.strategy == "tlm" && o.trials_per_task == 0;
  TLM_USER_CHECK(o.trials_per_task >= 1 || zero)
      << "tune: --trials-per-task must be >= 1 (0 only with --strategy tlm: no measurement)";
  TLM_USER_CHECK(o.batch >= 1) << "tune: --batch must be >= 1";
  run.hw = detect_hardware();
  run.hw_key = hardware_key(run.hw);
  host_target();  // fixes the target before any fork
  run.report.strategy = o.strategy;
  run.report.hardware = run.hw_key;

  if (run.strategy.name == "tlm" || run.strategy.name == "tlm-evolutionary") {
    set_model_threads(compute_threads());
    run.lm = load_model_or_default(o.model_path);
    run.zero = zero_shot_mode(o.zero_shot);
    run.ranker = load_zero_shot_ranker(run.zero, o.ranker_path);
    run.zero.ranker = run.ranker.get();
    run.lm_search = o.lm_search;
    run.lm_search.first = run.zero;
    run.lm_search.first.beam = std::max(run.zero.beam, 1);
  }
  load_existing(run);
  prepare_tasks(run, g, p);
  warm_halide_jit();
  run.writer = std::make_unique<RecordWriter>(o.records_path);
  if (zero)
    zero_shot(run);
  else if (run.strategy.kind == StrategyKind::Search)
    search(run);
  else
    autoschedule(run);
  if (!zero) remeasure_and_pick(run);
  if (!zero && run.strategy.kind == StrategyKind::Search) select_in_model(run, g, p);
  for (TaskRun& t : run.tasks) run.report.tasks.push_back(t.result);
  std::sort(run.report.tasks.begin(), run.report.tasks.end(),
            [](const TaskResult& a, const TaskResult& b) { return a.task_id < b.task_id; });
  end_to_end(run, g, p);
  run.report.wall_s = now_s() - t0;
  return run.report;
}

}  // namespace tlm

// The tuning driver behind `tlm tune`: measure programs of every task of a model with one
// strategy, append a record per measurement, and report per-task and end-to-end results.
//
//   tune_model(g, p, options)   the whole run, as a straight list of steps:
//     1. load the records file (if any) and keep this hardware's records: already-measured
//        sentences are never measured again, and this strategy's count toward its budget
//        (resume after a kill -9 loses at most the candidate in flight);
//     2. make a TaskHarness per task (reference outputs from the interpreter); only the listed
//        tasks, and with missing_only only those this strategy has no record of yet;
//     3. search strategies: the task scheduler (tune/scheduler.h) picks a task, the policy
//        (tune/search.h) proposes a batch, each candidate is measured in a worker and appended
//        (fsync'd) to the records, until trials_per_task x tasks measurements exist;
//        Halide strategies: one autoscheduled program per task;
//     4. re-measure the best few programs of each task with more repeats ("S/remeasure"
//        records); a task's final best is the lowest re-measured latency (autoscheduled
//        programs are timed with those repeats in step 3 and not re-run);
//        4b. in-model selection (tune/in_model.h): each task's finalists (the chosen program,
//        for the language-model strategies the model's own first program, then the next
//        re-measured ones; in_model_finalists in all) compiled into one model, verified, and
//        timed there over turns of random assignments ("S/in-model" records); a task's final
//        best is its fastest there. Needs model_inputs; skipped when no task has two finalists;
//     5. compile the model with every task's best program through the runtime's schedule hook
//        (measure/recorded_schedules.h), verify it against the interpreter and time it, next to
//        the default schedules. For Halide strategies this runs in a worker under the
//        autoscheduler's deadline (compiling re-runs the autoscheduler); if it fails, their
//        tasks fall back to the default schedule with a note and the tune still finishes.
//   strategies()                the --strategy table: random, evolutionary, tlm, halide-*
//   TuneReport::table()         the final table (per-task best, end-to-end, measurements, time)
//
// Budget: trials_per_task x (tuned tasks) distinct sentences of this strategy in the records
// file. The scheduler spreads them by gradient, so a task may get more or fewer than N.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "measure/harness.h"
#include "partition/partition.h"
#include "tune/in_model.h"
#include "tune/lm_search.h"
#include "tune/scheduler.h"
#include "tune/search.h"

namespace tlm {

enum class StrategyKind { Search, HalideAutoscheduler };

struct StrategyInfo {
  std::string name;  // the --strategy value
  StrategyKind kind;
  std::string help;  // one line for --help
};
const std::vector<StrategyInfo>& strategies();
// UserError naming the valid strategies when `name` is not one of them.
const StrategyInfo& find_strategy(const std::string& name);

struct TuneOptions {
  std::string strategy = "evolutionary";
  int trials_per_task = 64;    // measurement budget per task (search strategies)
  std::string records_path;    // JSON-lines records, appended; required
  std::string workload;        // recorded in every record (the MODEL argument)
  int batch = 8;               // candidates per scheduler step
  uint64_t seed = 0;           // search randomness and task inputs
  std::vector<int> tasks;      // task ids to tune; empty: all
  bool missing_only = false;   // only (of those) the tasks without a record of this strategy on
                               // this hardware: tasks a graph change added to a finished set
  int remeasure_top = 3;       // re-measured programs per task at the end (0: none)
  int remeasure_repeats = 15;  // timing samples of a re-measurement
  int in_model_finalists = 3;  // programs per task timed inside the model (step 4b; <= 1: off)
  InModelOptions in_model;
  MeasureOptions measure;
  EvolutionOptions evolution;
  std::string model_path;     // `tlm`, `tlm-evolutionary`: the checkpoint ("": the shipped one)
  LmSearchOptions lm_search;  // `tlm`, `tlm-evolutionary`: sampling (`first` is zero_shot's)
  // `tlm` with no measurement: the program chosen (zero_shot_mode()); `tlm` and
  // `tlm-evolutionary` measure the same candidates first, in the mode's order (plus the greedy
  // program when the mode has none)
  std::string zero_shot = "ranker";
  std::string ranker_path;  // its ranker (mode "ranker"; "": models/ranker.json)
  SchedulerOptions scheduler;
  bool progress = true;  // progress line on stderr
  // The model's inputs in graph order (the CLI draws them like `tlm run`) for step 4b and step 5
  // (compile the model with the best programs, verify, time; e2e false: skip it); empty: skip
  // both.
  std::vector<Tensor> model_inputs;
  bool e2e = true;
  int e2e_repeat = 10;
  double e2e_atol = 1e-3, e2e_rtol = 1e-3;
};

struct TaskResult {
  int task_id = 0;
  std::string kind;
  int weight = 0;
  double flops = 0;
  int trials = 0;          // this strategy's distinct measured sentences (resumed ones included)
  int new_trials = 0;      // of those, measured in this run
  int ok = 0;              // error-free among `trials`
  double best_s = 0;       // final best (re-measured) latency; 0: no valid program
  double best_spread = 0;  // its timing samples' (q3 - q1) / median: 0.03 = 3% noise
  double in_model_s = 0;   // its latency per instance inside the model: the tuned model's end-
                           // to-end run, else the in-model selection's (step 4b) time of the pick
  std::string best_sentence;
  std::string note;   // why a task was skipped, if it was
  int finalists = 0;  // programs timed inside the model in step 4b (0: not selected there)
  int pick = 0;       // the one chosen there: 0 = the re-measured best
};

struct TuneReport {
  std::string strategy;
  std::string hardware;
  std::vector<TaskResult> tasks;
  int64_t measured = 0;       // measurements made in this run (re-measurements included)
  int64_t measured_ok = 0;    // of those, error-free
  double measure_wall_s = 0;  // wall time spent in measurement workers
  double wall_s = 0;          // the whole run
  bool e2e_done = false;
  bool e2e_verified = false;
  double e2e_violation = 0;
  double e2e_tuned_ms = 0, e2e_default_ms = 0;
  std::string e2e_note;  // why end-to-end was skipped, if it was
  // Step 4b: tasks with finalists timed in the model, schedule sets, the wall time it took, and
  // why it was skipped or a set was dropped.
  int in_model_tasks = 0, in_model_sets = 0;
  double in_model_wall_s = 0;
  std::string in_model_note;

  double valid_per_minute() const {
    return measure_wall_s > 0 ? measured_ok * 60.0 / measure_wall_s : 0;
  }
  std::string table() const;
};

TuneReport tune_model(const Graph& g, const Partition& p, const TuneOptions& o);

}  // namespace tlm

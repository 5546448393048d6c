// `tlm tune`: flags -> TuneOptions, then tune_model() and the final table on stdout.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "partition/partition.h"
#include "tune/lm_search.h"
#include "tune/tuner.h"

namespace tlm {
namespace {

struct TuneCliOptions {
  std::string model;
  std::string layout = "auto";  // --layout
  std::vector<std::string> dims;
  uint64_t seed = 0;
  TuneOptions tune;
  bool no_e2e = false;
  bool quiet = false;
};

std::string strategy_help() {
  std::string s = "search strategy:";
  for (const StrategyInfo& st : strategies()) s += "\n  " + st.name + ": " + st.help;
  return s;
}

int run_tune(TuneCliOptions& o) {
  const StrategyInfo& strategy = find_strategy(o.tune.strategy);  // fails before the model
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed, o.layout);
  Partition p = partition_graph(g);
  std::string budget = strategy.kind != StrategyKind::Search ? "one program per task"
                       : o.tune.trials_per_task == 0
                           ? "no measurement"
                           : std::to_string(o.tune.trials_per_task) + " trials per task";
  std::printf("model %s: %zu tasks, %zu instances; strategy %s, %s, records %s\n", o.model.c_str(),
              p.tasks.size(), p.instances.size(), o.tune.strategy.c_str(), budget.c_str(),
              o.tune.records_path.c_str());
  std::fflush(stdout);
  o.tune.workload = o.model;
  o.tune.seed = o.seed;
  o.tune.progress = !o.quiet;
  o.tune.model_inputs = random_inputs(g, o.seed);
  o.tune.e2e = !o.no_e2e;
  TuneReport r = tune_model(g, p, o.tune);
  std::printf("\n%s", r.table().c_str());
  if (o.tune.missing_only)
    std::printf("--missing: %zu task(s) without a record of %s on this machine tuned%s\n",
                r.tasks.size(), o.tune.strategy.c_str(),
                r.tasks.empty() ? " (none missing: nothing measured)" : "");
  if (r.e2e_done && !r.e2e_verified) {
    std::fflush(stdout);
    std::fprintf(stderr, "error: the tuned model differs from the reference interpreter\n");
    return 1;
  }
  return 0;
}

}  // namespace

Command add_tune_command(CLI::App& app) {
  auto o = std::make_shared<TuneCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "tune",
      "tune every task of a model: measure candidate programs in isolated workers, append a "
      "record per measurement, then compile the model with the best ones, verify and time it");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout,
                  "seed of weights, inputs and the search");
  cmd->add_option("--strategy", o->tune.strategy, strategy_help())->capture_default_str();
  cmd->add_option("--trials-per-task", o->tune.trials_per_task,
                  "measurement budget: this many times the number of tasks (0 with --strategy "
                  "tlm: no measurement)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000000));
  cmd->add_option("--model", o->tune.model_path,
                  "language-model checkpoint of the tlm and tlm-evolutionary strategies (default: "
                  "models/tlm.ckpt)");
  cmd->add_option("--temperature", o->tune.lm_search.temperature,
                  "tlm, tlm-evolutionary: sampling temperature")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--zero-shot", o->tune.zero_shot,
                  "tlm with --trials-per-task 0: how each task's program is chosen (ranker: the "
                  "model's greedy program and the expert programs (and 32 of its samples for "
                  "untiled tasks), ranked by "
                  "the zero-shot ranker, --ranker; experts: only the expert programs, ranked by "
                  "the model; greedy: the model's greedy decoding; ranked: the most likely, as "
                  "the model scores whole programs, among its 4-wide beam and the expert "
                  "programs)")
      ->capture_default_str()
      ->check(CLI::IsMember(kZeroShotModeNames));
  cmd->add_option("--ranker", o->tune.ranker_path,
                  "the zero-shot ranker of --zero-shot ranker (default: the shipped "
                  "models/ranker.json)");
  cmd->add_option("--records", o->tune.records_path,
                  "JSON-lines records file: appended to, and read to resume")
      ->required();
  cmd->add_option("--batch", o->tune.batch, "candidates measured per scheduling step")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--tasks", o->tune.tasks, "only these task ids (`tlm extract` lists them)")
      ->delimiter(',');
  cmd->add_flag("--missing", o->tune.missing_only,
                "only the tasks (of --tasks, if given) with no record of this strategy on this "
                "machine in --records: e.g. the tasks a change of the graph added to a finished "
                "set; the budget is --trials-per-task x those tasks");
  cmd->add_option("--remeasure", o->tune.remeasure_top,
                  "re-measure this many best programs per task at the end")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--in-model", o->tune.in_model_finalists,
                  "time this many programs per task (the re-measured best, the language model's "
                  "first, the next re-measured) inside the compiled model at the end and deploy "
                  "each task's fastest there (0 or 1: off)")
      ->capture_default_str()
      ->check(CLI::Range(0, 16));
  cmd->add_option("--in-model-turns", o->tune.in_model.turns,
                  "turns of the in-model selection (each a random assignment of the finalists, 3 "
                  "runs)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--repeats", o->tune.measure.timing.repeats,
                  "timing samples per measurement (the median is recorded)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--compile-timeout", o->tune.measure.compile_timeout_s,
                  "seconds a candidate may take to build")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--autoschedule-timeout", o->tune.measure.autoschedule_timeout_s,
                  "seconds a Halide autoscheduler may take to schedule and build a task")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--run-timeout", o->tune.measure.run_timeout_s,
                  "seconds a candidate may take to run (check and timing)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--no-e2e", o->no_e2e,
                "skip compiling, verifying and timing the whole model with the chosen programs at "
                "the end (the in-model selection still runs)");
  cmd->add_flag("--quiet", o->quiet, "no progress line");
  return {cmd, [o] { return run_tune(*o); }};
}

}  // namespace tlm

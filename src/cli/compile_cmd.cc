// `tlm compile`: a deployable artifact of a model (deploy/artifact.h) with each task's best
// recorded program (--records) or the language model's zero-shot program (--tlm, no
// measurement: cli/lm_schedules.h), default schedules for the rest; then its runner is built and
// run to verify it.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/lm_schedules.h"
#include "cli/model_source.h"
#include "deploy/artifact.h"
#include "graph/interpreter.h"
#include "measure/recorded_schedules.h"
#include "runtime/random_inputs.h"
#include "tune/lm_search.h"

namespace tlm {
namespace {

struct CompileCliOptions {
  std::string model;
  std::string layout = "auto";  // --layout
  std::vector<std::string> dims;
  uint64_t seed = 0;
  std::string records;  // empty: every task with its default schedule (unless tlm)
  bool tlm = false;     // --tlm: the language model's zero-shot programs
  std::string model_path, zero_shot = "ranker", ranker_path;  // --model, --zero-shot, --ranker
  std::string out_dir;
  bool no_build = false;
};

int run_compile(const CompileCliOptions& o) {
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed, o.layout);
  Partition p = partition_graph(g);
  HardwareInfo hw = detect_hardware();
  ArtifactOptions ao;
  ao.dir = o.out_dir;
  ao.model_name = o.model;
  if (o.tlm)
    ao.best = lm_schedules(p, hw, o.model_path, "tlm", o.zero_shot, o.ranker_path);
  else if (!o.records.empty())
    ao.best = best_sentences_from_records(p, o.records, hw);
  else
    ao.best.assign(p.tasks.size(), "");
  ao.inputs = random_inputs(g, o.seed);
  ao.expected = interpret(g, ao.inputs);
  ArtifactReport r = emit_artifact(g, p, hw, ao);
  std::printf(
      "wrote %s: %d tasks (%d with %s, the rest default schedules; programs in "
      "schedules.txt), %.1f MB of weights; build with `sh %s/build.sh`, run with `%s/runner %s`\n",
      o.out_dir.c_str(), r.tasks, r.tuned_tasks,
      o.tlm ? "the language model's program" : "a recorded program", r.weight_bytes / 1e6,
      o.out_dir.c_str(),
      o.out_dir.c_str(), o.out_dir.c_str());
  if (o.no_build) return 0;
  return build_and_verify_artifact(o.out_dir);
}

}  // namespace

Command add_compile_command(CLI::App& app) {
  auto o = std::make_shared<CompileCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "compile",
      "emit a deployable artifact (ahead-of-time compiled tasks with the best recorded "
      "schedules or the language model's, a header, weights and a runner), then build and "
      "verify it");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout,
                  "seed of the weights (zoo) and the sample inputs");
  cmd->add_option("--records", o->records,
                  "records file: each task gets its best program measured on this hardware")
      ->check(CLI::ExistingFile);
  CLI::Option* tlm_flag = cmd->add_flag(
      "--tlm", o->tlm,
      "each task gets the language model's zero-shot program (no measurement; as `tlm run "
      "--schedules tlm`)");
  tlm_flag->excludes("--records");
  cmd->add_option("--model", o->model_path,
                  "with --tlm: the checkpoint (default: the shipped models/tlm.ckpt)")
      ->needs(tlm_flag);
  cmd->add_option("--zero-shot", o->zero_shot, "with --tlm: how the model chooses programs")
      ->check(CLI::IsMember(kZeroShotModeNames))
      ->needs(tlm_flag);
  cmd->add_option("--ranker", o->ranker_path,
                  "with --tlm and --zero-shot ranker: the ranker (default: models/ranker.json)")
      ->needs(tlm_flag);
  cmd->add_option("-o,--out", o->out_dir, "output directory")->required();
  cmd->add_flag("--no-build", o->no_build, "only write the artifact");
  return {cmd, [o] { return run_compile(*o); }};
}

}  // namespace tlm

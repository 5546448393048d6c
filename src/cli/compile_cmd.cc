// `tlm compile`: a deployable artifact of a model with its best recorded schedules
// (deploy/artifact.h), then its runner is built and run to verify it.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "deploy/artifact.h"
#include "graph/interpreter.h"
#include "measure/recorded_schedules.h"
#include "runtime/random_inputs.h"

namespace tlm {
namespace {

struct CompileCliOptions {
  std::string model;
  std::string layout = "auto";  // --layout
  std::vector<std::string> dims;
  uint64_t seed = 0;
  std::string records;  // empty: every task with its default schedule
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
  ao.best = o.records.empty() ? std::vector<std::string>(p.tasks.size())
                              : best_sentences_from_records(p, o.records, hardware_key(hw));
  ao.inputs = random_inputs(g, o.seed);
  ao.expected = interpret(g, ao.inputs);
  ArtifactReport r = emit_artifact(g, p, hw, ao);
  std::printf(
      "wrote %s: %d tasks (%d with a recorded program, the rest default schedules), %.1f MB of "
      "weights; build with `sh %s/build.sh`, run with `%s/runner %s`\n",
      o.out_dir.c_str(), r.tasks, r.tuned_tasks, r.weight_bytes / 1e6, o.out_dir.c_str(),
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
      "schedules, a header, weights and a runner), then build and verify it");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout,
                  "seed of the weights (zoo) and the sample inputs");
  cmd->add_option("--records", o->records,
                  "records file: each task gets its best program measured on this hardware")
      ->check(CLI::ExistingFile);
  cmd->add_option("-o,--out", o->out_dir, "output directory")->required();
  cmd->add_flag("--no-build", o->no_build, "only write the artifact");
  return {cmd, [o] { return run_compile(*o); }};
}

}  // namespace tlm

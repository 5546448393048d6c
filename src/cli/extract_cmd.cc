// `tlm extract MODEL`: the task table (id, kind, shapes, FLOPs, weight, share).
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "partition/partition.h"

namespace tlm {
namespace {

struct ExtractOptions {
  std::string model;              // zoo spec or .onnx path
  std::vector<std::string> dims;  // --dim NAME=VALUE
  uint64_t seed = 0;              // zoo weights
};

int run_extract(const ExtractOptions& o) {
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed);
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fputs(task_table(p).c_str(), stdout);
  return 0;
}

}  // namespace

Command add_extract_command(CLI::App& app) {
  auto o = std::make_shared<ExtractOptions>();
  CLI::App* cmd = app.add_subcommand("extract", "print the task table of a model");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed);
  return {cmd, [o] { return run_extract(*o); }};
}

}  // namespace tlm

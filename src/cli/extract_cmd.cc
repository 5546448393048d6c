// `tlm extract MODEL`: the task table (id, kind, shapes, FLOPs, weight, share); with --json FILE
// also the task map: per task its id, kind, key hash, FLOPs and weight, and per instance the
// model's value names it reads and writes and the names of the nodes it computes (ONNX node
// names), so that another runtime's per-node profile can be summed per task (bench/lose).
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "cli/commands.h"
#include "cli/flags.h"
#include "cli/model_source.h"
#include "partition/partition.h"
#include "runtime/memory_plan.h"
#include "support/error.h"
#include "support/hash.h"

namespace tlm {
namespace {

// Bump when a field of the task map changes meaning or is added/removed.
constexpr int kTaskMapVersion = 2;  // 2: per instance "view"

struct ExtractOptions {
  std::string model;              // zoo spec or .onnx path
  std::string layout = "auto";    // --layout
  std::vector<std::string> dims;  // --dim NAME=VALUE
  uint64_t seed = 0;              // zoo weights
  std::string json_path;          // --json: write the task map here
};

nlohmann::json task_map(const std::string& model, const Graph& g, const Partition& p,
                        const MemoryPlan& plan) {
  std::unordered_map<std::string, const Node*> node_of_name;
  for (const Node& n : g.nodes) node_of_name[n.name] = &n;
  nlohmann::json tasks = nlohmann::json::array();
  for (const Task& t : p.tasks) {
    char hash[20];
    std::snprintf(hash, sizeof hash, "%016llx", (unsigned long long)fnv1a(t.sub.key));
    tasks.push_back({{"id", t.id},
                     {"kind", t.sub.kind},
                     {"key_fnv1a", hash},
                     {"flops", t.sub.flops},
                     {"weight", t.weight},
                     {"instances", nlohmann::json::array()}});
  }
  for (size_t i = 0; i < p.instances.size(); i++) {
    const TaskInstance& inst = p.instances[i];
    nlohmann::json inputs = nlohmann::json::array(), ops = nlohmann::json::array();
    for (ValueId v : inst.inputs)
      if (!g.value(v).is_constant()) inputs.push_back(g.value(v).name);  // weights left out
    for (const std::string& name : inst.ops)
      ops.push_back({{"name", name}, {"op", op_name(node_of_name.at(name)->op)}});
    tasks[inst.task]["instances"].push_back({{"index", i},
                                             {"output", g.value(inst.output).name},
                                             {"view", (bool)plan.view[i]},
                                             {"inputs", inputs},
                                             {"ops", ops}});
  }
  return {{"version", kTaskMapVersion},
          {"model", model},
          {"nodes", g.nodes.size()},
          {"instances", p.instances.size()},
          {"tasks", tasks}};
}

int run_extract(const ExtractOptions& o) {
  Graph g = load_model(o.model, parse_dims(o.dims), o.seed, o.layout);
  Partition p = partition_graph(g);
  std::printf("model %s: inputs %s; %zu nodes -> %zu tasks, %zu instances\n", o.model.c_str(),
              describe_inputs(g).c_str(), g.nodes.size(), p.tasks.size(), p.instances.size());
  std::fputs(task_table(p).c_str(), stdout);
  const MemoryPlan plan = plan_memory(g, p);
  const std::vector<bool> never_run = view_only_tasks(p, plan.view);
  std::string idle;
  for (size_t i = 0; i < p.tasks.size(); i++)
    if (never_run[i]) idle += (idle.empty() ? "" : ", ") + std::to_string(p.tasks[i].id);
  std::printf("memory: %s%s\n", memory_plan_summary(plan).c_str(),
              idle.empty() ? "" : (" (tasks that never run: " + idle + ")").c_str());
  if (!o.json_path.empty()) {
    std::ofstream out(o.json_path);
    out << task_map(o.model, g, p, plan).dump(1) << "\n";
    TLM_USER_CHECK(out.good()) << "cannot write the task map to '" << o.json_path << "'";
    std::printf("task map: %s\n", o.json_path.c_str());
  }
  return 0;
}

}  // namespace

Command add_extract_command(CLI::App& app) {
  auto o = std::make_shared<ExtractOptions>();
  CLI::App* cmd = app.add_subcommand("extract", "print the task table of a model");
  add_model_flags(cmd, &o->model, &o->dims, &o->seed, &o->layout);
  cmd->add_option("--json", o->json_path,
                  "also write the task map (tasks, their instances and the model nodes each "
                  "computes, by name) to this JSON file");
  return {cmd, [o] { return run_extract(*o); }};
}

}  // namespace tlm

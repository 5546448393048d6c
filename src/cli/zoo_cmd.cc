// `tlm zoo`: the built-in workloads and their shape parameters; `tlm zoo --list train|heldout`:
// the zoo specs of the training (or held-out) workload list, one per line, for scripts.
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "language/workloads.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

int run_zoo(const std::string& list) {
  if (!list.empty()) {
    for (const std::string& w : expand_workloads({list})) std::printf("%s\n", w.c_str());
    return 0;
  }
  std::vector<ZooInfo> models = zoo_models();
  int width = 0;
  for (const ZooInfo& m : models) width = std::max(width, (int)m.name.size());
  for (const ZooInfo& m : models) {
    std::printf("%-*s  %-12s %s\n", width, m.name.c_str(), m.family.c_str(), m.description.c_str());
    for (const ZooParamInfo& p : m.params)
      std::printf("    %-10s default %-6lld range [%lld, %lld]  %s\n", p.name.c_str(),
                  (long long)p.def, (long long)p.min, (long long)p.max, p.help.c_str());
  }
  std::printf("\nUse a model as NAME or NAME:key=value,..., e.g. resnet50:batch=2,image=160\n");
  return 0;
}

}  // namespace

Command add_zoo_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("zoo", "list the built-in zoo models and their parameters");
  auto list = std::make_shared<std::string>();
  cmd->add_option("--list", *list,
                  "print the zoo specs of the training or held-out workloads, one per line")
      ->check(CLI::IsMember({"train", "heldout"}));
  return {cmd, [list] { return run_zoo(*list); }};
}

}  // namespace tlm

// `tlm zoo`: the built-in workloads and their shape parameters.
#include <algorithm>
#include <cstdio>

#include "cli/commands.h"
#include "zoo/zoo.h"

namespace tlm {
namespace {

int run_zoo() {
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
  return {cmd, run_zoo};
}

}  // namespace tlm

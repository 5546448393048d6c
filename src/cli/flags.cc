#include "cli/flags.h"

#include <cstdlib>

namespace tlm {

void add_model_flags(CLI::App* cmd, std::string* model, std::vector<std::string>* dims,
                     uint64_t* seed, const std::string& seed_help) {
  cmd->add_option("MODEL", *model, "zoo spec (e.g. resnet50:image=160) or path to an .onnx file")
      ->required();
  cmd->add_option("--dim", *dims,
                  "NAME=VALUE for a symbolic input dimension of an .onnx file (repeatable)")
      ->take_all();
  cmd->add_option("--seed", *seed, seed_help)->capture_default_str();
}

void apply_global_threads(CLI::App& app) {
  CLI::Option* threads = app.get_option_no_throw("--threads");
  if (threads && threads->count() > 0)
    setenv("HL_NUM_THREADS", std::to_string(threads->as<int>()).c_str(), 1);
}

}  // namespace tlm

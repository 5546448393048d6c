#include "cli/flags.h"

namespace tlm {

void add_model_flags(CLI::App* cmd, std::string* model, std::vector<std::string>* dims,
                     uint64_t* seed, std::string* layout, const std::string& seed_help) {
  cmd->add_option("MODEL", *model, "zoo spec (e.g. resnet50:image=160) or path to an .onnx file")
      ->required();
  cmd->add_option("--dim", *dims,
                  "NAME=VALUE for a symbolic input dimension of an .onnx file (repeatable)")
      ->take_all();
  cmd->add_option("--seed", *seed, seed_help)->capture_default_str();
  cmd->add_option("--layout", *layout,
                  "activation layout of convolutions: nchw, nchwc (channels blocked by the "
                  "CPU's vector lanes; nchw8c / nchw16c to choose the block), or auto (a zoo "
                  "spec's own @layout suffix, else nchwc)")
      ->capture_default_str();
}

std::string type_str(const Value& v) {
  return std::string(dtype_name(v.dtype)) + shape_str(v.shape);
}

std::string describe_inputs(const Graph& g) {
  std::string s;
  for (ValueId v : g.inputs)
    s += (s.empty() ? "" : ", ") + g.value(v).name + " " + type_str(g.value(v));
  return s.empty() ? "none" : s;
}

}  // namespace tlm

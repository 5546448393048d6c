// The autoscheduler table, plugin loading and the estimates Halide's autoschedulers need.
#include "lower/autoschedule.h"

#include <sys/stat.h>

#include <cstdlib>
#include <mutex>

#include "support/error.h"

namespace tlm {
namespace {

const char* kDefaultPluginDir = "/usr/lib/x86_64-linux-gnu/halide14";
// Halide's MachineParams::generic() balance: a load costs ~40 arithmetic operations at the LLC.
constexpr float kBalance = 40.f;

std::string plugin_dir() {
  const char* env = std::getenv("TLM_HALIDE_PLUGIN_DIR");
  return env && *env ? env : kDefaultPluginDir;
}

// (min, extent) of every Halide dim of a tensor of ONNX shape `shape` (Halide dims reversed).
Halide::Region region_of(const Shape& shape) {
  Halide::Region r;
  for (size_t k = 0; k < shape.size(); k++) r.emplace_back(0, (int)shape[shape.size() - 1 - k]);
  return r;
}

}  // namespace

const std::vector<HalideAutoschedulerInfo>& halide_autoschedulers() {
  static const std::vector<HalideAutoschedulerInfo> rows = {
      {HalideAutoscheduler::Mullapudi2016, "halide-mullapudi2016",
       "libautoschedule_mullapudi2016.so", "Mullapudi2016"},
      {HalideAutoscheduler::Adams2019, "halide-adams2019", "libautoschedule_adams2019.so",
       "Adams2019"},
      {HalideAutoscheduler::Li2018, "halide-li2018", "libautoschedule_li2018.so", "Li2018"},
  };
  return rows;
}

const HalideAutoschedulerInfo& autoscheduler_info(HalideAutoscheduler which) {
  const auto& rows = halide_autoschedulers();
  static_assert(kHalideAutoschedulerCount == 3, "one row per autoscheduler");
  TLM_CHECK((size_t)which < rows.size() && rows[(size_t)which].which == which);
  return rows[(size_t)which];
}

bool find_halide_autoscheduler(const std::string& strategy, HalideAutoscheduler* out) {
  for (const HalideAutoschedulerInfo& r : halide_autoschedulers())
    if (strategy == r.strategy) {
      *out = r.which;
      return true;
    }
  return false;
}

void load_halide_autoscheduler(HalideAutoscheduler which) {
  static std::mutex mu;
  static bool loaded[kHalideAutoschedulerCount] = {};
  std::lock_guard<std::mutex> lock(mu);
  if (loaded[(int)which]) return;
  const HalideAutoschedulerInfo& info = autoscheduler_info(which);
  std::string path = plugin_dir() + "/" + info.plugin;
  struct stat st;
  TLM_USER_CHECK(::stat(path.c_str(), &st) == 0)
      << "Halide autoscheduler plugin " << path << " not found (install libhalide14-dev or set "
      << "TLM_HALIDE_PLUGIN_DIR)";
  try {
    Halide::load_plugin(path);
  } catch (const Halide::Error& e) {
    TLM_USER_ERROR() << "cannot load Halide autoscheduler plugin " << path << ": " << e.what();
  }
  loaded[(int)which] = true;
}

void apply_halide_autoscheduler(LoweredTask& task, HalideAutoscheduler which,
                                const HardwareInfo& hw, const Halide::Target& target) {
  load_halide_autoscheduler(which);
  const Graph& g = task.sub.graph;
  TLM_CHECK(task.inputs.size() == g.inputs.size()) << "lowered task inputs";
  // Every shape is static: the estimates are the exact bounds.
  for (size_t i = 0; i < task.inputs.size(); i++)
    task.inputs[i].set_estimates(region_of(g.value(g.inputs[i]).shape));
  task.output().set_estimates(region_of(g.value(g.outputs.at(0)).shape));
  Halide::Pipeline pipeline(task.output());
  Halide::MachineParams params(hw.cores, (uint64_t)hw.l3_bytes, kBalance);
  pipeline.auto_schedule(autoscheduler_info(which).halide_name, target, params);
}

std::string autoscheduler_marker(HalideAutoscheduler which) {
  // "halide-adams2019" -> "halide:adams2019"
  std::string s = autoscheduler_info(which).strategy;
  return "halide:" + s.substr(s.find('-') + 1);
}

bool is_autoscheduler_marker(const std::string& sentence, HalideAutoscheduler* which) {
  for (const HalideAutoschedulerInfo& r : halide_autoschedulers())
    if (sentence == autoscheduler_marker(r.which)) {
      if (which) *which = r.which;
      return true;
    }
  return false;
}

}  // namespace tlm

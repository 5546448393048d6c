// Halide's own autoschedulers as tuning peers: the heuristic Mullapudi2016, the beam search with a
// learned cost model Adams2019, and the gradient-pipeline scheduler Li2018, loaded from the
// Debian plugins (libautoschedule_*.so). They schedule the same lowered tasks our space does, so
// a task's best program and theirs are measured by the same harness (tune/bench.h).
//
//   halide_autoschedulers()        one row per scheduler: strategy name, plugin, Halide's name
//   apply_halide_autoscheduler()   set estimates from the static shapes and run the plugin on a
//                                  freshly lowered task (the schedule lands on its Funcs)
//   autoscheduler_marker()         what a record stores in place of a sentence: these programs
//                                  have no sentence in our language ("halide:adams2019")
//
// Knobs: TLM_HALIDE_PLUGIN_DIR (default /usr/lib/x86_64-linux-gnu/halide14). MachineParams are
// (cores, L3 bytes, balance 40 -- Halide's generic balance). Adams2019 uses its built-in weights
// and reads its own HL_* variables (HL_BEAM_SIZE, HL_SEED, ...); we set none of them.
#pragma once

#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "lower/lower.h"

namespace tlm {

enum class HalideAutoscheduler { Mullapudi2016, Adams2019, Li2018 };
constexpr int kHalideAutoschedulerCount = 3;

struct HalideAutoschedulerInfo {
  HalideAutoscheduler which;
  const char* strategy;     // the --strategy name: "halide-adams2019"
  const char* plugin;       // file name in the plugin directory
  const char* halide_name;  // the name the plugin registers: "Adams2019"
};
const std::vector<HalideAutoschedulerInfo>& halide_autoschedulers();
const HalideAutoschedulerInfo& autoscheduler_info(HalideAutoscheduler which);
// Finds the row whose strategy name is `strategy`; false when none.
bool find_halide_autoscheduler(const std::string& strategy, HalideAutoscheduler* out);

// Loads the plugin once per process. UserError naming the file when it cannot be loaded. Call it
// before forking measurement workers, so that every child inherits the loaded plugin.
void load_halide_autoscheduler(HalideAutoscheduler which);

// Runs the autoscheduler on `task` (freshly lowered, unscheduled). Halide errors propagate.
void apply_halide_autoscheduler(LoweredTask& task, HalideAutoscheduler which,
                                const HardwareInfo& hw, const Halide::Target& target);

// "halide:adams2019"; is_autoscheduler_marker() recognizes any of them (and returns which).
std::string autoscheduler_marker(HalideAutoscheduler which);
bool is_autoscheduler_marker(const std::string& sentence, HalideAutoscheduler* which = nullptr);

}  // namespace tlm

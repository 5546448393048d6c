// Replay: checks that a Program belongs to the space and that the task is the one the space was
// built for, decodes it into a Plan with the step table, and hands the Plan to the emitter of
// the space's rule (apply_tiled.cc, apply_rows.cc). Both emitters name every loop they create
// themselves (never Halide's unique-name helpers), so replay is deterministic down to the names
// in the loop nest.
#include "space/space_internal.h"

namespace Halide::Internal {
// Exported by libHalide (PrintLoopNest.h), not declared in Halide.h.
std::string print_loop_nest(const std::vector<Function>& outputs);
}  // namespace Halide::Internal

namespace tlm {

using namespace space_detail;

void apply_program(LoweredTask& task, const TaskSpace& space, const Program& p) {
  TLM_USER_CHECK(task.stages.size() == space.stages.size())
      << "apply_program: the task has " << task.stages.size() << " stages, its space "
      << space.stages.size() << " (a space belongs to one task)";
  for (size_t i = 0; i < task.stages.size(); i++) {
    const Stage& s = task.stages[i];
    const SpaceStage& st = space.stages[i];
    TLM_USER_CHECK(s.func.name().substr(0, s.func.name().find('$')) == st.name &&
                   s.extents == st.extents &&
                   (s.has_update ? s.rextents : std::vector<int64_t>{}) == st.rextents)
        << "apply_program: stage " << i << " (" << s.func.name() << ") does not match the space's "
        << st.name;
  }
  TLM_USER_CHECK(is_valid_program(space, p))
      << "apply_program: the program (" << p.values.size() << " values) is not in the space of "
      << space.stages.back().name;
  Plan plan;
  decode_plan(space, p.values, &plan);
  if (space.rule == SpaceRule::TiledAnchor)
    emit_tiled(task, space, plan);
  else
    emit_rows(task, space, plan);
}

std::string loop_nest_str(const LoweredTask& task) {
  return Halide::Internal::print_loop_nest({task.output().function()});
}

}  // namespace tlm

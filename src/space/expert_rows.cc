// Expert programs of Rows tasks (pools, softmax, layer norm, reductions, elementwise;
// expert_internal.h): the output's contiguous var vectorized (a few vectors, or the whole row,
// per tile), enough outer loops parallel, the reductions computed in the tile or at root,
// vectorized along a pure var or rfactored along their innermost reduction; pure stages read
// twice computed per tile, the others inlined.
#include <algorithm>
#include <vector>

#include "space/expert_internal.h"

namespace tlm {
namespace space_detail {
namespace {

// The var vectorized: the contiguous one (d0) unless it is too short, then the first long one.
int rows_vector_var(const SpaceStage& st) {
  const int n = (int)st.extents.size();
  if (n > 0 && st.extents[0] >= 4) return 0;
  for (int i = 0; i < n; i++)
    if (st.extents[i] >= st.lanes) return i;
  int best = -1;
  for (int i = 0; i < n; i++)
    if (st.extents[i] >= 2 && (best < 0 || st.extents[i] > st.extents[best])) best = i;
  return best;
}

}  // namespace

Program write_rows(const TaskSpace& space, const HardwareInfo& hw, const RowsTarget& t) {
  Program p;
  const int out = (int)space.stages.size() - 1;
  const SpaceStage& os = space.stages[out];
  const int v = rows_vector_var(os);
  std::vector<int64_t> inner(os.extents.size(), 1);
  for (const Slot& s : space.slots) {
    const std::vector<int64_t> opts = next_options(space, p.values);
    const SpaceStage& st = space.stages[s.stage];
    int64_t val = opts.front();
    switch (s.kind) {
      case StepKind::Tile:  // Rows output: one inner factor per var
        if (s.var == v) val = t.whole_row ? opts.back() : closest(opts, 4.0 * st.lanes);
        inner[s.var] = val;
        break;
      case StepKind::Vectorize:
        if (s.stage == out) {
          val = pick(opts, v);
        } else {
          val = -1;  // rfactored (or nothing to vectorize)
          if (!t.rfactor) {  // the first var long enough for a vector, else the first of any
            for (int64_t o : opts)
              if (o >= 0 && st.extents[o] >= st.lanes) {
                val = o;
                break;
              }
            for (int64_t o : opts)
              if (val < 0 && o >= 0) val = o;
          }
        }
        break;
      case StepKind::RFactor: val = opts.back(); break;
      case StepKind::Parallel: {
        std::vector<int64_t> trips(os.extents.size());
        for (size_t i = 0; i < trips.size(); i++) trips[i] = os.extents[i] / inner[i];
        val = pick(opts, parallel_loops(os.extents, trips, hw.cores));
        break;
      }
      case StepKind::Unroll: val = closest(opts, s.stage == out ? 8 : 32); break;
      case StepKind::ComputeAt:
        if (!st.rextents.empty()) {
          val = pick(opts, t.reduce_level);
        } else if (st.consumers.size() >= 2) {
          // Read twice (softmax's exp): computed once per tile, or at root.
          val = std::find(opts.begin(), opts.end(), kRowsTile) != opts.end() ? int64_t{kRowsTile}
                                                                              : opts.back();
        } else {
          val = opts.front();  // read by a reduction only: inlined where allowed
        }
        break;
      default: break;
    }
    p.values.push_back(val);
  }
  return p;
}

}  // namespace space_detail
}  // namespace tlm

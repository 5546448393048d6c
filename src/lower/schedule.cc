// The default schedule: plain and robust, so that untuned models run in seconds. Never tuned;
// the schedule space (a later stage) replaces it.
//
//   output     tiled [t0 x t1] over Halide dims 0 and 1 (row tiles innermost) when an anchor of
//              the same shape is computed inside the tile, else just split on dim 0; dim 0
//              vectorized by the native width (or the largest power of two <= its extent); the
//              outer loops fused until there are enough parallel tasks, then parallel.
//   anchor     compute_at the output tile, its update reordered so the reduction runs outside
//              a register block of [t0 x t1] accumulators (dim 0 vectorized, the rest unrolled).
//   other reductions (Reused stages, anchors whose shape differs from the output's) and Pad
//              stages: compute_root, vectorized on dim 0 and parallel over their outermost dim.
//   Pure stages are inlined (the default).
// Every split factor is <= the extent it splits, so no task shape can fail (extents 1, 7, rank 0).
#include <algorithm>
#include <thread>

#include "lower/lower_internal.h"
#include "support/threads.h"

namespace tlm {
namespace {

using Halide::Func;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

// Largest power of two <= min(extent, cap), at least 1.
int pow2_floor(int64_t extent, int64_t cap) {
  int64_t v = 1;
  while (v * 2 <= std::min(extent, cap)) v *= 2;
  return (int)v;
}

// Fuses loops[0..] (outermost first, adjacent) until their product reaches `want` tasks, then
// marks the fused loop parallel. Returns the loop that now stands for loops.back() (compute_at
// must name the fused loop once its parts are gone).
Var parallelize_outer(Func f, const std::vector<Var>& loops, const std::vector<int64_t>& extents,
                      int64_t want) {
  Var cur = loops[0];
  int64_t prod = extents[0];
  size_t i = 1;
  for (; i < loops.size() && prod < want; i++) {
    Var fused(cur.name() + "_" + loops[i].name());
    f.fuse(loops[i], cur, fused);
    cur = fused;
    prod *= extents[i];
  }
  if (prod > 1) f.parallel(cur);
  return i == loops.size() ? cur : loops.back();
}

// Largest power of two <= cap that divides extent.
int pow2_divisor(int64_t extent, int64_t cap) {
  int v = 1;
  while (v * 2 <= cap && extent % (v * 2) == 0) v *= 2;
  return v;
}

// compute_root, vectorized along dim 0, parallel over the outermost dim of extent > 1. The pure
// definition shifts its last vector inwards; the update is vectorized only by a width that
// divides the extent, because Halide 14 miscompiles a GuardWithIf vector tail in an update of a
// compute_root Func (the tail is dropped and the body repeated: layernorm on [3, 4]).
void schedule_root(Stage& st, const Halide::Target& target) {
  Func f = st.func;
  f.compute_root();
  int r = (int)st.vars.size();
  if (r == 0) return;
  int native = target.natural_vector_size(f.output_types()[0]);
  int vf = pow2_floor(st.extents[0], native);
  int vu = pow2_divisor(st.extents[0], native);
  int par = -1;
  for (int k = r - 1; k >= (vf > 1 ? 1 : 0); k--)
    if (st.extents[k] > 1) {
      par = k;
      break;
    }
  if (vf > 1) f.vectorize(st.vars[0], vf, TailStrategy::ShiftInwards);
  if (par >= 0) f.parallel(st.vars[par]);
  if (st.has_update) {
    if (vu > 1) f.update().vectorize(st.vars[0], vu);
    if (par >= 0) f.update().parallel(st.vars[par]);
  }
}

}  // namespace

void apply_default_schedule(LoweredTask& t, const Halide::Target& target) {
  TLM_CHECK(!t.stages.empty()) << "apply_default_schedule: no stages";
  Stage& out = t.stages.back();
  TLM_CHECK(!out.has_update) << "the output stage must be pure";
  Func f = out.func;
  int r = (int)out.vars.size();
  const std::vector<int64_t>& e = out.extents;
  int64_t want_tasks = 4 * (int64_t)compute_threads();

  // The anchor is computed inside the output's tiles when the output reads it element for
  // element: same extents, and only elementwise stages (or its own epilogue) in between. Then
  // its region per tile is exactly the tile, so every split below divides evenly.
  Stage* anchor = nullptr;
  if (t.anchor >= 0 && t.stages[t.anchor].role == StageRole::Anchor &&
      t.stages[t.anchor].extents == e && t.stages[t.anchor].has_update && r >= 1) {
    anchor = &t.stages[t.anchor];
    for (size_t i = t.anchor + 1; i < t.stages.size(); i++) {
      const Node* n = t.stages[i].node;
      if (n != anchor->node && op_pattern(n->op) != OpPattern::Elemwise) anchor = nullptr;
      if (!anchor) break;
    }
  }
  for (size_t i = 0; i + 1 < t.stages.size(); i++) {
    Stage& st = t.stages[i];
    if ((st.has_update && &st != anchor) || st.role == StageRole::Pad) schedule_root(st, target);
  }
  if (r == 0) return;

  // The vector width of the anchor's type when there is one (its accumulators are the hot loop).
  Halide::Type vt = (anchor ? anchor->func : f).output_types()[0];
  int vf = pow2_floor(e[0], target.natural_vector_size(vt));
  // Tile: t0 along dim 0 (two vectors when the extent allows), t1 along dim 1.
  int t0 = (anchor && e[0] >= 2 * vf) ? 2 * vf : vf;
  int t1 = (anchor && r >= 2) ? (int)std::min<int64_t>(e[1], 4) : 1;
  Var x0o("x0o"), x0i("x0i"), x1o("x1o"), x1i("x1i");
  // ShiftInwards (the default for the output) keeps every tile full-size: t0 <= e[0], t1 <= e[1].
  f.split(out.vars[0], x0o, x0i, t0, TailStrategy::ShiftInwards);
  std::vector<Var> loops;  // outermost first
  std::vector<int64_t> loop_ext;
  for (int k = r - 1; k >= 2; k--) {
    loops.push_back(out.vars[k]);
    loop_ext.push_back(e[k]);
  }
  int64_t n0 = (e[0] + t0 - 1) / t0, n1 = r >= 2 ? (e[1] + t1 - 1) / t1 : 1;
  if (anchor && r >= 2) {
    // Row tiles inside column tiles: for a matmul, one column panel of B stays in cache while
    // the rows of A stream past it.
    f.split(out.vars[1], x1o, x1i, t1, TailStrategy::ShiftInwards);
    f.reorder(x0i, x1i, x1o, x0o);
    loops.push_back(x0o);
    loop_ext.push_back(n0);
    loops.push_back(x1o);
    loop_ext.push_back(n1);
  } else {
    if (r >= 2) {
      f.reorder(x0i, x0o, out.vars[1]);
      loops.push_back(out.vars[1]);
      loop_ext.push_back(e[1]);
    }
    loops.push_back(x0o);
    loop_ext.push_back(n0);
  }
  if (vf > 1) f.vectorize(x0i, vf);
  Var tile = parallelize_outer(f, loops, loop_ext, want_tasks);

  if (!anchor) return;
  Func a = anchor->func;
  const std::vector<Var>& av = anchor->vars;
  a.compute_at(f, tile);
  if (vf > 1) a.vectorize(av[0], vf, TailStrategy::GuardWithIf);
  // The update: reduction loops outside a t0 x t1 block of accumulators.
  Halide::Stage u = a.update();
  Var a0o("a0o"), a0i("a0i");
  u.split(av[0], a0o, a0i, vf, TailStrategy::GuardWithIf);
  std::vector<VarOrRVar> order = {a0i, a0o};
  if (r >= 2) order.push_back(av[1]);
  for (int j = 0; j < anchor->rdom.dimensions(); j++) order.push_back(anchor->rdom[j]);
  for (int k = 2; k < r; k++) order.push_back(av[k]);
  u.reorder(order);
  if (vf > 1) u.vectorize(a0i);
  if (t0 / vf > 1) u.unroll(a0o, t0 / vf, TailStrategy::GuardWithIf);
  if (t1 > 1) u.unroll(av[1], t1, TailStrategy::GuardWithIf);
}

}  // namespace tlm

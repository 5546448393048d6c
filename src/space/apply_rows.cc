// The Rows emitter: turns a Plan into Halide schedule calls for tasks without a tiled anchor
// (pools, softmax, layer norm, reductions, elementwise and injective tasks).
//
//   output      each var of extent > 1 split once (outer | inner tile); loops ordered
//               [inner | outer], the vector var innermost (split by its width, exact), the
//               inner loops unrolled innermost-first within the unroll limit, the p outermost
//               outer loops fused and parallel. "The tile" is the innermost outer loop.
//   reductions  (stages with an update) computed at root (parallel over their outermost var)
//               or in the tile; either vectorized along a pure var -- the update reordered so
//               the vector loop runs inside the reduction loops, guarded so any region size
//               works -- or rfactored: the innermost reduction loop split by f, the f partial
//               results kept in a vectorized intermediate computed per output element.
//   pure stages with a slot: inlined, in the tile, or at root, vectorized along var 0.
#include "space/space_internal.h"

namespace tlm {
namespace space_detail {
namespace {

using Halide::Func;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;

std::string nm(const std::string& base, int i, const std::string& tag) {
  return base + std::to_string(i) + "_" + tag;
}

// The outermost var of extent > 1, or -1.
int outermost_var(const SpaceStage& st) {
  for (int i = (int)st.extents.size() - 1; i >= 0; i--)
    if (st.extents[i] > 1) return i;
  return -1;
}

// Where a stage with a slot goes: the tile loop of the output, or root.
struct Site {
  Func out;
  Var tile;
  bool has_tile = false;
};

void place(Func f, int level, const Site& site) {
  if (level == kRowsTile && site.has_tile)
    f.compute_at(site.out, site.tile);
  else
    f.compute_root();
}

void schedule_pure(Stage& S, const SpaceStage& st, const StagePlan& sp, const Site& site) {
  if (sp.compute == kRowsInline) return;
  Func f = S.func;
  place(f, sp.compute, site);
  Var vo("d0_vo"), vi("d0_vi");
  bool vec = !st.extents.empty() && st.extents[0] >= 2 && st.lanes >= 2;
  if (vec) f.split(S.vars[0], vo, vi, st.lanes, TailStrategy::GuardWithIf).vectorize(vi);
  int k = outermost_var(st);
  if (sp.compute == kRowsRoot && k >= 0) f.parallel(k == 0 && vec ? vo : S.vars[k]);
}

void schedule_reduction(Stage& S, const SpaceStage& st, const StagePlan& sp, const Site& site) {
  Func f = S.func;
  place(f, sp.compute, site);
  const bool root = !(sp.compute == kRowsTile && site.has_tile);
  const int v = sp.vec, nr = (int)st.rextents.size();
  Halide::Stage u = f.update();
  Var vo(nm("d", v, "vo")), vi(nm("d", v, "vi")), uvo(nm("d", v, "uvo")), uvi(nm("d", v, "uvi"));
  if (v >= 0) {
    f.split(S.vars[v], vo, vi, st.lanes, TailStrategy::GuardWithIf).vectorize(vi);
    // The vector innermost (inside the reduction loops in the update); its outer part keeps
    // the var's place, so the outermost var stays outermost for parallel.
    std::vector<VarOrRVar> init_order = {vi}, order = {uvi};
    for (int j = 0; j < nr; j++) order.push_back(S.rdom[j]);
    for (int i = 0; i < (int)S.vars.size(); i++) {
      init_order.push_back(i == v ? vo : S.vars[i]);
      order.push_back(i == v ? uvo : S.vars[i]);
    }
    f.reorder(init_order);
    u.split(S.vars[v], uvo, uvi, st.lanes, TailStrategy::GuardWithIf);
    u.reorder(order).vectorize(uvi);
  } else if (sp.rfactor > 0) {
    RVar ro("r0_o"), ri("r0_i");
    Var lane("lane");
    u.split(S.rdom[0], ro, ri, (int)sp.rfactor, TailStrategy::GuardWithIf);
    Func partial = u.rfactor(ri, lane);
    if (S.vars.empty())
      partial.compute_at(f, Var::outermost());
    else
      partial.compute_at(f, S.vars[0]);
    partial.vectorize(lane);
    partial.update().reorder(lane, ro).vectorize(lane);
  }
  if (sp.rfactor == 0) {
    // Unroll the innermost reduction loops (the window of a pool, a short row).
    int64_t unrolled = 1;
    for (int j = 0; j < nr; j++) {
      int64_t e = st.rextents[j];
      if (e <= 1) continue;
      if (unrolled * e > sp.unroll) break;
      unrolled *= e;
      u.unroll(S.rdom[j]);
    }
  }
  int k = outermost_var(st);
  if (root && k >= 0) {
    f.parallel(k == v ? vo : S.vars[k]);
    f.update().parallel(k == v ? uvo : S.vars[k]);
  }
}

}  // namespace

void emit_rows(LoweredTask& t, const TaskSpace& space, const Plan& plan) {
  const int o = (int)t.stages.size() - 1;
  Stage& O = t.stages[o];
  const SpaceStage& os = space.stages[o];
  const StagePlan& op = plan.stages[o];
  const int n = (int)O.vars.size(), v = op.vec;
  Func out = O.func;
  std::vector<int> tiled;  // innermost first
  for (int i = 0; i < n; i++)
    if (os.extents[i] > 1) tiled.push_back(i);

  std::vector<Var> outer(n), inner(n);
  for (int i : tiled) {
    outer[i] = Var(nm("d", i, "o"));
    inner[i] = Var(nm("d", i, "in"));
    out.split(O.vars[i], outer[i], inner[i], (int)inner_factor(op, i));
  }
  std::vector<VarOrRVar> order;
  std::vector<std::pair<Var, int64_t>> unroll_candidates;  // innermost first
  if (v >= 0) {
    int64_t f = inner_factor(op, v), w = vector_width(f, os.lanes);
    Var vo(nm("d", v, "vo")), vi(nm("d", v, "vi"));
    out.split(inner[v], vo, vi, (int)w).vectorize(vi);
    order.push_back(vi);
    order.push_back(vo);
    unroll_candidates.push_back({vo, f / w});
  }
  for (int i : tiled)
    if (i != v) {
      order.push_back(inner[i]);
      unroll_candidates.push_back({inner[i], inner_factor(op, i)});
    }
  for (int i : tiled) order.push_back(outer[i]);
  for (int i = 0; i < n; i++)
    if (os.extents[i] <= 1) order.push_back(O.vars[i]);
  if (!order.empty()) out.reorder(order);
  int64_t unrolled = 1;
  for (const auto& [loop, extent] : unroll_candidates) {
    if (extent <= 1) continue;
    if (unrolled * extent > op.unroll) break;
    unrolled *= extent;
    out.unroll(loop);
  }
  Site site;
  site.out = out;
  if (!tiled.empty()) {
    site.has_tile = true;
    site.tile = outer[tiled.front()];
    Var par = outer[tiled.back()];
    for (int k = 1; k < op.parallel; k++) {
      Var fused("par" + std::to_string(k));
      out.fuse(outer[tiled[tiled.size() - 1 - k]], par, fused);
      par = fused;
    }
    if (op.parallel >= 1) out.parallel(par);
    if (op.parallel == (int)tiled.size()) site.tile = par;
  }

  for (int s = 0; s < o; s++) {
    const StagePlan& sp = plan.stages[s];
    if (sp.compute < 0) continue;  // no slot: inlined
    if (space.stages[s].rextents.empty())
      schedule_pure(t.stages[s], space.stages[s], sp, site);
    else
      schedule_reduction(t.stages[s], space.stages[s], sp, site);
  }
}

}  // namespace space_detail
}  // namespace tlm

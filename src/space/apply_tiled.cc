// The TiledAnchor emitter: turns a Plan into Halide schedule calls on the output (the fused
// epilogue) and the anchor (the accumulator), following rules.cc's SSRSRS structure.
//
//   output  each tiled var split into levels S0..S(c-1) plus an inner remainder; loops ordered
//           [inner | S(c-1) | ... | S0], the p outermost S0 loops fused and parallel; the inner
//           remainder vectorized along var 0 when wide enough, else along the anchor's vector var.
//           (Within a level, loops follow var order, except S2's chosen innermost var.)
//   anchor  computed at the innermost level-(c-1) loop of the output. Its storage puts the
//           vector var innermost. Its update splits the remaining levels and the reduction
//           (R0, R1) and is ordered [S3 | R1 | S2 | R0 | S1] (inner first), S3's vector part
//           vectorized, and S3/R1 loops unrolled innermost-first while the product of their
//           extents stays within the unroll limit.
//   packs   operand.in(anchor) computed at root, inside the innermost loop of S0, S1 or R0, or
//           inside all S2 loops but the innermost (a micro-panel for a row of register blocks);
//           stored and copied with the dim the vector var indexes innermost, copy vectorized.
// Every split is exact (tile factors are divisor chains), so no loop has a tail.
#include <algorithm>

#include "space/space_internal.h"

namespace tlm {
namespace space_detail {
namespace {

using Halide::Func;
using Halide::LoopLevel;
using Halide::RVar;
using Halide::TailStrategy;
using Halide::Var;
using Halide::VarOrRVar;
using Halide::Internal::Call;

std::string nm(const std::string& base, int i, const std::string& tag) {
  return base + std::to_string(i) + "_" + tag;
}

// Arguments of the first call to `callee` in the update definition of `f`.
class FirstCall : public Halide::Internal::IRVisitor {
 public:
  explicit FirstCall(std::string name) : name_(std::move(name)) {}
  std::vector<Halide::Expr> args;
  bool found = false;

 protected:
  using IRVisitor::visit;
  void visit(const Call* op) override {
    if (!found && op->name == name_ && op->call_type == Call::Halide) {
      args = op->args;
      found = true;
    }
    IRVisitor::visit(op);
  }

 private:
  std::string name_;
};

std::vector<Halide::Expr> call_args(const Func& f, const std::string& callee) {
  FirstCall fc(callee);
  for (const Halide::Internal::Definition& d : f.function().updates())
    for (const Halide::Expr& e : d.values()) e.accept(&fc);
  TLM_CHECK(fc.found) << f.name() << " does not call " << callee;
  return fc.args;
}

// Extent of one level-(L-1) iteration of var i: the product of its factors at levels L..3.
int64_t span(const StagePlan& sp, const SpaceStage& st, int i, int level) {
  const auto& f = sp.tiles[i];
  int64_t inner = f[0] * f[1] * f[2];
  switch (level) {
    case 0:
      return st.extents[i];
    case 1:
      return inner;
    case 2:
      return f[1] * f[2];
    default:
      return f[2];
  }
}

}  // namespace

void emit_tiled(LoweredTask& t, const TaskSpace& space, const Plan& plan) {
  const int a = space.anchor, o = (int)t.stages.size() - 1;
  Stage& A = t.stages[a];
  Stage& O = t.stages[o];
  const SpaceStage& as = space.stages[a];
  const StagePlan& ap = plan.stages[a];
  const int n = (int)A.vars.size(), c = ap.compute, v = ap.vec;
  std::vector<int> tiled;  // vars of extent > 1, innermost first
  for (int i = 0; i < n; i++)
    if (as.extents[i] > 1) tiled.push_back(i);
  // The S2 level's order: the chosen var innermost, the others in var order.
  std::vector<int> tiled_s2 = tiled;
  auto it = std::find(tiled_s2.begin(), tiled_s2.end(), ap.s2_inner);
  if (it != tiled_s2.end()) std::rotate(tiled_s2.begin(), it, it + 1);
  auto level_vars = [&](int l) { return l == 2 ? tiled_s2 : tiled; };

  // --- The output: levels S0..S(c-1), then the inner remainder.
  Func out = O.func;
  std::vector<std::vector<Var>> lv(n);
  std::vector<Var> inner(O.vars.begin(), O.vars.end());
  for (int i : tiled)
    for (int l = 0; l < c; l++) {
      Var outer(nm("d", i, "s" + std::to_string(l))), in(nm("d", i, "i" + std::to_string(l)));
      out.split(inner[i], outer, in, (int)span(ap, as, i, l + 1));
      lv[i].push_back(outer);
      inner[i] = in;
    }
  const int lanes_out = space.stages[o].lanes;
  int ov = -1;
  int64_t ow = 0;
  auto try_vec = [&](int i, int64_t min_width) {
    if (ov >= 0 || i < 0 || as.extents[i] < 2) return;
    int64_t w = vector_width(span(ap, as, i, c), lanes_out);
    if (w >= min_width) ov = i, ow = w;
  };
  try_vec(0, 4);
  try_vec(v, 2);
  std::vector<VarOrRVar> order;
  if (ov >= 0) {
    Var vo(nm("d", ov, "vo")), vi(nm("d", ov, "vi"));
    out.split(inner[ov], vo, vi, (int)ow);
    out.vectorize(vi);
    order.push_back(vi);
    order.push_back(vo);
  }
  for (int i : tiled)
    if (i != ov) order.push_back(inner[i]);
  for (int l = c - 1; l >= 0; l--)
    for (int i : level_vars(l)) order.push_back(lv[i][l]);
  for (int i = 0; i < n; i++)
    if (as.extents[i] <= 1) order.push_back(O.vars[i]);
  out.reorder(order);

  // Parallel: fuse the p outermost S0 loops.
  std::vector<Var> s0;  // outermost first
  for (auto it = tiled.rbegin(); it != tiled.rend(); ++it) s0.push_back(lv[*it][0]);
  const int p = plan.stages[o].parallel;
  Var par;
  if (p >= 1) {
    par = s0[0];
    for (int k = 1; k < p; k++) {
      Var fused("par" + std::to_string(k));
      out.fuse(s0[k], par, fused);
      par = fused;
    }
    out.parallel(par);
  }
  // The loop the anchor is computed in: the innermost loop of level c-1.
  bool rooted = tiled.empty();
  Var at;
  if (!rooted) at = (c == 1 && p == (int)tiled.size()) ? par : lv[level_vars(c - 1).front()][c - 1];

  // --- The anchor.
  Func acc = A.func;
  if (rooted)
    acc.compute_root();
  else
    acc.compute_at(out, at);
  int64_t w = v >= 0 ? vector_width(inner_factor(ap, v), as.lanes) : 0;
  if (v >= 0) {
    std::vector<Var> storage = {A.vars[v]};
    for (int i = 0; i < n; i++)
      if (i != v) storage.push_back(A.vars[i]);
    acc.reorder_storage(storage);
    // The initialization too runs with the vector innermost.
    Var vo(nm("d", v, "vo")), vi(nm("d", v, "vi"));
    acc.split(A.vars[v], vo, vi, (int)w, TailStrategy::GuardWithIf).vectorize(vi);
    std::vector<VarOrRVar> init_order = {vi};
    for (int i = 0; i < n; i++) init_order.push_back(i == v ? vo : A.vars[i]);
    acc.reorder(init_order);
  }
  Halide::Stage u = acc.update();
  std::vector<std::vector<Var>> al(n, std::vector<Var>(3));
  std::vector<Var> s3(A.vars.begin(), A.vars.end());
  for (int i : tiled)
    for (int l = c; l <= 2; l++) {
      Var outer(nm("d", i, "u" + std::to_string(l))), in(nm("d", i, "w" + std::to_string(l)));
      u.split(s3[i], outer, in, (int)span(ap, as, i, l + 1), TailStrategy::GuardWithIf);
      al[i][l] = outer;
      s3[i] = in;
    }
  std::vector<RVar> r0, r1;
  std::vector<int64_t> r1_ext;
  for (int j = 0; j < (int)as.rextents.size(); j++) {
    if (as.rextents[j] <= 1) {
      r0.push_back(A.rdom[j]);
      continue;
    }
    RVar ro(nm("r", j, "o")), ri(nm("r", j, "i"));
    u.split(A.rdom[j], ro, ri, (int)ap.rtiles[j], TailStrategy::GuardWithIf);
    r0.push_back(ro);
    r1.push_back(ri);
    r1_ext.push_back(ap.rtiles[j]);
  }
  order.clear();
  std::vector<std::pair<VarOrRVar, int64_t>> unroll_candidates;  // innermost first
  Var vo(nm("d", v, "uvo")), vi(nm("d", v, "uvi"));
  if (v >= 0) {
    u.split(s3[v], vo, vi, (int)w, TailStrategy::GuardWithIf);
    order.push_back(vi);
    order.push_back(vo);
    unroll_candidates.push_back({vo, inner_factor(ap, v) / w});
  }
  for (int i : tiled)
    if (i != v) {
      order.push_back(s3[i]);
      unroll_candidates.push_back({s3[i], inner_factor(ap, i)});
    }
  for (size_t j = 0; j < r1.size(); j++) {
    order.push_back(r1[j]);
    unroll_candidates.push_back({r1[j], r1_ext[j]});
  }
  if (c <= 2)
    for (int i : tiled_s2) order.push_back(al[i][2]);
  for (const RVar& r : r0) order.push_back(r);
  if (c <= 1)
    for (int i : tiled) order.push_back(al[i][1]);
  for (int i = 0; i < n; i++)
    if (as.extents[i] <= 1) order.push_back(A.vars[i]);
  u.reorder(order);
  if (v >= 0) u.vectorize(vi);
  int64_t unrolled = 1;
  for (const auto& [loop, extent] : unroll_candidates) {
    if (extent <= 1) continue;
    if (unrolled * extent > ap.unroll) break;
    unrolled *= extent;
    u.unroll(loop);
  }

  // --- Packed operands. The innermost loop of a level: in the output above the accumulator's
  // level (the fused parallel loop when it swallowed S0), in the update below it.
  // S2 is special: the copy goes inside every S2 loop but the innermost, so that one micro-panel
  // (e.g. 32 columns of B over the R1 chunk, contiguous) serves a whole row of register blocks.
  auto loop_site = [&](int l, int var) -> LoopLevel {
    if (l >= c) return LoopLevel(acc, al[var][l]);
    if (l == 0 && p == (int)tiled.size()) return LoopLevel(out, par);
    return LoopLevel(out, lv[var][l]);
  };
  auto pack_site = [&](int level) -> LoopLevel {
    if (level == kPackR0) return LoopLevel(acc, r0.front());
    if (level == kPackS0) return loop_site(0, level_vars(0).front());
    if (level == kPackS1) return loop_site(1, level_vars(1).front());
    if (tiled_s2.size() >= 2) return loop_site(2, tiled_s2[1]);
    // One S2 loop: just outside it (R0 inside the update, or S1 when S2 is in the output).
    return c <= 2 ? LoopLevel(acc, r0.front()) : loop_site(1, level_vars(1).front());
  };
  for (size_t k = 0; k < as.operands.size(); k++) {
    int level = ap.pack[k];
    if (level == kPackNone) continue;
    const SpaceOperand& operand = as.operands[k];
    Func wrapper;
    std::string name;
    if (operand.stage >= 0) {
      Func f = t.stages.at(operand.stage).func;
      name = f.name();
      wrapper = f.in(acc);
    } else {
      Halide::ImageParam& ip = t.inputs.at(operand.input);
      name = Halide::Func(ip).name();
      wrapper = ip.in(acc);
    }
    if (rooted || level == kPackRoot)
      wrapper.compute_root();
    else
      wrapper.compute_at(pack_site(level));
    // Storage and copy order: the dim indexed by the vector var innermost.
    std::vector<Var> args = wrapper.args();
    int inner_dim = 0;
    if (v >= 0) {
      std::vector<Halide::Expr> cargs = call_args(acc, name);
      for (size_t d = 0; d < cargs.size() && d < args.size(); d++)
        if (Halide::Internal::expr_uses_var(cargs[d], A.vars[v].name())) {
          inner_dim = (int)d;
          break;
        }
    }
    if (args.empty()) continue;
    std::vector<Var> st = {args[inner_dim]};
    for (int d = 0; d < (int)args.size(); d++)
      if (d != inner_dim) st.push_back(args[d]);
    wrapper.reorder_storage(st);
    std::vector<VarOrRVar> loops(st.begin(), st.end());
    wrapper.reorder(loops);
    int lanes = std::max(2, space.stages[a].lanes);
    Var po(nm("p", (int)k, "o")), pi(nm("p", (int)k, "i"));
    wrapper.split(st[0], po, pi, lanes, TailStrategy::GuardWithIf).vectorize(pi);
  }
}

}  // namespace space_detail
}  // namespace tlm

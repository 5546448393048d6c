// Reductions: ReduceSum/ReduceMean (an Anchor stage summing over an RDom of the reduced axes,
// then a Pure division for the mean), Softmax (max and sum are Reused stages; the max is
// subtracted before exp for numerical stability) and LayerNormalization (two passes: mean, then
// the mean of squared deviations, both Reused stages). Sums accumulate in the input type
// (float32 for float tensors).
#include <cmath>
#include <limits>

#include "lower/lower_internal.h"

namespace tlm {
namespace lower_detail {
namespace {

// idx without entry `axis`.
Index drop(const Index& idx, size_t axis) {
  Index out;
  for (size_t d = 0; d < idx.size(); d++)
    if (d != axis) out.push_back(idx[d]);
  return out;
}
// idx with `e` inserted at position `axis`.
Index insert(const Index& idx, size_t axis, const Expr& e) {
  Index out = idx;
  out.insert(out.begin() + axis, e);
  return out;
}

void lower_reduce(Ctx& c, const Node& n, bool mean) {
  ValueId x = n.inputs.at(0);
  const Shape& in = shape_of(c, x);
  const Shape& out = shape_of(c, n.outputs[0]);
  std::vector<int64_t> axes = n.ints("axes");
  bool keepdims = n.i("keepdims", 1) != 0;
  std::vector<bool> reduced(in.size(), false);
  std::vector<int64_t> rext;
  for (size_t j = 0; j < axes.size(); j++) {
    if (axes[j] < 0 || axes[j] >= (int64_t)in.size() || (j > 0 && axes[j] <= axes[j - 1]))
      bad_node(n, "attribute 'axes' must be sorted, unique and in range");
    reduced[axes[j]] = true;
    rext.push_back(in[axes[j]]);
  }
  size_t expect_rank = keepdims ? in.size() : in.size() - axes.size();
  if (out.size() != expect_rank) bad_node(n, "output rank does not match axes/keepdims");
  Halide::Type t = halide_type(c.g.value(x).dtype);
  if (axes.empty()) {  // nothing to reduce: the canonical IR spells "all axes" explicitly
    PureFunc p = new_func(c, n, "", out);
    p.f(p.vars) = read(c, x, p.idx);
    add_stage(c, p, n, StageRole::Pure);
    bind(c, n, p);
    return;
  }
  PureFunc acc = new_func(c, n, "sum", out);
  Reduction red = new_rdom(c, n, "k", rext);
  Index ii(in.size());
  size_t od = 0, j = 0;
  for (size_t d = 0; d < in.size(); d++) {
    if (reduced[d]) {
      ii[d] = red.rv[j++];
      if (keepdims) od++;
    } else {
      ii[d] = acc.idx[od++];
    }
  }
  acc.f(acc.vars) = Halide::Internal::make_zero(t);
  acc.f(acc.vars) += read(c, x, ii);
  add_stage(c, acc, n, StageRole::Anchor, &red);
  if (!mean) {
    bind(c, n, acc);
    return;
  }
  int64_t count = 1;
  for (int64_t e : rext) count *= e;
  PureFunc m = new_func(c, n, "mean", out);
  m.f(m.vars) =
      acc.f(acc.vars) / Halide::Internal::make_const(t, (double)std::max<int64_t>(count, 1));
  add_stage(c, m, n, StageRole::Pure);
  bind(c, n, m);
}

}  // namespace

void lower_ReduceSum(Ctx& c, const Node& n) { lower_reduce(c, n, false); }
void lower_ReduceMean(Ctx& c, const Node& n) { lower_reduce(c, n, true); }

void lower_Softmax(Ctx& c, const Node& n) {
  ValueId x = n.inputs.at(0);
  const Shape& s = shape_of(c, x);
  int64_t axis = n.i("axis", -1);
  if (axis < 0 || axis >= (int64_t)s.size()) bad_node(n, "attribute 'axis' out of range");
  if (c.g.value(x).dtype != DType::F32) bad_node(n, "input must be float32");
  Shape rows = s;
  rows.erase(rows.begin() + axis);

  PureFunc mx = new_func(c, n, "max", rows);
  Reduction rm = new_rdom(c, n, "m", {s[axis]});
  mx.f(mx.vars) = Expr(-std::numeric_limits<float>::infinity());
  mx.f(mx.vars) = Halide::max(mx.f(mx.vars), read(c, x, insert(mx.idx, axis, rm.rv[0])));
  add_stage(c, mx, n, StageRole::Reused, &rm);

  PureFunc e = new_func(c, n, "exp", s);
  e.f(e.vars) = Halide::exp(read(c, x, e.idx) - call(mx, drop(e.idx, axis)));
  add_stage(c, e, n, StageRole::Pure);

  PureFunc sum = new_func(c, n, "sum", rows);
  Reduction rs = new_rdom(c, n, "s", {s[axis]});
  sum.f(sum.vars) = 0.f;
  sum.f(sum.vars) += call(e, insert(sum.idx, axis, rs.rv[0]));
  add_stage(c, sum, n, StageRole::Reused, &rs);

  PureFunc out = new_func(c, n, "", s);
  out.f(out.vars) = call(e, out.idx) / call(sum, drop(out.idx, axis));
  add_stage(c, out, n, StageRole::Pure);
  bind(c, n, out);
}

void lower_LayerNormalization(Ctx& c, const Node& n) {
  ValueId x = n.inputs.at(0);
  const Shape& s = shape_of(c, x);
  int64_t axis = n.i("axis", -1);
  float eps = n.f("epsilon", 1e-5f);
  if (axis < 0 || axis >= (int64_t)s.size()) bad_node(n, "attribute 'axis' out of range");
  if (c.g.value(x).dtype != DType::F32) bad_node(n, "input must be float32");
  if (n.inputs.size() < 2 || n.inputs[1] == kNoValue) bad_node(n, "missing Scale input");
  for (size_t k = 1; k < n.inputs.size(); k++) {
    if (n.inputs[k] == kNoValue) continue;
    const Shape& ps = shape_of(c, n.inputs[k]);
    if (ps.size() > s.size() - axis) bad_node(n, "Scale/B rank exceeds the normalized rank");
    for (size_t d = 0; d < ps.size(); d++) {
      int64_t want = s[s.size() - ps.size() + d];
      if (ps[d] != 1 && ps[d] != want) bad_node(n, "Scale/B do not broadcast to the input");
    }
  }
  Shape outer(s.begin(), s.begin() + axis);
  std::vector<int64_t> inner(s.begin() + axis, s.end());
  int64_t count = 1;
  for (int64_t e : inner) count *= e;
  Expr inv_count = Expr(1.f / (float)count);
  auto full = [&](const Index& o, const Reduction& r) {
    Index ii = o;
    ii.insert(ii.end(), r.rv.begin(), r.rv.end());
    return ii;
  };

  PureFunc sum = new_func(c, n, "sum", outer);
  Reduction r1 = new_rdom(c, n, "m", inner);
  sum.f(sum.vars) = 0.f;
  sum.f(sum.vars) += read(c, x, full(sum.idx, r1));
  add_stage(c, sum, n, StageRole::Reused, &r1);

  PureFunc sq = new_func(c, n, "sqsum", outer);
  Reduction r2 = new_rdom(c, n, "v", inner);
  Expr dev = read(c, x, full(sq.idx, r2)) - sum.f(sq.vars) * inv_count;
  sq.f(sq.vars) = 0.f;
  sq.f(sq.vars) += dev * dev;
  add_stage(c, sq, n, StageRole::Reused, &r2);

  PureFunc out = new_func(c, n, "", s);
  Index o(out.idx.begin(), out.idx.begin() + axis);
  Expr mean = call(sum, o) * inv_count;
  Expr rstd = 1.f / Halide::sqrt(call(sq, o) * inv_count + eps);
  Expr y = (read(c, x, out.idx) - mean) * rstd *
           read(c, n.inputs[1], broadcast_index(shape_of(c, n.inputs[1]), s, out.idx));
  if (n.inputs.size() > 2 && n.inputs[2] != kNoValue)
    y = y + read(c, n.inputs[2], broadcast_index(shape_of(c, n.inputs[2]), s, out.idx));
  out.f(out.vars) = y;
  add_stage(c, out, n, StageRole::Pure);
  bind(c, n, out);
}

}  // namespace lower_detail
}  // namespace tlm

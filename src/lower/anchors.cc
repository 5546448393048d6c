// Anchors: the compute-heavy ops. Each becomes one Anchor stage -- a Func over the output shape
// with pure vars, initialized to the identity and given a single update over an RDom -- plus
// Pure stages around it: zero/-inf padding of the input (a clamped select, inlined by default)
// and the epilogue (bias, alpha/beta, the average's division).
//
//   Conv          RDom (Cin/group, k...); group channel offset (m / (M/group)) * Cin/group
//   ConvNchwc     channel-blocked (docs/layout.md): output [N, Co/B, Ho, Wo, B]; RDom
//                 (Ci/B, kh, kw, B) over a blocked input -- the input channel split at its blocks,
//                 the block lane innermost, W [Co/B, Ci/B, kh, kw, B_in, B_out] --, (Ci, kh, kw)
//                 over a plain one, (kh, kw) depthwise
//   ConvTranspose the gather form: output o reads input (o + pad - k*dil) / stride when that
//                 divides exactly and is in range
//   Gemm/MatMul   RDom (K); MatMul broadcasts batch dims and promotes 1-D operands
//   MaxPool/AveragePool/GlobalAveragePool  RDom over the window; the average divides by the
//                 number of window positions inside the input (or inside the padded input when
//                 count_include_pad), computed in closed form
#include <algorithm>
#include <limits>

#include "lower/lower_internal.h"

namespace tlm {
namespace lower_detail {
namespace {

using Halide::select;

// Spatial attributes shared by convolutions and pools, validated against the shapes.
struct Window {
  int k = 0;                                              // spatial rank
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begin..., end...
};

Window read_window(const Node& n, const Shape& x, const std::vector<int64_t>& kernel) {
  Window w;
  w.k = (int)x.size() - 2;
  w.kernel = kernel;
  w.strides = ints_n(n, "strides", w.k, 1);
  w.dilations = ints_n(n, "dilations", w.k, 1);
  w.pads = ints_n(n, "pads", 2 * w.k, 0);
  if ((int)kernel.size() != w.k) bad_node(n, "kernel rank does not match the input");
  for (int i = 0; i < w.k; i++) {
    if (w.strides[i] < 1 || w.dilations[i] < 1 || kernel[i] < 1)
      bad_node(n, "strides, dilations and kernel extents must be >= 1");
    if (w.pads[i] < 0 || w.pads[w.k + i] < 0) bad_node(n, "pads must be >= 0");
  }
  return w;
}

// Reads of the input (rank k+2) along spatial dims, for a forward window: do they ever leave
// [0, D)? Then a padded stage is needed.
bool window_leaves_input(const Window& w, const Shape& x, const Shape& out) {
  for (int i = 0; i < w.k; i++) {
    int64_t last = (out[2 + i] - 1) * w.strides[i] - w.pads[i] + (w.kernel[i] - 1) * w.dilations[i];
    if (w.pads[i] > 0 || last >= x[2 + i]) return true;
  }
  return false;
}

// A reader for value v that returns `pad` outside its bounds when `padded`.
struct Reader {
  const Ctx* c;
  ValueId v;
  bool padded = false;
  PureFunc pad;
  Expr operator()(const Index& idx) const { return padded ? call(pad, idx) : read(*c, v, idx); }
};

Reader make_reader(Ctx& c, const Node& n, ValueId v, bool padded, Expr pad_value_expr) {
  Reader r{&c, v, padded, {}};
  if (padded) r.pad = pad_value(c, n, v, pad_value_expr);
  return r;
}

void require_rank(const Node& n, const Shape& s, size_t lo, size_t hi, const char* what) {
  if (s.size() < lo || s.size() > hi)
    bad_node(n, std::string(what) + " has rank " + std::to_string(s.size()) + ", expected " +
                    std::to_string(lo) + ".." + std::to_string(hi));
}

void require_f32(Ctx& c, const Node& n) {
  for (ValueId in : n.inputs)
    if (in != kNoValue && c.g.value(in).dtype != DType::F32) bad_node(n, "inputs must be float32");
}

// acc + bias[idx[d0], idx[d1], ...] over the output, the bias indexed by the output's ONNX dims
// `dims` (the channel dim 1; the channel block and lane (1, 4) of a blocked output).
void bind_with_channel_bias(Ctx& c, const Node& n, const PureFunc& acc, ValueId bias,
                            const std::vector<int>& dims = {1}) {
  if (bias == kNoValue) {
    bind(c, n, acc);
    return;
  }
  Shape want;
  for (int d : dims) want.push_back(acc.shape[d]);
  if (shape_of(c, bias) != want) bad_node(n, "bias must have shape " + shape_str(want));
  PureFunc b = new_func(c, n, "bias", acc.shape);
  Index bi;
  for (int d : dims) bi.push_back(b.idx[d]);
  b.f(b.vars) = acc.f(acc.vars) + read(c, bias, bi);
  add_stage(c, b, n, StageRole::Pure);
  bind(c, n, b);
}

// The operands of a convolution-like node (float32 checked): X, W, the optional bias, shapes.
struct ConvOperands {
  ValueId x, w, bias;
  Shape xs, ws, os;
};

ConvOperands conv_operands(Ctx& c, const Node& n) {
  require_f32(c, n);
  ConvOperands o;
  o.x = n.inputs.at(0);
  o.w = n.inputs.at(1);
  o.bias = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  o.xs = shape_of(c, o.x);
  o.ws = shape_of(c, o.w);
  o.os = shape_of(c, n.outputs[0]);
  return o;
}

}  // namespace

void lower_Conv(Ctx& c, const Node& n) {
  const auto [x, w, bias, xs, ws, os] = conv_operands(c, n);
  require_rank(n, xs, 3, 5, "input");
  if (ws.size() != xs.size() || os.size() != xs.size()) bad_node(n, "W/output rank mismatch");
  int64_t group = n.i("group", 1);
  int64_t M = ws[0], cg = ws[1];
  if (group < 1 || xs[1] != cg * group || M % group != 0 || os[1] != M || os[0] != xs[0])
    bad_node(n, "channel counts do not match group");
  Window win = read_window(n, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
  int64_t mg = M / group;

  Reader xr = make_reader(c, n, x, window_leaves_input(win, xs, os), Expr(0.f));
  PureFunc acc = new_func(c, n, "", os);
  std::vector<int64_t> rext = {cg};
  rext.insert(rext.end(), win.kernel.begin(), win.kernel.end());
  Reduction red = new_rdom(c, n, "k", rext);
  Expr m = acc.idx[1];
  Expr ci = group == 1 ? red.rv[0] : (m / (int)mg) * (int)cg + red.rv[0];
  Index xi = {acc.idx[0], ci}, wi = {m, red.rv[0]};
  for (int i = 0; i < win.k; i++) {
    xi.push_back(acc.idx[2 + i] * (int)win.strides[i] - (int)win.pads[i] +
                 red.rv[1 + i] * (int)win.dilations[i]);
    wi.push_back(red.rv[1 + i]);
  }
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) += xr(xi) * read(c, w, wi);
  add_stage(c, acc, n, StageRole::Anchor, &red);
  bind_with_channel_bias(c, n, acc, bias);
}

void lower_ConvNchwc(Ctx& c, const Node& n) {
  const auto [x, w, bias, xs, ws, os] = conv_operands(c, n);
  require_rank(n, xs, 4, 5, "input");
  require_rank(n, ws, 5, 6, "W");
  const bool blocked = xs.size() == 5;
  const bool depthwise = n.i("group", 1) != 1;
  const int B = (int)ws.back();
  if (blocked && !depthwise && ws.size() != 6) bad_node(n, "W over a blocked input must be rank 6");
  if (os.size() != 5 || os[4] != B || os[1] != ws[0]) bad_node(n, "output shape mismatch");
  // The window over the two spatial dims (2, 3) of the input; a blocked input's lane dim is
  // never padded.
  Window win;
  win.k = 2;
  win.kernel = {ws[2], ws[3]};
  win.strides = ints_n(n, "strides", 2, 1);
  win.dilations = ints_n(n, "dilations", 2, 1);
  win.pads = ints_n(n, "pads", 4, 0);
  Reader xr = make_reader(c, n, x, window_leaves_input(win, xs, os), Expr(0.f));
  PureFunc acc = new_func(c, n, "", os);
  std::vector<int64_t> rext;
  if (!depthwise) rext.push_back(xs[1]);  // Ci/B blocks, or Ci
  rext.push_back(ws[2]);
  rext.push_back(ws[3]);
  if (blocked && !depthwise) rext.push_back(B);
  Reduction red = new_rdom(c, n, "k", rext);
  const int kr = depthwise ? 0 : 1;  // rv index of kh
  Expr h = acc.idx[2] * (int)win.strides[0] - (int)win.pads[0] + red.rv[kr] * (int)win.dilations[0];
  Expr wd =
      acc.idx[3] * (int)win.strides[1] - (int)win.pads[1] + red.rv[kr + 1] * (int)win.dilations[1];
  Index xi, wi;
  if (depthwise) {
    xi = {acc.idx[0], acc.idx[1], h, wd, acc.idx[4]};
    wi = {acc.idx[1], Expr(0), red.rv[0], red.rv[1], acc.idx[4]};
  } else if (blocked) {
    xi = {acc.idx[0], red.rv[0], h, wd, red.rv[3]};
    wi = {acc.idx[1], red.rv[0], red.rv[1], red.rv[2], red.rv[3], acc.idx[4]};
  } else {
    xi = {acc.idx[0], red.rv[0], h, wd};
    wi = {acc.idx[1], red.rv[0], red.rv[1], red.rv[2], acc.idx[4]};
  }
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) += xr(xi) * read(c, w, wi);
  add_stage(c, acc, n, StageRole::Anchor, &red);
  bind_with_channel_bias(c, n, acc, bias, {1, 4});
}

void lower_ConvTranspose(Ctx& c, const Node& n) {
  const auto [x, w, bias, xs, ws, os] = conv_operands(c, n);
  require_rank(n, xs, 3, 5, "input");
  if (ws.size() != xs.size() || os.size() != xs.size()) bad_node(n, "W/output rank mismatch");
  int64_t group = n.i("group", 1);
  int64_t C = xs[1], mg = ws[1];
  if (group < 1 || ws[0] != C || C % group != 0 || os[1] != mg * group || os[0] != xs[0])
    bad_node(n, "channel counts do not match group");
  Window win = read_window(n, xs, std::vector<int64_t>(ws.begin() + 2, ws.end()));
  int64_t cg = C / group;

  // Out-of-range input positions read as 0 through the padded stage.
  Reader xr = make_reader(c, n, x, true, Expr(0.f));
  PureFunc acc = new_func(c, n, "", os);
  std::vector<int64_t> rext = {cg};
  rext.insert(rext.end(), win.kernel.begin(), win.kernel.end());
  Reduction red = new_rdom(c, n, "k", rext);
  Expr m = acc.idx[1];
  Expr ci = group == 1 ? red.rv[0] : (m / (int)mg) * (int)cg + red.rv[0];
  Expr mw = group == 1 ? m : m % (int)mg;
  Index xi = {acc.idx[0], ci}, wi = {ci, mw};
  Expr hit = Halide::Internal::const_true();
  for (int i = 0; i < win.k; i++) {
    Expr t = acc.idx[2 + i] + (int)win.pads[i] - red.rv[1 + i] * (int)win.dilations[i];
    int s = (int)win.strides[i];
    if (s > 1) hit = hit && (t % s == 0);
    xi.push_back(s > 1 ? t / s : t);
    wi.push_back(red.rv[1 + i]);
  }
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) += select(hit, xr(xi) * read(c, w, wi), 0.f);
  add_stage(c, acc, n, StageRole::Anchor, &red);
  bind_with_channel_bias(c, n, acc, bias);
}

void lower_Gemm(Ctx& c, const Node& n) {
  require_f32(c, n);
  ValueId a = n.inputs.at(0), b = n.inputs.at(1);
  ValueId cc = n.inputs.size() > 2 ? n.inputs[2] : kNoValue;
  const Shape& as = shape_of(c, a);
  const Shape& bs = shape_of(c, b);
  const Shape& os = shape_of(c, n.outputs[0]);
  if (as.size() != 2 || bs.size() != 2 || os.size() != 2) bad_node(n, "A, B must be 2-D");
  bool ta = n.i("transA", 0) != 0, tb = n.i("transB", 0) != 0;
  float alpha = n.f("alpha", 1.f), beta = n.f("beta", 1.f);
  int64_t K = ta ? as[0] : as[1];
  if ((tb ? bs[1] : bs[0]) != K || os[0] != (ta ? as[1] : as[0]) || os[1] != (tb ? bs[0] : bs[1]))
    bad_node(n, "inner dimensions do not match");

  PureFunc acc = new_func(c, n, "", os);
  Reduction red = new_rdom(c, n, "k", {K});
  Expr i = acc.idx[0], j = acc.idx[1], k = red.rv[0];
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) +=
      read(c, a, ta ? Index{k, i} : Index{i, k}) * read(c, b, tb ? Index{j, k} : Index{k, j});
  add_stage(c, acc, n, StageRole::Anchor, &red);
  if (alpha == 1.f && cc == kNoValue) {
    bind(c, n, acc);
    return;
  }
  PureFunc e = new_func(c, n, "epi", os);
  Expr y = acc.f(acc.vars);
  if (alpha != 1.f) y = alpha * y;
  if (cc != kNoValue) {
    if (shape_of(c, cc).size() > 2) bad_node(n, "C must have rank <= 2");
    Expr cv = read(c, cc, broadcast_index(shape_of(c, cc), os, e.idx));
    y = y + (beta == 1.f ? cv : beta * cv);
  }
  e.f(e.vars) = y;
  add_stage(c, e, n, StageRole::Pure);
  bind(c, n, e);
}

void lower_MatMul(Ctx& c, const Node& n) {
  require_f32(c, n);
  ValueId a = n.inputs.at(0), b = n.inputs.at(1);
  const Shape& as = shape_of(c, a);
  const Shape& bs = shape_of(c, b);
  const Shape& os = shape_of(c, n.outputs[0]);
  if (as.empty() || bs.empty()) bad_node(n, "operands must have rank >= 1");
  size_t ra = as.size(), rb = bs.size();
  int64_t K = as.back();
  if ((rb == 1 ? bs[0] : bs[rb - 2]) != K) bad_node(n, "inner dimensions do not match");
  size_t nbatch = os.size() - (ra >= 2) - (rb >= 2);
  if (os.size() < (size_t)(ra >= 2) + (rb >= 2) || nbatch + 2 < std::max(ra, rb) ||
      (ra > 2 && ra - 2 > nbatch) || (rb > 2 && rb - 2 > nbatch))
    bad_node(n, "output rank does not match the operands");

  PureFunc acc = new_func(c, n, "", os);
  Reduction red = new_rdom(c, n, "k", {K});
  Expr k = red.rv[0];
  Index batch(acc.idx.begin(), acc.idx.begin() + nbatch);
  Shape obatch(os.begin(), os.begin() + nbatch);
  size_t pos = nbatch;
  Expr i = ra >= 2 ? acc.idx[pos++] : Expr();
  Expr j = rb >= 2 ? acc.idx[pos++] : Expr();
  auto operand_index = [&](const Shape& s, Expr row_or_col, bool is_a) {
    if (s.size() == 1) return Index{k};
    Shape sb(s.begin(), s.end() - 2);
    Index ii = broadcast_index(sb, obatch, batch);
    if (is_a) {
      ii.push_back(row_or_col);
      ii.push_back(k);
    } else {
      ii.push_back(k);
      ii.push_back(row_or_col);
    }
    return ii;
  };
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) +=
      read(c, a, operand_index(as, i, true)) * read(c, b, operand_index(bs, j, false));
  add_stage(c, acc, n, StageRole::Anchor, &red);
  bind(c, n, acc);
}

// What MaxPool and AveragePool share: the checked input and output shapes, the window, a reader
// of the input that yields `outside` beyond its edges, the accumulator over the output with a
// reduction over the window, and the input position each (output, window) point reads.
struct Pool {
  Shape xs, os;
  Window win;
  Reader xr;
  PureFunc acc;
  Reduction red;
  Index xi;
};

Pool pool_window(Ctx& c, const Node& n, Expr outside) {
  require_f32(c, n);
  ValueId x = n.inputs.at(0);
  Pool p;
  p.xs = shape_of(c, x);
  p.os = shape_of(c, n.outputs[0]);
  require_rank(n, p.xs, 3, 5, "input");
  if (p.os.size() != p.xs.size() || p.os[0] != p.xs[0] || p.os[1] != p.xs[1])
    bad_node(n, "output shape");
  p.win = read_window(n, p.xs, n.ints("kernel_shape"));
  p.xr = make_reader(c, n, x, window_leaves_input(p.win, p.xs, p.os), outside);
  p.acc = new_func(c, n, "", p.os);
  p.red = new_rdom(c, n, "k", p.win.kernel);
  p.xi = {p.acc.idx[0], p.acc.idx[1]};
  for (int i = 0; i < p.win.k; i++)
    p.xi.push_back(p.acc.idx[2 + i] * (int)p.win.strides[i] - (int)p.win.pads[i] +
                   p.red.rv[i] * (int)p.win.dilations[i]);
  return p;
}

void lower_MaxPool(Ctx& c, const Node& n) {
  float ninf = -std::numeric_limits<float>::infinity();
  Pool p = pool_window(c, n, Expr(ninf));
  PureFunc& acc = p.acc;
  acc.f(acc.vars) = Expr(ninf);
  acc.f(acc.vars) = Halide::max(acc.f(acc.vars), p.xr(p.xi));
  add_stage(c, acc, n, StageRole::Anchor, &p.red);
  bind(c, n, acc);
}

void lower_AveragePool(Ctx& c, const Node& n) {
  Pool p = pool_window(c, n, Expr(0.f));
  const Shape& xs = p.xs;
  const Shape& os = p.os;
  const Window& win = p.win;
  PureFunc& acc = p.acc;
  bool include_pad = n.i("count_include_pad", 0) != 0;
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) += p.xr(p.xi);
  add_stage(c, acc, n, StageRole::Anchor, &p.red);

  // Divisor: window positions p = start + k*d (0 <= k < K) with lo <= p <= hi, where [lo, hi]
  // is the input, or the padded input when count_include_pad (windows that ceil_mode lets run
  // past the end padding count only up to it, as onnxruntime does).
  PureFunc avg = new_func(c, n, "avg", os);
  Expr count = 1;
  for (int i = 0; i < win.k; i++) {
    int d = (int)win.dilations[i], K = (int)win.kernel[i];
    int lo = include_pad ? -(int)win.pads[i] : 0;
    int hi = (int)(include_pad ? xs[2 + i] + win.pads[win.k + i] : xs[2 + i]) - 1;
    Expr start = avg.idx[2 + i] * (int)win.strides[i] - (int)win.pads[i];
    // Halide's integer division rounds down for positive divisors.
    Expr kmin = Halide::max(0, (lo - start + (d - 1)) / d);
    Expr kmax = Halide::min(K - 1, (hi - start) / d);
    count = count * Halide::max(kmax - kmin + 1, 0);
  }
  avg.f(avg.vars) = acc.f(avg.vars) / Halide::cast<float>(Halide::max(count, 1));
  add_stage(c, avg, n, StageRole::Pure);
  bind(c, n, avg);
}

void lower_GlobalAveragePool(Ctx& c, const Node& n) {
  require_f32(c, n);
  ValueId x = n.inputs.at(0);
  const Shape& xs = shape_of(c, x);
  const Shape& os = shape_of(c, n.outputs[0]);
  require_rank(n, xs, 3, 5, "input");
  if (os.size() != xs.size()) bad_node(n, "output shape");
  std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
  int64_t count = 1;
  for (int64_t e : spatial) count *= e;
  PureFunc acc = new_func(c, n, "", os);
  Reduction red = new_rdom(c, n, "k", spatial);
  Index xi = {acc.idx[0], acc.idx[1]};
  xi.insert(xi.end(), red.rv.begin(), red.rv.end());
  acc.f(acc.vars) = 0.f;
  acc.f(acc.vars) += read(c, x, xi);
  add_stage(c, acc, n, StageRole::Anchor, &red);
  PureFunc avg = new_func(c, n, "avg", os);
  avg.f(avg.vars) = acc.f(avg.vars) * (1.f / (float)count);
  add_stage(c, avg, n, StageRole::Pure);
  bind(c, n, avg);
}

}  // namespace lower_detail
}  // namespace tlm

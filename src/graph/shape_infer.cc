// Shape and dtype inference: one row per Op in kInferRows (input count range + a function),
// static_assert'ed against kOpCount and checked to be in Op order at compile time.
//
// This is the gate every imported (possibly fuzzed) model passes through, so every function
// validates before it computes: input count and dtypes, ranks, attribute presence, type and
// length, axis ranges, broadcastability, channel/group consistency, and the size of every
// output (no extent or element count beyond kMaxExtent = 2^40, so later int64 index arithmetic
// cannot overflow). Failures are UserErrors "<Op> node '<name>': attribute '<attr>' ...".
// Attributes follow docs/ir.md: all are required unless the table there gives a default.
#include "graph/shape_infer.h"

#include <algorithm>
#include <string>

#include "graph/interp_common.h"

namespace tlm {
namespace {

struct Inferred {
  DType dtype;
  Shape shape;
};

// The node being inferred, its (present) input values, and typed, validating attribute access.
struct Ctx {
  const Graph& g;
  const Node& n;
  std::vector<const Value*> in;  // nullptr for an absent optional input

  int count() const { return (int)in.size(); }
  bool has(int i) const { return i < count() && in[i] != nullptr; }
  const Shape& shape(int i) const { return in[i]->shape; }
  int rank(int i) const { return (int)in[i]->shape.size(); }
  DType dtype(int i) const { return in[i]->dtype; }

  const AttrValue& attr(const char* key) const {
    auto it = n.attrs.find(key);
    if (it == n.attrs.end()) TLM_NODE_ERROR(n) << "missing required attribute '" << key << "'";
    return it->second;
  }
  int64_t i(const char* key) const {
    const int64_t* v = std::get_if<int64_t>(&attr(key));
    if (!v) TLM_NODE_ERROR(n) << "attribute '" << key << "' must be an integer";
    return *v;
  }
  // An integer attribute that must lie in [lo, hi].
  int64_t i_in(const char* key, int64_t lo, int64_t hi) const {
    int64_t v = i(key);
    if (v < lo || v > hi)
      TLM_NODE_ERROR(n) << "attribute '" << key << "' = " << v << " is out of range [" << lo << ", "
                        << hi << "]";
    return v;
  }
  float f(const char* key) const {
    const float* v = std::get_if<float>(&attr(key));
    if (!v) TLM_NODE_ERROR(n) << "attribute '" << key << "' must be a float";
    return *v;
  }
  // An integer list of exactly `len` entries (len < 0: any length), each in [lo, hi].
  std::vector<int64_t> ints(const char* key, int64_t len, int64_t lo, int64_t hi) const {
    const auto* v = std::get_if<std::vector<int64_t>>(&attr(key));
    if (!v) TLM_NODE_ERROR(n) << "attribute '" << key << "' must be a list of integers";
    if (len >= 0 && (int64_t)v->size() != len)
      TLM_NODE_ERROR(n) << "attribute '" << key << "' has " << v->size() << " entries, expected "
                        << len;
    for (int64_t x : *v)
      if (x < lo || x > hi)
        TLM_NODE_ERROR(n) << "attribute '" << key << "' entry " << x << " is out of range [" << lo
                          << ", " << hi << "]";
    return *v;
  }
  // A list of axes into a rank-`rank` tensor, strictly increasing.
  std::vector<int64_t> axes(const char* key, int rank) const {
    std::vector<int64_t> a = ints(key, -1, 0, rank - 1);
    for (size_t k = 1; k < a.size(); k++)
      if (a[k] <= a[k - 1])
        TLM_NODE_ERROR(n) << "attribute '" << key << "' must be sorted without repeats";
    return a;
  }

  void need_dtype(int i, std::initializer_list<DType> ok) const {
    for (DType t : ok)
      if (dtype(i) == t) return;
    TLM_NODE_ERROR(n) << "input " << i << " ('" << in[i]->name << "') has unsupported dtype "
                      << dtype_name(dtype(i));
  }
  void need_rank(int i, int lo, int hi) const {
    if (rank(i) < lo || rank(i) > hi)
      TLM_NODE_ERROR(n) << "input " << i << " ('" << in[i]->name << "') has rank " << rank(i)
                        << " (shape " << shape_str(shape(i)) << "), expected "
                        << (lo == hi ? std::to_string(lo)
                                     : std::to_string(lo) + ".." + std::to_string(hi));
  }
  void need_same_dtype(int a, int b) const {
    if (dtype(a) != dtype(b))
      TLM_NODE_ERROR(n) << "inputs " << a << " and " << b << " have different dtypes "
                        << dtype_name(dtype(a)) << " and " << dtype_name(dtype(b));
  }
};

constexpr int kAnyRank = 1 << 20;
const int64_t kBig = kMaxExtent;
const std::initializer_list<DType> kF32 = {DType::F32};
const std::initializer_list<DType> kNum = {DType::F32, DType::I64};

// Rejects negative extents and shapes whose extents or element count exceed kMaxExtent.
void check_extents(const Ctx& c, const Shape& s, const std::string& what) {
  int64_t total = 1;
  for (int64_t d : s) {
    if (d < 0) TLM_NODE_ERROR(c.n) << what << " has a negative extent: " << shape_str(s);
    if (d > kMaxExtent || (d > 0 && total > kMaxExtent / d))
      TLM_NODE_ERROR(c.n) << what << " " << shape_str(s) << " is too large (over 2^40 elements)";
    if (d > 0) total *= d;
  }
}

Shape broadcast2(const Ctx& c, const Shape& a, const Shape& b) {
  size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (size_t k = 0; k < r; k++) {
    int64_t da = k < r - a.size() ? 1 : a[k - (r - a.size())];
    int64_t db = k < r - b.size() ? 1 : b[k - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      TLM_NODE_ERROR(c.n) << "shapes " << shape_str(a) << " and " << shape_str(b)
                          << " do not broadcast";
    out[k] = da == 1 ? db : da;
  }
  return out;
}

// `from` must broadcast to exactly `to` (numpy rules, one direction).
void need_broadcastable_to(const Ctx& c, const Shape& from, const Shape& to, const char* what) {
  bool ok = from.size() <= to.size();
  for (size_t k = 0; ok && k < from.size(); k++) {
    int64_t d = from[from.size() - 1 - k];
    ok = d == 1 || d == to[to.size() - 1 - k];
  }
  if (!ok)
    TLM_NODE_ERROR(c.n) << what << " of shape " << shape_str(from) << " does not broadcast to "
                        << shape_str(to);
}

// (k - 1) * dilation + 1, the span of a dilated kernel.
int64_t dilated_span(const Ctx& c, int64_t k, int64_t dil) {
  if (k < 1) TLM_NODE_ERROR(c.n) << "kernel extent " << k << " must be positive";
  if (k - 1 > 0 && dil > kMaxExtent / (k - 1))
    TLM_NODE_ERROR(c.n) << "attribute 'dilations' makes the kernel span too large";
  return (k - 1) * dil + 1;
}

// ---- anchors ------------------------------------------------------------------------------

// Shared by Conv and ConvTranspose: X, W ranks, strides/dilations/pads, group.
struct ConvAttrs {
  int sp;
  std::vector<int64_t> strides, dilations, pads;
  int64_t group;
};
ConvAttrs conv_attrs(const Ctx& c) {
  c.need_dtype(0, kF32);
  c.need_dtype(1, kF32);
  if (c.has(2)) c.need_dtype(2, kF32);
  c.need_rank(0, 3, kAnyRank);
  c.need_rank(1, c.rank(0), c.rank(0));
  ConvAttrs a;
  a.sp = c.rank(0) - 2;
  a.strides = c.ints("strides", a.sp, 1, kBig);
  a.dilations = c.ints("dilations", a.sp, 1, kBig);
  a.pads = c.ints("pads", 2 * a.sp, 0, kBig);
  a.group = c.i_in("group", 1, kBig);
  return a;
}

Inferred infer_conv(const Ctx& c) {
  ConvAttrs a = conv_attrs(c);
  const Shape &x = c.shape(0), &w = c.shape(1);
  if (x[1] != w[1] * a.group)
    TLM_NODE_ERROR(c.n) << "attribute 'group' = " << a.group << ": X has " << x[1]
                        << " channels but W " << shape_str(w)
                        << " expects W.shape[1]*group = " << w[1] * a.group;
  if (w[0] % a.group != 0)
    TLM_NODE_ERROR(c.n) << "attribute 'group' = " << a.group << " does not divide the " << w[0]
                        << " output channels of W";
  if (c.has(2) && c.shape(2) != Shape{w[0]})
    TLM_NODE_ERROR(c.n) << "bias B has shape " << shape_str(c.shape(2)) << ", expected [" << w[0]
                        << "]";
  Shape out = {x[0], w[0]};
  for (int d = 0; d < a.sp; d++) {
    int64_t span = dilated_span(c, w[2 + d], a.dilations[d]);
    int64_t padded = x[2 + d] + a.pads[d] + a.pads[a.sp + d];
    if (padded < span)
      TLM_NODE_ERROR(c.n) << "attribute 'pads'/'dilations': spatial dim " << d << " of X ("
                          << x[2 + d] << ", padded " << padded
                          << ") is smaller than the kernel span " << span;
    out.push_back((padded - span) / a.strides[d] + 1);
  }
  return {DType::F32, out};
}

Inferred infer_conv_transpose(const Ctx& c) {
  ConvAttrs a = conv_attrs(c);
  const Shape &x = c.shape(0), &w = c.shape(1);
  auto opad = c.ints("output_padding", a.sp, 0, kBig);
  if (x[1] != w[0])
    TLM_NODE_ERROR(c.n) << "X has " << x[1] << " channels but W " << shape_str(w)
                        << " expects W.shape[0] = " << w[0];
  if (w[0] % a.group != 0)
    TLM_NODE_ERROR(c.n) << "attribute 'group' = " << a.group << " does not divide the " << w[0]
                        << " input channels";
  int64_t cout = w[1] * a.group;
  if (c.has(2) && c.shape(2) != Shape{cout})
    TLM_NODE_ERROR(c.n) << "bias B has shape " << shape_str(c.shape(2)) << ", expected [" << cout
                        << "]";
  Shape out = {x[0], cout};
  for (int d = 0; d < a.sp; d++) {
    int64_t span = dilated_span(c, w[2 + d], a.dilations[d]);
    if (x[2 + d] < 1) TLM_NODE_ERROR(c.n) << "X has an empty spatial dim " << d;
    __int128 o =
        (__int128)a.strides[d] * (x[2 + d] - 1) + opad[d] + span - a.pads[d] - a.pads[a.sp + d];
    if (o < 1 || o > kMaxExtent)
      TLM_NODE_ERROR(c.n) << "attributes 'strides'/'pads'/'output_padding' give output extent "
                          << (long double)o << " in spatial dim " << d;
    out.push_back((int64_t)o);
  }
  return {DType::F32, out};
}

// ConvNchwc (docs/layout.md): 2-D convolution over channel-blocked activations, B channels per
// block (B = W's last dim). X is [N, Ci/B, H, W, B] or plain [N, Ci, H, W]; W is
// [Co/B, Ci/B, kh, kw, B_in, B_out] over a blocked X with group 1 (MLAS's OIhw16i16o: a block of
// input channels' weights for a block of output channels lies contiguous), [Co/B, Ci, kh, kw, B]
// over a plain X, and [Co/B, 1, kh, kw, B] depthwise (group = Ci = Co, X blocked); B (bias) is
// [Co/B, B]; the output is [N, Co/B, Ho, Wo, B].
Inferred infer_conv_nchwc(const Ctx& c) {
  c.need_dtype(0, kF32);
  c.need_dtype(1, kF32);
  if (c.has(2)) c.need_dtype(2, kF32);
  c.need_rank(0, 4, 5);
  c.need_rank(1, 5, 6);
  const Shape &x = c.shape(0), &w = c.shape(1);
  const bool blocked = x.size() == 5, w_blocked = w.size() == 6;
  const int64_t B = w.back(), cob = w[0];
  std::vector<int64_t> strides = c.ints("strides", 2, 1, kBig);
  std::vector<int64_t> dilations = c.ints("dilations", 2, 1, kBig);
  std::vector<int64_t> pads = c.ints("pads", 4, 0, kBig);
  int64_t group = c.i_in("group", 1, kBig);
  if (blocked && x[4] != B)
    TLM_NODE_ERROR(c.n) << "X is blocked by " << x[4] << " channels but W by " << B;
  const int64_t ci = blocked ? x[1] * B : x[1];
  if (w_blocked && !(blocked && group == 1 && w[4] == B))
    TLM_NODE_ERROR(c.n) << "W " << shape_str(w)
                        << " is blocked on both channel dims: it needs a blocked X, group 1 and "
                           "equal blocks";
  if (blocked && group == 1 && !w_blocked)
    TLM_NODE_ERROR(c.n) << "W " << shape_str(w) << " over a blocked X must be [Co/B, Ci/B, kh, "
                        << "kw, B, B]";
  const int64_t cg = w_blocked ? w[1] * B : w[1];
  if (group == 1) {
    if (cg != ci)
      TLM_NODE_ERROR(c.n) << "X has " << ci << " channels but W " << shape_str(w) << " expects "
                          << cg;
  } else if (!(blocked && group == ci && w[1] == 1 && cob == x[1])) {
    TLM_NODE_ERROR(c.n) << "attribute 'group' = " << group
                        << ": only 1 or depthwise (group = input channels = output channels, "
                           "blocked X) is supported";
  }
  if (c.has(2) && c.shape(2) != Shape{cob, B})
    TLM_NODE_ERROR(c.n) << "bias B has shape " << shape_str(c.shape(2)) << ", expected [" << cob
                        << ", " << B << "]";
  Shape out = {x[0], cob};
  for (int d = 0; d < 2; d++) {
    int64_t span = dilated_span(c, w[2 + d], dilations[d]);
    int64_t padded = x[2 + d] + pads[d] + pads[2 + d];
    if (padded < span)
      TLM_NODE_ERROR(c.n) << "attribute 'pads'/'dilations': spatial dim " << d << " of X ("
                          << x[2 + d] << ", padded " << padded
                          << ") is smaller than the kernel span " << span;
    out.push_back((padded - span) / strides[d] + 1);
  }
  out.push_back(B);
  return {DType::F32, out};
}

Inferred infer_gemm(const Ctx& c) {
  for (int k = 0; k < c.count(); k++)
    if (c.has(k)) c.need_dtype(k, kF32);
  c.need_rank(0, 2, 2);
  c.need_rank(1, 2, 2);
  c.f("alpha");
  c.f("beta");
  int64_t ta = c.i_in("transA", 0, 1), tb = c.i_in("transB", 0, 1);
  const Shape &a = c.shape(0), &b = c.shape(1);
  int64_t M = ta ? a[1] : a[0], K = ta ? a[0] : a[1];
  int64_t Kb = tb ? b[1] : b[0], N = tb ? b[0] : b[1];
  if (K != Kb)
    TLM_NODE_ERROR(c.n) << "inner dimensions differ: A " << shape_str(a) << " (transA=" << ta
                        << "), B " << shape_str(b) << " (transB=" << tb << ")";
  if (c.has(2)) need_broadcastable_to(c, c.shape(2), {M, N}, "C");
  return {DType::F32, {M, N}};
}

Inferred infer_matmul(const Ctx& c) {
  c.need_dtype(0, kF32);
  c.need_dtype(1, kF32);
  c.need_rank(0, 1, kAnyRank);
  c.need_rank(1, 1, kAnyRank);
  Shape a = c.shape(0), b = c.shape(1);
  bool a1 = a.size() == 1, b1 = b.size() == 1;
  if (a1) a.insert(a.begin(), 1);  // [K] -> [1, K]
  if (b1) b.push_back(1);          // [K] -> [K, 1]
  int64_t K = a[a.size() - 1];
  if (K != b[b.size() - 2])
    TLM_NODE_ERROR(c.n) << "inner dimensions differ: A " << shape_str(c.shape(0)) << ", B "
                        << shape_str(c.shape(1));
  Shape batch = broadcast2(c, Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  if (!a1) batch.push_back(a[a.size() - 2]);
  if (!b1) batch.push_back(b[b.size() - 1]);
  return {DType::F32, batch};
}

// Output extent of a pooling window along one dim (ONNX formula; with ceil_mode the last window
// must start inside the input or its left padding, as in PyTorch and onnxruntime).
int64_t pool_extent(const Ctx& c, int64_t in, int64_t k, int64_t s, int64_t dil, int64_t pb,
                    int64_t pe, bool ceil_mode, int d) {
  int64_t span = dilated_span(c, k, dil);
  if (pb >= span || pe >= span)
    TLM_NODE_ERROR(c.n) << "attribute 'pads' must be smaller than the kernel span " << span
                        << " (spatial dim " << d << ")";
  int64_t padded = in + pb + pe;
  if (padded < span)
    TLM_NODE_ERROR(c.n) << "attribute 'kernel_shape': spatial dim " << d << " of X (padded "
                        << padded << ") is smaller than the kernel span " << span;
  int64_t o = (padded - span) / s + 1;
  if (ceil_mode && (padded - span) % s != 0) {
    o++;
    if ((o - 1) * s >= in + pb) o--;
  }
  return o;
}

Inferred infer_pool(const Ctx& c, bool is_max) {
  c.need_dtype(0, kF32);
  c.need_rank(0, 3, kAnyRank);
  int sp = c.rank(0) - 2;
  auto k = c.ints("kernel_shape", sp, 1, kBig);
  auto s = c.ints("strides", sp, 1, kBig);
  auto p = c.ints("pads", 2 * sp, 0, kBig);
  std::vector<int64_t> dil(sp, 1);
  if (is_max)
    dil = c.ints("dilations", sp, 1, kBig);
  else
    c.i_in("count_include_pad", 0, 1);
  bool ceil_mode = c.i_in("ceil_mode", 0, 1);
  const Shape& x = c.shape(0);
  Shape out = {x[0], x[1]};
  for (int d = 0; d < sp; d++)
    out.push_back(pool_extent(c, x[2 + d], k[d], s[d], dil[d], p[d], p[sp + d], ceil_mode, d));
  return {DType::F32, out};
}
Inferred infer_maxpool(const Ctx& c) { return infer_pool(c, true); }
Inferred infer_avgpool(const Ctx& c) { return infer_pool(c, false); }

Inferred infer_global_avgpool(const Ctx& c) {
  c.need_dtype(0, kF32);
  c.need_rank(0, 3, kAnyRank);
  Shape out = c.shape(0);
  std::fill(out.begin() + 2, out.end(), 1);
  return {DType::F32, out};
}

// ---- reductions ---------------------------------------------------------------------------

Inferred infer_reduce(const Ctx& c) {
  c.need_dtype(0, kNum);
  auto axes = c.axes("axes", c.rank(0));
  bool keep = c.i_in("keepdims", 0, 1);
  Shape out;
  for (int d = 0; d < c.rank(0); d++) {
    bool reduced = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (!reduced)
      out.push_back(c.shape(0)[d]);
    else if (keep)
      out.push_back(1);
  }
  return {c.dtype(0), out};
}

Inferred infer_softmax(const Ctx& c) {
  c.need_dtype(0, kF32);
  c.need_rank(0, 1, kAnyRank);
  c.i_in("axis", 0, c.rank(0) - 1);
  return {DType::F32, c.shape(0)};
}

Inferred infer_layernorm(const Ctx& c) {
  for (int k = 0; k < c.count(); k++)
    if (c.has(k)) c.need_dtype(k, kF32);
  c.need_rank(0, 1, kAnyRank);
  int64_t axis = c.i_in("axis", 0, c.rank(0) - 1);
  c.f("epsilon");
  Shape normalized(c.shape(0).begin() + axis, c.shape(0).end());
  need_broadcastable_to(c, c.shape(1), normalized, "Scale");
  if (c.has(2)) need_broadcastable_to(c, c.shape(2), normalized, "B");
  return {DType::F32, c.shape(0)};
}

// ---- elementwise --------------------------------------------------------------------------

Inferred infer_arith(const Ctx& c) {
  c.need_dtype(0, kNum);
  c.need_same_dtype(0, 1);
  return {c.dtype(0), broadcast2(c, c.shape(0), c.shape(1))};
}

Inferred infer_pow(const Ctx& c) {
  c.need_dtype(0, kNum);
  c.need_dtype(1, kNum);
  return {c.dtype(0), broadcast2(c, c.shape(0), c.shape(1))};
}

Inferred infer_equal(const Ctx& c) {
  c.need_same_dtype(0, 1);
  return {DType::Bool, broadcast2(c, c.shape(0), c.shape(1))};
}

Inferred infer_compare(const Ctx& c) {
  c.need_dtype(0, kNum);
  c.need_same_dtype(0, 1);
  return {DType::Bool, broadcast2(c, c.shape(0), c.shape(1))};
}

Inferred infer_where(const Ctx& c) {
  c.need_dtype(0, {DType::Bool});
  c.need_same_dtype(1, 2);
  return {c.dtype(1), broadcast2(c, broadcast2(c, c.shape(0), c.shape(1)), c.shape(2))};
}

Inferred infer_unary_f32(const Ctx& c) {
  c.need_dtype(0, kF32);
  return {DType::F32, c.shape(0)};
}

Inferred infer_unary_num(const Ctx& c) {
  c.need_dtype(0, kNum);
  return {c.dtype(0), c.shape(0)};
}

Inferred infer_clip(const Ctx& c) {
  c.need_dtype(0, kNum);
  c.f("min");
  c.f("max");
  return {c.dtype(0), c.shape(0)};
}

Inferred infer_hard_sigmoid(const Ctx& c) {
  c.f("alpha");
  c.f("beta");
  return infer_unary_f32(c);
}

Inferred infer_leaky_relu(const Ctx& c) {
  c.f("alpha");
  return infer_unary_f32(c);
}

Inferred infer_cast(const Ctx& c) { return {(DType)c.i_in("to", 0, 2), c.shape(0)}; }

Inferred infer_batchnorm(const Ctx& c) {
  for (int k = 0; k < 5; k++) c.need_dtype(k, kF32);
  c.need_rank(0, 2, kAnyRank);
  c.f("epsilon");
  static const char* kNames[] = {"X", "scale", "B", "mean", "var"};
  for (int k = 1; k < 5; k++)
    if (c.shape(k) != Shape{c.shape(0)[1]})
      TLM_NODE_ERROR(c.n) << "parameter " << kNames[k] << " has shape " << shape_str(c.shape(k))
                          << ", expected [" << c.shape(0)[1] << "] (the channels of X)";
  return {DType::F32, c.shape(0)};
}

// ---- data movement ------------------------------------------------------------------------

Inferred infer_reshape(const Ctx& c) {
  Shape s = c.ints("shape", -1, 0, kBig);
  check_extents(c, s, "attribute 'shape'");
  if (numel(s) != numel(c.shape(0)))
    TLM_NODE_ERROR(c.n) << "attribute 'shape' " << shape_str(s) << " has " << numel(s)
                        << " elements but X " << shape_str(c.shape(0)) << " has "
                        << numel(c.shape(0));
  return {c.dtype(0), s};
}

Inferred infer_flatten(const Ctx& c) {
  int64_t axis = c.i_in("axis", 0, c.rank(0));
  const Shape& x = c.shape(0);
  return {c.dtype(0),
          {numel(Shape(x.begin(), x.begin() + axis)), numel(Shape(x.begin() + axis, x.end()))}};
}

Inferred infer_transpose(const Ctx& c) {
  auto perm = c.ints("perm", c.rank(0), 0, c.rank(0) - 1);
  std::vector<bool> seen(c.rank(0), false);
  Shape out;
  for (int64_t p : perm) {
    if (seen[p]) TLM_NODE_ERROR(c.n) << "attribute 'perm' repeats axis " << p;
    seen[p] = true;
    out.push_back(c.shape(0)[p]);
  }
  return {c.dtype(0), out};
}

Inferred infer_squeeze(const Ctx& c) {
  auto axes = c.axes("axes", c.rank(0));
  Shape out;
  for (int d = 0; d < c.rank(0); d++) {
    bool sq = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (sq && c.shape(0)[d] != 1)
      TLM_NODE_ERROR(c.n) << "attribute 'axes' squeezes dim " << d << " of extent "
                          << c.shape(0)[d];
    if (!sq) out.push_back(c.shape(0)[d]);
  }
  return {c.dtype(0), out};
}

Inferred infer_unsqueeze(const Ctx& c) {
  const std::vector<int64_t>* raw = std::get_if<std::vector<int64_t>>(&c.attr("axes"));
  int out_rank = c.rank(0) + (raw ? (int)std::min<size_t>(raw->size(), kAnyRank) : 0);
  auto axes = c.axes("axes", out_rank);
  Shape out;
  size_t next = 0;
  for (int d = 0, k = 0; d < out_rank; d++) {
    if (next < axes.size() && axes[next] == d) {
      out.push_back(1);
      next++;
    } else {
      out.push_back(c.shape(0)[k++]);
    }
  }
  return {c.dtype(0), out};
}

Inferred infer_concat(const Ctx& c) {
  c.need_rank(0, 1, kAnyRank);
  int64_t axis = c.i_in("axis", 0, c.rank(0) - 1);
  Shape out = c.shape(0);
  out[axis] = 0;
  for (int k = 0; k < c.count(); k++) {
    c.need_same_dtype(0, k);
    c.need_rank(k, c.rank(0), c.rank(0));
    for (int d = 0; d < c.rank(0); d++)
      if (d != axis && c.shape(k)[d] != out[d])
        TLM_NODE_ERROR(c.n) << "input " << k << " " << shape_str(c.shape(k))
                            << " differs from input 0 " << shape_str(c.shape(0))
                            << " outside attribute 'axis' = " << axis;
    out[axis] += c.shape(k)[axis];
    if (out[axis] > kMaxExtent) TLM_NODE_ERROR(c.n) << "concatenated extent too large";
  }
  return {c.dtype(0), out};
}

Inferred infer_slice(const Ctx& c) {
  int r = c.rank(0);
  auto starts = c.ints("starts", r, INT64_MIN, INT64_MAX);
  auto ends = c.ints("ends", r, INT64_MIN, INT64_MAX);
  auto steps = c.ints("steps", r, INT64_MIN, INT64_MAX);
  Shape out;
  for (int d = 0; d < r; d++) {
    if (steps[d] == 0) TLM_NODE_ERROR(c.n) << "attribute 'steps' has a zero step at dim " << d;
    out.push_back(resolve_slice(c.shape(0)[d], starts[d], ends[d], steps[d]).extent);
  }
  return {c.dtype(0), out};
}

Inferred infer_gather(const Ctx& c) {
  c.need_rank(0, 1, kAnyRank);
  c.need_dtype(1, {DType::I64});
  int64_t axis = c.i_in("axis", 0, c.rank(0) - 1);
  const Shape& x = c.shape(0);
  Shape out(x.begin(), x.begin() + axis);
  out.insert(out.end(), c.shape(1).begin(), c.shape(1).end());
  out.insert(out.end(), x.begin() + axis + 1, x.end());
  return {c.dtype(0), out};
}

Inferred infer_expand(const Ctx& c) {
  Shape s = c.ints("shape", -1, 0, kBig);
  return {c.dtype(0), broadcast2(c, c.shape(0), s)};
}

// ---- the table ----------------------------------------------------------------------------

using InferFn = Inferred (*)(const Ctx&);
constexpr int kVariadic = 1 << 16;

struct InferRow {
  Op op;
  int min_inputs, max_inputs;
  InferFn fn;
};

constexpr InferRow kInferRows[] = {
    {Op::Conv, 2, 3, infer_conv},
    {Op::ConvTranspose, 2, 3, infer_conv_transpose},
    {Op::ConvNchwc, 2, 3, infer_conv_nchwc},
    {Op::Gemm, 2, 3, infer_gemm},
    {Op::MatMul, 2, 2, infer_matmul},
    {Op::MaxPool, 1, 1, infer_maxpool},
    {Op::AveragePool, 1, 1, infer_avgpool},
    {Op::GlobalAveragePool, 1, 1, infer_global_avgpool},
    {Op::ReduceMean, 1, 1, infer_reduce},
    {Op::ReduceSum, 1, 1, infer_reduce},
    {Op::Softmax, 1, 1, infer_softmax},
    {Op::LayerNormalization, 2, 3, infer_layernorm},
    {Op::Add, 2, 2, infer_arith},
    {Op::Sub, 2, 2, infer_arith},
    {Op::Mul, 2, 2, infer_arith},
    {Op::Div, 2, 2, infer_arith},
    {Op::Pow, 2, 2, infer_pow},
    {Op::Max, 2, 2, infer_arith},
    {Op::Min, 2, 2, infer_arith},
    {Op::Equal, 2, 2, infer_equal},
    {Op::Less, 2, 2, infer_compare},
    {Op::Greater, 2, 2, infer_compare},
    {Op::Where, 3, 3, infer_where},
    {Op::Sqrt, 1, 1, infer_unary_f32},
    {Op::Erf, 1, 1, infer_unary_f32},
    {Op::Exp, 1, 1, infer_unary_f32},
    {Op::Log, 1, 1, infer_unary_f32},
    {Op::Tanh, 1, 1, infer_unary_f32},
    {Op::Sigmoid, 1, 1, infer_unary_f32},
    {Op::Relu, 1, 1, infer_unary_num},
    {Op::Neg, 1, 1, infer_unary_num},
    {Op::Abs, 1, 1, infer_unary_num},
    {Op::Reciprocal, 1, 1, infer_unary_f32},
    {Op::Clip, 1, 1, infer_clip},
    {Op::HardSigmoid, 1, 1, infer_hard_sigmoid},
    {Op::HardSwish, 1, 1, infer_unary_f32},
    {Op::LeakyRelu, 1, 1, infer_leaky_relu},
    {Op::Cast, 1, 1, infer_cast},
    {Op::BatchNormalization, 5, 5, infer_batchnorm},
    {Op::Reshape, 1, 1, infer_reshape},
    {Op::Flatten, 1, 1, infer_flatten},
    {Op::Transpose, 1, 1, infer_transpose},
    {Op::Squeeze, 1, 1, infer_squeeze},
    {Op::Unsqueeze, 1, 1, infer_unsqueeze},
    {Op::Concat, 1, kVariadic, infer_concat},
    {Op::Slice, 1, 1, infer_slice},
    {Op::Gather, 2, 2, infer_gather},
    {Op::Expand, 1, 1, infer_expand},
};
static_assert(sizeof(kInferRows) / sizeof(kInferRows[0]) == kOpCount, "one row per Op");

constexpr bool rows_in_op_order() {
  for (int k = 0; k < kOpCount; k++)
    if ((int)kInferRows[k].op != k) return false;
  return true;
}
static_assert(rows_in_op_order(), "kInferRows must follow the order of TLM_OP_LIST");

}  // namespace

void infer_node_shapes(Graph& g, const Node& node) {
  TLM_CHECK((int)node.op < kOpCount) << "bad op " << (int)node.op;
  TLM_CHECK(node.outputs.size() == 1) << node.name << " has " << node.outputs.size() << " outputs";
  const InferRow& row = kInferRows[(int)node.op];
  Ctx c{g, node, {}};
  int n_in = (int)node.inputs.size();
  if (n_in < row.min_inputs || n_in > row.max_inputs)
    TLM_NODE_ERROR(node) << "has " << n_in << " inputs, expected "
                         << (row.min_inputs == row.max_inputs ? std::to_string(row.min_inputs)
                             : row.max_inputs == kVariadic
                                 ? "at least " + std::to_string(row.min_inputs)
                                 : std::to_string(row.min_inputs) + " to " +
                                       std::to_string(row.max_inputs));
  for (int k = 0; k < n_in; k++) {
    ValueId id = node.inputs[k];
    if (id == kNoValue) {
      if (k < row.min_inputs || row.max_inputs == kVariadic)
        TLM_NODE_ERROR(node) << "required input " << k << " is missing";
      c.in.push_back(nullptr);
      continue;
    }
    const Value& v = g.value(id);
    check_extents(c, v.shape, "input '" + v.name + "'");
    c.in.push_back(&v);
  }
  Inferred r = row.fn(c);
  check_extents(c, r.shape, "output shape");
  Value& out = g.value(node.outputs[0]);
  out.dtype = r.dtype;
  out.shape = std::move(r.shape);
}

}  // namespace tlm

// Injective ops: data movement, each output element copies one input element. One Pure stage
// per node whose definition is the index map from output to input (ONNX order).
//
//   reshape_index   Reshape/Flatten/Squeeze/Unsqueeze: dims are matched in groups of equal
//                   element count, so dims that survive a reshape keep a plain var index and
//                   only merged/split groups go through a flat index (div/mod by constants).
//   Concat          a select chain over the inputs, reads clamped into each input.
//   Gather          negative indices count from the end; out-of-range indices are clamped
//                   (never read out of bounds).
#include <algorithm>

#include "lower/lower_internal.h"

namespace tlm {
namespace lower_detail {
namespace {

using Halide::clamp;
using Halide::select;

Index reshape_index(const Node& n, const Shape& in, const Shape& out, const Index& oi) {
  Index ii(in.size(), Expr(0));
  std::vector<size_t> in_nz, out_nz;  // dims of extent > 1; extent-1 dims index 0
  for (size_t d = 0; d < in.size(); d++)
    if (in[d] != 1) in_nz.push_back(d);
  for (size_t d = 0; d < out.size(); d++)
    if (out[d] != 1) out_nz.push_back(d);
  if (numel(in) != numel(out))
    bad_node(n, "reshape from " + shape_str(in) + " to " + shape_str(out) + " changes the size");
  size_t a = 0, b = 0;
  while (a < in_nz.size()) {
    TLM_CHECK(b < out_nz.size()) << "reshape grouping";
    std::vector<size_t> ig{in_nz[a]}, og{out_nz[b]};
    int64_t pi = in[in_nz[a]], po = out[out_nz[b]];
    while (pi != po) {
      if (pi < po) {
        ++a;
        TLM_CHECK(a < in_nz.size()) << "reshape grouping";
        ig.push_back(in_nz[a]);
        pi *= in[in_nz[a]];
      } else {
        ++b;
        TLM_CHECK(b < out_nz.size()) << "reshape grouping";
        og.push_back(out_nz[b]);
        po *= out[out_nz[b]];
      }
    }
    ++a;
    ++b;
    if (ig.size() == 1 && og.size() == 1) {
      ii[ig[0]] = oi[og[0]];
      continue;
    }
    Expr flat = oi[og[0]];
    for (size_t j = 1; j < og.size(); j++) flat = flat * (int)out[og[j]] + oi[og[j]];
    int64_t stride = 1;
    for (int j = (int)ig.size() - 1; j >= 0; j--) {
      Expr e = flat;
      if (stride > 1) e = e / (int)stride;
      if (j > 0) e = e % (int)in[ig[j]];
      ii[ig[j]] = e;
      stride *= in[ig[j]];
    }
  }
  TLM_CHECK(b == out_nz.size()) << "reshape grouping";
  return ii;
}

void lower_reshape_like(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  const Shape& in = shape_of(c, n.inputs.at(0));
  PureFunc p = new_func(c, n, "", out);
  p.f(p.vars) = read(c, n.inputs[0], reshape_index(n, in, out, p.idx));
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

}  // namespace

void lower_Reshape(Ctx& c, const Node& n) { lower_reshape_like(c, n); }
void lower_Flatten(Ctx& c, const Node& n) { lower_reshape_like(c, n); }
void lower_Squeeze(Ctx& c, const Node& n) { lower_reshape_like(c, n); }
void lower_Unsqueeze(Ctx& c, const Node& n) { lower_reshape_like(c, n); }

void lower_Transpose(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  size_t r = out.size();
  std::vector<int64_t> perm = n.ints("perm");
  std::vector<bool> seen(r, false);
  if (perm.size() != r) bad_node(n, "attribute 'perm' must have one entry per dim");
  for (int64_t q : perm) {
    if (q < 0 || q >= (int64_t)r || seen[q]) bad_node(n, "attribute 'perm' is no permutation");
    seen[q] = true;
  }
  PureFunc p = new_func(c, n, "", out);
  Index ii(r);
  for (size_t d = 0; d < r; d++) ii[perm[d]] = p.idx[d];
  p.f(p.vars) = read(c, n.inputs.at(0), ii);
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

void lower_Concat(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  int64_t axis = n.i("axis", -1);
  if (axis < 0 || axis >= (int64_t)out.size()) bad_node(n, "attribute 'axis' out of range");
  PureFunc p = new_func(c, n, "", out);
  // (input, offset along axis) for every non-empty input.
  std::vector<std::pair<ValueId, int64_t>> parts;
  int64_t off = 0;
  for (ValueId in : n.inputs) {
    int64_t e = shape_of(c, in).at(axis);
    if (e > 0) parts.push_back({in, off});
    off += e;
  }
  if (off != out[axis] || parts.empty()) bad_node(n, "input extents do not add up along axis");
  Expr e;
  for (int k = (int)parts.size() - 1; k >= 0; k--) {
    auto [in, o] = parts[k];
    Index ii = p.idx;
    // Clamped so that the reads the select does not take stay inside the input.
    ii[axis] = clamp(p.idx[axis] - (int)o, 0, (int)shape_of(c, in)[axis] - 1);
    Expr v = read(c, in, ii);
    e = e.defined() ? select(p.idx[axis] < (int)(o + shape_of(c, in)[axis]), v, e) : v;
  }
  p.f(p.vars) = e;
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

// The first element a Slice reads along a dim of extent `dim`: ONNX's rules (negative starts
// count from the end, then clamp to [0, dim], or [0, dim-1] for negative steps), as shape
// inference applies them to the raw attribute values of the IR.
namespace {
int64_t slice_start(int64_t dim, int64_t start, int64_t step) {
  if (start < 0) start += dim;
  int64_t hi = step > 0 ? dim : dim - 1;
  return std::min(std::max<int64_t>(start, 0), hi);
}
}  // namespace

void lower_Slice(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  const Shape& in = shape_of(c, n.inputs.at(0));
  size_t r = in.size();
  std::vector<int64_t> starts = ints_n(n, "starts", r, 0);
  std::vector<int64_t> steps = ints_n(n, "steps", r, 1);
  if (out.size() != r) bad_node(n, "output rank differs from input rank");
  PureFunc p = new_func(c, n, "", out);
  Index ii(r);
  for (size_t d = 0; d < r; d++) {
    if (steps[d] == 0) bad_node(n, "attribute 'steps' has a zero step");
    int64_t first = slice_start(in[d], starts[d], steps[d]);
    // The extent comes from shape inference; every element it implies must be inside the input.
    __int128 last = (__int128)first + (__int128)(out[d] - 1) * steps[d];
    if (first < 0 || first >= in[d] || last < 0 || last >= in[d])
      bad_node(n, "dim " + std::to_string(d) + " reads outside the input (starts " +
                      std::to_string(starts[d]) + ", steps " + std::to_string(steps[d]) + ")");
    int step = (int)std::max<int64_t>(std::min<int64_t>(steps[d], INT32_MAX), -INT32_MAX);
    ii[d] = out[d] == 1 ? Expr((int)first) : (int)first + p.idx[d] * step;
  }
  p.f(p.vars) = read(c, n.inputs[0], ii);
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

void lower_Gather(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  const Shape& data = shape_of(c, n.inputs.at(0));
  const Shape& ind = shape_of(c, n.inputs.at(1));
  int64_t axis = n.i("axis", 0);
  if (axis < 0 || axis >= (int64_t)data.size()) bad_node(n, "attribute 'axis' out of range");
  if (c.g.value(n.inputs[1]).dtype != DType::I64) bad_node(n, "indices must be int64");
  if (out.size() != data.size() - 1 + ind.size()) bad_node(n, "output rank mismatch");
  PureFunc p = new_func(c, n, "", out);
  Index jj(p.idx.begin() + axis, p.idx.begin() + axis + ind.size());
  Expr k = read(c, n.inputs[1], jj);
  Expr ext = Halide::Internal::make_const(Halide::Int(64), data[axis]);
  k = select(k < 0, k + ext, k);
  k = Halide::cast<int32_t>(clamp(k, Halide::Internal::make_zero(k.type()), ext - 1));
  Index ii;
  for (int64_t d = 0; d < axis; d++) ii.push_back(p.idx[d]);
  ii.push_back(k);
  for (size_t d = axis + ind.size(); d < out.size(); d++) ii.push_back(p.idx[d]);
  p.f(p.vars) = read(c, n.inputs[0], ii);
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

void lower_Expand(Ctx& c, const Node& n) {
  const Shape& out = shape_of(c, n.outputs[0]);
  ValueId in = n.inputs.at(0);
  if (shape_of(c, in).size() > out.size()) bad_node(n, "cannot expand to a lower rank");
  PureFunc p = new_func(c, n, "", out);
  p.f(p.vars) = read(c, in, broadcast_index(shape_of(c, in), out, p.idx));
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

}  // namespace lower_detail
}  // namespace tlm

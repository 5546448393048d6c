// Interpreter rows for data movement: Reshape, Flatten, Squeeze, Unsqueeze (same bytes, new
// shape), Transpose, Slice, Expand (one strided copy each), Concat and Gather. All work on raw
// bytes, so every dtype is handled alike. Gather index values outside [-n, n) are a UserError:
// constant folding of a fuzzed model can reach them.
#include <cstring>

#include "graph/interp_common.h"

namespace tlm {
namespace {

// out[i0..ir] = in[base + sum_d i_d * in_stride[d]] for every output element (strides in
// elements, per *output* dimension; a stride of 0 repeats). ES is the element size, a constant
// so that the per-element memcpy compiles to one move.
template <size_t ES>
void strided_copy_as(const uint8_t* src, uint8_t* dst, const Shape& s, int64_t base,
                     const std::vector<int64_t>& in_stride) {
  const int r = (int)s.size();
  const int64_t total = numel(s);
  if (total == 0) return;
  const int64_t inner = r ? s[r - 1] : 1, inner_stride = r ? in_stride[r - 1] : 0;
  std::vector<int64_t> idx(r, 0);
  int64_t off = base;
  for (int64_t o = 0; o < total; o += inner) {
    for (int64_t j = 0; j < inner; j++)
      std::memcpy(dst + (o + j) * ES, src + (off + j * inner_stride) * ES, ES);
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      off += in_stride[d];
      if (idx[d] < s[d]) break;
      off -= in_stride[d] * s[d];
      idx[d] = 0;
    }
  }
}

Tensor strided_copy(const EvalCtx& c, int64_t base, const std::vector<int64_t>& in_stride) {
  Tensor out(c.out_dtype, c.out_shape);
  const uint8_t* src = c.in[0]->raw();
  switch (dtype_size(c.out_dtype)) {
    case 1:
      strided_copy_as<1>(src, out.raw(), c.out_shape, base, in_stride);
      break;
    case 4:
      strided_copy_as<4>(src, out.raw(), c.out_shape, base, in_stride);
      break;
    case 8:
      strided_copy_as<8>(src, out.raw(), c.out_shape, base, in_stride);
      break;
    default:
      TLM_INTERNAL_ERROR() << "element size " << dtype_size(c.out_dtype);
  }
  return out;
}

Tensor same_bytes(const EvalCtx& c) { return c.in[0]->reshaped(c.out_shape); }

}  // namespace

Tensor eval_Reshape(const EvalCtx& c) { return same_bytes(c); }
Tensor eval_Flatten(const EvalCtx& c) { return same_bytes(c); }
Tensor eval_Squeeze(const EvalCtx& c) { return same_bytes(c); }
Tensor eval_Unsqueeze(const EvalCtx& c) { return same_bytes(c); }

Tensor eval_Transpose(const EvalCtx& c) {
  std::vector<int64_t> perm = c.node.ints("perm");
  std::vector<int64_t> st = strides_of(c.in[0]->shape()), out_st;
  for (int64_t p : perm) out_st.push_back(st[p]);
  return strided_copy(c, 0, out_st);
}

Tensor eval_Slice(const EvalCtx& c) {
  const Shape& x = c.in[0]->shape();
  std::vector<int64_t> starts = c.node.ints("starts"), ends = c.node.ints("ends"),
                       steps = c.node.ints("steps");
  std::vector<int64_t> st = strides_of(x), out_st(x.size());
  int64_t base = 0;
  for (size_t d = 0; d < x.size(); d++) {
    SliceDim sd = resolve_slice(x[d], starts[d], ends[d], steps[d]);
    if (sd.extent == 0) return Tensor(c.out_dtype, c.out_shape);
    base += sd.start * st[d];
    // With two or more elements |step| < x[d], so the product stays within the tensor's size;
    // a single element may come with any step, which is then never applied.
    out_st[d] = sd.extent == 1 ? 0 : sd.step * st[d];
  }
  return strided_copy(c, base, out_st);
}

Tensor eval_Expand(const EvalCtx& c) {
  const Shape& x = c.in[0]->shape();
  const size_t r = c.out_shape.size();
  std::vector<int64_t> st = strides_of(x), out_st(r, 0);
  for (size_t d = 0; d < x.size(); d++)
    if (x[d] != 1) out_st[r - x.size() + d] = st[d];
  return strided_copy(c, 0, out_st);
}

Tensor eval_Concat(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const int64_t axis = c.node.i("axis");
  const size_t es = dtype_size(c.out_dtype);
  const Shape& s = c.out_shape;
  const int64_t outer = numel(Shape(s.begin(), s.begin() + axis));
  const int64_t inner = numel(Shape(s.begin() + axis + 1, s.end()));
  int64_t offset = 0;  // elements along `axis` written so far
  for (const Tensor* t : c.in) {
    const int64_t chunk = t->shape()[axis] * inner;
    if (chunk == 0) continue;  // empty input: nothing to copy (and raw() may be null)
    for (int64_t o = 0; o < outer; o++)
      std::memcpy(out.raw() + ((o * s[axis] + offset) * inner) * es, t->raw() + o * chunk * es,
                  chunk * es);
    offset += t->shape()[axis];
  }
  return out;
}

Tensor eval_Gather(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const int64_t axis = c.node.i("axis");
  const Shape& x = c.in[0]->shape();
  const size_t es = dtype_size(c.out_dtype);
  const int64_t n = x[axis];
  const int64_t outer = numel(Shape(x.begin(), x.begin() + axis));
  const int64_t inner = numel(Shape(x.begin() + axis + 1, x.end()));
  const int64_t* idx = c.in[1]->data<int64_t>();
  const int64_t count = c.in[1]->numel();
  for (int64_t k = 0; k < count; k++)
    if (idx[k] < -n || idx[k] >= n)
      TLM_NODE_ERROR(c.node) << "index " << idx[k] << " is out of range for axis " << axis
                             << " of extent " << n;
  if (inner == 0) return out;  // empty slices: nothing to copy (and raw() may be null)
  for (int64_t o = 0; o < outer; o++)
    for (int64_t k = 0; k < count; k++) {
      const int64_t i = idx[k] < 0 ? idx[k] + n : idx[k];
      std::memcpy(out.raw() + ((o * count + k) * inner) * es,
                  c.in[0]->raw() + ((o * n + i) * inner) * es, inner * es);
    }
  return out;
}

}  // namespace tlm

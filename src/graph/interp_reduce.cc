// Interpreter rows for reductions: ReduceMean/ReduceSum (f32 accumulated in double; i64 exact,
// integer mean truncates), Softmax along one axis (max-subtracted), and LayerNormalization over
// axes axis..rank-1 with Scale and optional B broadcast to the normalized shape.
#include <algorithm>
#include <cmath>

#include "graph/interp_common.h"

namespace tlm {
namespace {

// Sum over `axes` into an accumulator per output element (output laid out without the
// reduced axes, which is the same order with or without keepdims).
template <typename T, typename Acc>
std::vector<Acc> reduce_sum(const Tensor& x, const std::vector<int64_t>& axes, int64_t* count) {
  const Shape& s = x.shape();
  const int r = (int)s.size();
  std::vector<bool> reduced(r, false);
  for (int64_t a : axes) reduced[a] = true;
  Shape kept;
  for (int d = 0; d < r; d++)
    if (!reduced[d]) kept.push_back(s[d]);
  std::vector<int64_t> kst = strides_of(kept), ost(r, 0);
  *count = 1;
  for (int d = 0, k = 0; d < r; d++) {
    if (reduced[d])
      *count *= s[d];
    else
      ost[d] = kst[k++];
  }
  std::vector<Acc> acc((size_t)numel(kept), Acc(0));
  const T* p = x.data<T>();
  const int64_t n = x.numel();
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; i++) {
    acc[off] += (Acc)p[i];
    for (int d = r - 1; d >= 0; d--) {
      idx[d]++;
      off += ost[d];
      if (idx[d] < s[d]) break;
      off -= ost[d] * s[d];
      idx[d] = 0;
    }
  }
  return acc;
}

Tensor reduce(const EvalCtx& c, bool mean) {
  Tensor out(c.out_dtype, c.out_shape);
  const std::vector<int64_t> axes = c.node.ints("axes");
  int64_t count = 1;
  if (c.out_dtype == DType::F32) {
    std::vector<double> acc = reduce_sum<float, double>(*c.in[0], axes, &count);
    float* o = out.data<float>();
    for (size_t i = 0; i < acc.size(); i++) o[i] = (float)(mean ? acc[i] / count : acc[i]);
  } else {
    // Summed on uint64 so that overflow wraps instead of being undefined.
    std::vector<uint64_t> acc = reduce_sum<int64_t, uint64_t>(*c.in[0], axes, &count);
    int64_t* o = out.data<int64_t>();
    for (size_t i = 0; i < acc.size(); i++)
      o[i] = mean && count ? (int64_t)acc[i] / count : (int64_t)acc[i];
  }
  return out;
}

// A parameter of shape broadcastable to `normalized`, expanded to numel(normalized) values.
std::vector<float> expand_param(const Tensor& p, const Shape& normalized) {
  const int r = (int)normalized.size();
  const Shape& ps = p.shape();
  std::vector<int64_t> pst = strides_of(ps), st(r, 0);
  for (size_t d = 0; d < ps.size(); d++)
    if (ps[d] != 1) st[r - ps.size() + d] = pst[d];
  const int64_t n = numel(normalized);
  std::vector<float> v((size_t)n);
  std::vector<int64_t> idx(r, 0);
  int64_t off = 0;
  for (int64_t i = 0; i < n; i++) {
    v[i] = p.data<float>()[off];
    for (int d = r - 1; d >= 0; d--) {
      idx[d]++;
      off += st[d];
      if (idx[d] < normalized[d]) break;
      off -= st[d] * normalized[d];
      idx[d] = 0;
    }
  }
  return v;
}

}  // namespace

Tensor eval_ReduceMean(const EvalCtx& c) { return reduce(c, true); }
Tensor eval_ReduceSum(const EvalCtx& c) { return reduce(c, false); }

Tensor eval_Softmax(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const int64_t axis = c.node.i("axis");
  const Shape& s = c.out_shape;
  const int64_t outer = numel(Shape(s.begin(), s.begin() + axis)), n = s[axis];
  const int64_t inner = numel(Shape(s.begin() + axis + 1, s.end()));
  const float* x = c.in[0]->data<float>();
  float* y = out.data<float>();
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      const int64_t base = o * n * inner + i;
      float mx = -INFINITY;
      for (int64_t k = 0; k < n; k++) mx = std::max(mx, x[base + k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < n; k++) {
        const float e = std::exp(x[base + k * inner] - mx);
        y[base + k * inner] = e;
        sum += e;
      }
      for (int64_t k = 0; k < n; k++) y[base + k * inner] = (float)(y[base + k * inner] / sum);
    }
  return out;
}

Tensor eval_LayerNormalization(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const int64_t axis = c.node.i("axis");
  const double eps = c.node.f("epsilon");
  const Shape& s = c.out_shape;
  const Shape normalized(s.begin() + axis, s.end());
  const int64_t outer = numel(Shape(s.begin(), s.begin() + axis)), n = numel(normalized);
  const std::vector<float> scale = expand_param(*c.in[1], normalized);
  const std::vector<float> bias =
      c.in.size() > 2 && c.in[2] ? expand_param(*c.in[2], normalized) : std::vector<float>(n, 0.f);
  const float* x = c.in[0]->data<float>();
  float* y = out.data<float>();
  for (int64_t o = 0; o < outer; o++) {
    const float* row = x + o * n;
    double mean = 0, var = 0;
    for (int64_t k = 0; k < n; k++) mean += row[k];
    mean /= n;
    for (int64_t k = 0; k < n; k++) var += (row[k] - mean) * (row[k] - mean);
    var /= n;
    const double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t k = 0; k < n; k++)
      y[o * n + k] = (float)((row[k] - mean) * inv * scale[k] + bias[k]);
  }
  return out;
}

}  // namespace tlm

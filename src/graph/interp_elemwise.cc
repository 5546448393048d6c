// Interpreter rows for elementwise ops: numpy-broadcasting binary ops and Where, unary math,
// Clip/HardSigmoid/HardSwish/LeakyRelu, Cast and inference-mode BatchNormalization.
// float32 math follows the ONNX operator spec; Add..Min, Relu, Neg, Abs and Clip also run on
// int64 (integer Div truncates toward zero; division by zero is a UserError, since constant
// folding of a fuzzed model can reach it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "graph/interp_common.h"

namespace tlm {
namespace {

// Visits the output of a broadcast op row by row (the last dimension is the inner loop):
// body(out_offset, in_offsets[N], inner_extent, in_inner_strides[N]).
template <int N, typename Body>
void for_each_broadcast(const Shape& out, const Shape* const (&ins)[N], Body body) {
  const int r = (int)out.size();
  std::vector<std::vector<int64_t>> strides(N, std::vector<int64_t>(r, 0));
  for (int k = 0; k < N; k++) {
    const Shape& s = *ins[k];
    std::vector<int64_t> own = strides_of(s);
    for (size_t d = 0; d < s.size(); d++)
      if (s[d] != 1) strides[k][r - s.size() + d] = own[d];
  }
  int64_t in_off[N] = {};
  int64_t inner_stride[N];
  for (int k = 0; k < N; k++) inner_stride[k] = r ? strides[k][r - 1] : 0;
  const int64_t inner = r ? out[r - 1] : 1;
  const int64_t rows = inner ? numel(out) / inner : 0;
  std::vector<int64_t> idx(r > 0 ? r - 1 : 0, 0);
  for (int64_t row = 0; row < rows; row++) {
    body(row * inner, in_off, inner, inner_stride);
    // Odometer over the outer dimensions, carrying the input offsets along.
    for (int d = r - 2; d >= 0; d--) {
      idx[d]++;
      for (int k = 0; k < N; k++) in_off[k] += strides[k][d];
      if (idx[d] < out[d]) break;
      for (int k = 0; k < N; k++) in_off[k] -= strides[k][d] * out[d];
      idx[d] = 0;
    }
  }
}

template <typename A, typename B, typename R, typename F>
Tensor binary(const EvalCtx& c, F f) {
  Tensor out(c.out_dtype, c.out_shape);
  const A* a = c.in[0]->data<A>();
  const B* b = c.in[1]->data<B>();
  R* o = out.data<R>();
  const Shape* shapes[2] = {&c.in[0]->shape(), &c.in[1]->shape()};
  for_each_broadcast<2>(c.out_shape, shapes,
                        [&](int64_t oo, const int64_t* io, int64_t n, const int64_t* is) {
                          const A* pa = a + io[0];
                          const B* pb = b + io[1];
                          for (int64_t j = 0; j < n; j++)
                            o[oo + j] = f(pa[j * is[0]], pb[j * is[1]]);
                        });
  return out;
}

// Same-dtype arithmetic on f32 or i64.
template <typename F>
Tensor arith(const EvalCtx& c, F f) {
  if (c.in[0]->dtype() == DType::I64) return binary<int64_t, int64_t, int64_t>(c, f);
  return binary<float, float, float>(c, f);
}

// Comparison on any same-typed inputs, bool result.
template <typename F>
Tensor compare(const EvalCtx& c, F f) {
  switch (c.in[0]->dtype()) {
    case DType::F32:
      return binary<float, float, bool>(c, f);
    case DType::I64:
      return binary<int64_t, int64_t, bool>(c, f);
    case DType::Bool:
      return binary<bool, bool, bool>(c, f);
  }
  TLM_INTERNAL_ERROR() << "unreachable";
}

template <typename T, typename F>
Tensor unary_as(const EvalCtx& c, F f) {
  Tensor out(c.out_dtype, c.out_shape);
  const T* x = c.in[0]->data<T>();
  T* o = out.data<T>();
  const int64_t n = out.numel();
  for (int64_t i = 0; i < n; i++) o[i] = f(x[i]);
  return out;
}

template <typename F>
Tensor unary_f32(const EvalCtx& c, F f) {
  return unary_as<float>(c, f);
}

// Unary op on f32 or i64 (the lambda is generic).
template <typename F>
Tensor unary_num(const EvalCtx& c, F f) {
  if (c.in[0]->dtype() == DType::I64) return unary_as<int64_t>(c, f);
  return unary_as<float>(c, f);
}

// f(a, b) for floats; for int64 computed on uint64 (wrapping) and cast back.
template <typename T, typename F>
T wrap(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>)
    return (T)f((uint64_t)a, (uint64_t)b);
  else
    return f(a, b);
}

template <typename R, typename S>
R convert(S v) {
  if constexpr (std::is_same_v<R, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<R, int64_t> && std::is_same_v<S, float>) {
    // float -> int64 truncates; NaN and out-of-range values (undefined in C++) saturate.
    if (std::isnan(v)) return 0;
    if (v >= 9.2233720e18f) return std::numeric_limits<int64_t>::max();
    if (v <= -9.2233720e18f) return std::numeric_limits<int64_t>::min();
    return (int64_t)v;
  } else {
    return (R)v;
  }
}

template <typename R, typename S>
void convert_all(const Tensor& src, Tensor& dst) {
  const S* s = src.data<S>();
  R* d = dst.data<R>();
  for (int64_t i = 0; i < src.numel(); i++) d[i] = convert<R, S>(s[i]);
}

template <typename R>
void convert_from(const Tensor& src, Tensor& dst) {
  switch (src.dtype()) {
    case DType::F32:
      return convert_all<R, float>(src, dst);
    case DType::I64:
      return convert_all<R, int64_t>(src, dst);
    case DType::Bool:
      return convert_all<R, bool>(src, dst);
  }
}

}  // namespace

// Integer +, -, * wrap around (two's complement) instead of overflowing, which C++ leaves
// undefined: constant folding of fuzzed models must stay well-defined.
Tensor eval_Add(const EvalCtx& c) {
  return arith(c, [](auto a, auto b) { return wrap(a, b, [](auto x, auto y) { return x + y; }); });
}
Tensor eval_Sub(const EvalCtx& c) {
  return arith(c, [](auto a, auto b) { return wrap(a, b, [](auto x, auto y) { return x - y; }); });
}
Tensor eval_Mul(const EvalCtx& c) {
  return arith(c, [](auto a, auto b) { return wrap(a, b, [](auto x, auto y) { return x * y; }); });
}
Tensor eval_Div(const EvalCtx& c) {
  return arith(c, [&](auto a, auto b) {
    if constexpr (std::is_integral_v<decltype(a)>) {
      if (b == 0) TLM_NODE_ERROR(c.node) << "integer division by zero";
      if (b == -1 && a == std::numeric_limits<int64_t>::min())
        TLM_NODE_ERROR(c.node) << "integer division overflows";
    }
    return a / b;  // C++ integer division truncates toward zero, as ONNX asks
  });
}
Tensor eval_Pow(const EvalCtx& c) {
  auto f = [](auto a, auto b) {
    using A = decltype(a);
    if constexpr (std::is_same_v<A, float>)
      return (float)std::pow((double)a, (double)b);
    else
      return convert<int64_t, float>((float)std::pow((double)a, (double)b));
  };
  bool fa = c.in[0]->dtype() == DType::F32, fb = c.in[1]->dtype() == DType::F32;
  if (fa && fb) return binary<float, float, float>(c, f);
  if (fa) return binary<float, int64_t, float>(c, f);
  if (fb) return binary<int64_t, float, int64_t>(c, f);
  return binary<int64_t, int64_t, int64_t>(c, f);
}
Tensor eval_Max(const EvalCtx& c) {
  return arith(c, [](auto a, auto b) { return a < b ? b : a; });
}
Tensor eval_Min(const EvalCtx& c) {
  return arith(c, [](auto a, auto b) { return b < a ? b : a; });
}
Tensor eval_Equal(const EvalCtx& c) {
  return compare(c, [](auto a, auto b) { return a == b; });
}
Tensor eval_Less(const EvalCtx& c) {
  return compare(c, [](auto a, auto b) { return a < b; });
}
Tensor eval_Greater(const EvalCtx& c) {
  return compare(c, [](auto a, auto b) { return a > b; });
}

Tensor eval_Where(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const size_t es = dtype_size(c.out_dtype);
  const uint8_t* cond = c.in[0]->raw();
  const uint8_t* x = c.in[1]->raw();
  const uint8_t* y = c.in[2]->raw();
  uint8_t* o = out.raw();
  const Shape* shapes[3] = {&c.in[0]->shape(), &c.in[1]->shape(), &c.in[2]->shape()};
  for_each_broadcast<3>(
      c.out_shape, shapes, [&](int64_t oo, const int64_t* io, int64_t n, const int64_t* is) {
        for (int64_t j = 0; j < n; j++) {
          const bool t = cond[io[0] + j * is[0]] != 0;
          const uint8_t* src = t ? x + (io[1] + j * is[1]) * es : y + (io[2] + j * is[2]) * es;
          std::memcpy(o + (oo + j) * es, src, es);
        }
      });
  return out;
}

Tensor eval_Sqrt(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return std::sqrt(x); });
}
Tensor eval_Erf(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return std::erf(x); });
}
Tensor eval_Exp(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return std::exp(x); });
}
Tensor eval_Log(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return std::log(x); });
}
Tensor eval_Tanh(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return std::tanh(x); });
}
Tensor eval_Sigmoid(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return (float)(1.0 / (1.0 + std::exp(-(double)x))); });
}
Tensor eval_Relu(const EvalCtx& c) {
  return unary_num(c, [](auto x) { return x > 0 ? x : decltype(x)(0); });
}
Tensor eval_Neg(const EvalCtx& c) {
  return unary_num(
      c, [](auto x) { return wrap(decltype(x)(0), x, [](auto a, auto b) { return a - b; }); });
}
Tensor eval_Abs(const EvalCtx& c) {
  return unary_num(c, [](auto x) {
    return x < 0 ? wrap(decltype(x)(0), x, [](auto a, auto b) { return a - b; }) : x;
  });
}
Tensor eval_Reciprocal(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return 1.0f / x; });
}
Tensor eval_Clip(const EvalCtx& c) {
  const double lo = c.node.f("min"), hi = c.node.f("max");
  return unary_num(c, [&](auto x) {
    if constexpr (std::is_same_v<decltype(x), float>) {
      return (float)std::min(std::max((double)x, lo), hi);  // a NaN x stays NaN
    } else {
      if ((double)x < lo) return convert<int64_t, float>((float)lo);
      if ((double)x > hi) return convert<int64_t, float>((float)hi);
      return x;
    }
  });
}
Tensor eval_HardSigmoid(const EvalCtx& c) {
  const float alpha = c.node.f("alpha"), beta = c.node.f("beta");
  return unary_f32(c, [&](float x) { return std::max(0.f, std::min(1.f, alpha * x + beta)); });
}
Tensor eval_HardSwish(const EvalCtx& c) {
  return unary_f32(c, [](float x) { return x * std::max(0.f, std::min(1.f, x / 6.f + 0.5f)); });
}
Tensor eval_LeakyRelu(const EvalCtx& c) {
  const float alpha = c.node.f("alpha");
  return unary_f32(c, [&](float x) { return x >= 0 ? x : alpha * x; });
}

Tensor eval_Cast(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  switch (c.out_dtype) {
    case DType::F32:
      convert_from<float>(*c.in[0], out);
      break;
    case DType::I64:
      convert_from<int64_t>(*c.in[0], out);
      break;
    case DType::Bool:
      convert_from<bool>(*c.in[0], out);
      break;
  }
  return out;
}

Tensor eval_BatchNormalization(const EvalCtx& c) {
  Tensor out(c.out_dtype, c.out_shape);
  const float eps = c.node.f("epsilon");
  const Shape& s = c.out_shape;
  const int64_t C = s[1], inner = numel(Shape(s.begin() + 2, s.end())), N = s[0];
  const float *x = c.in[0]->data<float>(), *scale = c.in[1]->data<float>(),
              *bias = c.in[2]->data<float>(), *mean = c.in[3]->data<float>(),
              *var = c.in[4]->data<float>();
  float* y = out.data<float>();
  for (int64_t n = 0; n < N; n++)
    for (int64_t ch = 0; ch < C; ch++) {
      const float m = mean[ch], den = std::sqrt(var[ch] + eps), sc = scale[ch], b = bias[ch];
      const int64_t base = (n * C + ch) * inner;
      for (int64_t i = 0; i < inner; i++) y[base + i] = sc * (x[base + i] - m) / den + b;
    }
  return out;
}

}  // namespace tlm

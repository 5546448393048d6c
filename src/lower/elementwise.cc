// Elementwise ops: each output element is a function of the elements at the numpy-broadcast
// index of every input. One Pure stage per node; the formulas below are the ONNX definitions.
//
//   lower_map(c, n, fn)  the shared body: broadcast every input, apply fn, bind the result.
//   bools are UInt(8) 0/1 (lower_internal.h); comparisons produce them, Where tests != 0.
//   integer Div truncates toward zero (C semantics, as ONNX runtimes do), not Halide's floor.
#include <cmath>
#include <functional>

#include "lower/lower_internal.h"

namespace tlm {
namespace lower_detail {
namespace {

using Halide::cast;
using Halide::select;

using MapFn = std::function<Expr(const std::vector<Expr>&)>;

void lower_map(Ctx& c, const Node& n, const MapFn& fn) {
  const Value& out = c.g.value(n.outputs[0]);
  PureFunc p = new_func(c, n, "", out.shape);
  std::vector<Expr> args;
  for (ValueId in : n.inputs) {
    if (in == kNoValue) {
      args.push_back(Expr());
      continue;
    }
    args.push_back(read(c, in, broadcast_index(shape_of(c, in), out.shape, p.idx)));
  }
  Expr e = fn(args);
  Halide::Type t = halide_type(out.dtype);
  if (e.type() != t) e = cast(t, e);
  p.f(p.vars) = e;
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

Expr as_bool(const Expr& b) { return cast<uint8_t>(b); }
Expr is_true(const Expr& u8) { return u8 != Halide::Internal::make_zero(u8.type()); }
Expr zero_like(const Expr& x) { return Halide::Internal::make_zero(x.type()); }
Expr fconst(const Expr& like, double v) { return Halide::Internal::make_const(like.type(), v); }

void require_float(const Node& n, const Expr& x) {
  if (!x.type().is_float()) bad_node(n, "input must be float32");
}

// Unary ops over float inputs.
void lower_float_unary(Ctx& c, const Node& n, Expr (*fn)(const Expr&)) {
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    require_float(n, a[0]);
    return fn(a[0]);
  });
}

}  // namespace

void lower_Add(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return a[0] + a[1]; });
}
void lower_Sub(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return a[0] - a[1]; });
}
void lower_Mul(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return a[0] * a[1]; });
}
void lower_Div(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) {
    if (a[0].type().is_float()) return a[0] / a[1];
    // Integer division by zero is undefined in ONNX; Halide defines it as 0, which is safe.
    return Halide::div_round_to_zero(a[0], a[1]);
  });
}
void lower_Pow(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) {
    // A constant small integer exponent (GELU's x^3) becomes multiplications: Halide's pow of a
    // float exponent is a scalar libm call per element, ~50x slower than the vectorized products.
    if (const auto* f = a[1].as<Halide::Internal::FloatImm>())
      if (a[0].type().is_float() && f->value == std::round(f->value) && std::abs(f->value) <= 8)
        return Halide::pow(a[0], Halide::Expr((int)f->value));
    if (const int64_t* i = Halide::Internal::as_const_int(a[1]))
      if (*i >= -8 && *i <= 8 && a[0].type().is_float()) return Halide::pow(a[0], Expr((int)*i));
    if (a[0].type().is_float()) return Halide::pow(a[0], cast(a[0].type(), a[1]));
    return cast(a[0].type(), Halide::pow(cast<double>(a[0]), cast<double>(a[1])));
  });
}
void lower_Max(Ctx& c, const Node& n) {
  if (n.inputs.size() != 2) bad_node(n, "Max takes exactly two inputs here");
  lower_map(c, n, [](const std::vector<Expr>& a) { return Halide::max(a[0], a[1]); });
}
void lower_Min(Ctx& c, const Node& n) {
  if (n.inputs.size() != 2) bad_node(n, "Min takes exactly two inputs here");
  lower_map(c, n, [](const std::vector<Expr>& a) { return Halide::min(a[0], a[1]); });
}
void lower_Equal(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return as_bool(a[0] == a[1]); });
}
void lower_Less(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return as_bool(a[0] < a[1]); });
}
void lower_Greater(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return as_bool(a[0] > a[1]); });
}
void lower_Where(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return select(is_true(a[0]), a[1], a[2]); });
}
void lower_Sqrt(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return Halide::sqrt(x); });
}
void lower_Erf(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return Halide::erf(x); });
}
void lower_Exp(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return Halide::exp(x); });
}
void lower_Log(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return Halide::log(x); });
}
void lower_Tanh(Ctx& c, const Node& n) {
  // Halide's tanh is a scalar libm call per element; this form vectorizes. For |x| >= 1/8,
  // tanh|x| = (1 - e) / (1 + e) with e = exp(-2|x|) (no overflow: e <= 1); below, where 1 - e
  // would cancel, the odd Taylor series to x^7 (next term < 2e-10).
  lower_float_unary(c, n, [](const Expr& x) {
    Expr ax = Halide::abs(x), x2 = x * x;
    Expr e = Halide::exp(-2.f * ax);
    Expr big = (1.f - e) / (1.f + e);
    Expr small = x * (1.f + x2 * (-1.f / 3 + x2 * (2.f / 15 + x2 * (-17.f / 315))));
    return select(ax < 0.125f, small, select(x < 0.f, -big, big));
  });
}
void lower_Sigmoid(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return 1.f / (1.f + Halide::exp(-x)); });
}
void lower_Relu(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return Halide::max(a[0], zero_like(a[0])); });
}
void lower_Neg(Ctx& c, const Node& n) {
  lower_map(c, n, [](const std::vector<Expr>& a) { return -a[0]; });
}
void lower_Abs(Ctx& c, const Node& n) {
  // Halide's abs of a signed integer is unsigned; lower_map casts back to the value's type.
  lower_map(c, n, [](const std::vector<Expr>& a) { return Halide::abs(a[0]); });
}
void lower_Reciprocal(Ctx& c, const Node& n) {
  lower_float_unary(c, n, [](const Expr& x) { return 1.f / x; });
}
void lower_Clip(Ctx& c, const Node& n) {
  float lo = n.f("min", -INFINITY), hi = n.f("max", INFINITY);
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    Expr x = a[0];
    // An infinite bound is no bound (and has no integer equivalent).
    if (std::isfinite(lo)) x = Halide::max(x, fconst(x, lo));
    if (std::isfinite(hi)) x = Halide::min(x, fconst(x, hi));
    return x;
  });
}
void lower_HardSigmoid(Ctx& c, const Node& n) {
  float alpha = n.f("alpha", 0.2f), beta = n.f("beta", 0.5f);
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    require_float(n, a[0]);
    return Halide::clamp(alpha * a[0] + beta, 0.f, 1.f);
  });
}
void lower_HardSwish(Ctx& c, const Node& n) {
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    require_float(n, a[0]);
    return a[0] * Halide::clamp(a[0] * (1.f / 6.f) + 0.5f, 0.f, 1.f);
  });
}
void lower_LeakyRelu(Ctx& c, const Node& n) {
  float alpha = n.f("alpha", 0.01f);
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    require_float(n, a[0]);
    return select(a[0] < 0.f, alpha * a[0], a[0]);
  });
}
void lower_Cast(Ctx& c, const Node& n) {
  int64_t to = n.i("to", -1);
  if (to < 0 || to > 2) bad_node(n, "attribute 'to' = " + std::to_string(to) + " is no tlm dtype");
  lower_map(c, n, [&](const std::vector<Expr>& a) {
    Expr x = a[0];
    if ((DType)to == DType::Bool) return as_bool(x != zero_like(x));
    return cast(halide_type((DType)to), x);
  });
}
void lower_BatchNormalization(Ctx& c, const Node& n) {
  if (n.inputs.size() != 5) bad_node(n, "expects inputs X, scale, B, mean, var");
  const Value& out = c.g.value(n.outputs[0]);
  if (out.shape.size() < 2) bad_node(n, "input must have rank >= 2 (N, C, ...)");
  float eps = n.f("epsilon", 1e-5f);
  for (int k = 1; k < 5; k++)
    if (shape_of(c, n.inputs[k]) != Shape{out.shape[1]})
      bad_node(n, "parameter " + std::to_string(k) + " must have shape [C]");
  PureFunc p = new_func(c, n, "", out.shape);
  Index ch = {p.idx[1]};
  Expr x = read(c, n.inputs[0], p.idx);
  Expr scale = read(c, n.inputs[1], ch), bias = read(c, n.inputs[2], ch);
  Expr mean = read(c, n.inputs[3], ch), var = read(c, n.inputs[4], ch);
  p.f(p.vars) = (x - mean) / Halide::sqrt(var + eps) * scale + bias;
  add_stage(c, p, n, StageRole::Pure);
  bind(c, n, p);
}

}  // namespace lower_detail
}  // namespace tlm

// Layer helpers (see builder.h). Each mirrors what torch.onnx.export (torch 1.13, opset 17) emits
// for the corresponding torch module, attribute for attribute, in canonical IR spelling.
#include "zoo/builder.h"

#include <cmath>
#include <limits>

#include "support/hash.h"

namespace tlm::zoo {
namespace {

std::vector<int64_t> ones(size_t n) { return std::vector<int64_t>(n, 1); }

// ONNX pads: all begins, then all ends.
std::vector<int64_t> symmetric_pads(const std::vector<int64_t>& pad) {
  std::vector<int64_t> p = pad;
  p.insert(p.end(), pad.begin(), pad.end());
  return p;
}

}  // namespace

Shape shape_of(const ModelBuilder& b, ValueId v) { return b.g.value(v).shape; }

ValueId uniform(ModelBuilder& b, const std::string& name, const Shape& shape, double lo,
                double hi) {
  b.weight_bytes += numel(shape) * (int64_t)sizeof(float);
  if (b.weight_bytes > kMaxWeightBytes)
    TLM_USER_ERROR() << "zoo model " << b.g.name << ": weights pass " << (kMaxWeightBytes >> 30)
                     << " GiB at " << name << " " << shape_str(shape)
                     << "; choose smaller parameters (vocab, hidden, ff, layers, classes, fc)";
  uint64_t s = splitmix64(splitmix64(b.seed) + b.drawn++);
  return b.g.add_constant(name, random_tensor(DType::F32, shape, s, lo, hi));
}

ValueId weight(ModelBuilder& b, const std::string& name, const Shape& shape, double bound) {
  return uniform(b, name, shape, -bound, bound);
}

ValueId scalar(ModelBuilder& b, float v) {
  return b.g.add_constant(b.g.unique_name("scalar"), Tensor::scalar<float>(v));
}

ValueId constant(ModelBuilder& b, const std::string& name, Tensor t) {
  return b.g.add_constant(name, std::move(t));
}

ValueId node(ModelBuilder& b, Op op, std::vector<ValueId> inputs, Attrs attrs,
             const std::string& name) {
  return b.g.add(op, std::move(inputs), std::move(attrs),
                 name.empty() ? std::string() : b.g.unique_name(name));
}

ValueId unary(ModelBuilder& b, Op op, ValueId x) { return node(b, op, {x}); }
ValueId binary(ModelBuilder& b, Op op, ValueId x, ValueId y) { return node(b, op, {x, y}); }

ValueId conv(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout,
             const std::vector<int64_t>& kernel, const std::vector<int64_t>& stride,
             const std::vector<int64_t>& pad, int64_t group, bool bias) {
  Shape xs = shape_of(b, x);
  TLM_CHECK(xs.size() == kernel.size() + 2 && stride.size() == kernel.size() &&
            pad.size() == kernel.size())
      << name << ": rank mismatch";
  int64_t cin = xs[1];
  TLM_CHECK(cin % group == 0 && cout % group == 0) << name << ": group " << group;
  Shape ws = {cout, cin / group};
  int64_t fan_in = cin / group;
  for (int64_t k : kernel) {
    ws.push_back(k);
    fan_in *= k;
  }
  double bound = 1.0 / std::sqrt((double)fan_in);
  std::vector<ValueId> ins = {x, weight(b, name + ".weight", ws, bound)};
  if (bias) ins.push_back(weight(b, name + ".bias", {cout}, bound));
  Attrs a = {{"strides", stride},
             {"dilations", ones(kernel.size())},
             {"pads", symmetric_pads(pad)},
             {"group", group}};
  return node(b, Op::Conv, ins, a, name);
}

ValueId conv2d(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout, int64_t k,
               int64_t stride, int64_t pad, int64_t group, bool bias) {
  return conv(b, name, x, cout, {k, k}, {stride, stride}, {pad, pad}, group, bias);
}

ValueId conv_transpose2d(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout,
                         int64_t k, int64_t stride, int64_t pad, bool bias) {
  int64_t cin = shape_of(b, x).at(1);
  // torch's ConvTranspose init uses fan_in computed from W's dim 1 (= cout) times the kernel.
  double bound = 1.0 / std::sqrt((double)(cout * k * k));
  std::vector<ValueId> ins = {x, weight(b, name + ".weight", {cin, cout, k, k}, bound)};
  if (bias) ins.push_back(weight(b, name + ".bias", {cout}, bound));
  Attrs a = {{"strides", std::vector<int64_t>{stride, stride}},
             {"dilations", ones(2)},
             {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
             {"output_padding", std::vector<int64_t>{0, 0}},
             {"group", int64_t{1}}};
  return node(b, Op::ConvTranspose, ins, a, name);
}

ValueId batch_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps) {
  int64_t c = shape_of(b, x).at(1);
  ValueId scale = uniform(b, name + ".weight", {c}, 0.5, 1.5);
  ValueId shift = uniform(b, name + ".bias", {c}, -0.1, 0.1);
  ValueId mean = uniform(b, name + ".running_mean", {c}, -0.1, 0.1);
  ValueId var = uniform(b, name + ".running_var", {c}, 0.5, 1.5);
  return node(b, Op::BatchNormalization, {x, scale, shift, mean, var}, {{"epsilon", eps}}, name);
}

ValueId relu(ModelBuilder& b, ValueId x) { return unary(b, Op::Relu, x); }

ValueId relu6(ModelBuilder& b, ValueId x) {
  return node(b, Op::Clip, {x}, {{"min", 0.f}, {"max", 6.f}});
}

ValueId hardswish(ModelBuilder& b, ValueId x) { return unary(b, Op::HardSwish, x); }

ValueId hardsigmoid(ModelBuilder& b, ValueId x) {
  return node(b, Op::HardSigmoid, {x}, {{"alpha", 1.f / 6.f}, {"beta", 0.5f}});
}

ValueId silu(ModelBuilder& b, ValueId x) { return binary(b, Op::Mul, x, unary(b, Op::Sigmoid, x)); }

ValueId gelu_erf(ModelBuilder& b, ValueId x) {
  ValueId e = unary(b, Op::Erf, binary(b, Op::Div, x, scalar(b, (float)M_SQRT2)));
  ValueId t = binary(b, Op::Mul, x, binary(b, Op::Add, e, scalar(b, 1.f)));
  return binary(b, Op::Mul, t, scalar(b, 0.5f));
}

ValueId gelu_tanh(ModelBuilder& b, ValueId x) {
  ValueId half_x = binary(b, Op::Mul, scalar(b, 0.5f), x);
  ValueId cube = binary(b, Op::Pow, x, scalar(b, 3.f));
  ValueId inner = binary(b, Op::Add, x, binary(b, Op::Mul, scalar(b, 0.044715f), cube));
  ValueId th =
      unary(b, Op::Tanh, binary(b, Op::Mul, scalar(b, (float)std::sqrt(2.0 / M_PI)), inner));
  return binary(b, Op::Mul, half_x, binary(b, Op::Add, scalar(b, 1.f), th));
}

ValueId conv_bn_act(ModelBuilder& b, const std::string& name, ValueId x, int64_t cout, int64_t k,
                    int64_t stride, int64_t pad, int64_t group, Activation act, float eps) {
  ValueId y = conv2d(b, name + ".conv", x, cout, k, stride, pad, group, false);
  y = batch_norm(b, name + ".bn", y, eps);
  return act ? act(b, y) : y;
}

ValueId max_pool(ModelBuilder& b, ValueId x, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                 bool ceil_mode) {
  Attrs a = {{"kernel_shape", kernel},
             {"strides", stride},
             {"pads", symmetric_pads(pad)},
             {"dilations", ones(kernel.size())},
             {"ceil_mode", int64_t{ceil_mode ? 1 : 0}}};
  return node(b, Op::MaxPool, {x}, a);
}

ValueId avg_pool(ModelBuilder& b, ValueId x, const std::vector<int64_t>& kernel,
                 const std::vector<int64_t>& stride) {
  Attrs a = {{"kernel_shape", kernel},
             {"strides", stride},
             {"pads", std::vector<int64_t>(2 * kernel.size(), 0)},
             {"ceil_mode", int64_t{0}},
             {"count_include_pad", int64_t{0}}};
  return node(b, Op::AveragePool, {x}, a);
}

ValueId global_avg_pool(ModelBuilder& b, ValueId x) { return unary(b, Op::GlobalAveragePool, x); }

ValueId flatten(ModelBuilder& b, ValueId x, int64_t axis) {
  return node(b, Op::Flatten, {x}, {{"axis", axis}});
}

ValueId linear(ModelBuilder& b, const std::string& name, ValueId x, int64_t out, bool bias) {
  Shape xs = shape_of(b, x);
  int64_t in = xs.back();
  double bound = 1.0 / std::sqrt((double)in);
  if (xs.size() == 2) {
    std::vector<ValueId> ins = {x, weight(b, name + ".weight", {out, in}, bound)};
    if (bias) ins.push_back(weight(b, name + ".bias", {out}, bound));
    Attrs a = {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t{0}}, {"transB", int64_t{1}}};
    return node(b, Op::Gemm, ins, a, name);
  }
  ValueId y = node(b, Op::MatMul, {x, weight(b, name + ".weight", {in, out}, bound)}, {}, name);
  if (bias) y = binary(b, Op::Add, y, weight(b, name + ".bias", {out}, bound));
  return y;
}

ValueId reshape(ModelBuilder& b, ValueId x, const Shape& shape) {
  return node(b, Op::Reshape, {x}, {{"shape", shape}});
}

ValueId transpose(ModelBuilder& b, ValueId x, const std::vector<int64_t>& perm) {
  return node(b, Op::Transpose, {x}, {{"perm", perm}});
}

ValueId concat(ModelBuilder& b, const std::vector<ValueId>& xs, int64_t axis) {
  return node(b, Op::Concat, xs, {{"axis", axis}});
}

ValueId slice_axis(ModelBuilder& b, ValueId x, int64_t axis, int64_t start, int64_t end) {
  Shape s = shape_of(b, x);
  std::vector<int64_t> starts(s.size(), 0), ends = s, steps(s.size(), 1);
  starts.at(axis) = start;
  ends.at(axis) = end;
  return node(b, Op::Slice, {x}, {{"starts", starts}, {"ends", ends}, {"steps", steps}});
}

ValueId layer_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps) {
  Shape s = shape_of(b, x);
  int64_t h = s.back();
  ValueId scale = uniform(b, name + ".weight", {h}, 0.8, 1.2);
  ValueId shift = uniform(b, name + ".bias", {h}, -0.1, 0.1);
  Attrs a = {{"axis", (int64_t)s.size() - 1}, {"epsilon", eps}};
  return node(b, Op::LayerNormalization, {x, scale, shift}, a, name);
}

ValueId rms_norm(ModelBuilder& b, const std::string& name, ValueId x, float eps) {
  Shape s = shape_of(b, x);
  int64_t last = (int64_t)s.size() - 1, h = s.back();
  ValueId sq = binary(b, Op::Pow, x, scalar(b, 2.f));
  ValueId var = node(b, Op::ReduceMean, {sq},
                     {{"axes", std::vector<int64_t>{last}}, {"keepdims", int64_t{1}}});
  ValueId rms = unary(b, Op::Sqrt, binary(b, Op::Add, var, scalar(b, eps)));
  ValueId normed = binary(b, Op::Div, x, rms);
  return binary(b, Op::Mul, uniform(b, name + ".weight", {h}, 0.8, 1.2), normed);
}

int64_t param(const ZooSpec& spec, const std::string& key) {
  auto it = spec.params.find(key);
  TLM_CHECK(it != spec.params.end()) << spec.name << " has no parameter " << key;
  return it->second;
}

}  // namespace tlm::zoo

// ONNX -> canonical converters for elementwise operators, reductions and Cast.
// Most are one-to-one; the work is elsewhere: Max/Min with n inputs become a chain of binary
// nodes, Clip's min/max inputs become float attributes, ReduceSum's axes input (opset 13) and
// ReduceMean's axes attribute become explicit sorted axes, Cast's ONNX type code becomes a DType.
#include <cmath>
#include <limits>

#include "frontend/onnx_node.h"
#include "frontend/tensor_proto.h"

namespace tlm {
namespace frontend {
namespace {

// One ONNX op = one canonical op with the same inputs and no attributes.
template <Op kOp>
void convert_plain(NodeContext& c) {
  std::vector<ValueId> ins;
  for (int i = 0; i < c.proto.input_size(); i++) ins.push_back(c.input(i));
  c.set_output(0, c.add(kOp, ins));
}

// Variadic Max/Min: a left-to-right chain of binary nodes; one input is an alias.
template <Op kOp>
void convert_variadic(NodeContext& c) {
  ValueId acc = c.input(0);
  for (int i = 1; i < c.proto.input_size(); i++) {
    bool last = i == c.proto.input_size() - 1;
    acc = c.add(kOp, {acc, c.input(i)}, {}, last ? "" : std::to_string(i));
  }
  c.set_output(0, acc);
}

// A constant scalar bound of Clip, or `unbounded` when the input is absent.
float clip_bound(NodeContext& c, int i, const char* what, float unbounded) {
  if (!c.has_input(i)) return unbounded;
  const Tensor& t = c.const_input(i, what);
  TLM_USER_CHECK(t.numel() == 1) << c.where() << what << " (input '" << c.proto.input(i)
                                 << "') must hold one value, not " << shape_str(t.shape());
  return (float)t.get_f(0);
}

void convert_clip(NodeContext& c) {
  ValueId x = c.input(0);
  const float inf = std::numeric_limits<float>::infinity();
  float lo = clip_bound(c, 1, "Clip min", -inf);
  float hi = clip_bound(c, 2, "Clip max", inf);
  c.set_output(0, c.add(Op::Clip, {x}, {{"min", lo}, {"max", hi}}));
}

void convert_hard_sigmoid(NodeContext& c) {
  c.set_output(
      0, c.add(Op::HardSigmoid, {c.input(0)},
               {{"alpha", c.attr_float("alpha", 0.2f)}, {"beta", c.attr_float("beta", 0.5f)}}));
}

void convert_leaky_relu(NodeContext& c) {
  c.set_output(0, c.add(Op::LeakyRelu, {c.input(0)}, {{"alpha", c.attr_float("alpha", 0.01f)}}));
}

void convert_cast(NodeContext& c) {
  int64_t to = c.attr_int_required("to");
  DType dt;
  bool in_range = to >= INT32_MIN && to <= INT32_MAX;
  if (!in_range || !dtype_from_onnx((int32_t)to, &dt))
    c.unsupported_attr("to", in_range ? onnx_dtype_name((int32_t)to) : std::to_string(to));
  c.set_output(0, c.add(Op::Cast, {c.input(0)}, {{"to", (int64_t)dt}}));
}

// ReduceMean/ReduceSum with explicit axes (absent or empty: all axes, unless
// noop_with_empty_axes makes it an identity).
void emit_reduce(NodeContext& c, Op op, const std::vector<int64_t>& axes_in, bool noop_if_empty) {
  ValueId x = c.input(0);
  const int64_t r = c.rank(x);
  int64_t keepdims = c.attr_flag("keepdims", 1);
  std::vector<int64_t> axes = c.axes(axes_in, r, "axes");
  if (axes.empty() && noop_if_empty) {
    c.set_output(0, x);
    return;
  }
  if (axes.empty())
    for (int64_t a = 0; a < r; a++) axes.push_back(a);
  if (axes.empty()) {  // a scalar: reducing over no axes is the identity
    c.set_output(0, x);
    return;
  }
  c.set_output(0, c.add(op, {x}, {{"axes", axes}, {"keepdims", keepdims}}));
}

void convert_reduce_mean(NodeContext& c) {
  // Opsets 11-17 spell ReduceMean's axes as an attribute (an input only from opset 18).
  emit_reduce(c, Op::ReduceMean, c.attr_ints("axes", {}), false);
}

void convert_reduce_sum(NodeContext& c) {
  if (c.opset < 13) {
    TLM_USER_CHECK(!c.has_input(1))
        << c.where() << "before opset 13 the axes are an attribute, not an input";
    emit_reduce(c, Op::ReduceSum, c.attr_ints("axes", {}), false);
    return;
  }
  std::vector<int64_t> axes;
  if (c.has_input(1)) axes = c.const_ints(1, "ReduceSum axes");
  emit_reduce(c, Op::ReduceSum, axes, c.attr_flag("noop_with_empty_axes", 0) != 0);
}

}  // namespace

const std::vector<OnnxOpRow>& math_op_rows() {
  // op_type, converter, min inputs, max inputs, max outputs, constant-input mask
  static const std::vector<OnnxOpRow> rows = {
      {"Add", convert_plain<Op::Add>, 2, 2, 1, 0},
      {"Sub", convert_plain<Op::Sub>, 2, 2, 1, 0},
      {"Mul", convert_plain<Op::Mul>, 2, 2, 1, 0},
      {"Div", convert_plain<Op::Div>, 2, 2, 1, 0},
      {"Pow", convert_plain<Op::Pow>, 2, 2, 1, 0},
      {"Max", convert_variadic<Op::Max>, 1, kVariadic, 1, 0},
      {"Min", convert_variadic<Op::Min>, 1, kVariadic, 1, 0},
      {"Equal", convert_plain<Op::Equal>, 2, 2, 1, 0},
      {"Less", convert_plain<Op::Less>, 2, 2, 1, 0},
      {"Greater", convert_plain<Op::Greater>, 2, 2, 1, 0},
      {"Where", convert_plain<Op::Where>, 3, 3, 1, 0},
      {"Sqrt", convert_plain<Op::Sqrt>, 1, 1, 1, 0},
      {"Erf", convert_plain<Op::Erf>, 1, 1, 1, 0},
      {"Exp", convert_plain<Op::Exp>, 1, 1, 1, 0},
      {"Log", convert_plain<Op::Log>, 1, 1, 1, 0},
      {"Tanh", convert_plain<Op::Tanh>, 1, 1, 1, 0},
      {"Sigmoid", convert_plain<Op::Sigmoid>, 1, 1, 1, 0},
      {"Relu", convert_plain<Op::Relu>, 1, 1, 1, 0},
      {"Neg", convert_plain<Op::Neg>, 1, 1, 1, 0},
      {"Abs", convert_plain<Op::Abs>, 1, 1, 1, 0},
      {"Reciprocal", convert_plain<Op::Reciprocal>, 1, 1, 1, 0},
      {"HardSwish", convert_plain<Op::HardSwish>, 1, 1, 1, 0},
      {"Clip", convert_clip, 1, 3, 1, 0b110},
      {"HardSigmoid", convert_hard_sigmoid, 1, 1, 1, 0},
      {"LeakyRelu", convert_leaky_relu, 1, 1, 1, 0},
      {"Cast", convert_cast, 1, 1, 1, 0},
      {"ReduceMean", convert_reduce_mean, 1, 1, 1, 0},
      {"ReduceSum", convert_reduce_sum, 1, 2, 1, 0b10},
  };
  return rows;
}

}  // namespace frontend
}  // namespace tlm

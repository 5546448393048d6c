// FLOP counting, one row per Op (static_assert on kOpCount). A multiply-add counts 2.
//   Conv            2 * |Y| * Cin/group * prod(k), plus |Y| for a bias input
//   ConvNchwc       2 * |Y| * Cg * kh * kw (W [Co/B, Cg, kh, kw, B] or [Co/B, Ci/B, kh, kw, B, B]),
//                   plus |Y| for a bias
//   ConvTranspose   2 * |X| * Cout/group * prod(k) (every input element scatters into a window),
//                   plus |Y| for a bias input
//   Gemm            2 * M * N * K, plus M * N for a C input (alpha/beta scaling not counted)
//   MatMul          2 * |Y| * K (batch dims and 1-D promotion included in |Y|)
//   MaxPool, AveragePool   |Y| * prod(kernel_shape);  GlobalAveragePool |X|
//   ReduceMean, ReduceSum  |X|
//   Softmax         5 per element: max, subtract, exp, sum, divide
//   LayerNorm       6 per element (mean, subtract, square+sum, normalize, scale), 7 with a bias
//   Elemwise        1 per output element, transcendental ones (Exp, Erf, Tanh, ...) included:
//                   we count operator applications, not instructions. BatchNormalization 2
//                   (scale and shift with precomputed coefficients).
//   Injective       0 (data movement only)
// Counts are doubles computed from value shapes, so hostile extents cannot overflow.
#include "partition/partition.h"

namespace tlm {
namespace {

double count(const Shape& s) {
  double p = 1;
  for (int64_t d : s) p *= (double)d;
  return p;
}

const Shape& in_shape(const Graph& g, const Node& n, size_t i) {
  static const Shape kNone;
  if (i >= n.inputs.size() || n.inputs[i] == kNoValue) return kNone;
  return g.value(n.inputs[i]).shape;
}
bool has_input(const Node& n, size_t i) { return i < n.inputs.size() && n.inputs[i] != kNoValue; }
double out_count(const Graph& g, const Node& n) { return count(g.value(n.outputs.at(0)).shape); }

// Elements of W per leading row: Cin/group * prod(k) for Conv, Cout/group * prod(k) for
// ConvTranspose (whose W is [Cin, Cout/group, k...]).
double per_row(const Shape& w) { return w.empty() || w[0] <= 0 ? 0 : count(w) / (double)w[0]; }

double conv(const Graph& g, const Node& n) {
  double y = out_count(g, n);
  return 2 * y * per_row(in_shape(g, n, 1)) + (has_input(n, 2) ? y : 0);
}

double conv_nchwc(const Graph& g, const Node& n) {
  const Shape& w = in_shape(g, n, 1);
  double y = out_count(g, n);
  if (w.size() != 5 && w.size() != 6) return 0;
  const double cg = (double)(w.size() == 6 ? w[1] * w[4] : w[1]);
  return 2 * y * cg * (double)(w[2] * w[3]) + (has_input(n, 2) ? y : 0);
}

double conv_transpose(const Graph& g, const Node& n) {
  double x = count(in_shape(g, n, 0));
  return 2 * x * per_row(in_shape(g, n, 1)) + (has_input(n, 2) ? out_count(g, n) : 0);
}

double gemm(const Graph& g, const Node& n) {
  const Shape& a = in_shape(g, n, 0);
  if (a.size() != 2) return 0;
  double k = (double)(n.i("transA", 0) ? a[0] : a[1]);
  double y = out_count(g, n);
  return 2 * y * k + (has_input(n, 2) ? y : 0);
}

double matmul(const Graph& g, const Node& n) {
  const Shape& a = in_shape(g, n, 0);
  return a.empty() ? 0 : 2 * out_count(g, n) * (double)a.back();
}

double window(const Graph& g, const Node& n) {
  double k = 1;
  if (n.has("kernel_shape"))
    for (int64_t d : n.ints("kernel_shape")) k *= (double)d;
  return out_count(g, n) * k;
}

double per_input(const Graph& g, const Node& n) { return count(in_shape(g, n, 0)); }
double softmax(const Graph& g, const Node& n) { return 5 * per_input(g, n); }
double layer_norm(const Graph& g, const Node& n) {
  return (has_input(n, 2) ? 7 : 6) * per_input(g, n);
}
double per_output(const Graph& g, const Node& n) { return out_count(g, n); }
double batch_norm(const Graph& g, const Node& n) { return 2 * out_count(g, n); }
double none(const Graph&, const Node&) { return 0; }

struct FlopsRow {
  Op op;
  double (*flops)(const Graph&, const Node&);
};

constexpr FlopsRow kFlopsRows[] = {
    {Op::Conv, conv},
    {Op::ConvTranspose, conv_transpose},
    {Op::ConvNchwc, conv_nchwc},
    {Op::Gemm, gemm},
    {Op::MatMul, matmul},
    {Op::MaxPool, window},
    {Op::AveragePool, window},
    {Op::GlobalAveragePool, per_input},
    {Op::ReduceMean, per_input},
    {Op::ReduceSum, per_input},
    {Op::Softmax, softmax},
    {Op::LayerNormalization, layer_norm},
    {Op::Add, per_output},
    {Op::Sub, per_output},
    {Op::Mul, per_output},
    {Op::Div, per_output},
    {Op::Pow, per_output},
    {Op::Max, per_output},
    {Op::Min, per_output},
    {Op::Equal, per_output},
    {Op::Less, per_output},
    {Op::Greater, per_output},
    {Op::Where, per_output},
    {Op::Sqrt, per_output},
    {Op::Erf, per_output},
    {Op::Exp, per_output},
    {Op::Log, per_output},
    {Op::Tanh, per_output},
    {Op::Sigmoid, per_output},
    {Op::Relu, per_output},
    {Op::Neg, per_output},
    {Op::Abs, per_output},
    {Op::Reciprocal, per_output},
    {Op::Clip, per_output},
    {Op::HardSigmoid, per_output},
    {Op::HardSwish, per_output},
    {Op::LeakyRelu, per_output},
    {Op::Cast, per_output},
    {Op::BatchNormalization, batch_norm},
    {Op::Reshape, none},
    {Op::Flatten, none},
    {Op::Transpose, none},
    {Op::Squeeze, none},
    {Op::Unsqueeze, none},
    {Op::Concat, none},
    {Op::Slice, none},
    {Op::Gather, none},
    {Op::Expand, none},
};
static_assert(sizeof(kFlopsRows) / sizeof(kFlopsRows[0]) == kOpCount, "one row per op");

constexpr bool rows_in_op_order() {
  for (int i = 0; i < kOpCount; i++)
    if (kFlopsRows[i].op != (Op)i) return false;
  return true;
}
static_assert(rows_in_op_order(), "kFlopsRows must follow TLM_OP_LIST order");

}  // namespace

double node_flops(const Graph& g, const Node& n) {
  TLM_CHECK((int)n.op < kOpCount) << "bad op " << (int)n.op;
  return kFlopsRows[(int)n.op].flops(g, n);
}

}  // namespace tlm

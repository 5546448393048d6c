// Graph-to-graph passes (graph/passes.h), each a free function; prepare_graph() is the straight
// list of them that every model goes through before partitioning.
//
//  fold_batchnorm   Conv/ConvTranspose -> BatchNormalization (constant weights, the conv output
//                   read only by that BN): new constant W' = W * s, B' = (B - mean) * s + beta
//                   with s = scale / sqrt(var + eps); the conv then writes the BN's output.
//                   Other BNs with constant parameters become Mul + Add by [1, C, 1, ...]
//                   constants (one fused elementwise epilogue instead of five inputs).
//  fold_constants   evaluates nodes whose inputs are all constant (after edits).
//  canonicalize_operands  Add(W, x) / Mul(W, x) -> Add(x, W) / Mul(x, W) for a weight W.
//  fold_zero_padding  Conv / AveragePool reading Concat(zeros, x, zeros) along spatial axes (an
//                   imported Pad, frontend/onnx_ops_shape.cc) -> the same op reading x with the
//                   border added to its pads (an AveragePool then counts it: count_include_pad).
//  flatten_matmul_rows  MatMul(x [..., H, W, K], W [K, N]) with two or more non-unit row dims,
//                   W <= 28 (ConvNeXt's MLP over 7 x 7 to 28 x 28 tokens) -> Reshape x [1, H*W, K],
//                   the MatMul and its bias-like epilogue on [1, H*W, N], Reshape back.
//  prepare_graph    the five, then remove_dead, then checks outputs and zero-size dims.
#include "graph/passes.h"

#include <cmath>
#include <utility>

#include "graph/interp_common.h"
#include "graph/interpreter.h"
#include "graph/shape_infer.h"

namespace tlm {
namespace {

bool all_constant(const Graph& g, const Node& n, size_t first, size_t last) {
  for (size_t k = first; k < last && k < n.inputs.size(); k++)
    if (n.inputs[k] == kNoValue || !g.value(n.inputs[k]).is_constant()) return false;
  return true;
}

// Per-channel s = scale / sqrt(var + eps) and t = beta - mean * s of a BN with constant params.
void bn_coefficients(const Graph& g, const Node& bn, std::vector<float>* s, std::vector<float>* t) {
  const float eps = bn.f("epsilon");
  const float* scale = g.value(bn.inputs[1]).data->data<float>();
  const float* beta = g.value(bn.inputs[2]).data->data<float>();
  const float* mean = g.value(bn.inputs[3]).data->data<float>();
  const float* var = g.value(bn.inputs[4]).data->data<float>();
  const int64_t C = g.value(bn.inputs[1]).shape[0];
  s->resize(C);
  t->resize(C);
  for (int64_t c = 0; c < C; c++) {
    (*s)[c] = (float)(scale[c] / std::sqrt((double)var[c] + eps));
    (*t)[c] = beta[c] - mean[c] * (*s)[c];
  }
}

// Rewrites conv (Conv or ConvTranspose, constant W and B) so that it computes bn(conv(x)).
void fold_into_conv(Graph& g, Node& conv, const Node& bn) {
  std::vector<float> s, t;
  bn_coefficients(g, bn, &s, &t);
  const Tensor& w = *g.value(conv.inputs[1]).data;
  const Shape& ws = w.shape();
  const int64_t cout = (int64_t)s.size();
  Tensor nw = w;
  float* pw = nw.data<float>();
  const int64_t k = numel(Shape(ws.begin() + 2, ws.end()));
  if (conv.op == Op::Conv) {  // W [Cout, Cin/g, k...]: output channel = dim 0
    for (int64_t oc = 0; oc < ws[0]; oc++)
      for (int64_t i = 0; i < ws[1] * k; i++) pw[oc * ws[1] * k + i] *= s[oc];
  } else {  // W [Cin, Cout/g, k...]: output channel = group * Cout/g + dim 1
    const int64_t group = conv.i("group"), cin_g = ws[0] / group;
    for (int64_t ci = 0; ci < ws[0]; ci++)
      for (int64_t j = 0; j < ws[1]; j++)
        for (int64_t i = 0; i < k; i++) pw[(ci * ws[1] + j) * k + i] *= s[(ci / cin_g) * ws[1] + j];
  }
  Tensor nb(DType::F32, {cout});
  const bool has_bias = conv.inputs.size() > 2 && conv.inputs[2] != kNoValue;
  for (int64_t oc = 0; oc < cout; oc++) {
    const float b = has_bias ? g.value(conv.inputs[2]).data->data<float>()[oc] : 0.f;
    nb.data<float>()[oc] = b * s[oc] + t[oc];
  }
  const ValueId nw_id = g.add_constant(g.unique_name(conv.name + "_W_bn"), std::move(nw));
  const ValueId nb_id = g.add_constant(g.unique_name(conv.name + "_B_bn"), std::move(nb));
  conv.inputs = {conv.inputs[0], nw_id, nb_id};
  conv.outputs = bn.outputs;  // downstream readers of the BN output now read the conv
}

// A new node of op over `inputs` writing a new value (its shape inferred); its output id.
ValueId new_node(Graph& g, Op op, std::vector<ValueId> inputs, Attrs attrs, const std::string& name,
                 std::vector<Node>* out) {
  Value v;
  v.name = name + ":0";
  g.values.push_back(v);
  Node n{op, name, std::move(inputs), {(ValueId)g.values.size() - 1}, std::move(attrs)};
  infer_node_shapes(g, n);
  out->push_back(std::move(n));
  return out->back().outputs[0];
}

// Mul + Add nodes computing bn(x) with constants shaped [1, C, 1, ...] (rank of x).
std::vector<Node> bn_as_mul_add(Graph& g, const Node& bn) {
  std::vector<float> s, t;
  bn_coefficients(g, bn, &s, &t);
  const Value x = g.value(bn.inputs[0]);
  Shape cs(x.shape.size(), 1);
  cs[1] = (int64_t)s.size();
  const ValueId sv = g.add_constant(g.unique_name(bn.name + "_scale"), Tensor::from(cs, s));
  const ValueId tv = g.add_constant(g.unique_name(bn.name + "_shift"), Tensor::from(cs, t));
  std::vector<Node> nodes;
  const ValueId mid = new_node(g, Op::Mul, {bn.inputs[0], sv}, {}, bn.name + "_mul", &nodes);
  Node add{Op::Add, bn.name + "_add", {mid, tv}, bn.outputs, {}};
  infer_node_shapes(g, add);
  nodes.push_back(std::move(add));
  return nodes;
}

}  // namespace

void fold_batchnorm(Graph& g) {
  std::vector<std::vector<int>> cons = g.consumers();
  const std::vector<int> producer = g.producers();
  std::vector<bool> is_output(g.values.size(), false);
  for (ValueId o : g.outputs) is_output[o] = true;

  std::vector<Node> out;
  std::vector<int> new_index(g.nodes.size(), -1);  // old node index -> index in `out`
  for (size_t i = 0; i < g.nodes.size(); i++) {
    Node& n = g.nodes[i];
    if (n.op != Op::BatchNormalization || !all_constant(g, n, 1, 5)) {
      new_index[i] = (int)out.size();
      out.push_back(std::move(n));
      continue;
    }
    const ValueId x = n.inputs[0];
    const int p = producer[x];
    if (p >= 0 && new_index[p] >= 0) {
      Node& conv = out[new_index[p]];
      const bool conv_like = conv.op == Op::Conv || conv.op == Op::ConvTranspose;
      if (conv_like && cons[x].size() == 1 && !is_output[x] && all_constant(g, conv, 1, 2) &&
          (conv.inputs.size() < 3 || conv.inputs[2] == kNoValue ||
           g.value(conv.inputs[2]).is_constant())) {
        fold_into_conv(g, conv, n);
        continue;  // the BN node disappears; the old conv output value is now dead
      }
    }
    for (Node& m : bn_as_mul_add(g, n)) out.push_back(std::move(m));
  }
  g.nodes = std::move(out);
}

void fold_constants(Graph& g) {
  std::vector<Node> kept;
  for (Node& n : g.nodes) {
    bool all_const = true;
    for (ValueId in : n.inputs)
      if (in != kNoValue && !g.value(in).is_constant()) all_const = false;
    if (!all_const) {
      kept.push_back(std::move(n));
      continue;
    }
    std::vector<const Tensor*> args;
    for (ValueId in : n.inputs) args.push_back(in == kNoValue ? nullptr : g.value(in).data.get());
    std::vector<Tensor> res = evaluate_node(g, n, args);
    g.value(n.outputs[0]).data = std::make_shared<const Tensor>(std::move(res[0]));
  }
  g.nodes = std::move(kept);
}

bool canonicalize_operands(Graph& g) {
  auto is_weight = [&](ValueId v) {
    return v != kNoValue && g.value(v).is_constant() && g.value(v).data->numel() > 1;
  };
  bool swapped = false;
  for (Node& n : g.nodes) {
    if ((n.op != Op::Add && n.op != Op::Mul) || n.inputs.size() != 2) continue;
    const ValueId a = n.inputs[0], b = n.inputs[1];
    if (is_weight(a) && b != kNoValue && !g.value(b).is_constant()) {
      std::swap(n.inputs[0], n.inputs[1]);
      swapped = true;
    }
  }
  return swapped;
}

namespace {

bool all_zero_f32(const Value& v) {
  if (!v.is_constant() || v.dtype != DType::F32) return false;
  const float* p = v.data->data<float>();
  for (int64_t i = 0, n = v.data->numel(); i < n; i++)
    if (p[i] != 0.f) return false;
  return true;
}

}  // namespace

int fold_zero_padding(Graph& g) {
  const std::vector<int> producer = g.producers();
  int folded = 0;
  for (Node& n : g.nodes) {
    if ((n.op != Op::Conv && n.op != Op::AveragePool) || n.inputs.empty()) continue;
    const int64_t rank = (int64_t)g.value(n.inputs[0]).shape.size(), k = rank - 2;
    if (k < 1) continue;
    std::vector<int64_t> pads = n.ints("pads", std::vector<int64_t>(2 * k, 0));
    if ((int64_t)pads.size() != 2 * k) continue;
    if (n.op == Op::AveragePool) {
      // Zeros the pool counts (count_include_pad = 1) are what the Pad put there; pads the pool
      // already excludes, or windows that ceil_mode lets run past the border, would change.
      bool had_pads = false;
      for (int64_t p : pads) had_pads = had_pads || p != 0;
      if (n.i("ceil_mode", 0) != 0 || (had_pads && n.i("count_include_pad", 0) == 0)) continue;
    }
    ValueId x = n.inputs[0];
    std::vector<int64_t> added(2 * k, 0);
    while (x >= 0 && producer[x] >= 0) {
      const Node& c = g.nodes[producer[x]];
      if (c.op != Op::Concat) break;
      const int64_t axis = c.i("axis", 0);
      if (axis < 2 || axis >= rank) break;
      int data = -1;
      for (size_t j = 0; j < c.inputs.size(); j++) {
        if (all_zero_f32(g.value(c.inputs[j]))) continue;
        if (data >= 0) {
          data = -2;  // two computed inputs: not a border
          break;
        }
        data = (int)j;
      }
      if (data < 0) break;
      for (size_t j = 0; j < c.inputs.size(); j++)
        if ((int)j != data)
          added[(j < (size_t)data ? 0 : k) + axis - 2] += g.value(c.inputs[j]).shape[axis];
      x = c.inputs[data];
    }
    if (x == n.inputs[0]) continue;
    for (int64_t i = 0; i < 2 * k; i++) pads[i] += added[i];
    n.inputs[0] = x;
    n.attrs["pads"] = pads;
    if (n.op == Op::AveragePool) n.attrs["count_include_pad"] = (int64_t)1;
    folded++;
  }
  return folded;
}

namespace {

// The widest innermost row dim flatten_matmul_rows flattens (the one a register block of rows
// walks). ConvNeXt-T's MLP layers on Intel (BENCHMARKS.md, session 72), measured alone with the
// flattening Reshape a view of its own (partition/fuse.cc, merging_view): at 7 the flattened
// rows ran 1.5-1.6x faster, at 14 1.3x, at 28 as fast to 1.1x faster, and the shipped ranker's
// choice within 2-12% of the best (BERT's [1, 128, K] form, which its records have); at 56 the
// 4-D form's best was 1.03x faster. (Read through the Reshape inside the dense's task, a div and
// mod of every row index, the flattened forms lost from 28 up and the ranker misjudged 14.)
constexpr int64_t kFlatRowWidth = 28;

// Whether c, an elementwise node reading `cur`, applies per output column only: every other
// input a constant of at most one dim (a bias, a scale, a scalar).
bool columnwise(const Graph& g, const Node& c, ValueId cur) {
  if (op_pattern(c.op) != OpPattern::Elemwise || c.outputs.size() != 1) return false;
  bool reads = false;
  for (ValueId in : c.inputs) {
    if (in == cur) {
      reads = true;
    } else if (in != kNoValue && !(g.value(in).is_constant() && g.value(in).shape.size() <= 1)) {
      return false;
    }
  }
  return reads;
}

}  // namespace

int flatten_matmul_rows(Graph& g) {
  const std::vector<std::vector<int>> cons = g.consumers();
  std::vector<bool> is_output(g.values.size(), false);
  for (ValueId o : g.outputs) is_output[o] = true;
  std::vector<bool> moved(g.nodes.size(), false);
  std::vector<Node> out;
  int rewritten = 0;
  for (size_t i = 0; i < g.nodes.size(); i++) {
    if (moved[i]) continue;
    Node& n = g.nodes[i];  // moved into `out` (chains read only later nodes)
    const bool candidate =
        n.op == Op::MatMul && n.inputs.size() == 2 && !g.value(n.inputs[0]).is_constant() &&
        g.value(n.inputs[1]).is_constant() && g.value(n.inputs[1]).shape.size() == 2;
    const Shape xs = candidate ? g.value(n.inputs[0]).shape : Shape{};
    int rows = 0;
    int64_t m = 1;
    for (size_t d = 0; d + 1 < xs.size(); d++) {
      rows += xs[d] > 1;
      m *= xs[d];
    }
    if (rows < 2 || xs[xs.size() - 2] > kFlatRowWidth) {
      out.push_back(std::move(n));
      continue;
    }
    const int64_t k = xs.back();
    ValueId x2 = new_node(g, Op::Reshape, {n.inputs[0]}, {{"shape", Shape{1, m, k}}},
                          g.unique_name(n.name + "/rows"), &out);
    ValueId cur = n.outputs[0];
    ValueId cur2 = new_node(g, Op::MatMul, {x2, n.inputs[1]}, n.attrs, n.name, &out);
    // The epilogue that applies per column moves onto the flattened rows with it.
    while (!is_output[cur] && cons[cur].size() == 1 && !moved[cons[cur][0]] &&
           columnwise(g, g.nodes[cons[cur][0]], cur)) {
      const int c = cons[cur][0];
      moved[c] = true;
      const Node& e = g.nodes[c];
      std::vector<ValueId> ins = e.inputs;
      for (ValueId& in : ins)
        if (in == cur) in = cur2;
      cur2 = new_node(g, e.op, ins, e.attrs, e.name, &out);
      cur = e.outputs[0];
    }
    // Back to the original shape, into the value the consumers read.
    Node back{Op::Reshape,
              g.unique_name(n.name + "/unrows"),
              {cur2},
              {cur},
              {{"shape", g.value(cur).shape}}};
    out.push_back(std::move(back));
    rewritten++;
  }
  g.nodes = std::move(out);
  return rewritten;
}

void prepare_graph(Graph& g) {
  fold_batchnorm(g);
  fold_constants(g);
  canonicalize_operands(g);
  fold_zero_padding(g);
  flatten_matmul_rows(g);
  g.remove_dead();
  std::vector<bool> produced(g.values.size(), false);
  for (const Node& n : g.nodes)
    for (ValueId o : n.outputs) produced[o] = true;
  for (ValueId in : g.inputs) produced[in] = true;
  if (g.outputs.empty()) TLM_USER_ERROR() << "graph '" << g.name << "' has no outputs";
  for (ValueId o : g.outputs)
    if (!produced[o])
      TLM_USER_ERROR() << "graph output '" << g.value(o).name
                       << (g.value(o).is_constant()
                               ? "' is a constant: it does not depend on any graph input"
                               : "' is not computed by any node");
  for (const Value& v : g.values)
    for (int64_t d : v.shape)
      if (d == 0)
        TLM_USER_ERROR() << "value '" << v.name << "' has a zero-size dimension "
                         << shape_str(v.shape) << "; empty tensors are not supported";
}

}  // namespace tlm

// Transformers, written the way HuggingFace's modeling code exports through torch.onnx (opset 17):
//   bert-*       BertModel: Gather embeddings (token type and positions fold to constants), post-LN
//                layers with LayerNormalization, attention as MatMul/Softmax with Reshape/
//                Transpose head splits and a constant additive padding mask, GELU via Erf.
//                Output: last hidden state [batch,seq,hidden].
//   gpt2         GPT2LMHeadModel: learned positions, pre-LN blocks, Conv1D projections (Reshape
//                -> Gemm -> Reshape), fused QKV split by Slices, causal mask via Where with a
//                constant mask, gelu_new (tanh), LM head tied to the token embedding.
//                Output: logits [batch,seq,vocab].
//   llama_layer  LlamaDecoderLayer(s): RMSNorm, rotary embedding with constant cos/sin tables
//                (Slice/Neg/Concat), causal attention, SwiGLU MLP. Input: hidden states.
// Knobs: batch, seq, layers, hidden, heads, ff (MLP width), vocab (not llama_layer).
#include <cmath>
#include <limits>

#include "zoo/families.h"

namespace tlm::zoo {
namespace {

struct Dims {
  int64_t batch, seq, layers, hidden, heads, ff;
  int64_t head_dim() const { return hidden / heads; }
};

Dims read_dims(const ZooSpec& spec) {
  Dims d{param(spec, "batch"),  param(spec, "seq"),   param(spec, "layers"),
         param(spec, "hidden"), param(spec, "heads"), param(spec, "ff")};
  if (d.hidden % d.heads != 0)
    TLM_USER_ERROR() << spec.name << ": heads=" << d.heads << " must divide hidden=" << d.hidden;
  return d;
}

// [b,s,H] -> [b,heads,s,dh] (`perm` {0,2,1,3}), or straight to K^T [b,heads,dh,s] ({0,2,3,1}:
// torch fuses transpose_for_scores' permute with the following transpose(-1,-2)).
ValueId split_heads(ModelBuilder& b, const Dims& d, ValueId x, std::vector<int64_t> perm) {
  ValueId r = reshape(b, x, {d.batch, d.seq, d.heads, d.head_dim()});  // [b,s,nh,dh]
  return transpose(b, r, perm);
}

// [b,heads,s,dh] -> [b,s,H]
ValueId merge_heads(ModelBuilder& b, const Dims& d, ValueId x) {
  ValueId t = transpose(b, x, {0, 2, 1, 3});  // [b,s,nh,dh]
  return reshape(b, t, {d.batch, d.seq, d.hidden});
}

// The lower-triangular causal mask [1,1,s,s] (true where key <= query).
ValueId causal_mask(ModelBuilder& b, int64_t seq) {
  Tensor m(DType::Bool, {1, 1, seq, seq});
  for (int64_t q = 0; q < seq; q++)
    for (int64_t k = 0; k <= q; k++) m.raw()[q * seq + k] = 1;
  return constant(b, "causal_mask", std::move(m));
}

// softmax(q k^T / sqrt(dh) [+ mask]) v with q,v [b,nh,s,dh] and kt [b,nh,dh,s].
// `additive` is added to the scores; `causal` selects them with Where (or kNoValue for none).
ValueId attention_core(ModelBuilder& b, const Dims& d, ValueId q, ValueId kt, ValueId v,
                       ValueId additive, ValueId causal) {
  ValueId s = binary(b, Op::MatMul, q, kt);  // [b,nh,s,s]
  s = binary(b, Op::Div, s, scalar(b, (float)std::sqrt((double)d.head_dim())));
  if (additive != kNoValue) s = binary(b, Op::Add, s, additive);
  if (causal != kNoValue)
    s = node(b, Op::Where, {causal, s, scalar(b, std::numeric_limits<float>::lowest())});
  ValueId p = node(b, Op::Softmax, {s}, {{"axis", int64_t{3}}});
  return binary(b, Op::MatMul, p, v);  // [b,nh,s,dh]
}

// A learned table [rows, hidden] looked up at constant positions [1,seq]: folds to [1,seq,H].
ValueId position_table(ModelBuilder& b, const std::string& name, int64_t rows, const Dims& d) {
  std::vector<int64_t> ids(d.seq);
  for (int64_t i = 0; i < d.seq; i++) ids[i] = i;
  ValueId table = weight(b, name, {rows, d.hidden}, 1.0);
  ValueId pos = constant(b, name + ".ids", Tensor::from<int64_t>({1, d.seq}, ids));
  return node(b, Op::Gather, {table, pos}, {{"axis", int64_t{0}}});
}

}  // namespace

// ---------------------------------------------------------------- bert (modeling_bert.py)

void build_bert(ModelBuilder& b, const ZooSpec& spec) {
  Dims d = read_dims(spec);
  int64_t vocab = param(spec, "vocab");
  ValueId ids = b.g.add_input("input_ids", DType::I64, {d.batch, d.seq});

  ValueId words = weight(b, "embeddings.word", {vocab, d.hidden}, 1.0);
  ValueId x = node(b, Op::Gather, {words, ids}, {{"axis", int64_t{0}}});  // [b,s,H]
  ValueId types = weight(b, "embeddings.token_type", {2, d.hidden}, 1.0);
  // All-zero token types; [1,seq] rather than [batch,seq] so the folded lookup stays small.
  ValueId type_ids = constant(b, "token_type_ids", Tensor(DType::I64, {1, d.seq}));
  x = binary(b, Op::Add, x, node(b, Op::Gather, {types, type_ids}, {{"axis", int64_t{0}}}));
  x = binary(b, Op::Add, x, position_table(b, "embeddings.position", 512, d));
  x = layer_norm(b, "embeddings.ln", x, 1e-12f);

  // get_extended_attention_mask of an all-ones mask: (1 - 1) * min = zeros [b,1,1,s].
  ValueId mask = constant(b, "attention_mask", Tensor(DType::F32, {d.batch, 1, 1, d.seq}));
  for (int64_t l = 0; l < d.layers; l++) {
    std::string name = "layer" + std::to_string(l);
    ValueId q = linear(b, name + ".query", x, d.hidden);
    ValueId kt = split_heads(b, d, linear(b, name + ".key", x, d.hidden), {0, 2, 3, 1});
    ValueId v = split_heads(b, d, linear(b, name + ".value", x, d.hidden), {0, 2, 1, 3});
    q = split_heads(b, d, q, {0, 2, 1, 3});
    ValueId ctx = merge_heads(b, d, attention_core(b, d, q, kt, v, mask, kNoValue));
    ValueId a = binary(b, Op::Add, linear(b, name + ".attn_out", ctx, d.hidden), x);
    x = layer_norm(b, name + ".attn_ln", a, 1e-12f);
    ValueId h = gelu_erf(b, linear(b, name + ".intermediate", x, d.ff));
    ValueId o = binary(b, Op::Add, linear(b, name + ".output", h, d.hidden), x);
    x = layer_norm(b, name + ".output_ln", o, 1e-12f);
  }
  b.g.mark_output(x);
}

// ---------------------------------------------------------------- gpt2 (modeling_gpt2.py)

namespace {

// HF's Conv1D: addmm(bias, x.view(-1, in), W [in,out]).view(b, s, out).
ValueId conv1d(ModelBuilder& b, const std::string& name, const Dims& d, ValueId x, int64_t out) {
  int64_t in = shape_of(b, x).back();
  double bound = 1.0 / std::sqrt((double)in);
  ValueId flat = reshape(b, x, {d.batch * d.seq, in});
  ValueId w = weight(b, name + ".weight", {in, out}, bound);
  ValueId bias = weight(b, name + ".bias", {out}, bound);
  Attrs a = {{"alpha", 1.f}, {"beta", 1.f}, {"transA", int64_t{0}}, {"transB", int64_t{0}}};
  ValueId y = node(b, Op::Gemm, {flat, w, bias}, a, name);
  return reshape(b, y, {d.batch, d.seq, out});
}

}  // namespace

void build_gpt2(ModelBuilder& b, const ZooSpec& spec) {
  Dims d = read_dims(spec);
  int64_t vocab = param(spec, "vocab");
  ValueId ids = b.g.add_input("input_ids", DType::I64, {d.batch, d.seq});

  ValueId wte = weight(b, "wte", {vocab, d.hidden}, 1.0);
  ValueId x = node(b, Op::Gather, {wte, ids}, {{"axis", int64_t{0}}});  // [b,s,H]
  x = binary(b, Op::Add, x, position_table(b, "wpe", 1024, d));
  ValueId causal = causal_mask(b, d.seq);

  for (int64_t l = 0; l < d.layers; l++) {
    std::string name = "h" + std::to_string(l);
    ValueId h = layer_norm(b, name + ".ln_1", x, 1e-5f);
    ValueId qkv = conv1d(b, name + ".c_attn", d, h, 3 * d.hidden);  // [b,s,3H]
    ValueId q = slice_axis(b, qkv, 2, 0, d.hidden);
    ValueId k = slice_axis(b, qkv, 2, d.hidden, 2 * d.hidden);
    ValueId v = slice_axis(b, qkv, 2, 2 * d.hidden, 3 * d.hidden);
    q = split_heads(b, d, q, {0, 2, 1, 3});
    ValueId kt = split_heads(b, d, k, {0, 2, 3, 1});
    v = split_heads(b, d, v, {0, 2, 1, 3});
    ValueId ctx = merge_heads(b, d, attention_core(b, d, q, kt, v, kNoValue, causal));
    x = binary(b, Op::Add, conv1d(b, name + ".attn.c_proj", d, ctx, d.hidden), x);
    h = layer_norm(b, name + ".ln_2", x, 1e-5f);
    h = gelu_tanh(b, conv1d(b, name + ".mlp.c_fc", d, h, d.ff));
    x = binary(b, Op::Add, x, conv1d(b, name + ".mlp.c_proj", d, h, d.hidden));
  }
  x = layer_norm(b, "ln_f", x, 1e-5f);
  // lm_head shares wte; torch folds its transpose into a [H, vocab] constant.
  ValueId head = transpose(b, wte, {1, 0});
  b.g.mark_output(binary(b, Op::MatMul, x, head));  // [b,s,vocab]
}

// ---------------------------------------------------------------- llama (modeling_llama.py)

namespace {

// cos/sin tables [1,1,s,dh] of the rotary embedding (base 10000; freqs repeated twice).
std::pair<ValueId, ValueId> rotary_tables(ModelBuilder& b, const Dims& d) {
  int64_t dh = d.head_dim();
  Tensor c(DType::F32, {1, 1, d.seq, dh}), s(DType::F32, {1, 1, d.seq, dh});
  for (int64_t p = 0; p < d.seq; p++)
    for (int64_t i = 0; i < dh; i++) {
      double inv_freq = std::pow(10000.0, -(double)(2 * (i % (dh / 2))) / (double)dh);
      c.data<float>()[p * dh + i] = (float)std::cos(p * inv_freq);
      s.data<float>()[p * dh + i] = (float)std::sin(p * inv_freq);
    }
  return {constant(b, "rotary.cos", std::move(c)), constant(b, "rotary.sin", std::move(s))};
}

// x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[..., dh/2:], x[..., :dh/2]).
ValueId apply_rotary(ModelBuilder& b, const Dims& d, ValueId x, ValueId cos, ValueId sin) {
  int64_t dh = d.head_dim();
  ValueId x1 = slice_axis(b, x, 3, 0, dh / 2);
  ValueId x2 = slice_axis(b, x, 3, dh / 2, dh);
  ValueId rotated = concat(b, {unary(b, Op::Neg, x2), x1}, 3);
  return binary(b, Op::Add, binary(b, Op::Mul, x, cos), binary(b, Op::Mul, rotated, sin));
}

}  // namespace

void build_llama_layer(ModelBuilder& b, const ZooSpec& spec) {
  Dims d = read_dims(spec);
  if (d.head_dim() % 2 != 0)
    TLM_USER_ERROR() << "llama_layer: hidden/heads = " << d.head_dim()
                     << " must be even for the rotary embedding";
  ValueId x = b.g.add_input("input", DType::F32, {d.batch, d.seq, d.hidden});
  auto [cos, sin] = rotary_tables(b, d);
  ValueId causal = causal_mask(b, d.seq);
  for (int64_t l = 0; l < d.layers; l++) {
    std::string name = "layers" + std::to_string(l);
    ValueId h = rms_norm(b, name + ".input_layernorm", x, 1e-6f);
    ValueId q = split_heads(b, d, linear(b, name + ".q_proj", h, d.hidden, false), {0, 2, 1, 3});
    ValueId k = split_heads(b, d, linear(b, name + ".k_proj", h, d.hidden, false), {0, 2, 1, 3});
    ValueId v = split_heads(b, d, linear(b, name + ".v_proj", h, d.hidden, false), {0, 2, 1, 3});
    q = apply_rotary(b, d, q, cos, sin);
    ValueId kt = transpose(b, apply_rotary(b, d, k, cos, sin), {0, 1, 3, 2});  // [b,nh,dh,s]
    ValueId ctx = merge_heads(b, d, attention_core(b, d, q, kt, v, kNoValue, causal));
    x = binary(b, Op::Add, x, linear(b, name + ".o_proj", ctx, d.hidden, false));
    h = rms_norm(b, name + ".post_attention_layernorm", x, 1e-6f);
    ValueId gate = silu(b, linear(b, name + ".gate_proj", h, d.ff, false));
    ValueId up = linear(b, name + ".up_proj", h, d.ff, false);
    ValueId down = linear(b, name + ".down_proj", binary(b, Op::Mul, gate, up), d.hidden, false);
    x = binary(b, Op::Add, x, down);
  }
  b.g.mark_output(x);
}

}  // namespace tlm::zoo

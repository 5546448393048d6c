// The GPT modules (nanoGPT's model.py in libtorch's C++ API). Shapes: B batch, T new positions,
// L cached positions, C n_embd, nh heads of hs = C / nh, V vocabulary.
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>

#include "model/gpt_impl.h"
#include "support/error.h"

namespace tlm {

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

LinearImpl::LinearImpl(int in, int out, bool has_bias) {
  weight = register_parameter("weight", torch::zeros({out, in}));  // set by init_weights or load
  if (has_bias) bias = register_parameter("bias", torch::zeros({out}));
}

EmbeddingImpl::EmbeddingImpl(int n, int dim) {
  weight = register_parameter("weight", torch::zeros({n, dim}));
}

LayerNormImpl::LayerNormImpl(int n_embd, bool has_bias) {
  weight = register_parameter("weight", torch::ones({n_embd}));
  if (has_bias) bias = register_parameter("bias", torch::zeros({n_embd}));
}

torch::Tensor LayerNormImpl::forward(const torch::Tensor& x) {
  return torch::layer_norm(x, {weight.size(0)}, weight, bias, 1e-5);
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GPTConfig& c)
    : n_head(c.n_head), n_embd(c.n_embd), block_size(c.block_size), dropout(c.dropout) {
  c_attn = register_module("c_attn", Linear(c.n_embd, 3 * c.n_embd, c.bias));
  c_proj = register_module("c_proj", Linear(c.n_embd, c.n_embd, c.bias));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x, torch::Tensor* k_cache,
                                               torch::Tensor* v_cache, int64_t L) {
  const int64_t B = x.size(0), T = x.size(1), C = n_embd, hs = C / n_head;
  std::vector<torch::Tensor> qkv = c_attn(x).split(C, 2);             // 3 x [B, T, C]
  torch::Tensor q = qkv[0].view({B, T, n_head, hs}).transpose(1, 2);  // [B, nh, T, hs]
  torch::Tensor k = qkv[1].view({B, T, n_head, hs}).transpose(1, 2);  // [B, nh, T, hs]
  torch::Tensor v = qkv[2].view({B, T, n_head, hs}).transpose(1, 2);  // [B, nh, T, hs]
  if (k_cache) {
    if (!k_cache->defined()) {
      *k_cache = torch::empty({B, n_head, block_size, hs});  // [B, nh, block_size, hs]
      *v_cache = torch::empty({B, n_head, block_size, hs});
    }
    k_cache->narrow(2, L, T).copy_(k);
    v_cache->narrow(2, L, T).copy_(v);
    k = k_cache->narrow(2, 0, L + T);  // [B, nh, L + T, hs]
    v = v_cache->narrow(2, 0, L + T);  // [B, nh, L + T, hs]
  }
  // New position i (absolute L + i) sees keys 0 .. L + i: mask the strict upper part past L.
  torch::Tensor future = torch::ones({T, L + T}, torch::kBool).triu(L + 1);  // [T, L + T]
  torch::Tensor att = torch::matmul(q, k.transpose(-2, -1)) * (1.0 / std::sqrt(double(hs)));
  att = att.masked_fill(future, -INFINITY).softmax(-1);  // [B, nh, T, L + T]
  att = torch::dropout(att, dropout, is_training());
  torch::Tensor y = torch::matmul(att, v);             // [B, nh, T, hs]
  y = y.transpose(1, 2).contiguous().view({B, T, C});  // [B, T, C]: heads side by side
  return torch::dropout(c_proj(y), dropout, is_training());
}

MLPImpl::MLPImpl(const GPTConfig& c) : dropout(c.dropout) {
  c_fc = register_module("c_fc", Linear(c.n_embd, 4 * c.n_embd, c.bias));
  c_proj = register_module("c_proj", Linear(4 * c.n_embd, c.n_embd, c.bias));
}

torch::Tensor MLPImpl::forward(const torch::Tensor& x) {
  // exact (erf) GELU, like nn.GELU()
  return torch::dropout(c_proj(torch::gelu(c_fc(x))), dropout, is_training());
}

BlockImpl::BlockImpl(const GPTConfig& c) {
  ln_1 = register_module("ln_1", LayerNorm(c.n_embd, c.bias));
  attn = register_module("attn", CausalSelfAttention(c));
  ln_2 = register_module("ln_2", LayerNorm(c.n_embd, c.bias));
  mlp = register_module("mlp", MLP(c));
}

torch::Tensor BlockImpl::forward(const torch::Tensor& x, torch::Tensor* k_cache,
                                 torch::Tensor* v_cache, int64_t L) {
  torch::Tensor y = x + attn(ln_1(x), k_cache, v_cache, L);
  return y + mlp(ln_2(y));
}

GPTImpl::GPTImpl(const GPTConfig& c) : config(c) {
  c.validate();
  wte = register_module("wte", Embedding(c.vocab_size, c.n_embd));
  wpe = register_module("wpe", Embedding(c.block_size, c.n_embd));
  auto blocks = register_module("h", std::make_shared<torch::nn::Module>("h"));
  for (int i = 0; i < c.n_layer; ++i)
    h.push_back(blocks->register_module(std::to_string(i), Block(c)));
  ln_f = register_module("ln_f", LayerNorm(c.n_embd, c.bias));
}

void GPTImpl::init_weights(uint64_t seed) {
  torch::NoGradGuard no_grad;
  at::Generator gen = at::detail::createCPUGenerator(seed);
  // Residual projections are scaled down so the residual stream's variance does not grow with
  // depth (GPT-2 paper); LayerNorm weights stay 1 and biases 0.
  const double proj_std = 0.02 / std::sqrt(2.0 * config.n_layer);
  for (auto& p : named_parameters()) {
    const std::string& name = p.key();
    if (p.value().dim() < 2) continue;
    const bool is_proj = ends_with(name, "c_proj.weight");
    p.value().normal_(0.0, is_proj ? proj_std : 0.02, gen);
  }
  for (auto& p : named_parameters())
    if (ends_with(p.key(), ".bias")) p.value().zero_();
}

torch::Tensor GPTImpl::forward(const torch::Tensor& idx, KVCache* cache, bool last_only) {
  torch::Tensor x = hidden(idx, cache);           // [B, T, C]
  if (last_only) x = x.select(1, x.size(1) - 1);  // [B, C]
  return head(x);                                 // [B, T, V] or [B, V]: the tied head
}

torch::Tensor GPTImpl::hidden(const torch::Tensor& idx, KVCache* cache) {
  const int64_t T = idx.size(1), L = cache ? cache->length : 0;
  TLM_CHECK(L + T <= config.block_size) << L << " + " << T << " tokens exceed the context";
  torch::Tensor pos = torch::arange(L, L + T, torch::kLong);  // [T]
  torch::Tensor x =
      torch::dropout(wte(idx) + wpe(pos), config.dropout, is_training());  // [B, T, C]
  if (cache && cache->k.empty()) cache->k.resize(h.size()), cache->v.resize(h.size());
  for (size_t i = 0; i < h.size(); ++i)
    x = h[i](x, cache ? &cache->k[i] : nullptr, cache ? &cache->v[i] : nullptr, L);
  if (cache) cache->length += T;
  return ln_f(x);  // [B, T, C]
}

}  // namespace tlm

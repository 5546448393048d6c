// Private to src/model (and tests/model): the torch modules of the GPT, written like nanoGPT's
// model.py, plus the tensor-file format that checkpoints and training state share. Nothing outside
// src/model may include this header (it pulls in libtorch; see lm.h).
//  - CausalSelfAttention, MLP, Block, GPT: the modules; GPT::forward takes an optional KVCache.
//  - LanguageModel::Impl: the config and the GPT behind the public facade.
//  - write_tensor_file / read_tensor_file: the checkpoint container (format in lm.h).
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "model/config.h"
#include "model/lm.h"

namespace tlm {

// The plain layers are written out rather than taken from torch/nn/modules/*.h: those headers
// would add ~6 s (+50%) to the compile time of every file including this one.
struct LinearImpl : torch::nn::Module {
  LinearImpl(int in, int out, bool bias);
  torch::Tensor forward(const torch::Tensor& x) { return torch::linear(x, weight, bias); }
  torch::Tensor weight, bias;  // [out, in], [out] or undefined
};
TORCH_MODULE(Linear);

struct EmbeddingImpl : torch::nn::Module {
  EmbeddingImpl(int n, int dim);
  torch::Tensor forward(const torch::Tensor& idx) { return torch::embedding(weight, idx); }
  torch::Tensor weight;  // [n, dim]
};
TORCH_MODULE(Embedding);

// LayerNorm with an optional bias (torch's has both or neither).
struct LayerNormImpl : torch::nn::Module {
  LayerNormImpl(int n_embd, bool bias);
  torch::Tensor forward(const torch::Tensor& x);
  torch::Tensor weight, bias;
};
TORCH_MODULE(LayerNorm);

// Keys and values of the positions decoded so far: per layer, a [B, n_head, block_size, head_size]
// buffer of which the first `length` positions are filled. Preallocated so that a decoding step
// writes one position instead of copying the whole cache.
struct KVCache {
  std::vector<torch::Tensor> k, v;
  int64_t length = 0;
};

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const GPTConfig& c);
  // x: [B, T, C], the T positions after L cached ones in k_cache/v_cache (if given; this writes
  // the new keys and values after them).
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* k_cache, torch::Tensor* v_cache,
                        int64_t L);
  Linear c_attn{nullptr}, c_proj{nullptr};  // q, k, v of all heads in one; output
  int64_t n_head, n_embd, block_size;
  double dropout;
};
TORCH_MODULE(CausalSelfAttention);

struct MLPImpl : torch::nn::Module {
  explicit MLPImpl(const GPTConfig& c);
  torch::Tensor forward(const torch::Tensor& x);
  Linear c_fc{nullptr}, c_proj{nullptr};
  double dropout;
};
TORCH_MODULE(MLP);

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const GPTConfig& c);
  torch::Tensor forward(const torch::Tensor& x, torch::Tensor* k_cache, torch::Tensor* v_cache,
                        int64_t L);
  LayerNorm ln_1{nullptr}, ln_2{nullptr};
  CausalSelfAttention attn{nullptr};
  MLP mlp{nullptr};
};
TORCH_MODULE(Block);

struct GPTImpl : torch::nn::Module {
  explicit GPTImpl(const GPTConfig& c);
  // nanoGPT's _init_weights, from a generator seeded with `seed`.
  void init_weights(uint64_t seed);
  // idx: [B, T] token ids (int64) following cache->length cached positions (none if null).
  // Returns logits [B, T, V], or [B, V] for the last position only when last_only.
  torch::Tensor forward(const torch::Tensor& idx, KVCache* cache = nullptr, bool last_only = false);
  // The final hidden states ln_f(x), [B, T, C], before the head: training applies the head only
  // where the loss counts (the head is the largest matrix of a small model).
  torch::Tensor hidden(const torch::Tensor& idx, KVCache* cache = nullptr);
  torch::Tensor head(const torch::Tensor& x) { return torch::matmul(x, wte->weight.t()); }
  GPTConfig config;
  Embedding wte{nullptr}, wpe{nullptr};  // wte is also the output head
  std::vector<Block> h;                  // registered as h.0, h.1, ...
  LayerNorm ln_f{nullptr};
};
TORCH_MODULE(GPT);

struct LanguageModel::Impl {
  explicit Impl(const GPTConfig& c) : gpt(c) {}
  GPT gpt;
};

// Token ids as a [rows, ids.size() / rows] int64 tensor; UserError for an id outside the
// vocabulary.
torch::Tensor token_tensor(const std::vector<int>& ids, int64_t rows, int vocab_size);

// The checkpoint container (lm.h): `header` plus a "tensors" table, then the fp32 data. Atomic.
using TensorList = std::vector<std::pair<std::string, torch::Tensor>>;
void write_tensor_file(const std::string& path, nlohmann::json header, const TensorList& tensors);
// UserError naming `path` for a missing, truncated, corrupt or foreign file or another version.
TensorList read_tensor_file(const std::string& path, nlohmann::json* header);

// Copies `tensors` into the module's parameters; UserError (naming `path`) unless the names and
// shapes are exactly those of the module. Tensors named "adamw.*" (training state) are skipped.
void load_parameters(GPT& gpt, const TensorList& tensors, const std::string& path);

nlohmann::json info_to_json(const CheckpointInfo& info);
CheckpointInfo info_from_json(const nlohmann::json& j, const std::string& path);

}  // namespace tlm

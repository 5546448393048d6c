// The shape of the tensor language model (paper §5.1): a GPT-2 style decoder, sized by GPTConfig.
// The paper uses GPT-2 Small (12 layers, 12 heads, 768 wide, ~100M parameters) on V100s; tiny() is
// the default here, small enough to pre-train on a 2-core CPU. Each field's initializer is an
// example value (that of tiny() for a 4096-token vocabulary; the tokenizer has ~5700).
// The config is stored in every checkpoint header as JSON (to_json/from_json, unknown keys
// rejected), so a checkpoint rebuilds its own model.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

namespace tlm {

struct GPTConfig {
  int vocab_size = 4096;  // set from the tokenizer
  int block_size = 256;   // context = the longest sentence, in tokens
  int n_layer = 4;
  int n_head = 4;
  int n_embd = 192;      // a multiple of n_head
  float dropout = 0.0f;  // on embeddings, attention weights and residual branches, in training
  bool bias = false;     // biases in Linear layers and LayerNorms (GPT-2 has them; slightly worse)

  static GPTConfig tiny(int vocab_size, int block_size);        // ~2.9M parameters at 5700 x 192
  static GPTConfig gpt2_small(int vocab_size, int block_size);  // the paper's size, for a GPU

  // The number of distinct parameters (the head shares the token embedding), computed from the
  // shapes alone.
  int64_t param_count() const;
  // UserError unless every size is positive, n_embd divides by n_head and 0 <= dropout < 1.
  void validate() const;
};

void to_json(nlohmann::json& j, const GPTConfig& c);
void from_json(const nlohmann::json& j, GPTConfig& c);  // UserError on a missing/unknown key

}  // namespace tlm

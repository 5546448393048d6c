// The tensor language model (paper §5): a GPT that reads and writes tensor sentences.
//  - LanguageModel: the weights, with nanoGPT's initialization; full-sequence scoring
//    (next_token_logprobs); versioned checkpoints (save/load, check_compatible).
//  - DecodeSession: batched incremental decoding with a key/value cache, for the generator (§5.2)
//    that alternates forced tokens (feed_shared) with sampled decisions (step) and beam search
//    (reorder). generate() is the plain sampling loop on top of it.
// libtorch stays behind this header: the torch module lives in model/gpt_impl.h, which only
// src/model includes (a TU with torch headers costs ~20 s and ~1 GB to compile). fp32 only; not
// thread-safe (one model per thread, or serialize calls). libtorch starts with one thread:
// call set_model_threads().
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/config.h"

namespace tlm {

// Checkpoint file: magic "tlm-ckpt", uint32 format version, uint64 header length, the header
// (JSON: CheckpointInfo and the tensor table), raw little-endian fp32 tensors, a 64-bit checksum.
// Bump when any of that changes; readers reject other versions.
constexpr int kCheckpointFormatVersion = 1;

// What a checkpoint says about itself (STYLE.md habit 6), stored in its header.
struct CheckpointInfo {
  GPTConfig config;            // overwritten from the model on save
  std::string vocab_hash;      // of the tokenizer the model was trained with
  int language_version = 0;    // of the tensor language
  std::string stage = "base";  // "base" (pre-trained) or "finetune"
  int64_t step = 0, tokens_seen = 0;
  double val_loss = 0;
  nlohmann::json extra;     // provenance: data, options (free form)
  std::string loaded_from;  // set by load() to the file's path; not stored
};

// UserError, naming the checkpoint and `what_to_rerun`, unless it was trained with this tokenizer
// and this version of the tensor language.
void check_compatible(const CheckpointInfo& info, const std::string& vocab_hash,
                      int language_version, const std::string& what_to_rerun);

struct NamedTensor {
  std::string name;  // e.g. "h.0.attn.c_attn.weight" (Linear weights are [out, in])
  std::vector<int64_t> shape;
  std::vector<float> data;  // row-major
};

class DecodeSession;

class LanguageModel {
 public:
  // nanoGPT initialization (normal(0, 0.02); residual projections scaled by 1/sqrt(2 n_layer)),
  // deterministic given the seed. The output head is the token embedding (weight tying).
  LanguageModel(const GPTConfig& c, uint64_t seed);
  ~LanguageModel();
  LanguageModel(const LanguageModel&) = delete;
  LanguageModel& operator=(const LanguageModel&) = delete;

  const GPTConfig& config() const;
  int64_t parameter_count() const;  // counted on the module

  // Writes `info` (with config() as its config) and the weights to `path` atomically (a temporary
  // file, fsync, rename). UserError when the file cannot be written.
  void save(const std::string& path, const CheckpointInfo& info) const;
  // UserError with one message naming the file for: missing file, truncated or corrupt file, not
  // a tlm checkpoint, another format version. `info` may be null.
  static std::unique_ptr<LanguageModel> load(const std::string& path, CheckpointInfo* info);

  // Full recomputation: log-softmax of the next token at every position, [ids.size() x vocab]
  // row-major. UserError for an empty or too long sequence or a token outside the vocabulary.
  std::vector<float> next_token_logprobs(const std::vector<int>& ids) const;
  // The session reads this model, which must outlive it.
  std::unique_ptr<DecodeSession> start_decoding(int batch) const;
  // Every parameter once (the head is "wte.weight"), in module order.
  std::vector<NamedTensor> parameters() const;

  struct Impl;  // model/gpt_impl.h; for src/model only
  Impl& impl() const { return *impl_; }

 private:
  explicit LanguageModel(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// `batch` sequences decoded in lockstep (programs of one task, whose sentences have identical
// lengths). Both feeding calls return the log-softmax of each sequence's next token, [batch x
// vocab] row-major, valid until the next call. UserError when the context (block_size) would be
// exceeded or a token is outside the vocabulary.
class DecodeSession {
 public:
  ~DecodeSession();
  // Appends the same tokens (one or more: the prompt, forced header tokens) to every sequence.
  const std::vector<float>& feed_shared(const std::vector<int>& ids);
  // Appends ids[i] to sequence i; ids.size() == batch().
  const std::vector<float>& step(const std::vector<int>& ids);
  // New row i = old rows[i] (keep, drop or duplicate rows, for beam search); batch() becomes
  // rows.size(). The last returned log-probabilities are reordered too.
  void reorder(const std::vector<int>& rows);
  int length() const;  // tokens per sequence so far
  int batch() const;

  struct State;

 private:
  friend class LanguageModel;
  explicit DecodeSession(std::unique_ptr<State> s);
  std::unique_ptr<State> s_;
};

// Samples up to max_new_tokens after `prompt` (temperature 0: greedy) and returns them; stops
// after emitting stop_token (if >= 0) or when the context is full. Deterministic given the seed.
std::vector<int> generate(const LanguageModel& m, const std::vector<int>& prompt,
                          int max_new_tokens, double temperature, uint64_t seed,
                          int stop_token = -1);

// Intra-op threads of libtorch (and inter-op threads, which can only be set before first use).
// With n > 1 on a machine whose cores are busy with other work, libgomp's spinning barriers make
// small models up to ~50x slower (measured: 430 vs 24000 tokens/s); OMP_WAIT_POLICY=PASSIVE in
// the environment of the process (read when it starts) avoids that.
void set_model_threads(int n);

}  // namespace tlm

// Training the language model: pre-training on sampled sentences and supervised fine-tuning on
// the best measured ones (paper §5.1, §5.3) are the same causal-LM loop, nanoGPT's train.py in
// C++: AdamW (weight decay on 2-D weights only), linear warmup then cosine decay, gradient
// clipping, periodic validation that keeps the best checkpoint, and an atomically written
// "<out_path>.last" holding everything needed to resume (weights, AdamW moments, step), so a
// kill -9 loses at most one eval interval. Knobs: TrainOptions. Deterministic given the seed on
// one thread count; batches are a function of (seed, step), so a resumed run draws the same ones.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/lm.h"

namespace tlm {

// One training sequence. loss[t] = 1: predicting ids[t] from ids[0..t) counts (loss[0] is
// ignored); prompts are 0, so the model is not trained to write them. Padding never counts.
struct TokenSeq {
  std::vector<int> ids;
  std::vector<uint8_t> loss;  // same length as ids
};

struct TrainProgress {
  int64_t step, max_steps, tokens;  // tokens: non-padding input tokens seen so far
  double loss, tokens_per_s, eta_s, lr;
};

struct TrainOptions {
  std::string out_path;  // the best checkpoint by validation loss; "<out_path>.last" resumes
  int batch_size = 32;   // sequences per step (padded to the longest of them)
  double lr = 1e-3;      // peak learning rate, reached after warmup_steps
  double min_lr = 1e-4;  // cosine decay ends here at max_steps
  int warmup_steps = 100;
  int64_t max_steps = 2000;
  double time_budget_s = 0;   // 0: none; else stop (evaluating and saving) once exceeded
  double weight_decay = 0.1;  // on 2-D weights (matrices, embeddings) only
  double beta1 = 0.9, beta2 = 0.99;
  double grad_clip = 1.0;    // max global gradient norm; 0: off
  int eval_every = 200;      // steps between validations (and saves)
  int eval_sequences = 512;  // validate on at most this many sequences (the first ones)
  uint64_t seed = 0;
  bool resume = true;   // continue from <out_path>.last if it exists (UserError when it was
                        // written for another config or other data); false: start over
  std::string log_csv;  // step,tokens,train_loss,val_loss,heldout_loss,lr,elapsed_s
  std::function<void(const TrainProgress&)> on_progress;  // after every step
};

struct TrainReport {
  int64_t steps, tokens;
  double best_val_loss, last_val_loss, last_heldout_loss, wall_s;
  bool resumed;
};

// Trains `m` from its current weights (or those of <out_path>.last when resuming); `m` ends with
// the last weights, the best are in out_path. Validates every eval_every steps and at the end on
// `val` (which chooses the best checkpoint) and reports the loss on `heldout` beside it (never
// used to choose; may be empty). The saved CheckpointInfo is `info` with step, tokens_seen and
// val_loss filled in. UserError for sequences longer than block_size, mismatched loss masks,
// tokens outside the vocabulary, no counted token in `train`, or an empty `val`.
TrainReport train_language_model(LanguageModel& m, const CheckpointInfo& info,
                                 const std::vector<TokenSeq>& train,
                                 const std::vector<TokenSeq>& val,
                                 const std::vector<TokenSeq>& heldout, const TrainOptions& o);

// Mean loss per counted token over `seqs`, evaluated batch_size sequences at a time (padding does
// not change it); NaN when nothing counts.
double evaluate_loss(const LanguageModel& m, const std::vector<TokenSeq>& seqs, int batch_size);

}  // namespace tlm

// Supervised fine-tuning on demonstrations (paper §5.1, §5.3): the pre-trained model (TLM-base)
// trained further on the sentences of the best measured programs, so that it writes programs
// like them. Always from the base weights, as the paper does: "since TLM i is always trained from
// TLM-base, it remains unaffected by TLM i-1", so one bad round never accumulates.
//
//   Demonstration                 one sentence and how often it appears in the training data
//                                 (speed weighting repeats the faster ones); where demonstrations
//                                 come from (measurement records) is src/loop's business
//   finetune_from_base(base, d, o)  encodes the demonstrations with the base's own tokenizer (loss
//                                 on the decision values only), holds a seeded few groups out for
//                                 validation (which picks the best checkpoint), trains
//                                 epochs x demonstrations / batch steps and writes
//                                 o.train.out_path; resumable from <out>.last like
//                                 train_language_model
//   checkpoint_file_hash(path)    16 hex digits of the file's bytes: which base a model came from
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/train.h"

namespace tlm {

struct Demonstration {
  std::string sentence;  // a tensor sentence of this build's language
  int copies = 1;        // times it enters the training data (>= 1)
  // Demonstrations of one group (a task on one machine) fall on the same side of the
  // validation split, so validation measures writing for tasks not trained on.
  std::string group;
};

struct FinetuneOptions {
  double epochs = 3;           // passes over the training demonstrations (copies counted)
  double val_fraction = 0.05;  // of the groups, held out to choose the best checkpoint
  int max_val_groups = 64;     // at most this many
  int evals = 6;               // validations (and saves) over the run, the last at the end
  // The training loop's knobs; out_path is required. Fine-tuning defaults: a tenth of the
  // pre-training learning rate, a short warm-up, small batches (a few thousand demonstrations).
  TrainOptions train = [] {
    TrainOptions t;
    t.batch_size = 16;
    t.lr = 3e-4;
    t.min_lr = 3e-5;
    t.warmup_steps = 10;
    return t;
  }();
  nlohmann::json provenance;  // stored in the checkpoint as extra["finetune"] (records, options)
};

struct FinetuneReport {
  int64_t demonstrations = 0;   // distinct sentences
  int64_t train_sequences = 0;  // with copies
  int64_t val_sequences = 0;
  int64_t steps = 0;
  double base_val_loss = 0;  // the base model on the validation demonstrations
  double best_val_loss = 0;  // the saved model
  double wall_s = 0;
  bool resumed = false;
};

// UserError for no demonstration, a sentence the base's context cannot hold, or a base that is
// not a usable checkpoint (load_tlm_model's messages). The saved CheckpointInfo is the base's,
// with stage "finetune" and extra["finetune"] = {base, base_hash, demonstrations, ...provenance};
// extra["tokenizer"] stays, so the result loads like any model.
FinetuneReport finetune_from_base(const std::string& base_path,
                                  const std::vector<Demonstration>& demos,
                                  const FinetuneOptions& o);

// UserError when the file cannot be read.
std::string checkpoint_file_hash(const std::string& path);

}  // namespace tlm

// Training data of the language model: tensor sentences as token sequences with a loss mask.
//
//   encode_sentence(tok, text, loss)  <bos> sentence <eos> as model ids; the loss mask marks the
//                                     decision values only (LossOn::Values: what generation
//                                     chooses; prompts and headers are always given) or every
//                                     token after <bos> (LossOn::All)
//   SentenceEncoder                   the same with a per-text-token cache (datasets repeat their
//                                     prompts and headers hundreds of thousands of times)
//   load_pretraining_data(o)          a dataset directory (`tlm sample`) -> train / validation
//                                     split of its sentences (seeded, by line) and, for
//                                     evaluation only, random sentences of the held-out workloads
//                                     for the same machines
//
// Which tokens are values: in the decision part (after the six hardware tokens), every token
// after "->" up to the next slot header, whose first token is a step kind name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "language/sentence.h"
#include "language/tokenizer.h"
#include "model/train.h"

namespace tlm {

enum class LossOn { Values, All };
// "values" / "all"; UserError for anything else.
LossOn parse_loss_on(const std::string& s);

class SentenceEncoder {
 public:
  SentenceEncoder(const Tokenizer& tok, LossOn loss) : tok_(&tok), loss_(loss) {}
  // UserError when the text is not a sentence (no hardware tokens).
  TokenSeq encode(const std::vector<std::string>& text) const;

 private:
  const Tokenizer* tok_;
  LossOn loss_;
  mutable std::unordered_map<std::string, std::vector<int>> cache_;
};

TokenSeq encode_sentence(const Tokenizer& tok, const std::vector<std::string>& text, LossOn loss);

struct PretrainDataOptions {
  std::vector<std::string> dataset_dirs;  // `tlm sample` outputs, one tokenizer between them
  int64_t max_sentences = 0;              // read at most this many (0: all)
  double val_fraction = 0.02;             // of the sentences, chosen by a seeded hash of the line
  int heldout_per_task = 4;               // random sentences per held-out task and machine
  LossOn loss = LossOn::Values;
  uint64_t seed = 0;
  bool progress = true;
};

struct PretrainData {
  Tokenizer tokenizer;
  std::vector<std::string> hardware;  // the datasets' hardware keys
  std::vector<TokenSeq> train, val, heldout;
  int64_t max_len = 0;  // longest sequence, in model tokens
};

// UserError for a directory that is not a dataset of this language version, datasets with
// different tokenizers, or no sentence.
PretrainData load_pretraining_data(const PretrainDataOptions& o);

// Every task of the held-out workloads on each of `hardware` (keys), with its space: evaluation
// material only. Tasks whose space cannot be built are left out, as the sampler does.
struct HeldoutTask {
  Subgraph sub;
  HardwareInfo hw;
  LoweredTask lowered;
  TaskSpace space;
  std::unique_ptr<TaskPrinter> printer;
};
std::vector<std::unique_ptr<HeldoutTask>> heldout_tasks(const std::vector<std::string>& hardware);

}  // namespace tlm

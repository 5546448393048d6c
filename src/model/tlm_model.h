// A tensor language model ready to use: the network, its tokenizer and what its checkpoint says.
// A checkpoint written by `tlm train` carries its tokenizer (CheckpointInfo::extra["tokenizer"]),
// so it is self-contained.
//
//   load_tlm_model(path)   UserError, one message, for: a missing, truncated or foreign file; a
//                          checkpoint of another tensor-language version or another tokenizer
//                          (saying what to re-run)
//   default_model_path()   the checkpoint shipped in the repository (models/tlm.ckpt: the
//                          fine-tuned model), found from the executable's location (build/tlm ->
//                          ../models) or the source tree; "" when there is none
//   default_base_path()    the same for the pre-trained base (models/tlm-base.ckpt), which
//                          fine-tuning always starts from
//   shipped_path(file)     models/FILE found the same way (models/ranker.json, ...)
//   kRetrainHint           what to run when a checkpoint no longer matches the language
//   finetuned_task_hashes()  the tasks a fine-tuned checkpoint learned from (hex_hash of their
//                          keys, support/hash.h); false for a checkpoint that does not list them
//                          (the base, or one fine-tuned before they were recorded)
#pragma once

#include <memory>
#include <set>
#include <string>

#include "language/tokenizer.h"
#include "model/lm.h"

namespace tlm {

constexpr const char* kRetrainHint =
    "`tlm sample --out DIR` and `tlm train --data DIR -o CKPT` with this build";

struct TlmModel {
  std::unique_ptr<LanguageModel> lm;
  Tokenizer tok;
  CheckpointInfo info;
};

TlmModel load_tlm_model(const std::string& path);
std::string default_model_path();
std::string shipped_path(const char* file);
std::string default_base_path();
// `path` if given, else the shipped checkpoint; UserError when neither exists.
TlmModel load_model_or_default(const std::string& path);
bool finetuned_task_hashes(const TlmModel& m, std::set<std::string>* out);

}  // namespace tlm

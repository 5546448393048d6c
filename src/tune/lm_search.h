// The language model at tuning time (paper §5.2-5.3, §6.4): the programs to measure come from
// the model. The first batch of a task opens with its most likely program (greedy decoding); the
// rest are sampled (temperature, top-k) under the space's constraints, so every proposal is valid;
// programs already measured or proposed are skipped, and when the model keeps repeating itself
// the batch is topped up with uniform samples (counted in `fallbacks`).
//
//   make_lm_proposals(model, tok, options)  the model as a ProposalSource (tune/search.h):
//                                           unseen programs, programs, completions of starts
//   make_lm_search(model, tok, options)     `tlm`: every batch from make_lm_proposals
//   make_tlm_evolutionary_search(...)       `tlm-evolutionary` (TLM-Ansor): the evolutionary
//                                           search drawing on make_lm_proposals
//   most_likely_program(model, tok, printer)  greedy decoding: the zero-measurement schedule
// The model must outlive what these return.
#pragma once

#include <memory>

#include "model/generate.h"
#include "tune/search.h"

namespace tlm {

struct LmSearchOptions {
  double temperature = 1.0;
  int top_k = 0;
  int batch = 16;  // sequences decoded together
};

std::unique_ptr<ProposalSource> make_lm_proposals(const LanguageModel& m, const Tokenizer& tok,
                                                  const LmSearchOptions& o = {});
std::unique_ptr<SearchPolicy> make_lm_search(const LanguageModel& m, const Tokenizer& tok,
                                             const LmSearchOptions& o = {});
std::unique_ptr<SearchPolicy> make_tlm_evolutionary_search(const LanguageModel& m,
                                                           const Tokenizer& tok,
                                                           const LmSearchOptions& lm,
                                                           const EvolutionOptions& evo);

Program most_likely_program(const LanguageModel& m, const Tokenizer& tok,
                            const TaskPrinter& printer);

}  // namespace tlm

// The `tlm` search policy (paper §5.2-5.3 at tuning time): the language model proposes the
// programs to measure. The first batch of a task opens with its most likely program (greedy
// decoding); the rest are sampled (temperature, top-k) under the space's constraints, so every
// proposal is valid; programs already measured or proposed are skipped, and when the model keeps
// repeating itself the batch is topped up with uniform samples (counted in `fallbacks`).
//
//   make_lm_search(model, tok, options)  the policy; the model must outlive it
//   most_likely_program(model, tok, printer)  greedy decoding: the zero-measurement schedule
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

std::unique_ptr<SearchPolicy> make_lm_search(const LanguageModel& m, const Tokenizer& tok,
                                             const LmSearchOptions& o = {});

Program most_likely_program(const LanguageModel& m, const Tokenizer& tok,
                            const TaskPrinter& printer);

}  // namespace tlm

// Constrained generation (paper §5.2, Algorithm 2, made always-valid): the language model writes
// a program of a task decision by decision. The prompt is the task's subgraph and hardware
// tokens; the slot headers are forced (fed, never sampled); at every value the model's
// distribution is masked to exactly next_options(prefix) of the space, each option being one
// model token (language/tokenizer.h). So every program is valid at one generation call each.
//
//   generate_programs(m, tok, printer, o)  K distinct programs: batched sampling with the KV
//                                          cache (temperature, top-k), de-duplicated on the
//                                          program (= the canonical sentence); or, with
//                                          o.beam > 0, beam search returning the most likely
//                                          programs (beam 1 = greedy); o.prefixes: the model
//                                          completes given starts; at two or more cores a
//                                          large task always gets a parallel loop
//                                          (o.serial_work)
//   score_programs(m, tok, printer, ps)    how the *unconstrained* model sees given programs:
//                                          per decision the probability mass on valid values,
//                                          the negative log-likelihood of the chosen value and
//                                          log |options| (the entropy of uniform choice)
#pragma once

#include <cstdint>
#include <vector>

#include "language/sentence.h"
#include "language/tokenizer.h"
#include "model/lm.h"
#include "space/space.h"

namespace tlm {

struct GenerateOptions {
  int n = 16;                // distinct programs wanted
  int batch = 16;            // sequences decoded together (sampling)
  double temperature = 1.0;  // sampling temperature (> 0)
  int top_k = 0;             // sample among the k most likely valid values (0: all)
  int beam = 0;              // > 0: beam search of this width instead of sampling (n <= beam)
  uint64_t seed = 0;
  int max_rounds = 0;  // sampling rounds before giving up on n distinct (0: 4 + 4 n / batch)
  // Sampling only: the i-th sequence decoded starts with the values prefixes[i % size] (forced,
  // kept while each is among next_options: the model completes a given start, e.g. a mutated
  // parent in tlm-evolutionary). Empty: every value is sampled.
  std::vector<std::vector<int64_t>> prefixes;
  // At two or more cores (the prompt's), on a task whose largest stage runs at least this many
  // iterations, the Parallel slot's 0 (no parallel loop) is left out of the options when another
  // remains (space.h, kParallelWork). The model alone confuses the machines' thread counts:
  // fine-tuned on Intel records of both (the best program without a parallel loop at one core,
  // with one at two), its greedy program left it out for 30 of the 440 training tasks at two
  // cores and for BERT-base's 768 -> 768 dense layer (2x slower; BENCHMARKS.md, "A parallel loop
  // at two cores"). < 0: never. The log-probabilities are renormalized over the options left.
  double serial_work = kParallelWork;
};

struct GeneratedProgram {
  Program program;
  double logprob = 0;  // sum over decisions of log p(value | prefix), renormalized over options
};

struct GenerateStats {
  int64_t sequences = 0;  // sequences decoded (sampling: generation calls)
  int64_t duplicates = 0;
  double seconds = 0;
};

// UserError when the checkpoint's context cannot hold this task's sentences.
std::vector<GeneratedProgram> generate_programs(const LanguageModel& m, const Tokenizer& tok,
                                                const TaskPrinter& printer,
                                                const GenerateOptions& o,
                                                GenerateStats* stats = nullptr);

struct DecisionScores {
  int64_t decisions = 0;
  double valid_mass = 0;       // sums over decisions: probability mass on valid values
  double nll = 0;              // -log p(chosen value), unconstrained
  double uniform_entropy = 0;  // log |next_options|
  void add(const DecisionScores& o) {
    decisions += o.decisions;
    valid_mass += o.valid_mass;
    nll += o.nll;
    uniform_entropy += o.uniform_entropy;
  }
};
// logprobs (optional): per program, the constrained log-likelihood (sum over decisions of
// log p(value | prefix) renormalized over next_options, as GeneratedProgram::logprob with the
// default serial_work: a program that keeps a large task serial at two cores is renormalized over
// every option at its Parallel slot).
DecisionScores score_programs(const LanguageModel& m, const Tokenizer& tok,
                              const TaskPrinter& printer, const std::vector<Program>& programs,
                              std::vector<double>* logprobs = nullptr);

}  // namespace tlm

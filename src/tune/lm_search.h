// The language model at tuning time (paper §5.2-5.3, §6.4): the programs to measure come from
// the model. A task's first proposals are its zero-shot candidates in the model's order (the
// greedy program and the expert programs, scored as whole programs); the rest are sampled
// (temperature, top-k) under the space's constraints, so every proposal is valid;
// programs already measured or proposed are skipped, and when the model keeps repeating itself
// the batch is topped up with uniform samples (counted in `fallbacks`).
//
//   make_lm_proposals(model, tok, options)  the model as a ProposalSource (tune/search.h):
//                                           unseen programs, programs, completions of starts
//   make_lm_search(model, tok, options)     `tlm`: every batch from make_lm_proposals
//   make_tlm_evolutionary_search(...)       `tlm-evolutionary` (TLM-Ansor): the evolutionary
//                                           search drawing on make_lm_proposals
//   most_likely_program(model, tok, printer)  greedy decoding
//   zero_shot_candidates(model, tok, printer, hw, o)  the beam's programs and the task's expert
//                                           programs, scored as whole programs, most likely first
//   zero_shot_program(...)                  their front: the zero-measurement schedule
// The model must outlive what these return.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/generate.h"
#include "tune/search.h"

namespace tlm {

// Candidates of the zero-measurement choice. Greedy decoding alone can mix decisions of different
// demonstrations into a program none of them was (measured: 100x slower GEMMs); ranking whole
// programs, expert ones among them, keeps the choice among coherent programs.
class Ranker;
struct ZeroShotOptions {
  // Defaults: the "experts" mode (the CLI default is "ranker": zero_shot_mode()).
  int beam = 0;         // the model's own candidates: beam search of this width (0: none)
  bool experts = true;  // add expert_programs(space, hw)
  // Order the candidates by the zero-shot ranker (tune/ranker.h: a cost model trained across
  // the training tasks) instead of by the model's likelihood; `ranker` must then be set.
  bool rank = false;
  const Ranker* ranker = nullptr;
  int samples = 0;    // Rows tasks (no tiled anchor): add this many of the model's sampled
                      // programs (distinct; seeded)
  uint64_t seed = 0;  // their seed: the same task, model and seed give the same programs
  // With rank, at two or more threads: a blocked convolution's front program is preceded by its
  // row-split variant (space.h, "Row splits") when the ranker gives the variant at least this
  // probability of being the faster of the two (pairwise: the logistic of the score difference,
  // what rank:pairwise learns) and its weights fit in one core's L2 (row_split_shared_bytes:
  // every thread reads all of them). The zero-measurement counterpart of deployed_choice's
  // tolerance (measure/recorded_schedules.h); < 0: never.
  double row_split_p = -1;
  // With rank, at two or more threads, on a task whose largest stage runs at least this many
  // iterations (pure extents x reduction extents): candidates without a parallel loop go after
  // those with one, each kind in the ranker's order (the ranker has seen serial programs measured
  // almost only at one core). < 0: never.
  double serial_work = -1;
  // With rank: a dense channel-blocked 1x1 convolution whose weights take at least this
  // fraction of one core's L2 gets MLAS's pointwise expert (pointwise_expert, space.h) in front.
  // Inside a model its weights come from memory, and that program reads each of them once per
  // tile of whole output rows where the block programs read them once per register block: the
  // ranker, which learns from programs timed alone with their weights in cache, cannot see it.
  // < 0: never.
  double pointwise_weights = -1;
  // With the ranker: each expert candidate followed by its copy twin (space.h, copy_twins: the
  // expert that differs from it only in copying one operand at root instead of reading it where
  // it lies, or the reverse), so that `tlm` measures both. The front candidate is unchanged. The
  // ranker, trained before the root-copy experts of blocked 3x3 convolutions existed (expert.cc),
  // kept them out of ResNet-50's first ten, though alone they ran its 14x14 and 7x7 layers 1.10x
  // and 1.27x faster (BENCHMARKS.md, session 56).
  bool copy_twins = false;
  // With the ranker: on a matrix product whose weight is larger than the last-level cache, the
  // ranker's best streaming expert over the weight packed once (space.h, streamed_root_expert)
  // goes first, the others keep their order. Those programs read a weight blocked past a
  // non-dividing extent (GPT-2's 50257 columns), a layout no record of the shipped ranker's
  // training has (before session 60 such a weight stayed unblocked at root, 1.2-1.4x slower than
  // copying it per tile); GPT-2's logits ran 111-114 ms with it against 120-124 for the search's
  // best other program, GPT-2 at one thread on Zen 3 0.94x ORT's time against 0.99x
  // (BENCHMARKS.md, session 60).
  bool streamed_root = false;
};
// The "ranker" mode's row_split_p. Decided on training workloads at two threads (ResNet-50 at
// 192, ResNet-18 at 224, MobileNet-V2 at 192; BENCHMARKS.md, "Row splits without measurement"):
// the ranker gives the row-split variants of ResNet-50's zero-shot programs 0.40-0.49 (a little
// slower alone). From 0.45 up 9 / 7 / 10 of the three models' tasks take theirs, which ran 0-2%
// faster than none in the fast mode and 8-11% faster in the slow mode; from 0.40 up 20 / 11 / 12,
// 3-8% slower than none in the fast mode on the ResNets. The ranker of features version 3 gives
// more variants >= 0.45 (20 / 8 / 11), among them ResNet-50's 3x3 convolutions at 12 x 12 and
// 6 x 6, 1.2-1.7x slower split in the slow mode: their weights (2.4 and 9.4 MB) do not fit in L2
// and each thread then streams all of them; the L2 condition leaves 11 / 7 / 10 (BENCHMARKS.md,
// "The ranker sees the register block's traffic").
constexpr double kZeroShotRowSplitP = 0.45;
// The "ranker" mode's serial guard: space.h's kParallelWork (candidates of the language model's
// generation hold to it already; expert programs and samples of the space may not).
constexpr double kZeroShotSerialWork = kParallelWork;
// The "ranker" mode's pointwise_weights: half of one core's L2. On ResNet-50 (Intel, L2 2 MiB per
// core) the pointwise expert ran its five unit-stride 1x1 layers with 1-4 MiB of weights 10-26%
// faster inside the model than the ranker's picks at two threads and 2-20% at one (the model end
// to end 1.4-5% faster at two threads, level at one), and its two 28x28 layers with 256-512 KiB
// 9-19% slower at two threads (BENCHMARKS.md, session 46).
constexpr double kZeroShotPointwiseWeights = 0.5;
struct LmSearchOptions {
  double temperature = 1.0;
  int top_k = 0;
  int batch = 16;  // sequences decoded together
  // A task's first proposals: its zero-shot candidates in their order (by default the greedy
  // program and the expert programs in the model's; `tlm tune` passes its --zero-shot mode,
  // with the ranker), then samples.
  ZeroShotOptions first{1, true};
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

struct ZeroShotChoice {
  Program program;
  double logprob = 0;
  bool expert = false;     // one of the expert programs (or, with row_split, a variant of one)
  double score = 0;        // the ranker's (o.rank), else 0
  bool row_split = false;  // put in front as a row-split variant (ZeroShotOptions::row_split_p)
};
// The named modes (--zero-shot): "ranker" (the default of `tlm run` and `tlm tune`: the greedy
// program, the expert programs (tasks without any: 32 of the model's samples), ordered by the
// zero-shot ranker (the caller loads it, load_zero_shot_ranker), at two or more threads a blocked
// convolution's front program preceded by its row-split variant when the ranker deems it nearly as
// fast and its weights fit in L2, kZeroShotRowSplitP; a large task's serial candidates last,
// kZeroShotSerialWork; a 1x1 blocked convolution with weights of half an L2 or more: MLAS's
// pointwise expert first, kZeroShotPointwiseWeights; a weight larger than the last-level cache:
// the streaming expert over it packed once first, streamed_root), "experts" (only the expert
// programs, ranked by the model; greedy for tasks without any), "greedy" (beam 1, no experts: the
// model alone, decision by decision), "ranked" (beam 4 + experts). Measured on the held-out models
// (BENCHMARKS.md): ranker > experts >> ranked ~ greedy; the beam's own programs outscore the
// experts in the model's likelihood but run slower. UserError on another name.
ZeroShotOptions zero_shot_mode(const std::string& name);
// The mode names (zero_shot_mode's message, the CLI's --zero-shot checks).
inline const std::vector<std::string> kZeroShotModeNames = {"greedy", "ranked", "experts",
                                                           "ranker"};
// The ranker a mode needs: null unless o.rank; then the one at `path` ("" = the shipped
// models/ranker.json; UserError when there is none or it does not load).
std::unique_ptr<Ranker> load_zero_shot_ranker(const ZeroShotOptions& o, const std::string& path);

// Every candidate (the beam's programs, the expert programs it did not find, the samples it did
// not find), scored by the model, most likely first (with o.rank: the ranker's best first, ties
// by likelihood, and before it the row-split variant that o.row_split_p admits); never empty (a
// task without expert programs gets the greedy program even with beam 0).
std::vector<ZeroShotChoice> zero_shot_candidates(const LanguageModel& m, const Tokenizer& tok,
                                                 const TaskPrinter& printer,
                                                 const HardwareInfo& hw,
                                                 const ZeroShotOptions& o = {});
// Their front.
ZeroShotChoice zero_shot_program(const LanguageModel& m, const Tokenizer& tok,
                                 const TaskPrinter& printer, const HardwareInfo& hw,
                                 const ZeroShotOptions& o = {});

}  // namespace tlm

// In-model selection: a task's finalists timed where they will run, inside the compiled model
// (the tuner's step 4b, tune/tuner.h; `tlm tune --in-model K`).
//
// The search and the re-measurement time a program alone: it repeats back to back, its weights
// and activations hot in the caches, one program after another on a machine whose speed drifts
// by 15-30% within minutes. Inside the model a task reads the activations its predecessor just
// wrote and weights last touched one inference ago. On the model-207 machine the two disagreed
// often enough that ten measured programs per task ran ResNet-50 no faster than the language
// model's one unmeasured program: per task the deployed program was up to 1.3x slower inside the
// model than one measured slower alone (BENCHMARKS.md, session 52).
//
// Timing a whole set of choices against another confounds them: a task's time inside the model
// depends on its neighbours' programs (which core's cache holds its input follows the producer's
// parallel split), and a set that changes every task at once carries every neighbour's change
// into each task's time. Session 52's selection by whole sets promised ResNet-50 35.1 ms and the
// composed set ran at the zero-shot programs' 39.7. So every finalist is compiled into one model
// (CompileOptions::variants, one arena), and each turn runs a fresh random assignment: every task
// draws its next finalist from its own shuffled deck, so each finalist is timed about equally
// often, next to neighbours that vary from turn to turn and average out. The machine's speed moves
// from turn to turn as well (10-30% on these VMs), and a finalist runs in only a third of the
// turns, so each turn's common factor is taken out before finalists are compared: in log time,
// task i's time in turn k is its finalist's effect plus the turn's, fitted by alternating
// medians (every task of a turn tells its speed, the ones with a single program too).
//
//   time_finalists_in_model(g, p, hw, finalists, inputs, ref, o)
//       finalists[i]: task i's (Partition::tasks order) candidate sentences, the current choice
//       first; empty: the default schedule; ref: the reference interpreter's outputs for
//       `inputs` (the caller has them for its own check). Compiles every finalist into one
//       model; checks the current choices' outputs against the reference, then each other
//       finalist's with every other task at its current choice; then o.turns turns of
//       o.runs_per_turn runs, each turn a random assignment (seeded by o.seed). Per turn a timed
//       finalist gets the sum over its task's instances of their median latency, divided by
//       that turn's speed factor (speed_adjusted_turns).
//   speed_adjusted_turns(raw, assignments, finalists)
//       the fit above: raw[turn][task] seconds with assignments[turn][task]; per [task][finalist]
//       the turns' times at the median turn's speed
//   pick_in_model(timings)    per task, the index of its fastest finalist by the median over turns
//
// A finalist that does not compile or whose outputs differ from the reference is not timed (its
// error is returned), so it cannot be chosen; the current choices failing is an error of the
// caller's programs and throws.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "hardware/hardware.h"
#include "partition/partition.h"
#include "support/tensor.h"

namespace tlm {

struct InModelOptions {
  int turns = 30;                   // random assignments, each run runs_per_turn times
  int runs_per_turn = 3;            // (after one warm-up run in the first turn)
  uint64_t seed = 1;                // the assignments' shuffles
  int compile_threads = 0;          // 0: compute_threads()
  double atol = 1e-3, rtol = 1e-3;  // the end-to-end check against the interpreter
};

struct InModelTimings {
  int sets = 0;  // the most finalists of any task
  // [task][finalist]: one time per turn it ran in (seconds, the task's instances summed); empty
  // when the finalist was not timed.
  std::vector<std::vector<std::vector<double>>> turns_s;
  // [task][finalist]: "" or why it was not timed (did not compile, wrong outputs).
  std::vector<std::vector<std::string>> errors;
  std::vector<std::vector<int>> assignments;  // [turn][task]: the finalist each task ran
};

InModelTimings time_finalists_in_model(const Graph& g, const Partition& p, const HardwareInfo& hw,
                                       const std::vector<std::vector<std::string>>& finalists,
                                       const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& ref, const InModelOptions& o);

std::vector<std::vector<std::vector<double>>> speed_adjusted_turns(
    const std::vector<std::vector<double>>& raw, const std::vector<std::vector<int>>& assignments,
    const std::vector<int>& finalists);

// Per task, the finalist with the lowest median over turns (ties: the earlier, so the current
// choice stays unless another is faster); -1 for a task without timed finalists.
std::vector<int> pick_in_model(const InModelTimings& t);

}  // namespace tlm

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
//   time_finalists_in_model(g, p, hw, finalists, inputs, ref, o)
//       finalists[i]: task i's (Partition::tasks order) candidate sentences, the current choice
//       first; empty: the default schedule; ref: the reference interpreter's outputs for
//       `inputs` (the caller has them for its own check). Compiles K = the most finalists of any
//       task schedule sets (set j gives each task its j-th finalist, or its first when it has
//       fewer), checks each set's outputs against the reference interpreter, then times the sets
//       taking turns (o.turns turns of o.runs_per_turn runs, the order reversed every other turn,
//       so every set sees the same machine). Finalist j of a task is timed by set j: per turn, the
//       sum over the task's instances of their median latency.
//   pick_in_model(timings)    per task, the index of its fastest finalist by the median over turns
//
// A set that does not compile or does not match the reference is not timed (its error is
// returned), so its finalists cannot be chosen; set 0 (the current choices) failing is an error
// of the caller's programs and throws.
#pragma once

#include <string>
#include <vector>

#include "graph/graph.h"
#include "hardware/hardware.h"
#include "partition/partition.h"
#include "support/tensor.h"

namespace tlm {

struct InModelOptions {
  int turns = 10;                   // every set runs runs_per_turn times per turn
  int runs_per_turn = 3;            // (after one warm-up run in the first turn)
  int compile_threads = 0;          // 0: compute_threads()
  double atol = 1e-3, rtol = 1e-3;  // the end-to-end check against the interpreter
};

struct InModelTimings {
  int sets = 0;
  // [task][finalist]: one time per turn (seconds, the task's instances summed); empty when the
  // finalist's set was not timed.
  std::vector<std::vector<std::vector<double>>> turns_s;
  std::vector<std::string> set_errors;  // per set: "" or why it was not timed
};

InModelTimings time_finalists_in_model(const Graph& g, const Partition& p, const HardwareInfo& hw,
                                       const std::vector<std::vector<std::string>>& finalists,
                                       const std::vector<Tensor>& inputs,
                                       const std::vector<Tensor>& ref, const InModelOptions& o);

// Per task, the finalist with the lowest median over turns (ties: the earlier, so the current
// choice stays unless another is faster); -1 for a task without timed finalists.
std::vector<int> pick_in_model(const InModelTimings& t);

}  // namespace tlm

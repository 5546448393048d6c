// The measurement harness: the stage that turns a program of a task (or a Halide autoscheduler's
// schedule) into a MeasureRecord. Everything that measures goes through it -- the tuner, `tlm
// measure`, the language model's loop, the kernel benchmark. Every candidate is compiled, checked
// and timed in a forked worker (measure/worker.h), so that a program that fails to compile,
// crashes, hangs or computes a wrong answer becomes a record with an error kind, never a dead
// caller.
//
//   TaskHarness          one task made ready once, in the parent: lowered (the space's source),
//                        its space and sentence printer, seeded random inputs and the reference
//                        output from the graph interpreter (an independent implementation)
//   make_task_harness()  builds it; warm_halide_jit() readies Halide's JIT runtime in the parent
//   measure_candidates() a batch (harness_run.cc). Each candidate gets its own child: lower afresh,
//                        apply the program (or run a Halide autoscheduler), JIT-compile under
//                        the compile deadline; then, when its turn comes, run once and compare
//                        with the reference (WrongResult past atol + rtol * |ref|) and time it
//                        with time_function (warm-up, repeats, median) under the run deadline
//
// Why a child per candidate: compile and run share the child's memory (the JIT code lives
// there), and a crash must cost one candidate only. Forking a parent whose JIT runtime is warm
// costs milliseconds next to a 0.3-0.6 s compile (70% of it LLVM), so the cost worth hiding is
// the compile, not the fork: up to `parallel_compiles` children compile at once (one LLVM thread
// each), and only when none is compiling any more do they run, one at a time. The parent never
// runs a Halide pipeline with parallel loops before forking (it would start Halide's thread
// pool, whose threads a child does not inherit).
//
// Stability on a small noisy VM: a timed run never overlaps a compile or another run; runs use
// compute_threads() (support/threads.h; programs are parallel, every candidate gets the same
// pool); each timing sample spans >= min_repeat_ms (longer than a scheduler tick), and the
// median of the samples is the latency (robust to a sample hit by a neighbour); the tuner
// re-measures its best programs with more samples at the end (tune/tuner.h). MeasureOptions::
// model_cache times each sample as one call after flushing the caches instead (an experiment:
// it picks worse programs than hot timing end to end, BENCHMARKS.md session 45).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "hardware/hardware.h"
#include "language/sentence.h"
#include "lower/autoschedule.h"
#include "measure/records.h"
#include "measure/timing.h"
#include "space/space.h"
#include "support/cache_flush.h"

namespace tlm {

struct Candidate;

struct MeasureOptions {
  double compile_timeout_s = 30;  // lowering + applying the program + JIT compile
  int parallel_compiles = 0;      // children compiling at once; 0: compute_threads()
  // Build candidates without Halide's runtime assertions (Target::NoAsserts): LLVM time drops
  // by 35-50% on conv tasks. Every output is still checked against the reference, so a program
  // that accesses memory it should not shows up as WrongResult or Crash. The tuner's final
  // timings (tune/tuner.cc, final_timing_options) and the model are built with assertions on:
  // Halide checks the input region it inferred, which can exceed what the loops read (a program
  // correct here, refused there); such a program's RuntimeError record keeps it from deployment
  // (records.h, ranked_per_task). `tlm measure --asserts` turns them on.
  bool no_asserts = true;
  double autoschedule_timeout_s = 600;  // the same for Halide autoscheduler candidates: their
                                        // search (Adams2019's beam search) runs in this phase
  double run_timeout_s = 20;            // the correctness run plus all timing samples
  TimingOptions timing;                 // 1 warm-up call, 5 timed samples of >= 20 ms each
  // Hot (false): samples repeat the program back to back, its weights stay in the caches. Model
  // cache (true; records say cache "model", measure/records.h): before every sample, which is
  // then one call, Halide's thread pool reads one byte per cache line of flush_bytes of scratch
  // memory (its workers stay awake for the call) and the activation inputs ("in*") are read back
  // in: weights come from memory and activations from the caches, as in a compiled model. Costs
  // a flush (a few ms) per sample. Not the default: on the four held-out models the programs
  // fastest this way ran every model 1-5% slower end to end than those fastest hot (one-call
  // samples are noisier, and the fastest of ~25 noisy candidates is often noise).
  bool model_cache = false;
  int64_t flush_bytes = kModelFlushBytes;
  // Correctness: max_rel_violation(out, ref, atol, rtol) <= 1. Both sides compute in f32 but sum
  // in different orders; 1e-3 holds for reductions of thousands of terms.
  double atol = 1e-3;
  double rtol = 1e-3;
  // The children's stdout/stderr go to /dev/null: Halide's compile warnings and the
  // autoschedulers' chatter would break the progress line. Outcomes travel over the pipe.
  bool quiet_children = true;
  // Test hook, run in the child at the start of phase 1 (before compiling) and phase 2 (after):
  // tests make candidates crash or hang with it. Never set outside tests.
  std::function<void(const Candidate&, int phase)> child_hook;
};

// One task, ready to measure. Not copyable or movable: the printer points at the space.
struct TaskHarness {
  Subgraph sub;
  HardwareInfo hw;
  std::string hardware_key;
  std::string workload;  // recorded with every measurement
  LoweredTask lowered;   // never scheduled: build_space's source (children lower afresh)
  TaskSpace space;
  std::unique_ptr<TaskPrinter> printer;
  std::vector<Tensor> inputs;  // seeded; sub.graph.inputs order
  Tensor reference;            // interpret(sub.graph, inputs)

  TaskHarness() = default;
  TaskHarness(const TaskHarness&) = delete;
  TaskHarness& operator=(const TaskHarness&) = delete;
};

// UserError when the task cannot be lowered or its space built.
std::unique_ptr<TaskHarness> make_task_harness(const Subgraph& sub, const HardwareInfo& hw,
                                               const std::string& workload, uint64_t seed = 0);

// Seeded inputs for a subgraph: f32 uniform in [-1, 1), bool 0/1, i64 uniform in [0, n) where n
// is the smallest extent a Gather indexes with the input (through reshapes), else 100.
std::vector<Tensor> subgraph_inputs(const Subgraph& sub, uint64_t seed);

// Compiles and runs a trivial serial pipeline, so that Halide's JIT runtime is built once in the
// parent instead of in every child. Starts no threads.
void warm_halide_jit();

// What to measure: a program of the task's space, or a Halide autoscheduler's schedule.
struct Candidate {
  Program program;
  bool autoscheduled = false;
  HalideAutoscheduler autoscheduler = HalideAutoscheduler::Adams2019;
  std::string strategy;  // recorded as MeasureRecord::strategy
};

Candidate program_candidate(Program p, const std::string& strategy);
Candidate autoscheduler_candidate(HalideAutoscheduler which);

// The record's sentence for a candidate: the canonical sentence, or the autoscheduler marker.
std::string candidate_sentence(const TaskHarness& harness, const Candidate& c);

// One candidate of one task.
struct MeasureJob {
  const TaskHarness* harness = nullptr;
  Candidate candidate;
};

// Measures the jobs (any tasks) in forked children, parallel_compiles at a time, and returns one
// record per job, in order. Never throws for anything a candidate does. Prints nothing.
std::vector<MeasureRecord> measure_candidates(const std::vector<MeasureJob>& jobs,
                                              const MeasureOptions& options);
MeasureRecord measure_candidate(const TaskHarness& harness, const Candidate& c,
                                const MeasureOptions& options);

// Recovers the program of a sentence of this task on this hardware (fast: no lowering); false
// when the sentence is another task's, another hardware's, or not a valid program of the space.
bool program_from_sentence(const TaskPrinter& printer, const std::string& sentence, Program* out);

}  // namespace tlm

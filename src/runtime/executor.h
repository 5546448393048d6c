// The executor: a partitioned model compiled to one JIT'd Halide program per task, run instance
// by instance over one activation arena (runtime/memory_plan.h).
//
//   compile_model(g, p, opts)  lowers every task (lower/lower.h), schedules it (opts.schedule,
//                              default apply_default_schedule), JIT-compiles all tasks on
//                              opts.compile_threads threads, plans memory, and binds every
//                              instance's buffers once: constants in place from the graph's
//                              shared tensors (no copy), activations at their arena offsets.
//   CompiledModel::run(inputs) checks inputs against the graph (UserError naming the input),
//                              runs the instances in order and copies the graph outputs out.
//   CompiledModel::time(...)   warm-up runs, then `repeat` timed runs: median end-to-end and
//                              median per-instance latency.
//   CompiledModel::select(v)   with CompileOptions::variants (several programs per task, all
//                              bound to the one arena): which program each task runs next.
//
// Knobs: CompileOptions (below). Halide's own thread pool size is compute_threads()
// (support/threads.h, the one threads knob), fixed at the first Halide call.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lower/lower.h"
#include "runtime/memory_plan.h"

namespace tlm {

// Schedules a freshly lowered task of the model, by task id (CompileOptions::schedule).
using ScheduleHook = std::function<void(int task_id, LoweredTask&)>;
// Schedules program `variant` of a task (CompileOptions::variants).
using VariantHook = std::function<void(int task_id, int variant, LoweredTask&)>;

struct CompileOptions {
  Halide::Target target = host_target();
  int compile_threads = 0;  // JIT-compile this many tasks at once; 0: compute_threads()
  // Schedules task `task_id` (an index into Partition::tasks) after lowering; empty: the
  // default schedule. Later stages plug tuned schedules in here.
  ScheduleHook schedule;
  // Several programs per task in one model (in-model selection, tune/in_model.h): task i
  // (Partition::tasks order) gets variants[i] >= 1 programs, program v scheduled by
  // variant_schedule(id, v, lowered) (`schedule` is then unused). Every program reads and writes
  // the same activations; each gets its own packed weights. A program v > 0 that fails to
  // compile is not fatal: variant_error() says why and it cannot be selected. Empty: one program
  // per task.
  std::vector<int> variants;
  VariantHook variant_schedule;
  bool progress = false;  // "compiling 12/25 tasks" on stderr
  // Pure reshape tasks become views of their input (memory_plan.h); false runs them as copies.
  bool reshape_views = reshape_views_enabled();
};

// CompiledModel::time_alone: how each instance is timed by itself.
struct AloneOptions {
  int repeat = 10;
  int64_t flush_bytes = 0;  // > 0: every thread rewrites its share of this much scratch memory
                            // before every timed run (evicts the caches)
  int pause_us = 0;         // > 0: sleep this long before every timed run (idle pool workers)
  // After the flush, read the instance's inputs that live outside the activation arena back
  // in, one byte per cache line: its weights as its program stores them (and, for the model's
  // first tasks, the caller's input tensor). Cold activations, warm weights: against the plain
  // cold column this says how much of a task's cold time is its first read of the weights.
  bool touch_constants = false;
};

struct Timing {
  std::vector<double> instance_ms;  // median latency of each instance, Partition::instances order
  std::vector<bool> view;           // per instance: a view of its input that does not run (0 ms)
  double end_to_end_ms = 0;         // median of the timed runs
  int repeat = 0;
};

class CompiledModel {
 public:
  CompiledModel();
  ~CompiledModel();
  CompiledModel(CompiledModel&&) noexcept;
  CompiledModel& operator=(CompiledModel&&) noexcept;

  // Inputs in graph-input order; outputs in graph-output order (fresh tensors).
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);
  // `warmup` untimed runs, then `repeat` timed ones (repeat >= 1).
  Timing time(const std::vector<Tensor>& inputs, int warmup, int repeat);
  // Every instance by itself: after one whole run (so every activation holds numbers the model
  // computed, though not necessarily the instance's own inputs: the arena reuses memory), each
  // instance runs once untimed and then `repeat` times in a row; the median per instance, in
  // Partition::instances order. Set against time()'s in-model medians, this says what running
  // inside the model costs a task (the cache its predecessors left, the pool's wake-ups).
  std::vector<double> time_alone(const std::vector<Tensor>& inputs, const AloneOptions& o);

  // Task i (Partition::tasks order) runs its program choice[i] from now on (CompileOptions::
  // variants; all 0 after compiling). InternalError for a program that does not exist or did
  // not compile.
  void select(const std::vector<int>& choice);
  int variants(int task) const;                             // 1 without CompileOptions::variants
  const std::string& variant_error(int task, int v) const;  // "" when it compiled

  const Graph& graph() const;
  const Partition& partition() const;
  const MemoryPlan& memory_plan() const;
  double compile_seconds() const;

 private:
  friend CompiledModel compile_model(const Graph& g, const Partition& p, const CompileOptions& o);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

CompiledModel compile_model(const Graph& g, const Partition& p, const CompileOptions& o = {});

// UserError unless `inputs` match g.inputs in number, dtype and shape, e.g.
// "input 'x' expects f32[1,3,224,224], got f32[1,3,224]". run() calls it; callers can check
// before paying for compilation.
void check_model_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// Per-task latency table from a Timing: task id, kind, instances, median ms per instance,
// total ms, share of the summed instance time; then their sum. A task whose every instance is a
// view (memory_plan.h) is marked "(view)".
std::string latency_table(const Partition& p, const Timing& t);

}  // namespace tlm

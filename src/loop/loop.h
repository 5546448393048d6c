// The iterative optimization of paper §5.3 (Figure 8): the model writes programs for the training
// tasks, they are measured, the best of all records become the demonstrations, the base model is
// fine-tuned on them, and the new model writes the next programs.
//
// Rounds. The training tasks (task_set.h) are split into k_b batches; round i works on batch
// i mod k_b:
//   sentences i   k_p distinct programs per task of the batch, not measured before, written by
//                 TLM i (TLM 0 = TLM 1 = the base)
//   records i     their measurements
//   TLM i+2       the base fine-tuned on the demonstrations drawn from records 0..i
// Pipeline (Figure 8, right): while round i is measured, a second thread fine-tunes TLM i+1 (from
// records 0..i-1) and writes sentences i+1 with it. The measuring side never waits as long as
// fine-tuning and writing take less time than measuring a batch (rounds.csv shows both). Threads:
// all Halide work (task harnesses, spaces, the forked measurement workers) stays on the main
// thread; the second thread runs only libtorch (one thread) on ready spaces, so no worker is
// forked in the middle of a Halide call of the other thread.
//
// The directory, everything needed to resume after an interruption or kill -9 (files are written
// atomically, records appended line by line):
//   loop.json        the configuration: base hash, hardware, task set, k_b, k_p, seed, sampling and
//                    fine-tuning options, language and records versions. A directory of another
//                    configuration is refused, naming the field; only the options that shape the
//                    next models (temperature, sampling top-k, fine-tuning options, demonstration
//                    choice, extra records) may change when it resumes
//   state.json       rounds done
//   records.jsonl    every measurement (strategy "loop-r<i>": round i); never rewritten
//   round-<i>.txt    sentences i, "task-index<TAB>sentence" per line
//   model-<i>.ckpt   TLM i (the two newest are kept); sft-<i>.ckpt[.last] while it trains
//   rounds.csv       one line per round: measurements, errors, seconds measuring, fine-tuning and
//                    writing, demonstrations, validation losses, total best latency
//   convergence.csv  total latency of the best programs vs measurements (paper Figure 9;
//                    bench/lm/plot_convergence.py draws it)
// and the -o checkpoint, replaced atomically by every new model. Resume = the rounds done are
// skipped, sentences already in the records are not measured again, a fine-tune killed half-way
// resumes from its .last file.
//
// Machines: the loop measures on this machine with measure_threads threads, which is the `cores`
// of the hardware key its records and prompts carry. Demonstrations also come from
// extra_records (e.g. the records of the same loop run on another machine), per machine, so one
// model learns to write for both.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "loop/demonstrations.h"
#include "loop/task_set.h"
#include "measure/harness.h"
#include "model/finetune.h"

namespace tlm {

// Bump when the directory layout or loop.json changes meaning.
constexpr int kLoopVersion = 1;

struct LoopOptions {
  std::string dir;   // the loop directory (created)
  std::string base;  // TLM-base checkpoint
  std::string out;   // the newest fine-tuned model, replaced atomically ("" : none)
  // 160 of the ~1200 training tasks (every kind), none above 500 MFLOP: one core measures ~100
  // programs a minute, so 32 rounds of 40 tasks x 16 programs (~20K measurements, ~120 per
  // task) take about 3.5 hours (docs/loop.md).
  TaskSetOptions tasks = {{"train"}, 160, 500};
  int k_b = 4;               // batches
  int k_p = 16;              // programs per task and round
  int rounds = 32;           // rounds in all (a later run with more continues)
  double time_budget_s = 0;  // this run: start no round after this many seconds (0: none)
  uint64_t seed = 0;         // sampling, validation split, batches of fine-tuning
  double temperature = 1.0;
  int sample_top_k = 0;      // sample among the k most likely values (0: all)
  int gen_batch = 16;        // sequences decoded together
  DemoOptions demos;         // top_k, weighting (hardware and exclusions are set by the loop)
  FinetuneOptions finetune;  // epochs, learning rate, batch (out_path is set by the loop)
  std::vector<std::string> extra_records;  // more demonstration records (other machines)
  // Each task's expert programs (expert_programs, space/space.h) are measured once, before the
  // next round, when this is on (Loop::measure_experts): register-blocked GEMM / convolution
  // programs the model may never write on its own become demonstrations when they win.
  bool expert = true;
  int measure_threads = 1;  // threads of the measured programs = `cores` in the hardware key
  MeasureOptions measure;   // parallel_compiles 0: the usable cores
  bool progress = true;
};

struct RoundReport {
  int round = 0, batch = 0;
  int64_t sentences = 0, measured = 0, ok = 0, already = 0;
  double measure_s = 0;
  // The second thread during this round: the model it fine-tuned (0: none) and the round it wrote.
  int model = 0;
  int64_t demos = 0;
  double sft_s = 0, base_val_loss = 0, val_loss = 0;
  double gen_s = 0;
  int64_t generated = 0, gen_shortfall = 0;  // programs written; missing of k_p x tasks
  double total_best_s = 0;                   // over the tasks with a valid program so far
  int64_t tasks_with_program = 0;
};

struct LoopReport {
  int rounds_done = 0;    // after this run
  int rounds_run = 0;     // in this run
  int64_t records = 0;    // in the directory
  bool finished = false;  // all rounds done and the final model written
  std::string model;      // the newest model ("" : none yet)
  std::vector<RoundReport> rounds;
};

// UserError for a bad option, a directory of another configuration, a base that does not load,
// unreadable records (another records or language version included), or a fine-tune without a
// single error-free program.
LoopReport run_loop(const LoopOptions& o,
                    const std::function<void(const RoundReport&)>& on_round = {});

// The round a loop record belongs to ("loop-r<i>"), -1 for other strategies.
int loop_round_of(const MeasureRecord& r);

// Convergence rows from records in measurement order: every `every` records and at the end,
//   measurements, ok, tasks, total_best_s, vs_best, vs_first, elapsed_s
// total_best_s sums each measured task's best so far; vs_best divides it by the same tasks'
// best at the end (1 = the best found; the paper's Figure 9 normalization); vs_first by their
// best in their first round (< 1: better than the first programs written for them).
// Only records of `hardware` count.
std::string convergence_csv(const std::vector<MeasureRecord>& records, const std::string& hardware,
                            int every);

}  // namespace tlm

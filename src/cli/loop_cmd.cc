// `tlm loop --base CKPT --records DIR -o CKPT`: the iterative optimization of paper §5.3
// (loop/loop.h) -- write programs with the newest model, measure them, fine-tune the base on the
// best of all records, repeat -- with measuring and fine-tuning on separate cores. Resumable: run
// the same command again after an interruption; --rounds may grow between runs.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "loop/loop.h"
#include "model/tlm_model.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {
namespace {

struct LoopCliOptions {
  LoopOptions loop;
  std::string weighting = "uniform";
  bool quiet = false;
};

int run_loop_cmd(LoopCliOptions& c) {
  LoopOptions& o = c.loop;
  if (o.base.empty()) o.base = default_base_path();
  TLM_USER_CHECK(!o.base.empty()) << "loop: no base model: pass --base CKPT";
  o.demos.weighting = parse_demo_weighting(c.weighting);
  o.progress = !c.quiet;
  std::printf("loop: %s, %d batches x %d programs per task and round, %d rounds; base %s\n",
              o.dir.c_str(), o.k_b, o.k_p, o.rounds, o.base.c_str());
  std::fflush(stdout);
  LoopReport r = run_loop(o, [&](const RoundReport& x) {
    std::printf("round %d/%d (batch %d): %lld measured (%lld ok, %lld already) in %s", x.round + 1,
                o.rounds, x.batch, (long long)x.measured, (long long)x.ok, (long long)x.already,
                format_duration(x.measure_s).c_str());
    if (x.model > 0)
      std::printf(
          "; TLM %d fine-tuned on %lld demonstrations in %s (validation loss %.4f, "
          "base %.4f)",
          x.model, (long long)x.demos, format_duration(x.sft_s).c_str(), x.val_loss,
          x.base_val_loss);
    if (x.generated > 0)
      std::printf("; next round written in %s (%lld programs, %lld short)",
                  format_duration(x.gen_s).c_str(), (long long)x.generated,
                  (long long)x.gen_shortfall);
    std::printf("; %lld tasks with a program, total best %.4f ms\n",
                (long long)x.tasks_with_program, x.total_best_s * 1e3);
    std::fflush(stdout);
  });
  std::printf("loop: %d of %d rounds done (%d in this run), %lld records in %s/records.jsonl\n",
              r.rounds_done, o.rounds, r.rounds_run, (long long)r.records, o.dir.c_str());
  if (r.finished)
    std::printf("loop: finished; final model %s (copied to %s); convergence: %s/convergence.csv\n",
                r.model.c_str(), o.out.c_str(), o.dir.c_str());
  else
    std::printf("loop: stopped (time budget); newest model %s; run the same command to continue\n",
                r.model.empty() ? "(none yet)" : r.model.c_str());
  return 0;
}

}  // namespace

Command add_loop_command(CLI::App& app) {
  auto c = std::make_shared<LoopCliOptions>();
  LoopOptions& o = c->loop;
  o.measure_threads = std::max(1, usable_cores() - 1);
  CLI::App* cmd = app.add_subcommand(
      "loop",
      "the iterative optimization (paper §5.3): the model writes programs for the training "
      "tasks, they are measured, the base is fine-tuned on the best of all records, repeat; "
      "resumable (run the same command again)");
  cmd->add_option("--base", o.base, "base checkpoint (default: the shipped pre-trained models/tlm-base.ckpt)");
  cmd->add_option("--records", o.dir,
                  "the loop directory: configuration, records.jsonl, rounds, models, curves")
      ->required();
  cmd->add_option("-o,--out", o.out, "the newest fine-tuned model, replaced after every round")
      ->required();
  cmd->add_option("--rounds", o.rounds, "rounds in all (a later run may raise it)")
      ->capture_default_str()
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--time-budget", o.time_budget_s,
                  "start no round after this many seconds of this run (0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--k-b", o.k_b, "batches the tasks are split into (one per round)")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--k-p", o.k_p, "programs per task and round")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  cmd->add_option("--tasks", o.tasks.max_tasks,
                  "use this many training tasks, every kind kept (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--workloads", o.tasks.workloads,
                  "zoo specs whose tasks to use, or 'train' (never a held-out workload)")
      ->capture_default_str()
      ->take_all();
  cmd->add_option("--max-mflops", o.tasks.max_mflops,
                  "leave out tasks above this many MFLOP (slow to time; 0: no limit)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o.seed, "sampling, validation split, batches")->capture_default_str();
  cmd->add_option("--temperature", o.temperature, "sampling temperature")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--sample-top-k", o.sample_top_k,
                  "sample among the k most likely values (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", o.demos.top_k, "demonstrations per task and machine (the best k)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--weighting", c->weighting,
                  "uniform or speed (demonstrations repeated in proportion to best / latency)")
      ->capture_default_str();
  cmd->add_option("--epochs", o.finetune.epochs, "fine-tuning passes over the demonstrations")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lr", o.finetune.train.lr, "fine-tuning peak learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--sft-batch", o.finetune.train.batch_size, "fine-tuning sequences per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--extra-records", o.extra_records,
                  "more records to draw demonstrations from (e.g. this loop run on another "
                  "machine)")
      ->take_all();
  cmd->add_option("--expert", o.expert,
                  "measure each task's expert programs (register-blocked, written without the "
                  "model) once, before the next round, so they can become demonstrations")
      ->capture_default_str();
  cmd->add_option("--measure-threads", o.measure_threads,
                  "threads of the measured programs (= cores in the hardware key); the rest "
                  "fine-tunes")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--repeats", o.measure.timing.repeats,
                  "timing samples per measurement (the median is recorded)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--quiet", c->quiet, "no progress line");
  return {cmd, [c] { return run_loop_cmd(*c); }};
}

}  // namespace tlm

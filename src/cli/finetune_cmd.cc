// `tlm finetune --base CKPT --records FILE... -o CKPT`: supervised fine-tuning (paper §5.1, §5.3)
// of the base model on the demonstration data drawn from measurement records (loop/
// demonstrations.h): per task and machine the best error-free program(s), never a held-out task.
// Every demonstration is parsed back before training (a sentence that is not a program of this
// language is refused, naming its task). Resumes from OUT.last.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "language/sentence.h"
#include "loop/demonstrations.h"
#include "model/finetune.h"
#include "model/tlm_model.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {
namespace {

struct FinetuneCliOptions {
  std::string base;
  std::vector<std::string> records;
  std::string out;
  // The measured winner (BENCHMARKS.md, "Fine-tuning on the loop's records"): the best four per
  // task weighted by speed wrote 1.8x faster most-likely programs for held-out tasks than the
  // paper's best-one-per-task.
  int top_k = 4;
  std::string weighting = "speed";
  std::vector<std::string> hardware;
  bool no_resume = false;
  bool quiet = false;
  FinetuneOptions ft;
};

int run_finetune(FinetuneCliOptions& o) {
  set_model_threads(compute_threads());
  const std::string base = o.base.empty() ? default_base_path() : o.base;
  TLM_USER_CHECK(!base.empty()) << "finetune: no base model: pass --base CKPT";
  load_tlm_model(base);  // a bad base is one message before the records are read

  DemoOptions d;
  d.top_k = o.top_k;
  d.weighting = parse_demo_weighting(o.weighting);
  d.hardware = o.hardware;
  const std::vector<MeasureRecord> records = load_record_files(o.records);
  select_demonstrations(records, d);      // nothing at all to learn from: fail before the next step
  d.exclude_tasks = heldout_task_keys();  // builds the held-out models: seconds
  DemoSet demos = select_demonstrations(records, d);
  std::printf("finetune: %s\n", demos.summary().c_str());
  for (const ChosenDemo& c : demos.demos) {
    try {
      parse_sentence(c.demo.sentence);
    } catch (const UserError& e) {
      TLM_USER_ERROR() << "finetune: a demonstration (task " << c.task_kind << " on " << c.hardware
                       << ") is not a program of this language: " << e.what();
    }
  }
  std::fflush(stdout);

  o.ft.train.out_path = o.out;
  o.ft.train.resume = !o.no_resume;
  if (o.ft.train.log_csv.empty()) o.ft.train.log_csv = o.out + ".csv";
  o.ft.provenance = {{"records", o.records},
                     {"top_k", d.top_k},
                     {"weighting", o.weighting},
                     {"hardware", o.hardware},
                     {"demos", demos.summary()},
                     {"task_hashes", demos.task_hashes()}};
  std::unique_ptr<ProgressLine> progress;  // the step count is known once training starts
  o.ft.train.on_progress = [&](const TrainProgress& p) {
    if (!progress) progress = std::make_unique<ProgressLine>(!o.quiet, "finetune", p.max_steps, 10);
    char detail[128];
    std::snprintf(detail, sizeof detail, "loss %.4f | lr %.2e", p.loss, p.lr);
    progress->update(p.step, detail);
  };
  FinetuneReport r = finetune_from_base(base, demos.demonstrations(), o.ft);
  if (progress) progress->finish();
  std::printf(
      "finetune: %lld demonstrations (%lld training sequences, %lld for validation), %lld steps "
      "(%s) in %.0f s; validation loss %.4f (base %.4f); wrote %s (curve: %s)\n",
      (long long)r.demonstrations, (long long)r.train_sequences, (long long)r.val_sequences,
      (long long)r.steps, r.resumed ? "resumed" : "from the base", r.wall_s, r.best_val_loss,
      r.base_val_loss, o.out.c_str(), o.ft.train.log_csv.c_str());
  return 0;
}

}  // namespace

Command add_finetune_command(CLI::App& app) {
  auto o = std::make_shared<FinetuneCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "finetune",
      "fine-tune the base language model on the best measured programs of each task (the "
      "demonstration data); always from the base; resumable");
  cmd->add_option("--base", o->base, "base checkpoint (default: the shipped pre-trained models/tlm-base.ckpt)");
  cmd->add_option("--records", o->records, "records files (JSON lines) to draw demonstrations from")
      ->required()
      ->take_all();
  cmd->add_option("-o,--out", o->out, "checkpoint to write; OUT.last resumes, OUT.csv is the curve")
      ->required();
  cmd->add_option("--top-k", o->top_k, "distinct programs per task and machine (the best k)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--weighting", o->weighting,
                  "uniform (each demonstration once) or speed (repeated in proportion to "
                  "best / its latency)")
      ->capture_default_str();
  cmd->add_option("--hardware", o->hardware,
                  "only records of these hardware keys (default: every machine in the records)")
      ->take_all();
  cmd->add_option("--epochs", o->ft.epochs, "passes over the demonstrations")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--lr", o->ft.train.lr, "peak learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--batch", o->ft.train.batch_size, "sequences per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--seed", o->ft.train.seed, "validation split and batches")
      ->capture_default_str();
  cmd->add_flag("--no-resume", o->no_resume, "start over even if OUT.last exists");
  cmd->add_flag("--quiet", o->quiet, "no progress line");
  return {cmd, [o] { return run_finetune(*o); }};
}

}  // namespace tlm

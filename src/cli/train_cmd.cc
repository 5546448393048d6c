// `tlm train --data DIR -o CKPT`: pre-training (paper §5.1) on a dataset of random sentences
// (`tlm sample`), then the "usable" measurement on the held-out workloads' sentences: the
// probability mass the unconstrained model puts on valid values, and its per-decision negative
// log-likelihood next to the entropy of uniform choice. Resumes from CKPT.last.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>

#include "cli/commands.h"
#include "model/data.h"
#include "model/generate.h"
#include "model/tlm_model.h"
#include "support/progress.h"
#include "support/threads.h"

namespace tlm {
namespace {

struct TrainCliOptions {
  std::vector<std::string> data;
  std::string out;
  std::string size = "tiny";
  int layers = 0, heads = 0, embd = 0;  // override the size's values when > 0
  int64_t max_sentences = 0;
  int min_context = 512;
  std::string loss = "values";
  int heldout_per_task = 4;
  bool no_resume = false;
  bool quiet = false;
  TrainOptions train;
};

// Scores random programs of every held-out task with the trained model (evaluation only).
DecisionScores heldout_scores(const TlmModel& m, const std::vector<std::string>& hardware,
                              int per_task, uint64_t seed) {
  DecisionScores total;
  std::mt19937_64 rng(seed ^ 0x5343u);
  for (const auto& t : heldout_tasks(hardware)) {
    std::vector<Program> ps;
    for (int k = 0; k < per_task; k++) ps.push_back(sample_program(t->space, rng));
    total.add(score_programs(*m.lm, m.tok, *t->printer, ps));
  }
  return total;
}

int run_train(TrainCliOptions& o) {
  TLM_USER_CHECK(!o.out.empty()) << "train: -o CKPT is required";
  set_model_threads(compute_threads());
  PretrainDataOptions po;
  po.dataset_dirs = o.data;
  po.max_sentences = o.max_sentences;
  po.loss = parse_loss_on(o.loss);
  po.heldout_per_task = o.heldout_per_task;
  po.seed = o.train.seed;
  po.progress = !o.quiet;
  PretrainData d = load_pretraining_data(po);

  // The context: the longest sentence seen, with room for longer tasks of models never seen
  // (positions past the trained lengths are never trained, but a task that needs them still
  // decodes instead of failing).
  const int block = (int)std::max<int64_t>(o.min_context, (d.max_len * 5 / 4 + 63) / 64 * 64);
  GPTConfig c;
  if (o.size == "tiny")
    c = GPTConfig::tiny(d.tokenizer.size(), block);
  else if (o.size == "gpt2-small")
    c = GPTConfig::gpt2_small(d.tokenizer.size(), block);
  else
    TLM_USER_ERROR() << "train: --size must be 'tiny' or 'gpt2-small', got '" << o.size << "'";
  if (o.layers > 0) c.n_layer = o.layers;
  if (o.heads > 0) c.n_head = o.heads;
  if (o.embd > 0) c.n_embd = o.embd;
  c.validate();
  LanguageModel m(c, o.train.seed);
  std::printf(
      "train: %zu sentences (%zu validation, %zu held-out for evaluation), %s; model %s: "
      "%d layers, %d heads, width %d, context %d, vocabulary %d = %.2fM parameters; "
      "loss on %s\n",
      d.train.size(), d.val.size(), d.heldout.size(),
      [&] {
        std::string s;
        for (const std::string& h : d.hardware) s += (s.empty() ? "" : " + ") + h;
        return s;
      }()
          .c_str(),
      o.size.c_str(), c.n_layer, c.n_head, c.n_embd, c.block_size, c.vocab_size,
      m.parameter_count() / 1e6, o.loss.c_str());
  std::fflush(stdout);

  CheckpointInfo info;
  info.vocab_hash = d.tokenizer.hash();
  info.language_version = kLanguageVersion;
  info.stage = "base";
  info.extra = {{"tokenizer", d.tokenizer.to_json()},
                {"data", o.data},
                {"hardware", d.hardware},
                {"loss", o.loss},
                {"train_sentences", d.train.size()}};
  o.train.out_path = o.out;
  o.train.resume = !o.no_resume;
  if (o.train.log_csv.empty()) o.train.log_csv = o.out + ".csv";
  ProgressLine progress(!o.quiet, "train", o.train.max_steps, 10);
  o.train.on_progress = [&](const TrainProgress& p) {
    char detail[160];
    std::snprintf(detail, sizeof detail, "loss %.4f | %.0f tokens/s | lr %.2e | %lld tokens",
                  p.loss, p.tokens_per_s, p.lr, (long long)p.tokens);
    progress.update(p.step, detail);
  };
  TrainReport r = train_language_model(m, info, d.train, d.val, d.heldout, o.train);
  progress.finish();
  std::printf(
      "train: %lld steps (%s), %lld tokens in %.0f s; best validation loss %.4f, last "
      "%.4f, held-out %.4f; wrote %s (curve: %s)\n",
      (long long)r.steps, r.resumed ? "resumed" : "from scratch", (long long)r.tokens, r.wall_s,
      r.best_val_loss, r.last_val_loss, r.last_heldout_loss, o.out.c_str(),
      o.train.log_csv.c_str());

  // The usable measurement, with the best checkpoint as it will be used.
  TlmModel best = load_tlm_model(o.out);
  DecisionScores s = heldout_scores(best, d.hardware, o.heldout_per_task, o.train.seed);
  if (s.decisions > 0) {
    double n = (double)s.decisions;
    std::printf(
        "held-out: %lld decisions; the unconstrained model puts %.4f of its probability "
        "on valid values; NLL %.4f nats per decision vs %.4f for uniform choice\n",
        (long long)s.decisions, s.valid_mass / n, s.nll / n, s.uniform_entropy / n);
    nlohmann::json j = {{"checkpoint", o.out},
                        {"decisions", s.decisions},
                        {"valid_mass", s.valid_mass / n},
                        {"nll", s.nll / n},
                        {"uniform_entropy", s.uniform_entropy / n},
                        {"steps", r.steps},
                        {"tokens", r.tokens},
                        {"best_val_loss", r.best_val_loss},
                        {"heldout_loss", r.last_heldout_loss},
                        {"wall_s", r.wall_s}};
    std::ofstream(o.out + ".eval.json") << j.dump(1) << "\n";
  }
  return 0;
}

}  // namespace

Command add_train_command(CLI::App& app) {
  auto o = std::make_shared<TrainCliOptions>();
  CLI::App* cmd = app.add_subcommand(
      "train",
      "pre-train the tensor language model on sampled sentences (`tlm sample`); resumable");
  cmd->add_option("--data", o->data, "dataset directory written by `tlm sample` (repeatable)")
      ->required()
      ->take_all();
  cmd->add_option("-o,--out", o->out,
                  "checkpoint to write (the best by validation loss); "
                  "OUT.last resumes, OUT.csv is the loss curve")
      ->required();
  cmd->add_option("--size", o->size, "tiny (default, ~4M parameters) or gpt2-small")
      ->capture_default_str();
  cmd->add_option("--layers", o->layers, "override the size's layer count")
      ->check(CLI::Range(1, 96));
  cmd->add_option("--heads", o->heads, "override the size's head count")->check(CLI::Range(1, 96));
  cmd->add_option("--embd", o->embd, "override the size's width")->check(CLI::Range(8, 8192));
  cmd->add_option("--steps", o->train.max_steps, "optimizer steps")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  cmd->add_option("--time-budget", o->train.time_budget_s,
                  "stop (saving) after this many seconds; 0: no limit")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--batch", o->train.batch_size, "sentences per step")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--lr", o->train.lr, "peak learning rate")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--min-lr", o->train.min_lr, "learning rate at the end of the cosine decay")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--warmup", o->train.warmup_steps, "linear warm-up steps")
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 30));
  cmd->add_option("--eval-every", o->train.eval_every, "steps between validations and saves")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 30));
  cmd->add_option("--context", o->min_context,
                  "context length at least (default 512; the longest sentence + 25% if more)")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 16));
  cmd->add_option("--max-sentences", o->max_sentences, "read at most this many sentences")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--loss", o->loss,
                  "which tokens the loss covers: values (the decisions; default) or all")
      ->capture_default_str();
  cmd->add_option("--heldout-per-task", o->heldout_per_task,
                  "random sentences per held-out task and machine for the evaluation (0: none)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--seed", o->train.seed, "initialization, data split and batches")
      ->capture_default_str();
  cmd->add_option("--log", o->train.log_csv, "loss curve CSV (default OUT.csv)");
  cmd->add_flag("--no-resume", o->no_resume, "start over even if OUT.last exists");
  cmd->add_flag("--quiet", o->quiet, "no progress line");
  return {cmd, [o] { return run_train(*o); }};
}

}  // namespace tlm

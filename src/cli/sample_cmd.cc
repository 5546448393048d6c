// `tlm sample`: flags -> SampleOptions, then sample_dataset() and a summary on stdout.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "language/dataset.h"
#include "language/workloads.h"

namespace tlm {

Command add_sample_command(CLI::App& app) {
  auto o = std::make_shared<SampleOptions>();
  auto keep_heldout = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "sample",
      "write a dataset of uniformly random tensor sentences (no compilation) for every task of "
      "a set of workloads: DIR/shard-*.txt, DIR/vocab.json, DIR/manifest.json");
  cmd->add_option("--out", o->out_dir, "dataset directory (created if needed)")->required();
  cmd->add_option("--sentences", o->sentences, "sentences to write in total")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  cmd->add_option("--seed", o->seed, "random seed; the dataset is a function of it")
      ->capture_default_str();
  cmd->add_option("--jobs", o->jobs,
                  "sampling threads (default: the global --threads; the output does not depend "
                  "on it)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--workloads", o->workloads,
                  "zoo specs, or the sets 'train' (default) and 'heldout' (needs --keep-heldout)")
      ->take_all();
  cmd->add_option("--hardware", o->hardware,
                  "hardware keys to write sentences for, each task once per key (default: this "
                  "machine), e.g. "
                  "isa=avx2,cores=2,vec=8,l1=32k,l2=1m,l3=32m");
  cmd->add_option("--shard-lines", o->shard_lines, "sentences per shard file")
      ->capture_default_str()
      ->check(CLI::Range(int64_t(1), int64_t(1) << 40));
  cmd->add_flag("--keep-heldout", *keep_heldout,
                "do not drop tasks that occur in held-out workloads (for evaluation sets)");
  return {
      cmd, [o, keep_heldout] {
        o->exclude_heldout = !*keep_heldout;
        SampleReport r = sample_dataset(*o);
        std::printf(
            "wrote %lld sentences of %lld tasks to %s (%lld shards, vocabulary %lld tokens)\n"
            "held-out task keys excluded: %lld; tasks exhausted: %lld; duplicates rejected: %lld; "
            "failed tasks: %lld\n"
            "tokens per sentence: max %zu, median %zu; the longest is %zu model tokens\n"
            "time: extract %.1fs, spaces %.1fs, sample %.1fs, write %.1fs, total %.1fs = "
            "%.0f sentences/s\n",
            (long long)r.sentences, (long long)r.tasks, o->out_dir.c_str(), (long long)r.shards,
            (long long)r.vocab_size, (long long)r.excluded_tasks, (long long)r.exhausted_tasks,
            (long long)r.duplicates, (long long)r.failed_tasks, r.max_tokens, r.median_tokens,
            r.max_model_tokens, r.extract_s, r.spaces_s, r.sample_s, r.write_s, r.total_s,
            r.sentences_per_s());
        return 0;
      }};
}

}  // namespace tlm

// `tlm measure`: flags -> MeasureFileOptions, then measure_sentence_file() and a summary.
#include <cstdio>
#include <memory>

#include "cli/commands.h"
#include "measure/sentence_file.h"

namespace tlm {

Command add_measure_command(CLI::App& app) {
  auto o = std::make_shared<MeasureFileOptions>();
  auto quiet = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "measure tensor sentences (one per line, e.g. a `tlm sample` shard) in isolated workers "
      "and append one record each; sentences already in the records are skipped");
  cmd->add_option("SENTENCES", o->sentences_path, "file of sentences, one per line")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option("--records", o->records_path, "JSON-lines records file to append to")->required();
  cmd->add_option("--workload", o->workload, "workload name stored in the records");
  cmd->add_option("--strategy", o->strategy, "strategy name stored in the records")
      ->capture_default_str();
  cmd->add_option("--limit", o->limit, "measure at most this many sentences (0: all)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--seed", o->seed, "seed of the task inputs")->capture_default_str();
  cmd->add_option("--repeats", o->measure.timing.repeats,
                  "timing samples per measurement (the median is recorded)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  cmd->add_option("--compile-timeout", o->measure.compile_timeout_s,
                  "seconds a candidate may take to build")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--run-timeout", o->measure.run_timeout_s,
                  "seconds a candidate may take to run (check and timing)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--model-cache", o->measure.model_cache,
                "time every sample as one call after flushing the caches and reading the "
                "activation inputs back in (weights from memory, as in a compiled model); the "
                "records say cache \"model\". An experiment: hot timing picks faster programs "
                "(BENCHMARKS.md, session 45)");
  cmd->add_flag("--quiet", *quiet, "no progress line");
  auto asserts = std::make_shared<bool>(false);
  cmd->add_flag("--asserts", *asserts,
                "build with Halide's runtime assertions (bounds checks; slower to compile): a "
                "program that reads outside an input is a RuntimeError, not a time");
  return {cmd, [o, quiet, asserts] {
            o->measure.no_asserts = !*asserts;
            o->progress = !*quiet;
            MeasureFileReport r = measure_sentence_file(*o);
            std::printf("%s", r.summary().c_str());
            // Rejected lines were reported one by one; measuring nothing at all is an error.
            return r.measured + r.already > 0 || r.sentences == 0 ? 0 : 1;
          }};
}

}  // namespace tlm
